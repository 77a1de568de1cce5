// SIS_NODE: select_idle_sibling() looks beyond the LLC (Peter Zijlstra, "sched/fair: Multi-LLC
// select_idle_sibling()", c7dfd6b9122d, tip sched/core May 2023, default on; reverted after the
// regressions K Prateek Nayak measured, <3de5c24f-6437-f21b-ed61-76b86a199e8c@amd.com>). When
// select_idle_cpu() finds no idle CPU in the target's LLC, select_idle_node() walks the groups of
// the LLC domain's parent, unless that parent is a NUMA domain (the search never leaves the
// node), starting after the target's own group in the parent's group ring; each other group is
// an LLC, searched with select_idle_cpu() from its first CPU, with that LLC's own
// has_idle_cores (test_idle_cores()) and SIS_UTIL depth. The first idle CPU found is taken.
// Each probe costs what select_idle_cpu() charges: a remote read at the distance of the other
// LLC (machine::Distance::OtherLlc), plus the other LLC's shared line.
#include <algorithm>
#include <vector>

#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class SisNode final : public Change {
 public:
  enum Counter { kCalls, kLlcs, kFound };

  SisNode(Kernel& k, const ChangeType& t) : Change(k, t), seen_(k.topo.nr_llcs(), 0) {}

  static ChangeInfo info() {
    return {
        .name = "SIS_NODE",
        .default_on = false,
        .help =
            "when the target's LLC has no idle CPU, select_idle_sibling() scans the other LLCs of "
            "the parent (non-NUMA) domain (c7dfd6b9122d, 2023, reverted)",
        .origin =
            "c7dfd6b9122d sched/fair: Multi-LLC select_idle_sibling() (Peter Zijlstra, tip "
            "sched/core, May 2023; reverted)",
        .counters = {
            {"select_idle_node_calls", "count",
             "select_idle_node() calls: the target's LLC had no idle CPU", true},
            {"select_idle_node_llcs", "count", "other LLCs select_idle_node() scanned", false},
            {"select_idle_node_found", "count",
             "wakeups placed on an idle CPU of another LLC by select_idle_node()", true}}};
  }

  HookResult<int> on_select_idle_cpu_done(int this_cpu, Task* p, int target, int found) override {
    if (found >= 0) return {.value = found};
    const CpuTopology& topo = k.topo;
    const std::vector<SchedDomain>& sds = k.rq(target).sd;
    const SchedDomain* parent = nullptr;
    for (size_t i = 0; i + 1 < sds.size(); ++i)
      if (sds[i].is_llc) {
        parent = &sds[i + 1];
        break;
      }
    if (!parent || parent->level == SdLevel::NUMA) return {.value = found};  // not across nodes
    Rq& this_rq = k.rq(this_cpu);
    counter(this_rq, kCalls)++;
    // The parent's groups in ring order: build_sched_groups() links them as for_each_cpu_wrap()
    // meets them from the domain's CPU (target), so the target's LLC comes first.
    const CpuSpan span = parent->span;
    const int n = static_cast<int>(span.size());
    const int start =
        static_cast<int>(std::lower_bound(span.begin(), span.end(), target) - span.begin());
    const int own = topo.llc_of(target);
    if (++gen_ == 0) {  // the stamps wrapped: start afresh
      std::fill(seen_.begin(), seen_.end(), 0);
      gen_ = 1;
    }
    seen_[own] = gen_;
    int64_t cost = 0;
    for (int i = 0; i < n; ++i) {
      const int llc = topo.llc_of(span[(start + i) % n]);
      if (seen_[llc] == gen_) continue;
      seen_[llc] = gen_;
      const int first = topo.llc_cpus(llc).front();  // cpumask_first(sched_group_span(sg))
      // test_idle_cores(): that LLC's shared line, read even without SMT (the flag is only
      // ever set with SMT active).
      cost += k.remote_read(this_cpu, first);
      const bool has_idle_core = topo.threads_per_core() > 1 && k.llc_shared(llc).has_idle_cores;
      counter(this_rq, kLlcs)++;
      const int cpu = select_idle_cpu(k, this_cpu, p, first, has_idle_core, cost);
      if (cpu >= 0) {
        counter(this_rq, kFound)++;
        return {.value = cpu, .cost_ns = cost};
      }
    }
    return {.value = found, .cost_ns = cost};
  }

 private:
  std::vector<uint32_t> seen_;  // by LLC id: == gen_ once this walk met it
  uint32_t gen_ = 0;
};
SCHEDLAB_REGISTER_CHANGE(SisNode);

}  // namespace
}  // namespace schedlab::kernel
