// drivers/cpuidle: the per-CPU cpuidle device, the governor (an ops table picked at boot) and
// the menu governor's history of idle periods, reached through Kernel::cpuidle(),
// Kernel::cpuidle(cpu) and Kernel::menu(cpu) (idle.cpp, menu.cpp).
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

// A cpuidle governor (struct cpuidle_governor, drivers/cpuidle/governor.c): one table of
// functions picked once at boot -- menu, or haltpoll where the profile's machine.governor is
// "haltpoll" and HALTPOLL_GOVERNOR is on (changes/haltpoll_governor.cpp installs it) -- and
// called through the table, without a test of which governor in the idle path, as the
// platform's ops (guest.hpp) are.
struct CpuidleGovernorOps {
  const char* name;
  // ->select(): the state to enter (an index of the machine's idle states; -1: none usable, so
  // default_idle) and whether to stop the tick.
  int (*select)(Kernel& k, Rq& rq, bool& stop_tick);
  // ->reflect(): the CPU left `state` after `residency_ns` in it; by_tick: the tick woke it.
  void (*reflect)(Kernel& k, Rq& rq, int state, int64_t residency_ns, bool by_tick);
  // cpuidle_poll_time(): how long the POLL state polls, given the driver's limit (ns).
  int64_t (*poll_time)(Kernel& k, Rq& rq, int64_t limit_ns);
};
extern const CpuidleGovernorOps menu_governor;  // menu.cpp

struct CpuidleState {
  std::vector<CpuidleDevice> dev;
  std::vector<MenuDevice> menu;
  const CpuidleGovernorOps* governor = &menu_governor;
  void* governor_data = nullptr;  // the governor's own state (haltpoll: its change instance)
};

inline CpuidleState& Kernel::cpuidle() { return *cpuidle_; }
inline CpuidleDevice& Kernel::cpuidle(int cpu) { return cpuidle_->dev[cpu]; }
inline const CpuidleDevice& Kernel::cpuidle(int cpu) const { return cpuidle_->dev[cpu]; }
inline MenuDevice& Kernel::menu(int cpu) { return cpuidle_->menu[cpu]; }
inline const MenuDevice& Kernel::menu(int cpu) const { return cpuidle_->menu[cpu]; }

}  // namespace schedlab::kernel
