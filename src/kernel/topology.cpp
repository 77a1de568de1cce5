// kernel/sched/topology.c: sched domains built from the machine: SMT, MC (the LLC), PKG, NUMA;
// degenerate levels (same span as the child) are dropped.
#include <algorithm>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
constexpr int kImbalancePctSmt = 110;  // sd_init(): SMT level
constexpr int kImbalancePct = 117;     // sd_init(): other levels
}  // namespace

void Kernel::build_sched_domains() {
  const auto& topo = m_.topo;
  for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
    Rq& rq = rqs_[cpu];
    std::vector<std::pair<std::string, std::vector<int>>> levels;
    auto smt = topo.smt_siblings(cpu);
    std::sort(smt.begin(), smt.end());
    levels.push_back({"SMT", smt});
    levels.push_back({"MC", topo.llc_cpus(topo.llc_of(cpu))});
    levels.push_back({"PKG", topo.socket_cpus(topo.socket_of(cpu))});
    std::vector<int> all(nr_cpus());
    for (int i = 0; i < nr_cpus(); ++i) all[i] = i;
    levels.push_back({"NUMA", all});
    size_t prev_size = 1;
    for (auto& [name, span] : levels) {
      std::sort(span.begin(), span.end());
      if (span.size() <= prev_size) continue;  // degenerate
      prev_size = span.size();
      SchedDomain sd;
      sd.name = name;
      sd.span = span;
      int64_t w = static_cast<int64_t>(span.size());
      sd.min_interval_ms = w;
      sd.max_interval_ms = 2 * w;
      sd.balance_interval_ms = w;
      sd.imbalance_pct = name == "SMT" ? kImbalancePctSmt : kImbalancePct;
      // A machine that has been up a while: the CPUs of a domain are due for balancing at
      // evenly spread times rather than all at once (as they would be right after boot).
      int64_t pos = std::find(span.begin(), span.end(), cpu) - span.begin();
      sd.last_balance = Time() - Time::ms(w) * pos / w;
      sd.is_llc = static_cast<int>(span.size()) == topo.llc_size() && name != "SMT";
      if (name == "SMT" && topo.llc_size() == static_cast<int>(span.size())) sd.is_llc = true;
      rq.sd.push_back(sd);
    }
  }
}

}  // namespace schedlab::kernel
