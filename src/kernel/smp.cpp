// kernel/smp.c and the IPI side of core.c: reschedule and call-function IPIs, the polling-idle
// shortcut (set_nr_if_polling), smp_call_function_single() and the call-queue flush.
#include "kernel/kernel.hpp"

namespace schedlab::kernel {

// Sends an IPI `offset` ns into the sender's current kernel work. Returns the sender's cost.
int64_t send_ipi(Kernel& k, int from, int to, IpiKind kind, int64_t offset) {
  int64_t send = k.cost(k.m.costs.ipi_send_ns);
  int64_t lat = k.cost(k.m.ipi_latency_ns(k.topo.distance(from, to)));
  k.rqs[from].c.ipi_sent[static_cast<int>(kind)]++;
  Time t = k.now() + Time::ns(offset + send);
  if (k.sink) k.sink->ipi_raise(t, from, to, kind);
  DeferredEvent& e = k.deferred(DeferredEvent::IpiArrival, to);
  e.ipi = kind;
  k.ev.schedule(e, t + Time::ns(lat));
  return send;
}

// The polling CPU sees TIF_NEED_RESCHED in its monitored line and leaves its idle loop.
void wake_polling_idle(Kernel& k, int from, Rq& t, int64_t offset) {
  t.need_resched = true;
  k.rqs[from].c.wake_polling_no_ipi++;
  int64_t line = k.remote_read(from, t.cpu);
  if (k.sink) k.sink->wake_idle_without_ipi(k.now() + Time::ns(offset), from, t.cpu);
  Cpu& cpu = k.cpus[t.cpu];
  if (cpu.mode() == Mode::Idle && !cpu.polling_wake.scheduled())
    k.ev.schedule(cpu.polling_wake,
                  k.now() + Time::ns(offset + line + k.cost(k.m.costs.polling_wake_ns)));
}

// set_nr_if_polling(): set TIF_NEED_RESCHED on a polling idle task instead of an IPI.
bool set_nr_if_polling(Kernel& k, int from, Rq& t, int64_t offset) {
  if (!t.polling) return false;
  if (!t.need_resched) wake_polling_idle(k, from, t, offset);
  return true;
}

// send_call_function_single_ipi(): since b2a02fc43a1f a polling idle target gets need_resched
// instead of an IPI and flushes its queue when it leaves the idle loop.
int64_t send_call_function_single_ipi(Kernel& k, int from, int to, int64_t offset) {
  int64_t cost = 0;
  for (Change* c : k.hooks(Hook::send_call_function_single_ipi))
    if (c->on_send_call_function_single_ipi(from, to, offset, cost)) return cost;
  if (set_nr_if_polling(k, from, k.rqs[to], offset)) return k.remote_read(from, to);
  return send_ipi(k, from, to, IpiKind::CallFunctionSingle, offset);
}

static int64_t csd_func(Kernel& k, const Csd& csd, int cpu) {
  switch (csd.func) {
    case CsdFunc::None: return 0;
    case CsdFunc::NohzIdleBalance: return nohz_csd_func(k, cpu);
  }
  return 0;
}

// smp_call_function_single(): queue the csd on the target's call_single_queue (IPI or polling
// kick only if it was empty). With wait the sender then spins in csd_lock_wait() until the
// target has run the function. Returns the sender's cost of queueing.
int64_t smp_call_function_single(Kernel& k, Rq& src, int target, Csd csd) {
  if (target == src.cpu) {
    // Runs locally with IRQs off.
    int64_t c = k.cost(k.m.costs.csd_func_ns) + k.cost(csd.handler_ns);
    c += csd_func(k, csd, src.cpu);
    src.c.call_functions_run++;
    if (csd.waiter) csd.waiter->waiting_csd = false;
    return c;
  }
  Rq& t = k.rqs[target];
  bool first = t.wake_list.empty() && t.call_queue.empty();
  t.call_queue.push_back(csd);
  int64_t c = k.remote_read(src.cpu, target);
  if (first) c += send_call_function_single_ipi(k, src.cpu, target, c);
  return c;
}

// csd_unlock(): the csd is unlocked on the target; the spinning sender sees it one line
// transfer later (DeferredEvent::CsdUnlocked).
void csd_unlock(Kernel& k, Task* waiter, int from_cpu) {
  int64_t line = k.remote_read(from_cpu, waiter->cpu);
  k.ev.schedule(k.deferred(DeferredEvent::CsdUnlocked, waiter->cpu, waiter),
                k.now() + Time::ns(line));
}

// __flush_smp_call_function_queue(): functions first, then the TTWU batch
// (sched_ttwu_pending) under the rq lock; ttwu_pending clears after the last enqueue.
void __flush_smp_call_function_queue(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpus[rq.cpu];
  std::vector<Csd>& csds = k.csd_batch;
  csds.clear();
  csds.swap(rq.call_queue);
  for (const Csd& csd : csds) {
    int64_t c = k.cost(k.m.costs.csd_func_ns) + k.cost(csd.handler_ns);
    c += csd_func(k, csd, rq.cpu);
    rq.c.call_functions_run++;
    KernelStep s{KernelPath::CallFunction, c};
    if (csd.waiter) {
      s.done = StepDone::CsdUnlock;
      s.task = csd.waiter;
    }
    cpu.push_step(s);
  }
  if (!rq.wake_list.empty()) {
    int64_t c = 0;
    for (size_t i = 0; i < rq.wake_list.size(); ++i) c += k.cost(k.m.costs.enqueue_ns);
    rq.ttwu_inflight.insert(rq.ttwu_inflight.end(), rq.wake_list.begin(), rq.wake_list.end());
    KernelStep s{KernelPath::TtwuPending, c, StepDone::TtwuPending};
    s.count = static_cast<uint32_t>(rq.wake_list.size());
    rq.wake_list.clear();
    cpu.push_step(s);
  }
}

// sched_ttwu_pending(): enqueue the batch the flush took off the wake list.
void sched_ttwu_pending(Kernel& k, Rq& rq, uint32_t count) {
  std::vector<Task*>& batch = k.ttwu_batch;
  batch.assign(rq.ttwu_inflight.begin(), rq.ttwu_inflight.begin() + count);
  rq.ttwu_inflight.erase(rq.ttwu_inflight.begin(), rq.ttwu_inflight.begin() + count);
  for (Task* p : batch) {
    if (p->state == TaskState::Dead) continue;
    ttwu_do_activate(k, rq.cpu, rq, p, 0);
  }
  rq.ttwu_pending = !rq.wake_list.empty();
}

// The IPI handler: interrupt entry; a call-function IPI flushes the queue
// (generic_smp_call_function_single_interrupt()); a reschedule IPI only folds need_resched
// (scheduler_ipi()); then the ipi_exit tracepoint.
void smp_ipi_handler(Kernel& k, Rq& rq, IpiKind kind) {
  Cpu& cpu = k.cpus[rq.cpu];
  rq.c.ipi_received[static_cast<int>(kind)]++;
  if (k.sink) k.sink->ipi_entry(k.now(), rq.cpu, kind);
  cpu.push_step(KernelPath::IpiHandler, k.cost(k.m.costs.ipi_entry_ns));
  if (kind == IpiKind::CallFunctionSingle) __flush_smp_call_function_queue(k, rq);
  KernelStep exit{KernelPath::IpiHandler, 0, StepDone::IpiExit};
  exit.ipi = kind;
  cpu.push_step(exit);
}

}  // namespace schedlab::kernel
