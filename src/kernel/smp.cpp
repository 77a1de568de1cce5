// kernel/smp.c and the IPI side of core.c: reschedule and call-function IPIs, the polling-idle
// shortcut (set_nr_if_polling), smp_call_function_single() and the call-queue flush.
#include "kernel/kernel.hpp"

namespace schedlab::kernel {

// Sends an IPI `offset` ns into the sender's current kernel work. Returns the sender's cost.
int64_t Kernel::send_ipi(int from, int to, IpiKind kind, int64_t offset) {
  int64_t send = cost(m_.costs.ipi_send_ns);
  int64_t lat = cost(m_.ipi_latency_ns(m_.topo.distance(from, to)));
  rqs_[from].c.ipi_sent[static_cast<int>(kind)]++;
  Time t = ev_.now() + Time::ns(offset + send);
  if (sink_) sink_->ipi_raise(t, from, to, kind);
  ev_.at(t + Time::ns(lat), [this, to, kind] {
    Irq irq{Irq::Ipi};
    irq.ipi = kind;
    deliver_irq(to, irq);
  });
  return send;
}

// The polling CPU sees TIF_NEED_RESCHED in its monitored line and leaves its idle loop.
void Kernel::polling_kick(int from, Rq& t, int64_t offset) {
  t.need_resched = true;
  rqs_[from].c.wake_polling_no_ipi++;
  int64_t line = m_.remote_read_ns(m_.topo.distance(from, t.cpu));
  if (sink_) sink_->wake_idle_without_ipi(ev_.now() + Time::ns(offset), from, t.cpu);
  if (t.mode == Mode::Idle && !ev_.pending(t.polling_wake_event)) {
    int cpu = t.cpu;
    t.polling_wake_event =
        ev_.after(Time::ns(offset + line + cost(m_.costs.polling_wake_ns)), [this, cpu] {
          Rq& r = rqs_[cpu];
          if (r.mode == Mode::Idle) idle_wake(r, nullptr);
        });
  }
}

// set_nr_if_polling(): set TIF_NEED_RESCHED on a polling idle task instead of an IPI.
bool Kernel::set_nr_if_polling(int from, Rq& t, int64_t offset) {
  if (!t.polling) return false;
  if (!t.need_resched) polling_kick(from, t, offset);
  return true;
}

// send_call_function_single_ipi(): since b2a02fc43a1f a polling idle target gets need_resched
// instead of an IPI and flushes its queue when it leaves the idle loop.
int64_t Kernel::send_call_function_single_ipi(int from, int to, int64_t offset) {
  if (set_nr_if_polling(from, rqs_[to], offset))
    return m_.remote_read_ns(m_.topo.distance(from, to));
  return send_ipi(from, to, IpiKind::CallFunctionSingle, offset);
}

// smp_call_function_single(): queue the csd on the target's call_single_queue (IPI or polling
// kick only if it was empty). With wait the sender then spins in csd_lock_wait() until the
// target has run the function. Returns the sender's cost of queueing.
int64_t Kernel::smp_call_function_single(Rq& src, int target, Csd csd) {
  if (target == src.cpu) {
    // Runs locally with IRQs off.
    int64_t c = cost(m_.costs.csd_func_ns) + cost(csd.handler_ns);
    if (csd.func) c += csd.func(src.cpu);
    src.c.csd_run++;
    if (csd.waiter) csd.waiter->waiting_csd = false;
    return c;
  }
  Rq& t = rqs_[target];
  bool first = t.wake_list.empty() && t.call_queue.empty();
  t.call_queue.push_back(std::move(csd));
  int64_t c = m_.remote_read_ns(m_.topo.distance(src.cpu, target));
  if (first) c += send_call_function_single_ipi(src.cpu, target, c);
  return c;
}

// The csd is unlocked on the target; the spinning sender sees it one line transfer later.
void Kernel::csd_complete(Task* waiter, int from_cpu) {
  int64_t line = m_.remote_read_ns(m_.topo.distance(from_cpu, waiter->cpu));
  ev_.after(Time::ns(line), [this, waiter] {
    waiter->waiting_csd = false;
    Rq& rq = rqs_[waiter->cpu];
    if (rq.curr == waiter && rq.mode == Mode::Task && !ev_.pending(rq.seg_end)) {
      account(rq, 0);
      continue_task(rq);
    }
  });
}

// __flush_smp_call_function_queue(): functions first, then the TTWU batch
// (sched_ttwu_pending) under the rq lock; ttwu_pending clears after the last enqueue.
std::vector<KernelStep> Kernel::flush_smp_call_function_queue(Rq& rq) {
  std::vector<KernelStep> steps;
  std::vector<Csd> csds;
  csds.swap(rq.call_queue);
  int cpu = rq.cpu;
  for (auto& csd : csds) {
    int64_t c = cost(m_.costs.csd_func_ns) + cost(csd.handler_ns);
    if (csd.func) c += csd.func(cpu);
    rq.c.csd_run++;
    Task* w = csd.waiter;
    steps.push_back({KernelPath::CallFunction, c, [this, w, cpu] {
                       if (w) csd_complete(w, cpu);
                     }});
  }
  if (!rq.wake_list.empty()) {
    std::vector<Task*> list;
    list.swap(rq.wake_list);
    int64_t c = 0;
    for (size_t i = 0; i < list.size(); ++i) c += cost(m_.costs.enqueue_ns);
    rq.ttwu_inflight.insert(rq.ttwu_inflight.end(), list.begin(), list.end());
    steps.push_back({KernelPath::TtwuPending, c, [this, cpu, list] {
                       Rq& r = rqs_[cpu];
                       r.ttwu_inflight.erase(r.ttwu_inflight.begin(),
                                             r.ttwu_inflight.begin() + list.size());
                       for (Task* p : list) {
                         if (p->state == TaskState::Dead) continue;
                         ttwu_do_activate(cpu, r, p, 0);
                       }
                       r.ttwu_pending = !r.wake_list.empty();
                     }});
  }
  return steps;
}

}  // namespace schedlab::kernel
