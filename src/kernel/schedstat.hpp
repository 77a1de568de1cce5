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
// ttwu_stat() and select_task_rq_fair()), or -1.
inline int lowest_sd_level_spanning(const Rq& rq, int cpu) {
  for (const auto& sd : rq.sd)
    if (std::binary_search(sd.span.begin(), sd.span.end(), cpu)) return static_cast<int>(sd.level);
  return -1;
}

}  // namespace schedlab::kernel
