// The CPU execution engine (cpu.hpp): task segments, kernel chains with IRQs off, interrupts
// that split a task segment, the resume points, and time accounting (busy + kernel paths +
// idle states = simulated time).
#include "kernel/cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <utility>

#include "kernel/change.hpp"
#include "kernel/cpuidle.hpp"
#include "kernel/deferred.hpp"
#include "kernel/guest.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

void StepChain::grow() {
  const size_t cap = cap_ == 0 ? 16 : 2 * cap_;
  std::unique_ptr<KernelStep[]> d(new KernelStep[cap]);
  std::copy(data_.get(), data_.get() + n_, d.get());
  data_ = std::move(d);
  cap_ = cap;
}

void CpuEvent::process() {
  Cpu& c = *owner;
  switch (kind) {
    case StepEnd: c.step_done(); return;
    case SegmentEnd: c.task_segment_done(); return;
    case Tick: tick_sched_timer(*k, cpu); return;
    case PollLimit: poll_idle_time_limit(*k, k->rq(cpu)); return;
    case PollingWake:
      if (c.mode() == Mode::Idle) cpuidle_exit_state(*k, k->rq(cpu), true);
      return;
  }
}

void Cpu::init(Kernel& k, int cpu) {
  k_ = &k;
  rq_ = &k.rq(cpu);
  cpu_ = cpu;
  core_ = k.topo.core_of(cpu);
  if (k.topo.threads_per_core() == 2) {
    for (int s : k.topo.smt_mask(cpu))
      if (s != cpu) sibling_ = &k.cpu(s);
  }
  auto set = [&](CpuEvent& e, CpuEvent::Kind kind) {
    e.k = &k;
    e.owner = this;
    e.cpu = cpu;
    e.kind = kind;
  };
  set(step_end_, CpuEvent::StepEnd);
  set(segment_end_, CpuEvent::SegmentEnd);
  set(tick, CpuEvent::Tick);
  set(poll_limit, CpuEvent::PollLimit);
  set(polling_wake, CpuEvent::PollingWake);
  bucket_ = k.bucket_for_path(KernelPath::IdleEntry);
}

// --- accounting -----------------------------------------------------------------------------


// --- SMT co-run speed -----------------------------------------------------------------------

// Called in task mode, so this CPU is one of the core's busy threads.
double Cpu::smt_speed() const {
  int busy = k_->core_busy(core_);
  if (busy <= 1) return 1.0;
  // Per-thread rate when `busy` threads share the core: the pair throughput split evenly.
  return k_->m.costs.smt_pair_throughput / busy;
}

void Cpu::refresh_speed() {
  if (mode_ == Mode::Task && rq_->curr->in_compute && !rq_->curr->waiting_csd) {
    pause_task_segment();
    start_task_segment();
  }
}

void Cpu::refresh_sibling_speed() {
  if (sibling_) {
    sibling_->refresh_speed();
    return;
  }
  if (k_->topo.threads_per_core() < 2) return;
  for (int s : k_->topo.smt_mask(cpu_))
    if (s != cpu_) k_->cpu(s).refresh_speed();
}

// A thread in the POLL state (or idle=poll) spins on PAUSE: it keeps its share of the core's
// statically partitioned resources, so it counts in core_busy as a busy thread does; a thread
// halted in HLT / MWAIT / WFI gives them back (docs/model.md "SMT").
void Cpu::set_mode_counts(Mode m) {
  bool active = true;
  bool polls = false;
  if (m == Mode::Idle)
    active = polls = k_->cpuidle(cpu_).polls_with_irqs_on;
  else if (m != Mode::Kernel)
    polls = m == Mode::Spin || rq_->curr->waiting_csd;
  if (active != active_) {
    active_ = active;
    k_->core_busy(core_) += active ? 1 : -1;
    refresh_sibling_speed();
  }
  if (polls != polls_) {
    polls_ = polls;
    k_->core_polls(core_) += polls ? 1 : -1;
    if (sibling_) {
      sibling_->note_beside_poll();
    } else if (k_->topo.threads_per_core() > 1) {
      for (int s : k_->topo.smt_mask(cpu_))
        if (s != cpu_) k_->cpu(s).note_beside_poll();
    }
  }
}

