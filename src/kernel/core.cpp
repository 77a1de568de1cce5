// kernel/sched/core.c: __schedule(), try_to_wake_up(), resched_curr(), task creation and exit.
#include <algorithm>
#include <stdexcept>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
constexpr int SM_IDLE = -1;
constexpr int SM_NONE = 0;
constexpr int SM_PREEMPT = 1;
}  // namespace

Kernel::Kernel(const machine::Machine& m, const Features& f, const KernelOptions& opts)
    : m_(m), f_(f), opts_(opts), sink_(opts.sink), rng_(opts.seed),
      cost_rng_(sim::Rng(opts.seed).split("costs")) {
  int n = m_.topo.nr_cpus();
  rqs_.resize(n);
  size_t nstates = m_.idle_states.size() + 1;  // + default_idle / idle=poll slot
  for (int cpu = 0; cpu < n; ++cpu) {
    Rq& rq = rqs_[cpu];
    rq.cpu = cpu;
    auto idle = std::make_unique<Task>();
    idle->pid = 0;
    idle->comm = "swapper/" + std::to_string(cpu);
    idle->cpu = cpu;
    idle->state = TaskState::Running;
    rq.idle = idle.get();
    rq.curr = idle.get();
    tasks_.push_back(std::move(idle));
    rq.c.idle_ns.assign(nstates, 0);
    rq.c.idle_usage.assign(nstates, 0);
    rq.avg_idle = 2 * m_.tunables.migration_cost_ns;
    rq.max_idle_balance_cost = m_.tunables.migration_cost_ns;
    rq.llc = m_.topo.llc_of(cpu);
  }
  llcs_.resize(m_.topo.nr_llcs());
  for (int l = 0; l < m_.topo.nr_llcs(); ++l) {
    llcs_[l].cpus = m_.topo.llc_cpus(l);
    llcs_[l].nr_idle_scan = static_cast<int>(llcs_[l].cpus.size());
    llcs_[l].idle_mask.assign(n, false);
    for (int c : llcs_[l].cpus) llcs_[l].idle_mask[c] = true;  // the RFC starts from the span
    llcs_[l].has_idle_cores = m_.topo.threads_per_core > 1;
  }
  build_sched_domains();
  if (sink_) sink_->begin(m_);
  if (opts_.check) {
    wasting_.assign(n, 0);
    ev_.set_after_each([this] { check_invariants(); });
  }
  // Every CPU starts in its idle loop at time 0.
  for (auto& rq : rqs_) {
    rq.bucket = bucket_for_path(KernelPath::IdleEntry);
    start_tick(rq);
    do_idle(rq);
  }
}

Kernel::~Kernel() = default;

trace::TaskInfo Kernel::info(const Task* t) const {
  return trace::TaskInfo{t->pid, t->comm, t->prio()};
}

int64_t Kernel::cost(int64_t ns) {
  if (ns <= 0) return 0;
  double cov = m_.noise.jitter_cov;
  if (cov <= 0) return ns;
  double f = 1.0 + cov * cost_rng_.normal();
  if (f < 0) f = 0;
  return static_cast<int64_t>(ns * f + 0.5);
}

bool Kernel::idle_cpu(int cpu) const {
  const Rq& rq = rqs_[cpu];
  return rq.curr == rq.idle && rq.nr_running == 0 && !rq.ttwu_pending;
}

int Kernel::nr_running(int cpu) const { return rqs_[cpu].nr_running; }

void Kernel::nr_running_add(Rq& rq, int delta) {
  bool was = rq.nr_running >= 2;
  rq.nr_running += delta;
  bool is = rq.nr_running >= 2;
  if (was != is) nr_overloaded_ += is ? 1 : -1;
  if (is) rd_overload_ = true;  // add_nr_running() -> set_rd_overloaded()
}

CpuCounters Kernel::total() const {
  CpuCounters t;
  for (const auto& rq : rqs_) t.add(rq.c);
  return t;
}

