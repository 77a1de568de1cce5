// Where schedstat's per-domain counters (counters.hpp: PerSd, PerSdIdle) of a CPU are kept: by
// the level of the domain and, for sched_balance_rq()'s, the CPU's idle type.
#pragma once
#include <algorithm>

#include "kernel/sched.hpp"

namespace schedlab::kernel {

// enum cpu_idle_type (include/linux/sched/idle.h, v6.x order).
enum class CpuIdleType : int { NotIdle = 0, Idle = 1, NewlyIdle = 2 };

inline int sd_idle_index(const SchedDomain& sd, CpuIdleType t) {
  return static_cast<int>(sd.level) * kNumIdleTypes + static_cast<int>(t);
}

// The level of the lowest of rq's domains whose span holds `cpu` (for_each_domain() in
// ttwu_stat() and select_task_rq_fair()), or -1. A domain's span is its level's topology span of
// rq.cpu (build_sched_domains(): the core, the LLC, the socket, all CPUs), so membership is a
// comparison of topology ids instead of a search of the span.
inline int lowest_sd_level_spanning(const CpuTopology& topo, const Rq& rq, int cpu) {
  const int self = rq.cpu;
  for (const auto& sd : rq.sd) {
    bool in = true;
    switch (sd.level) {
      case SdLevel::SMT: in = topo.core_of(self) == topo.core_of(cpu); break;
      case SdLevel::MC: in = topo.llc_of(self) == topo.llc_of(cpu); break;
      case SdLevel::PKG: in = topo.socket_of(self) == topo.socket_of(cpu); break;
      case SdLevel::NUMA: break;
    }
    if (in) return static_cast<int>(sd.level);
  }
  return -1;
}

}  // namespace schedlab::kernel