// smt_beside_poll_ns: the time a task segment of this CPU ran while a sibling polled.
void Cpu::note_beside_poll() {
  const bool beside = segment_end_.scheduled() && k_->core_polls(core_) > (polls_ ? 1 : 0);
  if (beside == beside_poll_) return;
  if (beside)
    beside_start_ = k_->now();
  else
    rq_->c.smt_beside_poll_ns += (k_->now() - beside_start_).count();
  beside_poll_ = beside;
}

// --- kernel chains --------------------------------------------------------------------------

// A step's effect may push steps (and so move the vector): it runs on a copy of the step, made
// only when there is an effect.
void Cpu::step_next() {
  while (head_ < steps_.size() && steps_[head_].ns <= 0) {
    if (steps_[head_].done == StepDone::None) {
      ++head_;
      continue;
    }
    KernelStep s = steps_[head_++];
    step_effect(s);
  }
  if (head_ == steps_.size()) {
    steps_.clear();
    head_ = 0;
    Continuation r = after_steps_;
    after_steps_.clear();
    resume(r);
    return;
  }
  const KernelStep& s = steps_[head_];
  account(k_->bucket_for_path(s.path));
  kstep_start_ = k_->now();
  k_->ev.schedule(step_end_, k_->now() + Time::ns(s.ns));
}

void Cpu::step_done() {
  const KernelStep& cur = steps_[head_++];
  if (k_->sink) k_->sink->kernel_slice(cpu_, kstep_start_, k_->now(), cur.path);
  if (!cur.irqs_on) rq_->c.irqs_off_ns += (k_->now() - kstep_start_).count();
  if (cur.done != StepDone::None) {
    KernelStep s = cur;
    step_effect(s);
  }
  step_next();
}

// An interrupt arrives during a step that runs with interrupts enabled: the step stops, the
// handler's steps run, then the rest of the step.
void Cpu::interrupt_step(const Irq& irq) {
  KernelStep& s = steps_[head_];
  s.ns = (step_end_.when() - k_->now()).count();
  k_->ev.deschedule(step_end_);
  if (k_->sink) k_->sink->kernel_slice(cpu_, kstep_start_, k_->now(), s.path);
  const size_t mark = steps_mark();
  inserting_at_ = mark;
  push_irq_steps(irq);
  inserting_at_ = SIZE_MAX;
  insert_pushed_steps(mark);
  step_next();
}

void Cpu::insert_pushed_steps(size_t mark) {
  std::rotate(steps_.begin() + head_, steps_.begin() + mark, steps_.end());
}

// What a step does when it ends.
void Cpu::step_effect(const KernelStep& s) {
  switch (s.done) {
    case StepDone::None: return;
    case StepDone::CsdUnlock: csd_unlock(*k_, s.csd.waiter, cpu_); return;
    case StepDone::TtwuPending: sched_ttwu_pending(*k_, *rq_, s.count); return;
    case StepDone::IpiExit:
      if (k_->sink) k_->sink->ipi_exit(k_->now(), cpu_, s.ipi);
      return;
    case StepDone::CsdQueue:
    case StepDone::CsdPrepIpi:
    case StepDone::CsdKick:
    case StepDone::CsdIpi: {
      const size_t mark = steps_mark();
      inserting_at_ = mark;
      smp_call_function_single_step(*k_, cpu_, s);
      inserting_at_ = SIZE_MAX;
      insert_pushed_steps(mark);
      return;
    }
    case StepDone::SoftirqEnd:
      // __do_softirq() restarts while softirqs were raised during it (by a nested interrupt).
      softirq_running = false;
      if (local_softirq_pending(*k_, cpu_)) {
        const size_t mark = steps_mark();
        inserting_at_ = mark;
        do_softirq(*k_, *rq_);
        inserting_at_ = SIZE_MAX;
        insert_pushed_steps(mark);
      }
      return;
  }
}