Task* Kernel::create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o) {
  auto t = std::make_unique<Task>();
  Task* p = t.get();
  p->pid = next_pid_++;
  p->comm = std::move(comm);
  p->policy = o.policy;
  p->rt_prio = o.rt_prio;
  p->behavior = std::move(b);
  p->mm = o.mm < 0 ? p->pid : o.mm;
  p->slice = m_.tunables.base_slice_ns;
  const std::vector<int>& cpus = !o.cpus.empty() || p->mm == 0 ? o.cpus : default_affinity_;
  if (!cpus.empty()) {
    p->allowed.assign(nr_cpus(), false);
    for (int c : cpus) p->allowed.at(c) = true;
  }
  tasks_.push_back(std::move(t));
  int fork_cpu = p->allowed_on(o.fork_cpu) ? o.fork_cpu : cpus.front();
  int cpu = o.pin_cpu >= 0 ? o.pin_cpu : find_idlest_cpu(p, fork_cpu);
  p->cpu = cpu;
  p->recent_used_cpu = cpu;
  p->state = TaskState::Interruptible;
  p->wakee_flip_decay_ts = ev_.now();
  if (!o.start_blocked) wake_up(p, cpu);
  return p;
}

void Kernel::wake_up(Task* p, int from_cpu) {
  // A wakeup from outside any task program (the benchmark harness): its cost is not charged.
  try_to_wake_up(from_cpu, nullptr, p, false);
}

void Kernel::run(Time limit) {
  ev_.run(limit);
  end_time_ = ev_.now();
  if (opts_.check) check_invariants();
  for (auto& rq : rqs_) {
    if (rq.mode == Mode::Task) pause_task_segment(rq);
    account(rq, rq.bucket);
    if (opts_.check) {
      const auto& c = rq.c;
      if (c.busy_ns + c.kernel_total_ns() + c.idle_total_ns() != end_time_.count())
        check_fail(rq.cpu, nullptr, "time not conserved: busy + kernel + idle != simulated time");
    }
  }
  if (sink_) sink_->end(end_time_);
}

// --- runqueue bookkeeping ---------------------------------------------------------------

void Kernel::activate_task(Rq& rq, Task* p, bool wakeup) {
  if (p->is_rt()) {
    rq.rt.push_back(p);
  } else {
    update_curr(rq);
    place_entity(rq, p);
    p->check_queued = false;  // placed anew
    rq.cfs.push_back(p);
  }
  p->on_rq = true;
  p->runnable_since = ev_.now();
  nr_running_add(rq, 1);
  if (rq.spin_task && rq.spin_task->is_rt() && !p->is_rt() && !rq.spin_hidden) {
    rq.spin_hidden = true;
    rq.spin_hidden_since = ev_.now();
  }
}

void Kernel::deactivate_task(Rq& rq, Task* p) {
  // p is rq.curr (blocking) and not in the queues.
  if (!p->is_rt()) {
    update_curr(rq);
    int64_t V = avg_vruntime(rq);
    int64_t limit = std::max<int64_t>(2 * p->slice, m_.tick_ns());
    p->vlag = std::clamp<int64_t>(V - p->vruntime, -limit, limit);
  }
  p->on_rq = false;
  nr_running_add(rq, -1);
}

void Kernel::set_task_cpu(Task* p, int cpu) {
  if (p->cpu == cpu) return;
  Distance d = m_.topo.distance(p->cpu, cpu);
  if (sink_) sink_->sched_migrate_task(ev_.now(), cpu, info(p), p->cpu, cpu);
  p->cold_penalty += m_.cache_cold_ns(d);
  p->nr_migrations++;
  rqs_[cpu].c.migrations++;
  p->cpu = cpu;
}

// --- __schedule() ------------------------------------------------------------------------

