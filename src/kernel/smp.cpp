// kernel/smp.c and the IPI side of core.c: reschedule and call-function IPIs, the polling-idle
// shortcut (set_nr_if_polling(), CSD_POLL_KICK), smp_call_function_single() on the sender as the
// kernel's sequence of steps, and the call-queue flush on the target (from the IPI handler or
// from do_idle()).
#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/deferred.hpp"
#include "kernel/guest.hpp"
#include "kernel/sched.hpp"
#include "kernel/smp.hpp"

namespace schedlab::kernel {

// Sends an IPI `offset` ns into the sender's current kernel work (the APIC ICR write). Returns
// the sender's cost. On a guest the send is a VM exit (guest.hpp).
int64_t send_ipi(Kernel& k, int from, int to, IpiKind kind, int64_t offset) {
  int64_t send = ipi_send_cost(k, from, to);
  ipi_raised(k, from, to, kind, k.now() + Time::ns(offset + send));
  return send;
}

// The IPI leaves the sender at `t` (its ICR write done) and arrives after the latency for the
// distance; on a guest a halted target waits for the host to wake it (guest.hpp).
void ipi_raised(Kernel& k, int from, int to, IpiKind kind, Time t) {
  bool host_woken = false;
  int64_t lat = ipi_latency_ns(k, from, to, t, host_woken);
  k.rq(from).c.ipi_sent[static_cast<int>(kind)]++;
  if (k.sink) k.sink->ipi_raise(t, from, to, kind);
  DeferredEvent& e = k.deferred(DeferredEvent::IpiArrival, to);
  e.ipi = kind;
  e.arg = host_woken;
  k.ev.schedule(e, t + Time::ns(lat));
}

// The caller has set a flag in the polling idle task's flags word (TIF_NEED_RESCHED, or
// TIF_NOTIFY_IPI); the CPU sees its line change (the poll loop's next read, or MONITOR's write
// detection) and leaves its idle state.
void wake_polling_idle(Kernel& k, int from, Rq& t, int64_t offset) {
  k.rq(from).c.wake_polling_no_ipi++;
  int64_t line = k.remote_read(from, t.cpu);
  if (k.sink) k.sink->wake_idle_without_ipi(k.now() + Time::ns(offset), from, t.cpu);
  Cpu& cpu = k.cpu(t.cpu);
  if (cpu.mode() == Mode::Idle && !cpu.polling_wake.scheduled())
    k.ev.schedule(cpu.polling_wake,
                  k.now() + Time::ns(offset + line + k.cost(k.m.costs.polling_wake_ns)));
}

// set_nr_if_polling(): set TIF_NEED_RESCHED on a polling idle task instead of an IPI (true also
// when it is set already: the CPU is on its way out of the idle loop).
bool set_nr_if_polling(Kernel& k, int from, Rq& t, int64_t offset) {
  if (!t.polling) return false;
  if (t.need_resched || t.notify_ipi) return true;
  for (Change* c : k.hooks(Hook::set_nr_if_polling))
    if (decided(c->on_set_nr_if_polling(from, t, offset, false))) return true;
  t.need_resched = true;
  wake_polling_idle(k, from, t, offset);
  return true;
}

// call_function_single_prep_ipi(): whether set_nr_if_polling() is tried at all (CSD_POLL_KICK).
static bool try_polling(Kernel& k, int from, int to) {
  bool try_polling = false;
  for (Change* c : k.hooks(Hook::call_function_single_prep_ipi))
    try_polling = decided(c->on_call_function_single_prep_ipi(from, to, try_polling));
  return try_polling;
}

// send_call_function_single_ipi() -> call_function_single_prep_ipi(): the sender reads the idle
// task's flags (a line transfer); polling: a cmpxchg sets the flag (another transfer) and no IPI
// is sent (CSD_POLL_KICK, b2a02fc43a1f); otherwise the ICR write.
int64_t send_call_function_single_ipi(Kernel& k, int from, int to, int64_t offset) {
  if (!try_polling(k, from, to)) return send_ipi(k, from, to, IpiKind::CallFunctionSingle, offset);
  Rq& t = k.rq(to);
  int64_t c = k.remote_read(from, to);
  if (t.polling) {
    if (!t.need_resched && !t.notify_ipi) c += k.remote_read(from, to);  // try_cmpxchg()
    set_nr_if_polling(k, from, t, offset + c);
    return c;
  }
  return c + send_ipi(k, from, to, IpiKind::CallFunctionSingle, offset + c);
}

static int64_t csd_func(Kernel& k, const Csd& csd, int cpu) {
  switch (csd.func) {
    case CsdFunc::None: return 0;
    case CsdFunc::NohzIdleBalance: return nohz_csd_func(k, cpu);
  }
  return 0;
}

// smp_call_function_single() (and _async()) on the sender: get_cpu() and the csd's setup and
// lock; llist_add() onto the target's call_single_queue (a remote read-modify-write); if the
// queue was empty, send_call_function_single_ipi(). With wait the sender then spins in
// csd_lock_wait() until it sees the target's csd_unlock() (DeferredEvent::CsdUnlocked), then
// put_cpu(). Returns the sender's cost up to the spin.
int64_t smp_call_function_single(Kernel& k, Rq& src, int target, Csd csd) {
  int64_t c = k.cost(k.m.costs.csd_lock_ns);
  if (target == src.cpu) {
    // generic_exec_single(): runs locally with IRQs off.
    c += k.cost(k.m.costs.csd_func_ns) + k.cost(csd.handler_ns);
    c += csd_func(k, csd, src.cpu);
    src.c.call_functions_run++;
    if (csd.waiter) {
      csd.waiter->waiting_csd = false;
      c += k.cost(k.m.costs.put_cpu_ns);
    }
    return c;
  }
  Rq& t = k.rq(target);
  bool first = t.wake_list.empty() && t.call_queue.empty();
  t.call_queue.push_back(csd);
  c += k.remote_read(src.cpu, target);
  if (first) c += send_call_function_single_ipi(k, src.cpu, target, c);
  return c;
}

// smp_call_function_single() in task context, as its steps on the sender (interrupts enabled):
// get_cpu() and the csd's setup and lock; llist_add() onto the target's call_single_queue (a
// remote read-modify-write: the csd is queued when it lands); if the queue was empty,
// call_function_single_prep_ipi(): read the idle task's flags (a line transfer), then either
// try_cmpxchg() TIF_NEED_RESCHED into them (another transfer; polling seen gone by then: fall
// back to the IPI) or the ICR write. Then the task spins in csd_lock_wait() (wait) until it sees
// csd_unlock(), and put_cpu() (DeferredEvent::CsdUnlocked).
void smp_call_function_single_from_task(Kernel& k, Rq& src, int target, const Csd& csd) {
  Cpu& cpu = k.cpu(src.cpu);
  if (target == src.cpu) {
    cpu.push_step(KernelStep::irqs_enabled(KernelPath::Syscall,
                                           smp_call_function_single(k, src, target, csd)));
    return;
  }
  cpu.push_step(KernelStep::irqs_enabled(KernelPath::Syscall, k.cost(k.m.costs.csd_lock_ns)));
  KernelStep add = KernelStep::irqs_enabled(KernelPath::Syscall, k.remote_read(src.cpu, target));
  add.done = StepDone::CsdQueue;
  add.target = target;
  add.csd = csd;
  cpu.push_step(add);
}

// The effect of one of those steps when it lands; pushes the next step, if any.
void smp_call_function_single_step(Kernel& k, int cpu_id, const KernelStep& step) {
  Cpu& cpu = k.cpu(cpu_id);
  const int to = step.target;
  Rq& t = k.rq(to);
  auto next = [&](int64_t ns, StepDone done) {
    KernelStep s = KernelStep::irqs_enabled(KernelPath::Syscall, ns);
    s.done = done;
    s.target = to;
    cpu.push_step(s);
  };
  switch (step.done) {
    case StepDone::CsdQueue: {
      bool first = t.wake_list.empty() && t.call_queue.empty();
      t.call_queue.push_back(step.csd);
      if (!first) return;
      if (try_polling(k, cpu_id, to))
        next(k.remote_read(cpu_id, to), StepDone::CsdPrepIpi);
      else
        next(ipi_send_cost(k, cpu_id, to), StepDone::CsdIpi);
      return;
    }
    case StepDone::CsdPrepIpi:
      if (!t.polling) {
        next(ipi_send_cost(k, cpu_id, to), StepDone::CsdIpi);
      } else if (!t.need_resched && !t.notify_ipi) {
        next(k.remote_read(cpu_id, to), StepDone::CsdKick);
      }
      return;  // polling and the flag already set: the CPU is leaving its idle loop
    case StepDone::CsdKick:
      if (!set_nr_if_polling(k, cpu_id, t, 0)) next(ipi_send_cost(k, cpu_id, to), StepDone::CsdIpi);
      return;
    case StepDone::CsdIpi:
      ipi_raised(k, cpu_id, to, IpiKind::CallFunctionSingle, k.now());
      return;
    default:
      return;
  }
}

// csd_unlock(): the csd is unlocked on the target; the spinning sender sees it one line
// transfer later (DeferredEvent::CsdUnlocked).
void csd_unlock(Kernel& k, Task* waiter, int from_cpu) {
  int64_t line = k.remote_read(from_cpu, waiter->cpu);
  k.ev.schedule(k.deferred(DeferredEvent::CsdUnlocked, waiter->cpu, waiter),
                k.now() + Time::ns(line));
}

// __flush_smp_call_function_queue(): functions first (a SYNC csd is unlocked after its
// function), then the TTWU batch (sched_ttwu_pending) under the rq lock; ttwu_pending clears
// after the last enqueue.
void __flush_smp_call_function_queue(Kernel& k, Rq& rq, bool from_ipi) {
  Cpu& cpu = k.cpu(rq.cpu);
  std::vector<Csd>& csds = k.smp().csd_batch;
  csds.clear();
  csds.swap(rq.call_queue);
  for (const Csd& csd : csds) {
    int64_t c = k.cost(k.m.costs.csd_func_ns) + k.cost(csd.handler_ns);
    c += csd_func(k, csd, rq.cpu);
    rq.c.call_functions_run++;
    (from_ipi ? rq.c.csd_run_ipi : rq.c.csd_run_idle)++;
    KernelStep s{KernelPath::CallFunction, c};
    if (csd.waiter) {
      s.done = StepDone::CsdUnlock;
      s.csd = csd;
    }
    cpu.push_step(s);
  }
  if (!rq.wake_list.empty()) {
    // sched_ttwu_pending() takes this rq's lock for the batch (a wait for it first).
    const int64_t at = cpu.queued_ns();
    int64_t c = spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, rq.cpu, at);
    for (size_t i = 0; i < rq.wake_list.size(); ++i) c += k.cost(k.m.costs.enqueue_ns);
    spin_unlock(k, rq.lock, at + c);
    rq.ttwu_inflight.insert(rq.ttwu_inflight.end(), rq.wake_list.begin(), rq.wake_list.end());
    KernelStep s{KernelPath::TtwuPending, c, StepDone::TtwuPending};
    s.count = static_cast<uint32_t>(rq.wake_list.size());
    rq.wake_list.clear();
    cpu.push_step(s);
  }
}

