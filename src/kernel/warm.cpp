// The warm start: the machine begins as one that has been up and idle for a while, not as one
// that has just booted (KernelOptions::cold, `--cold`, keeps the boot state). What an idle,
// tickless machine's own mechanisms leave behind, each as the kernel function that leaves it
// (docs/model.md, "Warm start"):
//  - sched_balance_domains() (rebalance_domains()): each CPU last balanced its domains at the
//    jiffy it was last awake (seeded, uniform over the last kWarmIdleWakeNs: the CPUs' histories
//    differ, so their balances are staggered), all of them found balanced, so each domain's
//    balance_interval has doubled to max_interval (sched_balance_rq()'s out_balanced path);
//    rq->next_balance follows (update_next_balance()), and nohz.next_balance is their minimum.
//  - update_idle_cpu_scan() (SIS_UTIL) at that balance: an idle LLC scans all its CPUs.
//  - __update_idle_core(): an idle SMT machine has idle cores (as at boot).
//  - PELT: the signals of a long-idle CPU have decayed (util 0) and there is no blocked load
//    left to decay (sched_balance_update_blocked_averages() cleared rq->has_blocked_load, and
//    _nohz_idle_balance() nohz.has_blocked).
//  - tick_nohz_idle_stop_tick() / nohz_balance_enter_idle(): the tick is stopped on every CPU
//    (not with idle=poll: cpu_idle_poll() keeps it), each CPU is in nohz.idle_cpus_mask and out
//    of its LLC's nr_busy_cpus (set_cpu_sd_state_idle()).
//  - menu_update(): the governor's last INTERVALS idle periods were each as long as the time
//    between the CPU's wakeups; sched_balance_newidle() set rq->idle_stamp when it last went idle.
#include <algorithm>

#include "kernel/cpuidle.hpp"
#include "kernel/sched.hpp"
#include "kernel/tick.hpp"

namespace schedlab::kernel {

namespace {
// The model's assumption for an idle server: each CPU was last awake (a timer, a kworker, with
// its tick running) within the last second, and its idle periods last about that long.
constexpr int64_t kWarmIdleWakeNs = 1000LL * 1000 * 1000;
}  // namespace

int64_t warm_idle_wake_ns() { return kWarmIdleWakeNs; }

void warm_start(Kernel& k) {
  const int n = k.nr_cpus();
  const int64_t period = k.tick_period_ns();
  const int64_t window_jiffies = std::max<int64_t>(1, kWarmIdleWakeNs / period);
  sim::Rng rng = k.rng.split("warm/last-wake");
  const bool tickless = !k.m.tunables.idle_poll;
  bool any_next = false;
  Time nohz_next;
  for (int cpu = 0; cpu < n; ++cpu) {
    Rq& rq = k.rq(cpu);
    // The jiffy this CPU was last awake: 1 .. window_jiffies ticks before t = 0.
    const int64_t ago = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(window_jiffies)));
    const int64_t last_jiffy = k.jiffies() - ago;
    const Time last = Time::ns(last_jiffy * period + k.tick_phase_ns());
    Time next = Time::max();
    for (SchedDomain& sd : rq.sd) {
      sd.balance_interval_ms = sd.max_interval_ms;
      sd.last_balance = last;
      next = std::min(next, last + Time::ms(sd.balance_interval_ms));
    }
    if (!rq.sd.empty()) {
      rq.next_balance = next;
      nohz_next = any_next ? std::min(nohz_next, next) : next;
      any_next = true;
    }
    rq.idle_balance = true;
    rq.idle_stamp = last;
    rq.idle_stamp_valid = true;
    rq.has_blocked_load = false;
    rq.last_blocked_load_update_tick = last_jiffy;
    MenuDevice& menu = k.menu(cpu);
    for (int i = 0; i < MenuDevice::kIntervals; ++i) menu.intervals[i] = kWarmIdleWakeNs;
    menu.nr = MenuDevice::kIntervals;
    if (tickless) {
      k.tick_sched(cpu).tick_stopped = true;
      if (!rq.sd.empty()) {
        rq.nohz_tick_stopped = true;
        k.nohz().idle_cpus_mask[cpu >> 6] |= 1ULL << (cpu & 63);
        k.nohz().nr_cpus++;
        rq.sd_nohz_idle = true;
        k.llc_shared(rq.llc).nr_busy_cpus--;
      }
    }
  }
  k.nohz().has_blocked = false;
  k.nohz().needs_update = false;
  if (any_next) k.nohz().next_balance = nohz_next.count() / period;
  if (k.f.on(Feature::SIS_UTIL))
    for (int l = 0; l < k.topo.nr_llcs(); ++l) update_idle_cpu_scan(k, l);
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!tickless) tick_sched_timer_start(k, cpu);
    do_idle(k, k.rq(cpu));
  }
}

}  // namespace schedlab::kernel