// Models __schedule(mode). SM_IDLE (from schedule_idle()) with SM_IDLE on and nothing runnable
// takes the fast path: no pick_next_task(), no newidle balance, straight back to idle. Left out:
// RCU, PSI, core scheduling, sched_ext, delayed dequeue.
void Kernel::schedule(Rq& rq, int mode) {
  Task* prev = rq.curr;
  const bool from_idle = mode == SM_IDLE;
  const KernelPath path = from_idle ? KernelPath::ScheduleIdle : KernelPath::Schedule;
  if (from_idle)
    rq.c.schedule_idle_calls++;
  else
    rq.c.schedule_calls++;
  int64_t c = cost(m_.costs.schedule_ns);
  update_curr(rq);

  if (from_idle && f_.on(Feature::SM_IDLE) && rq.nr_running == 0) {
    rq.need_resched = false;
    rq.c.sm_idle_fastpath++;
    run_steps(rq, {{path, c}}, [this, &rq] { do_idle(rq); });
    return;
  }

  if (mode == SM_NONE && prev != rq.idle && prev->state != TaskState::Running) {
    if (prev->state == TaskState::Interruptible && f_.on(Feature::IDLE_SPIN) &&
        !rq.no_spin_once && rq.nr_running == 1) {
      run_steps(rq, {{path, c}}, [this, &rq, prev] { start_idle_spin(rq, prev); });
      return;
    }
    rq.no_spin_once = false;
    c += cost(m_.costs.dequeue_ns);
    deactivate_task(rq, prev);
  }
  rq.no_spin_once = false;

  std::vector<KernelStep> steps;
  rq.c.pick_next_task_calls++;
  if (prev == rq.idle) rq.c.pick_next_task_from_idle++;
  c += cost(m_.costs.pick_next_task_ns);
  Task* next = pick_next_task(rq);
  steps.push_back({path, c});
  if (!next) {
    bool pulled = false;
    if (f_.on(Feature::NEWIDLE_BALANCE)) {
      for (auto& s : newidle_balance(rq, pulled)) steps.push_back(std::move(s));
    }
    if (pulled) next = pick_next_task(rq);
  }
  if (!next) {
    next = rq.idle;
    // set_next_task_idle() -> update_idle_core()
    int64_t before = 0;
    if (m_.topo.threads_per_core > 1) {
      for (int s : m_.topo.smt_siblings(rq.cpu))
        if (s != rq.cpu) before += m_.remote_read_ns(Distance::Smt);
      update_idle_core(rq);
    }
    if (before > 0) steps.push_back({path, before});
  }
  rq.need_resched = false;
  if (next != prev) {
    int64_t cs = cost(m_.costs.context_switch_ns);
    // switch_mm(): only when the next task brings another mm; switching to idle or a kernel
    // thread keeps the old one loaded (lazy TLB), so coming back to it costs nothing extra.
    if (next != rq.idle && next->mm != 0 && next->mm != rq.active_mm) {
      cs += cost(m_.costs.switch_mm_ns);
      rq.active_mm = next->mm;
      rq.c.mm_switches++;
    }
    steps.push_back({path, cs});
    rq.c.context_switches++;
    if (sink_) {
      trace::PrevState ps = trace::PrevState::Running;
      if (prev->state == TaskState::Dead)
        ps = trace::PrevState::Dead;
      else if (prev->state == TaskState::Interruptible)
        ps = trace::PrevState::Sleeping;
      else if (prev != rq.idle)
        ps = trace::PrevState::Preempted;
      sink_->sched_switch(ev_.now(), rq.cpu, info(prev), ps, info(next));
    }
  }
  rq.curr = next;
  // set_next_entity(): the picked task's execution clock starts now, so the switch itself is
  // charged to it and its time waiting in the queue is not.
  if (next != rq.idle) next->exec_start = ev_.now();
  run_steps(rq, std::move(steps), [this, &rq, prev, next] { finish_switch(rq, prev, next); });
}

void Kernel::finish_switch(Rq& rq, Task* prev, Task* next) {
  if (prev != next) update_util(rq);
  if (next == rq.idle) {
    do_idle(rq);
    return;
  }
  if (prev != next) {
    next->nr_switches_in++;
    next->run_delay_ns += (ev_.now() - next->runnable_since).count();
  }
  return_to_task(rq);
}

// pick_next_task(): put prev back if it is still runnable, then RT before fair (EEVDF pick).
// Returns nullptr when only the idle task is left (the caller runs newidle balance).
Task* Kernel::pick_next_task(Rq& rq) {
  Task* prev = rq.curr;
  if (prev != rq.idle && prev->on_rq) {
    if (prev->is_rt() && !rq.yield_to_tail)
      rq.rt.insert(rq.rt.begin(), prev);  // a preempted RT task stays at the head
    else if (prev->is_rt())
      rq.rt.push_back(prev);  // yield_task_rt(): requeue_task_rt() to the tail
    else
      rq.cfs.push_back(prev);
    rq.curr = rq.idle;  // transiently; the caller sets the real next
    prev->runnable_since = ev_.now();
  }
  Task* next = nullptr;
  if (!rq.rt.empty()) {
    auto best = rq.rt.begin();
    for (auto it = rq.rt.begin(); it != rq.rt.end(); ++it)
      if ((*it)->rt_prio > (*best)->rt_prio) best = it;
    next = *best;
    rq.rt.erase(best);
  } else if (!rq.cfs.empty()) {
    next = pick_eevdf(rq);
    rq.cfs.erase(std::find(rq.cfs.begin(), rq.cfs.end(), next));
  }
  rq.curr = prev;
  return next;
}

