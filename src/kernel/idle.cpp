// kernel/sched/idle.c and drivers/cpuidle/cpuidle.c: the idle class, do_idle() in the kernel's
// order with its TIF_POLLING_NRFLAG windows, cpuidle_idle_call() (governor, NOHZ tick stop,
// call_cpuidle()'s clear-and-test), the states' enter and exit (POLL and MWAIT set polling again
// around their wait and clear it when they return), the POLL state's time limit.
//
// The polling bit is what a remote CPU tests (set_nr_if_polling(), set_nr_and_not_polling()):
// set, a wakeup or call-function kick is a store to the idle task's flags; clear, the remote CPU
// sends an IPI. In do_idle() it is
//   set   from __current_set_polling() through tick_nohz_idle_enter(), the loop's need_resched
//         test and the governor,
//   clear from call_cpuidle()'s clear-and-test through cpuidle_enter_state()'s bookkeeping,
//   set   inside POLL and MWAIT states (poll_idle(), mwait_idle_with_hints()), clear in HLT-like
//         ones, clear again when the state returns (and while the interrupt that woke the CPU is
//         handled), until exit_idle's __current_set_polling(),
//   set   through tick_nohz_idle_exit() when the loop ends, then clear for the call-queue flush,
//         schedule_idle() and the top of the next do_idle() (nohz_run_idle_balance()).
#include <algorithm>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/cpuidle.hpp"
#include "kernel/sched.hpp"
#include "kernel/tick.hpp"

