// kernel/sched/idle.c and drivers/cpuidle/cpuidle.c: the idle class, do_idle() with
// TIF_POLLING_NRFLAG, cpuidle_idle_call() (governor, NOHZ tick stop, state entry and exit), the
// POLL state's time limit.
#include <algorithm>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
constexpr int64_t kPollMinNs = 10000;  // CPUIDLE_POLL_MIN
// menu_update(): a wakeup by the tick says little about how long the idle period would have
// been; menu records 9/10 of MAX_INTERESTING (50 ms) instead.
constexpr int64_t kTickWakeupNs = 45LL * 1000 * 1000;
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

// set_next_task_idle() -> __update_idle_core(): reading the SMT siblings' state costs a line
// transfer each.
int64_t set_next_task_idle(Kernel& k, Rq& rq, Task*) {
  int64_t c = 0;
  if (k.topo.threads_per_core() > 1) {
    for (int s : k.topo.smt_mask(rq.cpu))
      if (s != rq.cpu) c += k.remote_read(Distance::Smt);
    __update_idle_core(k, rq);
  }
  return c;
}

const SchedClass idle_sched_class = {
    "idle",           0,
    enqueue_task_idle, dequeue_task_idle, put_prev_task_idle, pick_task_idle,
    set_next_task_idle, wakeup_preempt_idle, select_task_rq_idle, task_tick_idle,
    yield_task_idle,
};

// --- do_idle() ------------------------------------------------------------------------------

// do_idle(): set TIF_POLLING_NRFLAG, then loop choosing and entering idle states until
// need_resched; then flush the call queue and schedule_idle().
void do_idle(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  rq.polling = true;
  k.cpuidle[rq.cpu].poll_time_limit = false;
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
  if (rq.need_resched) {
    do_idle_exit(k, rq);
    return;
  }
  // Nothing to run: changes' idle entry work is charged to the idle entry step.
  for (Change* c : k.hooks(Hook::do_idle)) k.cpuidle[rq.cpu].entry_extra_ns += c->on_do_idle(rq);
  cpuidle_idle_call(k, rq);
}

// The next turn of do_idle()'s loop: take interrupts that arrived meanwhile, then leave the loop
// if need_resched is set, else choose and enter a state again.
void do_idle_loop(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  if (cpu.irqs_pending()) {
    cpu.process_pending_irqs(Resume::IdleLoop);
    return;
  }
  if (rq.need_resched)
    do_idle_exit(k, rq);
  else
    cpuidle_idle_call(k, rq);
}

// need_resched seen: clear polling, restart the tick (tick_nohz_idle_exit()),
// flush_smp_call_function_queue(), then schedule_idle().
void do_idle_exit(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  rq.polling = false;
  for (Change* c : k.hooks(Hook::do_idle_exit))
    if (int64_t ns = c->on_do_idle_exit(rq); ns > 0) cpu.push_step(KernelPath::IdleExit, ns);
  if (k.tick_sched[rq.cpu].tick_stopped) {
    cpu.push_step(KernelPath::IdleExit, k.cost(k.m.costs.nohz_restart_tick_ns));
    tick_nohz_idle_restart_tick(k, rq.cpu);
  }
  __flush_smp_call_function_queue(k, rq);
  cpu.run_steps(Resume::IrqsThenScheduleIdle);
}

// --- cpuidle --------------------------------------------------------------------------------

// cpuidle_idle_call(): governor, NOHZ tick stop, call_cpuidle() which clears polling before a
// non-polling state, then the state itself (cpuidle_enter_state(), after the entry work).
void cpuidle_idle_call(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  bool stop = false;
  int state;
  const int nstates = static_cast<int>(k.m.idle_states.size());
  if (k.m.tunables.idle_poll) {
    state = nstates;  // cpu_idle_poll(): polling, tick kept, no cpuidle
  } else {
    state = menu_select(k, rq, stop);
    if (state < 0) {
      state = nstates;  // default_idle_call(): HLT/WFI, not polling, tick stopped
      stop = true;
    }
  }
  for (Change* ch : k.hooks(Hook::cpuidle_select)) ch->on_cpuidle_select(rq, state, stop);
  CpuidleDevice& dev = k.cpuidle[rq.cpu];
  int64_t c = k.m.tunables.idle_poll ? 0 : k.cost(k.m.costs.cpuidle_select_ns);
  c += dev.entry_extra_ns;
  dev.entry_extra_ns = 0;
  if (stop && !k.tick_sched[rq.cpu].tick_stopped) c += k.cost(k.m.costs.nohz_stop_tick_ns);
  cpu.push_step(KernelPath::IdleEntry, c);
  cpu.enter_state = state;
  cpu.enter_stop_tick = stop;
  cpu.run_steps(Resume::EnterIdleState);
}