void Kernel::set_need_resched_local(Rq& rq) { rq.need_resched = true; }

// --- IDLE_SPIN ----------------------------------------------------------------------------

// The 2018 RFC: prev blocks and is alone on the rq, so instead of dequeuing it and switching to
// idle, spin (CPU busy, counted) until it is woken, someone sets need_resched, or the bound.
void Kernel::start_idle_spin(Rq& rq, Task* prev) {
  if (rq.nr_running > 1) {  // another task arrived during the schedule step: not alone any more
    rq.no_spin_once = true;
    schedule(rq, SM_NONE);
    return;
  }
  rq.spin_task = prev;
  rq.spin_start = ev_.now();
  rq.c.idle_spin++;
  int cpu = rq.cpu;
  rq.spin_timeout = ev_.after(Time::ns(m_.tunables.idle_spin_max_ns),
                              [this, cpu] { end_idle_spin(rqs_[cpu], false); });
  // return_to_task() ends the spin at once if prev was woken while we were getting here.
  return_to_task(rq);
}

void Kernel::end_idle_spin(Rq& rq, bool woken) {
  Task* p = rq.spin_task;
  if (!p) return;
  if (rq.mode == Mode::Kernel) {  // in an interrupt: return_to_task() ends the spin after it
    rq.spin_end_requested = true;
    return;
  }
  rq.spin_end_requested = false;
  ev_.cancel(rq.spin_timeout);
  rq.spin_task = nullptr;
  if (rq.spin_hidden) {
    rq.c.idle_spin_hidden_ns += (ev_.now() - rq.spin_hidden_since).count();
    rq.spin_hidden = false;
  }
  if (p->state == TaskState::Running) {
    rq.c.idle_spin_hit++;
    account(rq, 0);
    return_to_task(rq);
    return;
  }
  rq.no_spin_once = true;
  schedule(rq, SM_NONE);
}

// --- exit ---------------------------------------------------------------------------------

void Kernel::task_exit(Rq& rq, Task* p) {
  p->state = TaskState::Dead;
  p->exit_time = ev_.now();
  schedule(rq, SM_NONE);
}

// --- try_to_wake_up() ---------------------------------------------------------------------

// Models try_to_wake_up() on `this_cpu` (waker may be null: interrupt context). Returns the
// waker-side cost. Decisions are taken now; remote effects (IPIs, polling kicks) are scheduled
// at the offset within the waker's cost where they happen. Left out: pi_lock contention, the
// on_cpu wait (the wakee's CPU is assumed to have finished switching out).
int64_t Kernel::try_to_wake_up(int this_cpu, Task* waker, Task* p, bool sync) {
  int64_t c = cost(m_.costs.ttwu_ns);
  if (!p || p->state != TaskState::Interruptible) return c;
  if (sink_) sink_->sched_waking(ev_.now(), this_cpu, info(p), p->cpu);
  if (p->on_rq) {
    // ttwu_runnable(): still queued (IDLE_SPIN spinner): just mark it running.
    p->state = TaskState::Running;
    c += m_.remote_read_ns(m_.topo.distance(this_cpu, p->cpu));
    Rq& prq = rqs_[p->cpu];
    if (prq.spin_task == p) {
      int cpu = p->cpu;
      Time spin = prq.spin_start;
      int64_t notice = c + m_.remote_read_ns(m_.topo.distance(this_cpu, cpu));
      ev_.after(Time::ns(notice), [this, cpu, p, spin] {
        Rq& r = rqs_[cpu];
        if (r.spin_task == p && r.spin_start == spin && r.mode == Mode::Spin) end_idle_spin(r, true);
      });
    }
    if (sink_) sink_->sched_wakeup(ev_.now(), p->cpu, info(p), p->cpu);
    return c;
  }
  p->state = TaskState::Running;
  int prev_cpu = p->cpu;
  int cpu = prev_cpu;
  if (!p->is_rt()) cpu = select_task_rq_fair(this_cpu, waker, p, sync, c);
  if (cpu != prev_cpu) set_task_cpu(p, cpu);
  if (cpu == this_cpu)
    rqs_[this_cpu].c.ttwu_local++;
  else
    rqs_[this_cpu].c.ttwu_remote++;
  c += ttwu_queue(this_cpu, p, cpu, c);
  return c;
}

