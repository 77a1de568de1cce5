// How a modeled CPU executes: task segments, kernel chains with IRQs off, interrupts that split
// a task segment, and time accounting (busy + kernel paths + idle states = simulated time).
#include <cmath>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

void Kernel::account(Rq& rq, int bucket) {
  Time now = ev_.now();
  int64_t d = (now - rq.bucket_start).count();
  if (d > 0) {
    int b = rq.bucket;
    if (b == 0) {
      rq.c.busy_ns += d;
    } else if (b <= kNumKernelPaths) {
      rq.c.kernel_ns[b - 1] += d;
    } else {
      rq.c.idle_ns[b - 1 - kNumKernelPaths] += d;
    }
  }
  rq.bucket = bucket;
  rq.bucket_start = now;
}

bool Kernel::cpu_busy_for_smt(int cpu) const { return rqs_[cpu].mode != Mode::Idle; }

double Kernel::smt_speed(int cpu) const {
  const auto& topo = m_.topo;
  if (topo.threads_per_core < 2) return 1.0;
  int busy = 1;
  for (int s : topo.smt_siblings(cpu))
    if (s != cpu && cpu_busy_for_smt(s)) ++busy;
  if (busy == 1) return 1.0;
  // Per-thread rate when `busy` threads share the core: the pair throughput split evenly.
  return m_.costs.smt_pair_throughput / busy;
}

void Kernel::refresh_sibling_speed(int cpu) {
  if (m_.topo.threads_per_core < 2) return;
  for (int s : m_.topo.smt_siblings(cpu)) {
    if (s == cpu) continue;
    Rq& o = rqs_[s];
    if (o.mode == Mode::Task && o.curr->in_compute && !o.curr->waiting_csd) {
      pause_task_segment(o);
      start_task_segment(o);
    }
  }
}

void Kernel::set_mode(Rq& rq, Mode m) {
  bool was_busy = rq.mode != Mode::Idle;
  rq.mode = m;
  bool busy = m != Mode::Idle;
  if (was_busy != busy) refresh_sibling_speed(rq.cpu);
}

void Kernel::run_steps(Rq& rq, std::vector<KernelStep> steps, std::function<void()> then) {
  set_mode(rq, Mode::Kernel);
  for (auto& s : steps) rq.steps.push_back(std::move(s));
  rq.after_steps = std::move(then);
  step_next(rq);
}

void Kernel::step_next(Rq& rq) {
  while (!rq.steps.empty() && rq.steps.front().ns <= 0) {
    auto done = std::move(rq.steps.front().done);
    rq.steps.pop_front();
    if (done) done();
  }
  if (rq.steps.empty()) {
    auto fn = std::move(rq.after_steps);
    rq.after_steps = nullptr;
    if (fn) fn();
    return;
  }
  const KernelStep& s = rq.steps.front();
  account(rq, bucket_for_path(s.path));
  rq.kstep_start = ev_.now();
  int cpu = rq.cpu;
  rq.seg_end = ev_.after(Time::ns(s.ns), [this, cpu] { step_done(cpu); });
}

void Kernel::step_done(int cpu) {
  Rq& rq = rqs_[cpu];
  KernelStep s = std::move(rq.steps.front());
  rq.steps.pop_front();
  if (sink_) sink_->kernel_slice(cpu, rq.kstep_start, ev_.now(), s.path);
  if (s.done) s.done();
  step_next(rq);
}

void Kernel::start_task_segment(Rq& rq) {
  Task* p = rq.curr;
  set_mode(rq, Mode::Task);
  account(rq, 0);
  p->in_compute = true;
  rq.speed = smt_speed(rq.cpu);
  rq.seg_start = ev_.now();
  int64_t dur = static_cast<int64_t>(std::ceil(static_cast<double>(p->work_left) / rq.speed));
  int cpu = rq.cpu;
  rq.seg_end = ev_.after(Time::ns(dur), [this, cpu] { task_segment_done(cpu); });
}

void Kernel::pause_task_segment(Rq& rq) {
  Task* p = rq.curr;
  if (!p->in_compute || p->waiting_csd) return;
  if (ev_.pending(rq.seg_end)) {
    int64_t elapsed = (ev_.now() - rq.seg_start).count();
    int64_t done = static_cast<int64_t>(std::floor(elapsed * rq.speed));
    p->work_left = std::max<int64_t>(0, p->work_left - done);
    ev_.cancel(rq.seg_end);
  }
}

void Kernel::task_segment_done(int cpu) {
  Rq& rq = rqs_[cpu];
  Task* p = rq.curr;
  p->work_left = 0;
  p->in_compute = false;
  continue_task(rq);
}

// Back in task context after a kernel chain or an interrupt: take pending interrupts, honour
// need_resched (the preemption point on return), then resume what the task was doing.
void Kernel::return_to_task(Rq& rq) {
  if (!rq.pending_irqs.empty()) {
    process_pending_irqs(rq, [this, &rq] { return_to_task(rq); });
    return;
  }
  if (rq.spin_task) {
    if (rq.need_resched || rq.spin_end_requested ||
        rq.spin_task->state == TaskState::Running) {
      set_mode(rq, Mode::Spin);
      end_idle_spin(rq, rq.spin_task->state == TaskState::Running);
      return;
    }
    set_mode(rq, Mode::Spin);
    account(rq, bucket_for_path(KernelPath::Spin));
    return;
  }
  Task* p = rq.curr;
  if (rq.need_resched) {
    schedule(rq, 1);
    return;
  }
  if (p->waiting_csd) {
    set_mode(rq, Mode::Task);
    account(rq, 0);
    return;
  }
  if (p->in_compute && p->work_left > 0) {
    start_task_segment(rq);
    return;
  }
  p->in_compute = false;
  continue_task(rq);
}