// The one place a CPU continues after a chain.
void Cpu::resume(const Continuation& r) {
  Kernel& k = *k_;
  Rq& rq = *rq_;
  switch (r.at()) {
    case Resume::None: return;
    case Resume::ReturnToTask: return_to_task(); return;
    case Resume::ProcessPendingIrqs: process_pending_irqs(after_irqs_); return;
    case Resume::DoIdle: do_idle(k, rq); return;
    case Resume::DoIdlePolling: do_idle_polling(k, rq); return;
    case Resume::NohzRunIdleBalance: nohz_run_idle_balance_next(k, rq); return;
    case Resume::IdleLoop: do_idle_loop(k, rq); return;
    case Resume::CallCpuidle:
      call_cpuidle(k, rq, r.idle_state().state, r.idle_state().stop_tick);
      return;
    case Resume::EnterIdleState: cpuidle_enter_state(k, rq, r.idle_state().state); return;
    case Resume::CpuidleIrqsOn: process_pending_irqs(Resume::CpuidleExitDone); return;
    case Resume::CpuidleExitDone: cpuidle_exit_done(k, rq); return;
    case Resume::ExitIdle: exit_idle(k, rq); return;
    case Resume::PollContinue: poll_idle_continue(k, rq); return;
    case Resume::IdleFlush: do_idle_flush(k, rq); return;
    case Resume::IrqsThenScheduleIdle:
      // schedule_idle(): do { __schedule(SM_IDLE); } while (need_resched());
      if (!pending_irqs_.empty()) {
        process_pending_irqs(Resume::IrqsThenScheduleIdle);
        return;
      }
      __schedule(k, rq, SchedMode::SM_IDLE);
      return;
    case Resume::IrqsThenScheduleIdleLoop:
      if (!pending_irqs_.empty()) {
        process_pending_irqs(Resume::IrqsThenScheduleIdleLoop);
        return;
      }
      schedule_idle_loop(k, rq);
      return;
    case Resume::FinishTaskSwitch:
      finish_task_switch(k, rq, r.switch_args().prev, r.switch_args().next);
      return;
    case Resume::Change: r.change_args().change->resume(rq, r.change_args().point); return;
  }
}

// --- task segments --------------------------------------------------------------------------

void Cpu::start_task_segment() {
  Task* p = rq_->curr;
  set_mode(Mode::Task);
  account(0);
  p->in_compute = true;
  speed_ = smt_speed();
  seg_start_ = k_->now();
  // At full speed the segment is work_left itself (what ceil(work_left / 1.0) gives).
  // ceil() of the non-negative quotient without the libm call: truncate, then round up a
  // fraction (exact: a quotient of 2^53 or more is an integer already).
  int64_t dur = p->work_left;
  if (speed_ != 1.0) {
    const double q = static_cast<double>(p->work_left) / speed_;
    dur = static_cast<int64_t>(q);
    if (static_cast<double>(dur) < q) ++dur;
  }
  k_->ev.schedule(segment_end_, k_->now() + Time::ns(dur));
  if (k_->core_polls(core_) > 0) note_beside_poll();
}

void Cpu::pause_task_segment() {
  Task* p = rq_->curr;
  if (!p->in_compute || p->waiting_csd) return;
  if (segment_end_.scheduled()) {
    int64_t elapsed = (k_->now() - seg_start_).count();
    int64_t done = static_cast<int64_t>(elapsed * speed_);  // floor(): the product is >= 0
    p->work_left = std::max<int64_t>(0, p->work_left - done);
    k_->ev.deschedule(segment_end_);
    if (beside_poll_) note_beside_poll();
  }
}

