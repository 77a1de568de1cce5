// kernel/time/tick-sched.c: the periodic scheduler tick and NOHZ idle (the tick stopped while
// a CPU idles; entering it joins nohz.idle_cpus_mask, balance.cpp).
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"
#include "kernel/tick.hpp"

namespace schedlab::kernel {

// Arms the CPU's tick at the next jiffy boundary (if it is not armed).
void tick_sched_timer_start(Kernel& k, int cpu) {
  CpuEvent& t = k.cpu(cpu).tick;
  if (t.scheduled()) return;
  // The next jiffy boundary after now, the boundaries offset by the run's phase.
  int64_t period = k.tick_period_ns();
  int64_t since = k.now().count() - k.tick_phase_ns();
  int64_t q = since >= 0 ? since / period : -((-since + period - 1) / period);
  int64_t next = (q + 1) * period + k.tick_phase_ns();
  k.ev.schedule(t, Time::ns(next));
}

// tick_nohz_idle_stop_tick(): on the transition to a stopped tick, nohz_balance_enter_idle().
void tick_nohz_idle_stop_tick(Kernel& k, int cpu) {
  if (!k.tick_sched(cpu).tick_stopped) nohz_balance_enter_idle(k, k.rq(cpu));
  k.tick_sched(cpu).tick_stopped = true;
  k.ev.deschedule(k.cpu(cpu).tick);
}

// tick_nohz_idle_restart_tick(). The scheduler's NOHZ state (nohz.idle_cpus_mask) is left
// lazily, at the CPU's first busy tick (nohz_balancer_kick()).
void tick_nohz_idle_restart_tick(Kernel& k, int cpu) {
  k.tick_sched(cpu).tick_stopped = false;
  tick_sched_timer_start(k, cpu);
}

// tick_sched_timer(): re-arm, then the tick interrupt (sched_tick() runs in its handler).
void tick_sched_timer(Kernel& k, int cpu) {
  if (k.tick_sched(cpu).tick_stopped) return;
  tick_sched_timer_start(k, cpu);
  k.cpu(cpu).deliver_irq(Irq::of_tick());
}

}  // namespace schedlab::kernel