void Kernel::continue_task(Rq& rq) {
  Task* p = rq.curr;
  for (int guard = 0; guard < 1000000; ++guard) {
    if (rq.need_resched) {
      schedule(rq, 1);
      return;
    }
    Action a = p->behavior->next(*this, *p);
    switch (a.kind) {
      case Action::Compute: {
        int64_t ns = cost(a.ns) + p->cold_penalty;
        p->cold_penalty = 0;
        if (ns <= 0) continue;
        p->work_left = ns;
        start_task_segment(rq);
        return;
      }
      case Action::Wake: {
        int64_t c = try_to_wake_up(rq.cpu, p, a.target, a.sync);
        run_steps(rq, {{KernelPath::Ttwu, c}}, [this, &rq] { return_to_task(rq); });
        return;
      }
      case Action::Block:
        p->state = TaskState::Interruptible;
        schedule(rq, 0);
        return;
      case Action::Sleep: {
        p->state = TaskState::Interruptible;
        int cpu = rq.cpu;
        int64_t expiry = (ev_.now() + Time::ns(std::max<int64_t>(0, a.ns))).count();
        rq.timers.insert(expiry);
        ev_.at(Time::ns(expiry), [this, cpu, p, expiry] {
          rqs_[cpu].timers.erase(rqs_[cpu].timers.find(expiry));
          Irq irq{Irq::Timer};
          irq.timer_task = p;
          deliver_irq(cpu, irq);
        });
        schedule(rq, 0);
        return;
      }
      case Action::CallFunc: {
        Csd csd{rq.cpu, a.ns, a.wait, a.wait ? p : nullptr};
        if (a.wait) p->waiting_csd = true;
        int64_t c = smp_call_function_single(rq, a.cpu, std::move(csd));
        run_steps(rq, {{KernelPath::Syscall, c}}, [this, &rq] { return_to_task(rq); });
        return;
      }
      case Action::Exit:
        task_exit(rq, p);
        return;
      case Action::Yield:
        sched_yield(rq);
        return;
    }
  }
  throw std::logic_error("task program made no progress: " + p->comm);
}

void Kernel::deliver_irq(int cpu, Irq irq) {
  Rq& rq = rqs_[cpu];
  switch (rq.mode) {
    case Mode::Kernel:
      rq.pending_irqs.push_back(irq);
      return;
    case Mode::Task:
      pause_task_segment(rq);
      handle_irq(rq, irq, [this, &rq] { return_to_task(rq); });
      return;
    case Mode::Spin:
      handle_irq(rq, irq, [this, &rq] { return_to_task(rq); });
      return;
    case Mode::Idle:
      idle_wake(rq, &irq);
      return;
  }
}

void Kernel::process_pending_irqs(Rq& rq, std::function<void()> then) {
  if (rq.pending_irqs.empty()) {
    then();
    return;
  }
  Irq irq = rq.pending_irqs.front();
  rq.pending_irqs.erase(rq.pending_irqs.begin());
  handle_irq(rq, irq, [this, &rq, then = std::move(then)]() mutable {
    process_pending_irqs(rq, std::move(then));
  });
}

// Interrupt entry, the handler, interrupt exit. Reschedule IPI: scheduler_ipi() only folds
// need_resched. Call-function IPI: __flush_smp_call_function_queue(). Timer: the hrtimer
// callback wakes the sleeper. Tick: sched_tick() and the balance softirq.
void Kernel::handle_irq(Rq& rq, Irq irq, std::function<void()> then) {
  int cpu = rq.cpu;
  std::vector<KernelStep> steps;
  switch (irq.kind) {
    case Irq::Ipi: {
      rq.c.ipi_received[static_cast<int>(irq.ipi)]++;
      if (sink_) sink_->ipi_entry(ev_.now(), cpu, irq.ipi);
      steps.push_back({KernelPath::IpiHandler, cost(m_.costs.ipi_entry_ns)});
      if (irq.ipi == IpiKind::CallFunctionSingle) {
        auto more = flush_smp_call_function_queue(rq);
        for (auto& s : more) steps.push_back(std::move(s));
      }
      IpiKind k = irq.ipi;
      steps.push_back({KernelPath::IpiHandler, 0, [this, cpu, k] {
                         if (sink_) sink_->ipi_exit(ev_.now(), cpu, k);
                       }});
      break;
    }
    case Irq::Timer: {
      int64_t c = cost(m_.costs.ipi_entry_ns);
      c += try_to_wake_up(cpu, nullptr, irq.timer_task, false);
      steps.push_back({KernelPath::IpiHandler, c});
      break;
    }
    case Irq::Tick: {
      rq.c.ticks++;
      int64_t c = cost(m_.costs.tick_ns);
      int64_t lb = 0;
      // sched_tick(): slice accounting, then the balance softirq and the nohz kick.
      update_curr(rq);
      Task* curr = rq.curr;
      if (curr != rq.idle && !curr->is_rt() && curr->vruntime >= curr->deadline) {
        curr->deadline = curr->vruntime + curr->slice;
        if (rq.nr_running > 1) set_need_resched_local(rq);
      }
      if (f_.on(Feature::IDLE_CPUMASK) && !idle_cpu(cpu)) c += update_idle_cpumask(rq, false);
      update_util(rq);
      if (ev_.now() >= rq.next_balance) rebalance_domains(rq, lb);
      nohz_balancer_kick(rq, lb);
      steps.push_back({KernelPath::Tick, c});
      if (lb > 0) steps.push_back({KernelPath::LoadBalance, lb});
      break;
    }
  }
  run_steps(rq, std::move(steps), std::move(then));
}

}  // namespace schedlab::kernel
