// kernel/time/tick-sched.c's per-CPU state (struct tick_sched), reached through
// Kernel::tick_sched(cpu) (tick.cpp, idle.cpp).
#pragma once
#include <vector>

#include "kernel/base.hpp"

namespace schedlab::kernel {

// Per-CPU state of the tick (struct tick_sched).
struct TickSched {
  bool tick_stopped = false;
};

struct TickState {
  std::vector<TickSched> cpus;
};

inline TickSched& Kernel::tick_sched(int cpu) { return tick_->cpus[cpu]; }
inline const TickSched& Kernel::tick_sched(int cpu) const { return tick_->cpus[cpu]; }

}  // namespace schedlab::kernel