void cpuidle_enter_state(Kernel& k, Rq& rq, int state, bool stop_tick) {
  Cpu& cpu = k.cpus[rq.cpu];
  if (cpu.irqs_pending() || rq.need_resched) {  // e.g. a polling wakeup meanwhile
    do_idle_loop(k, rq);
    return;
  }
  const auto& states = k.m.idle_states;
  const int nst = static_cast<int>(states.size());
  bool polls = state < nst ? states[state].polling : k.m.tunables.idle_poll;
  rq.polling = polls;
  if (stop_tick) tick_nohz_idle_stop_tick(k, rq.cpu);
  CpuidleDevice& dev = k.cpuidle[rq.cpu];
  dev.state = state;
  dev.entered = k.now();
  rq.c.idle_usage[state]++;
  cpu.set_mode(Mode::Idle);
  cpu.account(k.bucket_for_idle(state));
  if (k.sink) k.sink->cpu_idle(k.now(), rq.cpu, state < nst ? state : 0);
  if (state < nst && states[state].name == "POLL") {
    // cpuidle_poll_time(): first enabled state with residency >= POLL_MIN, capped at
    // TICK_NSEC / 16.
    int64_t limit = k.tick_ns() / 16;
    for (int i = state + 1; i < nst; ++i) {
      const auto& s = states[i];
      if (s.disabled || s.target_residency_ns < kPollMinNs) continue;
      limit = std::min(limit, s.target_residency_ns);
      break;
    }
    k.ev.schedule(cpu.poll_limit, k.now() + Time::ns(limit));
  }
}

// poll_idle() hit its time limit: leave POLL and let the governor choose again.
void poll_idle_time_limit(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  if (cpu.mode() != Mode::Idle) return;
  menu_update(k, rq.cpu, (k.now() - k.cpuidle[rq.cpu].entered).count());
  if (k.sink) k.sink->cpu_idle(k.now(), rq.cpu, -1);
  k.cpuidle[rq.cpu].poll_time_limit = true;
  rq.polling = true;
  cpuidle_idle_call(k, rq);
}

// Leaving an idle state: by an interrupt (irq != null) or by a polling wakeup. Pays the state's
// real exit cost, runs the interrupt, then either leaves the idle loop (need_resched) or picks a
// state again.
void cpuidle_exit_state(Kernel& k, Rq& rq, const Irq* irq) {
  Cpu& cpu = k.cpus[rq.cpu];
  CpuidleDevice& dev = k.cpuidle[rq.cpu];
  k.ev.deschedule(cpu.poll_limit);
  k.ev.deschedule(cpu.polling_wake);
  const int nst = static_cast<int>(k.m.idle_states.size());
  int state = dev.state;
  bool by_tick = irq && irq->kind == Irq::Tick;
  menu_update(k, rq.cpu, by_tick ? kTickWakeupNs : (k.now() - dev.entered).count());
  if (k.sink) k.sink->cpu_idle(k.now(), rq.cpu, -1);
  int64_t exit = state < nst ? k.m.idle_states[state].wake_cost_ns : 0;
  dev.state = -1;
  rq.polling = true;  // exit_idle: __current_set_polling()
  int64_t exit_ns = k.cost(exit);
  for (Change* c : k.hooks(Hook::cpuidle_exit)) exit_ns += c->on_cpuidle_exit(rq, state, irq);
  cpu.push_step(KernelPath::IdleExit, exit_ns);
  if (irq) {
    cpu.wake_irq = *irq;
    cpu.run_steps(Resume::IdleWakeIrq);
  } else {
    cpu.run_steps(Resume::DoIdleExit);
  }
}

}  // namespace schedlab::kernel