namespace schedlab::kernel {

namespace {
constexpr int64_t kPollMinNs = 10000;  // CPUIDLE_POLL_MIN
}  // namespace

// --- the idle class -------------------------------------------------------------------------

namespace {
void enqueue_task_idle(Kernel&, Rq&, Task*) {}
void dequeue_task_idle(Kernel&, Rq&, Task*) {}
void put_prev_task_idle(Kernel&, Rq&, Task*) {}
Task* pick_task_idle(Kernel&, Rq& rq) { return rq.idle; }
bool wakeup_preempt_idle(Kernel&, Rq&, Task*) { return true; }
int select_task_rq_idle(Kernel&, int, Task*, Task* p, bool, int64_t&) { return p->cpu; }
void task_tick_idle(Kernel&, Rq&, Task*) {}
void yield_task_idle(Kernel&, Rq&) {}
}  // namespace

// set_next_task_idle() -> update_idle_core() (SMT only: the sched_smt_present key).
int64_t set_next_task_idle(Kernel& k, Rq& rq, Task*) {
  rq.c.sched_goidle++;  // schedstat
  if (k.topo.threads_per_core() < 2) return 0;
  return __update_idle_core(k, rq);
}

const SchedClass idle_sched_class = {
    .name = "idle",
    .rank = 0,
    .enqueue_task = enqueue_task_idle,
    .dequeue_task = dequeue_task_idle,
    .put_prev_task = put_prev_task_idle,
    .pick_task = pick_task_idle,
    .set_next_task = set_next_task_idle,
    .wakeup_preempt = wakeup_preempt_idle,
    .select_task_rq = select_task_rq_idle,
    .task_tick = task_tick_idle,
    .yield_task = yield_task_idle,
};

// --- do_idle() ------------------------------------------------------------------------------

// need_resched(), or with TIF_NOTIFY_IPI need_resched_or_ipi(): what ends the polling loops.
bool need_resched_or_ipi(const Kernel&, const Rq& rq) {
  return rq.need_resched || rq.notify_ipi;  // only TIF_NOTIFY_IPI sets notify_ipi
}

// do_idle() from the top: interrupts are on here (the rq unlock at the end of __schedule() took
// the pending ones). nohz_run_idle_balance() runs first, with polling still clear.
void do_idle(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  k.cpuidle(rq.cpu).poll_time_limit = false;
  // rq->idle_stamp is set by newidle balance; without it, here, so avg_idle still learns.
  if (!k.f.on(Feature::NEWIDLE_BALANCE) && !rq.idle_stamp_valid) {
    rq.idle_stamp = k.now();
    rq.idle_stamp_valid = true;
  }
  update_rq_util(k, rq);
  if (cpu.irqs_pending()) {
    cpu.set_mode(Mode::Kernel);
    cpu.process_pending_irqs(Resume::DoIdle);
    return;
  }
  if (nohz_run_idle_balance(k, rq))
    nohz_run_idle_balance_next(k, rq);
  else
    do_idle_polling(k, rq);
}

// __current_set_polling(); tick_nohz_idle_enter(); then the loop.
void do_idle_polling(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  rq.polling = true;
  // Changes' idle entry work is charged to the first idle entry step.
  for (Change* c : k.hooks(Hook::do_idle))
    k.cpuidle(rq.cpu).entry_extra_ns += c->on_do_idle(rq).cost_ns;
  cpu.push_step(KernelPath::IdleEntry, k.cost(k.m.costs.tick_nohz_idle_enter_ns));
  cpu.run_steps(Resume::IdleLoop);
}

// `while (!need_resched())`: interrupts are on between turns of the loop.
void do_idle_loop(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  if (cpu.irqs_pending()) {
    cpu.set_mode(Mode::Kernel);
    cpu.process_pending_irqs(Resume::IdleLoop);
    return;
  }
  if (need_resched_or_ipi(k, rq))
    do_idle_exit(k, rq);
  else
    cpuidle_idle_call(k, rq);
}

// The loop is left (need_resched seen, polling still set): tick_nohz_idle_exit() restarts the
// tick if it was stopped and accounts the idle time.
void do_idle_exit(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  int64_t c = k.cost(k.m.costs.tick_nohz_idle_exit_ns);
  if (k.tick_sched(rq.cpu).tick_stopped) {
    c += k.cost(k.m.costs.nohz_restart_tick_ns);
    tick_nohz_idle_restart_tick(k, rq.cpu);
  }
  cpu.push_step(KernelPath::IdleExit, c);
  cpu.run_steps(Resume::IdleFlush);
}

// __current_clr_polling(); smp_mb__after_atomic(); flush_smp_call_function_queue();
// schedule_idle(). The flush is CSD_POLL_KICK's (without it, the "revert", every csd came with an
// IPI whose handler runs the queue); with TIF_NOTIFY_IPI the flag is cleared before the flush
// and schedule_idle() runs only if need_resched() is set after it (Hook::do_idle_flush).
void do_idle_flush(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  rq.polling = false;
  rq.notify_ipi = false;
  IdleFlush what{.flush = false, .always_schedule = true};
  for (Change* c : k.hooks(Hook::do_idle_flush)) what = decided(c->on_do_idle_flush(rq, what));
  if (what.flush) flush_smp_call_function_queue(k, rq);
  cpu.run_steps(what.always_schedule ? Resume::IrqsThenScheduleIdle
                                     : Resume::IrqsThenScheduleIdleLoop);
}

// After __schedule() returned to the idle task (the rq unlock took the pending interrupts):
// schedule_idle()'s `while (need_resched())`, else back to the top of do_idle().
void schedule_idle_loop(Kernel& k, Rq& rq) {
  if (rq.need_resched)
    __schedule(k, rq, SchedMode::SM_IDLE);
  else
    do_idle(k, rq);
}

// --- cpuidle --------------------------------------------------------------------------------

// cpuidle_idle_call(): the governor and the NOHZ tick decision with polling set (the changes'
// do_idle() work is charged here); then call_cpuidle(). idle=poll skips cpuidle:
// cpu_idle_poll() with the tick kept, polling set all along.
void cpuidle_idle_call(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  const int nstates = static_cast<int>(k.m.idle_states.size());
  if (k.m.tunables.idle_poll) {
    int64_t c = 0;
    if (k.tick_sched(rq.cpu).tick_stopped) {  // tick_nohz_idle_restart_tick()
      c = k.cost(k.m.costs.nohz_restart_tick_ns);
      tick_nohz_idle_restart_tick(k, rq.cpu);
    }
    cpu.push_step(KernelPath::IdleEntry, c);
    cpu.run_steps(Continuation::enter_idle_state(nstates));
    return;
  }
  bool stop = false;
  int state = k.cpuidle().governor->select(k, rq, stop);
  if (state < 0) {
    state = nstates;  // default_idle_call(): HLT/WFI, not polling, tick stopped
    stop = true;
  }
  CpuidleDevice& dev = k.cpuidle(rq.cpu);
  int64_t c = k.cost(k.m.costs.cpuidle_select_ns) + dev.entry_extra_ns;
  dev.entry_extra_ns = 0;
  if (stop && !k.tick_sched(rq.cpu).tick_stopped) c += k.cost(k.m.costs.nohz_stop_tick_ns);
  cpu.push_step(KernelPath::IdleEntry, c);
  cpu.run_steps(Continuation::call_cpuidle(state, stop));
}

// tick_nohz_idle_stop_tick() as the governor asked, then call_cpuidle():
// current_clr_polling_and_test(). A kick that landed while polling was set is seen here and the
// state is not entered (-EBUSY); exit_idle sets polling again and the loop ends.
void call_cpuidle(Kernel& k, Rq& rq, int state, bool stop_tick) {
  Cpu& cpu = k.cpu(rq.cpu);
  if (stop_tick) tick_nohz_idle_stop_tick(k, rq.cpu);
  rq.polling = false;
  if (need_resched_or_ipi(k, rq)) {
    rq.c.cpuidle_rejected++;
    rq.polling = true;
    do_idle_loop(k, rq);
    return;
  }
  cpu.push_step(KernelPath::IdleEntry, k.cost(k.m.costs.cpuidle_enter_ns));
  cpu.run_steps(Continuation::enter_idle_state(state));
}

// The state's enter(): POLL (poll_idle()) and MWAIT states (mwait_idle_with_hints()) set polling
// again and test need_resched; HLT-like states leave it clear. An interrupt that arrived while
// polling was clear is pending: the state returns at once (MWAIT and HLT wake on it, POLL takes
// it as soon as it enables interrupts).
void cpuidle_enter_state(Kernel& k, Rq& rq, int state) {
  Cpu& cpu = k.cpu(rq.cpu);
  const auto& states = k.m.idle_states;
  const int nst = static_cast<int>(states.size());
  const bool idle_poll = state >= nst && k.m.tunables.idle_poll;
  const bool polls = state < nst ? states[state].polling : idle_poll;
  CpuidleDevice& dev = k.cpuidle(rq.cpu);
  dev.state = state;
  dev.entered = k.now();
  dev.polls_with_irqs_on = idle_poll || (state < nst && states[state].is_poll());
  rq.c.idle_usage[state]++;
  cpu.set_mode(Mode::Idle);
  cpu.account(k.bucket_for_idle(state));
  if (k.sink) k.sink->cpu_idle(k.now(), rq.cpu, state < nst ? state : 0);
  if (cpu.irqs_pending() || (polls && need_resched_or_ipi(k, rq))) {
    cpuidle_exit_state(k, rq, false);
    return;
  }
  rq.polling = polls;
  if (state < nst && states[state].is_poll()) {
    // cpuidle_poll_time(): first enabled state with residency >= POLL_MIN, capped at
    // TICK_NSEC / 16.
    int64_t limit = k.tick_period_ns() / 16;
    for (int i = state + 1; i < nst; ++i) {
      const auto& s = states[i];
      if (s.disabled || s.target_residency_ns < kPollMinNs) continue;
      limit = std::min(limit, s.target_residency_ns);
      break;
    }
    limit = k.cpuidle().governor->poll_time(k, rq, limit);
    k.ev.schedule(cpu.poll_limit, k.now() + Time::ns(limit));
  }
}

// poll_idle() hit its time limit: it returns (clearing polling) and the governor, seeing
// poll_time_limit, chooses a deeper state on the next turn of the loop.
void poll_idle_time_limit(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  if (cpu.mode() != Mode::Idle) return;  // in an interrupt: poll_idle_continue() sees the limit
  k.cpuidle(rq.cpu).poll_time_limit = true;
  cpuidle_exit_state(k, rq, true);
}

// poll_idle() / cpu_idle_poll() after an interrupt taken while polling: go on polling unless
// need_resched or the time limit passed meanwhile.
void poll_idle_continue(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  CpuidleDevice& dev = k.cpuidle(rq.cpu);
  const bool timed_out = !cpu.poll_limit.scheduled() && !k.m.tunables.idle_poll;
  if (need_resched_or_ipi(k, rq) || timed_out) {
    if (timed_out) dev.poll_time_limit = true;
    cpuidle_exit_state(k, rq, true);
    return;
  }
  cpu.set_mode(Mode::Idle);
  cpu.account(k.bucket_for_idle(dev.state));
}

// Leaving an idle state, by an interrupt (pending on the CPU) or by a polling kick: the state's
// real exit cost with polling clear (mwait_idle_with_hints() and poll_idle() end with
// current_clr_polling()), then local_irq_enable() takes the pending interrupts, still with
// polling clear.
void cpuidle_exit_state(Kernel& k, Rq& rq, bool slept) {
  Cpu& cpu = k.cpu(rq.cpu);
  CpuidleDevice& dev = k.cpuidle(rq.cpu);
  k.ev.deschedule(cpu.poll_limit);
  k.ev.deschedule(cpu.polling_wake);
  const int nst = static_cast<int>(k.m.idle_states.size());
  int state = dev.state;
  bool by_tick = cpu.tick_pending();
  k.cpuidle().governor->reflect(k, rq, state, (k.now() - dev.entered).count(), by_tick);
  if (k.sink) k.sink->cpu_idle(k.now(), rq.cpu, -1);
  int64_t exit = slept && state < nst ? k.m.idle_states[state].wake_cost_ns : 0;
  dev.state = -1;
  dev.polls_with_irqs_on = false;
  rq.polling = false;
  cpu.push_step(KernelPath::IdleExit, k.cost(exit));
  cpu.run_steps(Resume::CpuidleIrqsOn);
}

// The rest of cpuidle_enter_state() (residency and usage accounting) and cpuidle_reflect();
// exit_idle: __current_set_polling(); then the loop's need_resched test.
void cpuidle_exit_done(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  cpu.push_step(KernelPath::IdleExit, k.cost(k.m.costs.cpuidle_exit_ns));
  cpu.run_steps(Resume::ExitIdle);
}

void exit_idle(Kernel& k, Rq& rq) {
  rq.polling = true;
  do_idle_loop(k, rq);
}

}  // namespace schedlab::kernel