void Cpu::task_segment_done() {
  if (beside_poll_) note_beside_poll();
  Task* p = rq_->curr;
  p->work_left = 0;
  p->in_compute = false;
  continue_task();
}

void Cpu::spin_wait(KernelPath path) {
  set_mode(Mode::Spin);
  account(k_->bucket_for_path(path));
}

void Cpu::spin_wait_done() {
  account(0);
  return_to_task();
}

// Back in task context after a kernel chain or an interrupt: take pending interrupts, honour
// need_resched (the preemption point on return), then resume what the task was doing.
void Cpu::return_to_task() {
  Kernel& k = *k_;
  Rq& rq = *rq_;
  if (!pending_irqs_.empty()) {
    process_pending_irqs(Resume::ReturnToTask);
    return;
  }
  for (Change* c : k.hooks(Hook::return_to_task))
    if (decided(c->on_return_to_task(rq))) return;
  Task* p = rq.curr;
  if (p->waiting_csd) {  // spinning in csd_lock_wait() with preemption disabled (get_cpu())
    set_mode(Mode::Task);
    account(0);
    return;
  }
  if (rq.need_resched) {
    __schedule(k, rq, SchedMode::SM_PREEMPT);
    return;
  }
  if (p->in_compute && p->work_left > 0) {
    start_task_segment();
    return;
  }
  p->in_compute = false;
  continue_task();
}

// The task's next action: the system-call layer between a program and the scheduler.
void Cpu::continue_task() {
  Kernel& k = *k_;
  Rq& rq = *rq_;
  Task* p = rq.curr;
  for (int guard = 0; guard < 1000000; ++guard) {
    if (rq.need_resched) {
      __schedule(k, rq, SchedMode::SM_PREEMPT);
      return;
    }
    Api& api = k.api();
    api.asking_cpu_ = p->cpu;  // what api.task_cpu(*p) returns
    Action a = p->program->next(api, *p);
    switch (a.kind) {
      case Action::Compute: {
        int64_t ns = k.cost(a.ns) + p->cold_penalty;
        p->cold_penalty = 0;
        if (ns <= 0) continue;
        p->work_left = ns;
        start_task_segment();
        return;
      }
      case Action::Wake: {
        int64_t c = try_to_wake_up(k, cpu_, p, a.target, a.sync);
        push_step(KernelPath::Ttwu, c);
        run_steps(Resume::ReturnToTask);
        return;
      }
      case Action::Block:
        p->state = TaskState::Interruptible;
        __schedule(k, rq, SchedMode::SM_NONE);
        return;
      case Action::Sleep: {
        // hrtimer_nanosleep(): the timer is armed on this CPU.
        p->state = TaskState::Interruptible;
        hrtimer_start_sleep(k, cpu_, p, (k.now() + Time::ns(std::max<int64_t>(0, a.ns))).count());
        __schedule(k, rq, SchedMode::SM_NONE);
        return;
      }
      case Action::CallFunc: {
        // smp_call_function_single() runs in task context with interrupts enabled.
        Csd csd{.src_cpu = cpu_, .wait = a.wait, .handler_ns = a.ns, .waiter = a.wait ? p : nullptr};
        if (a.wait) p->waiting_csd = true;
        smp_call_function_single_from_task(k, rq, a.cpu, csd);
        run_steps(Resume::ReturnToTask);
        return;
      }
      case Action::Exit:
        do_exit(k, rq, p);
        return;
      case Action::Yield:
        do_sched_yield(k, rq);
        return;
      case Action::SetAffinity:
        if (set_cpus_allowed_ptr(k, rq, p, k.cpumask_of(a.cpu))) return;
        continue;
    }
  }
  throw std::logic_error("task program made no progress: " + p->comm);
}

// --- interrupts -----------------------------------------------------------------------------

