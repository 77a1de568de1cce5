// drivers/cpuidle: the per-CPU cpuidle device, the menu governor's history of idle periods,
// reached through Kernel::cpuidle(cpu) and Kernel::menu(cpu) (idle.cpp, menu.cpp).
#pragma once
#include <vector>

#include "kernel/base.hpp"

namespace schedlab::kernel {

// Per-CPU state of cpuidle: the device (drivers/cpuidle) and the menu governor's history.
struct CpuidleDevice {
  int state = -1;               // cpuidle state index while in Mode::Idle
  Time entered;                 // when the state was entered
  bool poll_time_limit = false; // POLL hit its time limit in this idle period
  int64_t entry_extra_ns = 0;   // work do_idle() owes to the next idle entry step
  bool polls_with_irqs_on = false;  // in poll_idle() / cpu_idle_poll(): interrupts taken inside
};
struct MenuDevice {
  static constexpr int kIntervals = 8;  // menu.c INTERVALS
  int64_t intervals[kIntervals] = {};   // recent idle durations (ns), oldest first
  int nr = 0;
};

struct CpuidleState {
  std::vector<CpuidleDevice> dev;
  std::vector<MenuDevice> menu;
};

inline CpuidleState& Kernel::cpuidle() { return *cpuidle_; }
inline CpuidleDevice& Kernel::cpuidle(int cpu) { return cpuidle_->dev[cpu]; }
inline const CpuidleDevice& Kernel::cpuidle(int cpu) const { return cpuidle_->dev[cpu]; }
inline MenuDevice& Kernel::menu(int cpu) { return cpuidle_->menu[cpu]; }
inline const MenuDevice& Kernel::menu(int cpu) const { return cpuidle_->menu[cpu]; }

}  // namespace schedlab::kernel
