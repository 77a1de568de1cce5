// IDLE_CPUMASK: a per-LLC mask of idle CPUs for the wakeup scan (Aubrey Li, "[RFC PATCH v1]
// sched/fair: select idle cpu from idle cpumask in sched domain", 2020; not merged).
// select_idle_cpu() scans only the CPUs whose bit is set, still checking each with
// available_idle_cpu(). A CPU sets its bit when it passes through do_idle()'s loop with nothing
// to run, and clears it lazily at its next busy tick, so the mask can hold stale bits (counted:
// idle_cpumask_stale). The mask is one shared line per LLC (cacheline.hpp, class idle_cpumask),
// so each write costs a line transfer within the LLC (the writer's RFO, the reviewers' concern),
// and the scan's first read of the mask after another CPU wrote it pays the transfer from the
// writer (later reads in the same scan hit).
#include <vector>

#include "kernel/cacheline.hpp"
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class IdleCpumask final : public Change {
 public:
  enum Counter { kStale };

  IdleCpumask(Kernel& k, const ChangeType& t)
      : Change(k, t), mask_(k.nr_cpus(), 1), lines_(k.topo.nr_llcs()) {
    for (int l = 0; l < k.topo.nr_llcs(); ++l) lines_[l].init(k.nr_cpus(), k.topo.llc_cpus(l).front());
  }

  static ChangeInfo info() {
    return {
        .name = "IDLE_CPUMASK",
        .default_on = false,
        .help =
            "select_idle_cpu() scans a per-LLC mask of idle CPUs, set on idle entry, cleared at "
            "the busy tick (2020 RFC)",
        .origin =
            "Aubrey Li, [RFC PATCH v1] sched/fair: select idle cpu from idle cpumask in sched "
            "domain (LKML, 2020; not merged)",
        .counters = {{"idle_cpumask_stale", "count",
                      "select_idle_cpu() visits of a CPU whose bit was set but which was busy",
                      true}}};
  }

  // The RFC sets the bit on a pass through do_idle()'s loop, i.e. only when there is really
  // nothing to run; the write is charged to the idle entry step.
  HookResult<> on_do_idle(Rq& rq) override { return {.cost_ns = update(rq, true)}; }
  HookResult<> on_sched_tick(Rq& rq) override {
    return {.cost_ns = idle_cpu(k, rq.cpu) ? 0 : update(rq, false)};
  }
  HookResult<bool> on_select_idle_cpu_candidate(Rq& this_rq, int cpu, bool candidate) override {
    // cpumask_and(cpus, sched_domain_span(sd), idle_mask): the line is read once per scan in
    // the kernel; here on each candidate, which after the first read is a hit (free).
    int64_t read = line_read(k, lines_[k.topo.llc_of(cpu)], LineClass::IdleCpumask, this_rq.cpu,
                             k.now());
    return {.value = candidate && mask_[cpu], .cost_ns = read};
  }
  void on_select_idle_cpu_visit(Rq& this_rq, int cpu, bool idle) override {
    if (mask_[cpu] && !idle) counter(this_rq, kStale)++;
  }

 private:
  // Writes this CPU's bit if it changed: a line transfer within the LLC.
  int64_t update(Rq& rq, bool idle) {
    if (mask_[rq.cpu] == idle) return 0;
    mask_[rq.cpu] = idle;
    line_write(lines_[rq.llc], rq.cpu);
    return k.remote_read(Distance::Llc);
  }

  std::vector<char> mask_;  // the LLCs' idle masks, by CPU id (the RFC starts from the span)
  std::vector<CacheLine> lines_;  // each LLC's mask line
};
SCHEDLAB_REGISTER_CHANGE(IdleCpumask);

}  // namespace
}  // namespace schedlab::kernel