// ttwu_queue_cond(): use the wake list when the target does not share our LLC, or shares it and
// has nothing running (since v6.0).
bool Kernel::ttwu_queue_cond(int this_cpu, int cpu) const {
  if (!f_.on(Feature::TTWU_QUEUE)) return false;
  if (cpu == this_cpu) return false;
  if (m_.topo.llc_of(cpu) != m_.topo.llc_of(this_cpu)) return true;
  return rqs_[cpu].nr_running == 0;
}

int64_t Kernel::ttwu_queue(int this_cpu, Task* p, int cpu, int64_t offset) {
  Rq& t = rqs_[cpu];
  Distance d = m_.topo.distance(this_cpu, cpu);
  if (ttwu_queue_cond(this_cpu, cpu)) {
    // __ttwu_queue_wakelist(): set ttwu_pending, llist_add, IPI only if the queue was empty.
    rqs_[this_cpu].c.ttwu_wakelist++;
    bool first = t.wake_list.empty() && t.call_queue.empty();
    t.ttwu_pending = true;
    t.wake_list.push_back(p);
    int64_t c = m_.remote_read_ns(d);
    if (first) c += send_call_function_single_ipi(this_cpu, cpu, offset + c);
    return c;
  }
  // Direct: lock the target rq, activate, maybe preempt.
  int64_t c = m_.remote_read_ns(d) + cost(m_.costs.enqueue_ns);
  c += ttwu_do_activate(this_cpu, t, p, offset + c);
  return c;
}

int64_t Kernel::ttwu_do_activate(int this_cpu, Rq& rq, Task* p, int64_t offset) {
  activate_task(rq, p, true);
  if (sink_) sink_->sched_wakeup(ev_.now(), rq.cpu, info(p), rq.cpu);
  update_avg_idle_on_wakeup(rq);
  return wakeup_preempt(this_cpu, rq, p, offset);
}

// wakeup_preempt(): idle is always preempted; a higher class preempts a lower one; within the
// fair class EEVDF preempts when the wakee is now the pick. Left out: RUN_TO_PARITY,
// PREEMPT_SHORT, buddies.
int64_t Kernel::wakeup_preempt(int this_cpu, Rq& rq, Task* p, int64_t offset) {
  Task* curr = rq.curr;
  bool preempt = false;
  if (rq.spin_task) {
    // IDLE_SPIN spins only while prev is alone: a task of the same or a higher class ends the
    // spin (prev then blocks for real). A fair task does not disturb a spinning RT task (the
    // reviewers' concern): it waits for the spin to end, counted in idle_spin_hidden_ns.
    preempt = !(rq.spin_task->is_rt() && !p->is_rt());
  } else if (curr == rq.idle) {
    preempt = true;
  } else if (p->is_rt()) {
    preempt = !curr->is_rt() || p->rt_prio > curr->rt_prio;
  } else if (curr->is_rt()) {
    preempt = false;  // a lower class never preempts a higher one
  } else if (f_.on(Feature::WAKEUP_PREEMPTION)) {
    update_curr(rq);
    preempt = pick_eevdf(rq) == p;
  }
  if (!preempt) return 0;
  return resched_curr(this_cpu, rq, offset);
}

// resched_curr(): local -> set the flag; remote -> set_nr_and_not_polling(): an IPI unless the
// target's idle task is polling.
int64_t Kernel::resched_curr(int this_cpu, Rq& t, int64_t offset) {
  if (t.need_resched) return 0;
  if (t.cpu == this_cpu) {
    t.need_resched = true;
    return 0;
  }
  if (t.polling) {
    polling_kick(this_cpu, t, offset);
    return m_.remote_read_ns(m_.topo.distance(this_cpu, t.cpu));
  }
  t.need_resched = true;
  return send_ipi(this_cpu, t.cpu, IpiKind::Reschedule, offset);
}

}  // namespace schedlab::kernel