void Cpu::deliver_irq(const Irq& in) {
  Irq irq = in;
  irq.arrived = k_->now();
  switch (mode_) {
    case Mode::Kernel:
      if (head_ < steps_.size() && steps_[head_].irqs_on && step_end_.scheduled()) {
        interrupt_step(irq);
        return;
      }
      pending_irqs_.push_back(irq);
      return;
    case Mode::Task:
      pause_task_segment();
      handle_irq(irq, Resume::ReturnToTask);
      return;
    case Mode::Spin:
      handle_irq(irq, Resume::ReturnToTask);
      return;
    case Mode::Idle:
      if (k_->guest().ops->hold_irq(*k_, cpu_, irq)) return;  // a halted vCPU waits for the host
      pending_irqs_.push_back(irq);
      if (k_->cpuidle(cpu_).polls_with_irqs_on) {
        // poll_idle() and cpu_idle_poll() spin with interrupts enabled: the handler runs inside
        // the loop, which then goes on polling unless need_resched.
        process_pending_irqs(Resume::PollContinue);
        return;
      }
      cpuidle_exit_state(*k_, *rq_, true);
      return;
  }
}

bool Cpu::tick_pending() const {
  for (const Irq& i : pending_irqs_)
    if (i.kind == Irq::Tick) return true;
  return false;
}

void Cpu::process_pending_irqs(const Continuation& then) {
  if (pending_irqs_.empty()) {
    resume(then);
    return;
  }
  after_irqs_ = then;
  Irq irq = pending_irqs_.front();
  pending_irqs_.erase(pending_irqs_.begin());
  rq_->c.irq_pending_ns += (k_->now() - irq.arrived).count();
  handle_irq(irq, Resume::ProcessPendingIrqs);
}

void Cpu::handle_irq(const Irq& irq, const Continuation& then) {
  push_irq_steps(irq);
  run_steps(then);
}

// Interrupt entry, the handler, irq_exit(), then the softirqs raised (unless a softirq run is
// already in progress on this CPU: it restarts instead). Reschedule IPI: scheduler_ipi() only
// folds need_resched. Call-function IPI: __flush_smp_call_function_queue(). Timer: the hrtimer
// callback wakes the sleeper. Tick: sched_tick(), which may raise SCHED_SOFTIRQ. No handler sets
// need_resched by itself.
void Cpu::push_irq_steps(const Irq& irq) {
  Kernel& k = *k_;
  if (irq.kind == Irq::Steal) {  // no interrupt: the host does not run this vCPU for a while
    rq_->c.steal_ns += irq.ns;
    push_step(KernelPath::Steal, irq.ns);
    return;
  }
  enter_irq_ctx();
  push_step(KernelPath::Irq, k.cost(k.m.costs.ipi_entry_ns));
  switch (irq.kind) {
    case Irq::Ipi:
      smp_ipi_handler(k, *rq_, irq.ipi);
      break;
    case Irq::Timer:
      // hrtimer_wakeup()
      push_step(KernelPath::Ttwu, try_to_wake_up(k, cpu_, nullptr, irq.timer_task, false));
      break;
    case Irq::Tick:
      sched_tick(k, *rq_);
      break;
    case Irq::Background:
      rq_->c.background_irq_ns += irq.ns;
      push_step(KernelPath::Irq, irq.ns);
      break;
    case Irq::Steal:
      break;  // handled above
  }
  push_step(KernelPath::Irq, k.cost(k.m.costs.irq_exit_ns));
  exit_irq_ctx();
  if (!softirq_running && !in_interrupt() && local_softirq_pending(k, cpu_)) do_softirq(k, *rq_);
}

void hrtimer_start_sleep(Kernel& k, int cpu, Task* p, int64_t expiry_ns) {
  auto& timers = k.rq(cpu).timers;
  timers.insert(std::upper_bound(timers.begin(), timers.end(), expiry_ns), expiry_ns);
  k.ev.schedule(k.deferred(DeferredEvent::HrtimerExpiry, cpu, p, expiry_ns), Time::ns(expiry_ns));
}

}  // namespace schedlab::kernel
