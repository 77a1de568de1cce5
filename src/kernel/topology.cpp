// kernel/sched/topology.c: the topology tables and the sched domains built from the machine:
// SMT, MC (the LLC), PKG, NUMA; degenerate levels (same span as the child) are dropped. A
// domain's span points into the shared tables (one copy per core, LLC, socket, machine).
#include "kernel/topology.hpp"

#include <algorithm>

#include "kernel/sched.hpp"

namespace schedlab::kernel {

CpuTopology::CpuTopology(const machine::Topology& t)
    : threads_per_core_(t.threads_per_core), llc_size_(t.llc_size()) {
  int n = t.nr_cpus();
  core_id_.resize(n);
  llc_id_.resize(n);
  socket_id_.resize(n);
  core_cpus_.resize(t.nr_cores());
  llc_cpus_.resize(t.nr_llcs());
  socket_cpus_.resize(t.sockets);
  for (int cpu = 0; cpu < n; ++cpu) {  // ascending, so every span is ascending
    core_id_[cpu] = t.core_of(cpu);
    llc_id_[cpu] = t.llc_of(cpu);
    socket_id_[cpu] = t.socket_of(cpu);
    core_cpus_[core_id_[cpu]].push_back(cpu);
    llc_cpus_[llc_id_[cpu]].push_back(cpu);
    socket_cpus_[socket_id_[cpu]].push_back(cpu);
    all_cpus_.push_back(cpu);
  }
}

const char* sd_level_name(SdLevel l) {
  switch (l) {
    case SdLevel::SMT: return "SMT";
    case SdLevel::MC: return "MC";
    case SdLevel::PKG: return "PKG";
    case SdLevel::NUMA: return "NUMA";
  }
  return "?";
}

void build_sched_domains(Kernel& k) {
  const CpuTopology& topo = k.topo;
  for (int cpu = 0; cpu < k.nr_cpus(); ++cpu) {
    Rq& rq = k.rq(cpu);
    const std::pair<SdLevel, CpuSpan> levels[] = {
        {SdLevel::SMT, topo.smt_mask(cpu)},
        {SdLevel::MC, topo.llc_cpus(topo.llc_of(cpu))},
        {SdLevel::PKG, topo.socket_cpus(topo.socket_of(cpu))},
        {SdLevel::NUMA, topo.all_cpus()},
    };
    size_t prev_size = 1;
    for (const auto& [level, span] : levels) {
      if (span.size() <= prev_size) continue;  // degenerate
      prev_size = span.size();
      SchedDomain sd;
      sd.level = level;
      sd.span = span;  // lowest_sd_level_spanning() relies on it: the level's topology span
      int64_t w = static_cast<int64_t>(span.size());
      sd.min_interval_ms = w;
      sd.max_interval_ms = 2 * w;
      sd.balance_interval_ms = w;
      sd.imbalance_pct = level == SdLevel::SMT ? kSdImbalancePctSmt : kSdImbalancePct;
      sd.cache_nice_tries = level == SdLevel::SMT ? 0 : level == SdLevel::NUMA ? 2 : 1;
      // A machine that has been up a while: the CPUs of a domain are due for balancing at
      // evenly spread times rather than all at once (as they would be right after boot).
      int64_t pos = std::lower_bound(span.begin(), span.end(), cpu) - span.begin();
      sd.last_balance = Time() - Time::ms(w) * pos / w;
      sd.is_llc = static_cast<int>(span.size()) == topo.llc_size() && level != SdLevel::SMT;
      if (level == SdLevel::SMT && topo.llc_size() == static_cast<int>(span.size()))
        sd.is_llc = true;
      rq.sd.push_back(sd);
    }
  }
}

}  // namespace schedlab::kernel