// flush_smp_call_function_queue() from do_idle(), with IRQs off, in the idle task's context (not
// an interrupt): softirqs raised by the functions run right after it
// (do_softirq_post_smp_call_flush()). ILB_NO_KSOFTIRQD: raising one here does not wake
// ksoftirqd, since that do_softirq() is about to run.
void flush_smp_call_function_queue(Kernel& k, Rq& rq) {
  if (rq.call_queue.empty() && rq.wake_list.empty()) return;
  Cpu& cpu = k.cpu(rq.cpu);
  cpu.softirq_after_flush = true;
  __flush_smp_call_function_queue(k, rq, false);
  cpu.softirq_after_flush = false;
  if (local_softirq_pending(k, rq.cpu) && !cpu.softirq_running) do_softirq(k, rq);
}

// sched_ttwu_pending(): enqueue the batch the flush took off the wake list.
void sched_ttwu_pending(Kernel& k, Rq& rq, uint32_t count) {
  std::vector<Task*>& batch = k.smp().ttwu_batch;
  batch.assign(rq.ttwu_inflight.begin(), rq.ttwu_inflight.begin() + count);
  rq.ttwu_inflight.erase(rq.ttwu_inflight.begin(), rq.ttwu_inflight.begin() + count);
  for (Task* p : batch) {
    if (p->state == TaskState::Dead) continue;
    ttwu_do_activate(k, rq.cpu, rq, p, 0);
  }
  rq.ttwu_pending = !rq.wake_list.empty();
  line_write(rq.line, rq.cpu);
}

// The IPI handler, in interrupt context between push_irq_steps()'s entry and irq_exit(): a
// call-function IPI flushes the queue (generic_smp_call_function_single_interrupt()); a
// reschedule IPI only folds need_resched (scheduler_ipi()); then the ipi_exit tracepoint.
// Neither sets need_resched itself.
void smp_ipi_handler(Kernel& k, Rq& rq, IpiKind kind) {
  Cpu& cpu = k.cpu(rq.cpu);
  rq.c.ipi_received[static_cast<int>(kind)]++;
  if (k.sink) k.sink->ipi_entry(k.now(), rq.cpu, kind);
  if (kind == IpiKind::CallFunctionSingle) __flush_smp_call_function_queue(k, rq, true);
  KernelStep exit{KernelPath::IpiHandler, 0, StepDone::IpiExit};
  exit.ipi = kind;
  cpu.push_step(exit);
}

}  // namespace schedlab::kernel
