// kernel/sched/core.c: __schedule(), pick_next_task(), try_to_wake_up(), resched_curr(),
// sched_tick(), task exit.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"
#include "kernel/schedstat.hpp"

namespace schedlab::kernel {

// idle_cpu(): rq->curr, rq->nr_running and rq->ttwu_pending as a reader sees them now. A direct
// remote enqueue is decided (select_task_rq()) before the waker takes the target's rq lock and
// reaches activate_task(); the model applies it at the decision, so the tasks whose enqueue is
// still ahead of the read (Rq::enqueue_pending, `offset` into the reader's work) are not counted.
bool idle_cpu(const Kernel& k, int cpu, int64_t offset) {
  const Rq& rq = k.rq(cpu);
  if (rq.curr != rq.idle || rq.ttwu_pending) return false;
  if (rq.nr_running == 0) return true;
  const int64_t now = k.now().count() + offset;
  int unseen = 0;
  for (int64_t t : rq.enqueue_pending) unseen += t > now;
  return rq.nr_running == unseen;
}

// add_nr_running() / sub_nr_running(): rd->overload is set when a runqueue reaches two tasks.
static void change_nr_running(Kernel& k, Rq& rq, int delta) {
  bool was = rq.nr_running >= 2;
  rq.nr_running += delta;
  line_write(rq.line, rq.cpu);  // a remote enqueue too is counted as the rq's own CPU's write
  bool is = rq.nr_running >= 2;
  if (was != is) k.rd().nr_overloaded += is ? 1 : -1;
  if (is && !k.rd().overload) {  // set_rd_overloaded()
    k.rd().overload = true;
    rq.c.rd_overload_set++;
  }
}
void add_nr_running(Kernel& k, Rq& rq, int count) { change_nr_running(k, rq, count); }
void sub_nr_running(Kernel& k, Rq& rq, int count) { change_nr_running(k, rq, -count); }

// --- runqueue bookkeeping ---------------------------------------------------------------

void activate_task(Kernel& k, Rq& rq, Task* p) {
  p->sched_class->enqueue_task(k, rq, p);
  p->on_rq = true;
  p->runnable_since = k.now();
  add_nr_running(k, rq, 1);
  pelt_enqueue(k, rq, p);
  for (Change* c : k.hooks(Hook::activate_task)) c->on_activate_task(rq, p);
}

// p is rq->curr (blocking) and not in the queues.
void deactivate_task(Kernel& k, Rq& rq, Task* p) {
  p->sched_class->dequeue_task(k, rq, p);
  p->on_rq = false;
  sub_nr_running(k, rq, 1);
  pelt_dequeue(k, rq, p);
  if (p->state == TaskState::Dead) pelt_detach(k, p);  // task_dead_fair()
}

void set_task_cpu(Kernel& k, Task* p, int cpu) {
  if (p->cpu == cpu) return;
  pelt_detach(k, p);  // migrate_task_rq_fair(): remove_entity_load_avg()
  Distance d = k.topo.distance(p->cpu, cpu);
  if (k.sink) k.sink->sched_migrate_task(k.now(), cpu, k.info(p), p->cpu, cpu);
  p->cold_penalty += k.m.cache_cold_ns(d);
  p->nr_migrations++;
  k.rq(cpu).c.migrations++;
  // perf's cpu-migrations software event of the task (perf_event_task_migrate()), counted for
  // the benchmark's tasks as validate counts the real run's.
  if (p->workload()) k.rq(cpu).c.workload_migrations++;
  if (p->state != TaskState::Dead) {
    k.nr_assigned(p->cpu)--;
    k.nr_assigned(cpu)++;
  }
  p->cpu = cpu;
}

// --- __schedule() ------------------------------------------------------------------------

// The idle re-entry fast path (SM_IDLE): nothing to pick, prev is the idle task and stays.
// raw_spin_rq_unlock_irq() takes the interrupts that arrived meanwhile, then schedule_idle()'s
// need_resched test.
void __schedule_idle_fastpath(Kernel& k, Rq& rq, KernelPath path, int64_t cost) {
  Cpu& cpu = k.cpu(rq.cpu);
  cpu.push_step(path, cost);
  cpu.run_steps(Resume::IrqsThenScheduleIdleLoop);
}

// Models __schedule(mode): prev leaves the runqueue if it blocks, pick_next_task(), the context
// switch. A change may take the CPU over before prev is dequeued (Hook::schedule). Left out:
// RCU, PSI, core scheduling, sched_ext. With DELAY_DEQUEUE a blocking fair task that is not
// eligible stays queued (delay_dequeue_fair()): it is still on_rq, and put back like a
// preempted prev (it goes on counting as a voluntary switch).
void __schedule(Kernel& k, Rq& rq, SchedMode mode) {
  Cpu& cpu = k.cpu(rq.cpu);
  Task* prev = rq.curr;
  const bool from_idle = mode == SchedMode::SM_IDLE;
  const KernelPath path = from_idle ? KernelPath::ScheduleIdle : KernelPath::Schedule;
  if (from_idle)
    rq.c.schedule_idle_calls++;
  else
    rq.c.schedule_calls++;
  int64_t c = k.cost(k.m.costs.schedule_ns);
  // rq_lock(): held from here to the unlock after the switch (finish_task_switch()). A change
  // that takes the CPU over has pushed `c` as its step: the lock is released at its end.
  const int64_t at = cpu.queued_ns();
  c += spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, rq.cpu, at);
  spin_unlock(k, rq.lock, at + c);
  update_curr(k, rq);

  for (Change* ch : k.hooks(Hook::schedule)) {
    HookResult<bool> r = ch->on_schedule(rq, mode, prev, path, c);
    if (r.value) return;
    c += r.cost_ns;
  }

  if (mode == SchedMode::SM_NONE && prev != rq.idle && prev->state != TaskState::Running) {
    c += k.cost(k.m.costs.dequeue_ns);
    if (!delay_dequeue_fair(k, rq, prev)) deactivate_task(k, rq, prev);
  }

  rq.c.pick_next_task_calls++;
  if (prev == rq.idle) rq.c.pick_next_task_from_idle++;
  c += k.cost(k.m.costs.pick_next_task_ns);
  cpu.push_step(path, c);
  Task* next = pick_next_task(k, rq);
  int64_t set_next = next->sched_class->set_next_task(k, rq, next);
  if (set_next > 0) cpu.push_step(path, set_next);
  rq.need_resched = false;
  rq.fair_resched = false;  // an update_curr() request of the pick: cleared with the flag
  if (next != prev) {
    int64_t cs = k.cost(k.m.costs.context_switch_ns);
    // switch_mm(): only when the next task brings another mm; switching to idle or a kernel
    // thread keeps the old one loaded (lazy TLB), so coming back to it costs nothing extra.
    if (next != rq.idle && next->mm != 0 && next->mm != rq.active_mm) {
      cs += k.cost(k.m.costs.switch_mm_ns);
      rq.active_mm = next->mm;
      rq.c.mm_switches++;
    }
    cpu.push_step(path, cs);
    rq.c.context_switches++;
    // __schedule()'s switch_count: nvcsw when prev leaves in a sleeping state (or dead), else
    // nivcsw; counted for the benchmark's tasks (what getrusage gives the real run).
    if (prev != rq.idle && prev->workload())
      ++(prev->state == TaskState::Running ? rq.c.workload_nivcsw : rq.c.workload_nvcsw);
    if (k.sink) {
      trace::PrevState ps = trace::PrevState::Running;
      if (prev->state == TaskState::Dead)
        ps = trace::PrevState::Dead;
      else if (prev->state == TaskState::Interruptible)
        ps = trace::PrevState::Sleeping;
      else if (prev != rq.idle)
        ps = trace::PrevState::Preempted;
      k.sink->sched_switch(k.now(), rq.cpu, k.info(prev), ps, k.info(next));
    }
  }
  if (rq.curr != next) line_write(rq.line, rq.cpu);  // RCU_INIT_POINTER(rq->curr, next)
  rq.curr = next;
  // This CPU has picked from its runqueue: every enqueue still marked ahead is there by now (a
  // later idle period must not count it as unseen).
  if (next != rq.idle) rq.enqueue_pending.clear();
  spin_unlock(k, rq.lock, cpu.queued_ns());
  cpu.run_steps(Continuation::finish_task_switch(prev, next));
}

// The rq unlock (raw_spin_rq_unlock_irq(), in finish_lock_switch() or at the end of
// __schedule() when prev == next) enables interrupts: those that arrived since __schedule()'s
// entry are taken now. The idle task then goes on in schedule_idle()'s loop.
void finish_task_switch(Kernel& k, Rq& rq, Task* prev, Task* next) {
  if (prev != next) {
    update_rq_util(k, rq);
    // put_prev_entity() / set_next_entity(): both entities' and the rq's load brought to date.
    update_load_avg(k, rq, prev);
    update_load_avg(k, rq, next);
  }
  if (prev != next && prev != rq.idle) rq.c.rq_cpu_time += (k.now() - prev->last_arrival).count();
  if (next == rq.idle) {
    k.cpu(rq.cpu).resume(Resume::IrqsThenScheduleIdleLoop);
    return;
  }
  if (prev != next) {
    next->nr_switches_in++;
    next->run_delay_ns += (k.now() - next->runnable_since).count();
    rq.c.run_delay += (k.now() - next->runnable_since).count(), rq.c.pcount++, next->last_arrival = k.now();
  }
  k.cpu(rq.cpu).return_to_task();
}

// pick_next_task(): put prev back if it is still runnable, then each class in priority order;
// when the fair class has nothing, pick_next_task_fair()'s newidle balance runs before the
// idle class gets the CPU.
static Task* pick_from_classes(Kernel& k, Rq& rq) {
  for (const SchedClass* cls : {&rt_sched_class, &fair_sched_class})
    if (Task* p = cls->pick_task(k, rq)) return p;
  return nullptr;
}

Task* pick_next_task(Kernel& k, Rq& rq) {
  Task* prev = rq.curr;
  if (prev != rq.idle && prev->on_rq) {
    prev->sched_class->put_prev_task(k, rq, prev);
    rq.curr = rq.idle;  // transiently; the caller sets the real next
    prev->runnable_since = k.now();
  }
  Task* next = pick_from_classes(k, rq);
  rq.curr = prev;
  if (next) return next;
  // pick_next_task_fair()'s newidle balance.
  bool balance = k.f.on(Feature::NEWIDLE_BALANCE);
  for (Change* c : k.hooks(Hook::pick_next_task_newidle))
    balance = decided(c->on_pick_next_task_newidle(rq, prev, balance));
  if (balance && sched_balance_newidle(k, rq) > 0) {
    next = pick_from_classes(k, rq);
    if (next) return next;
  }
  return idle_sched_class.pick_task(k, rq);
}

// --- sched_tick() --------------------------------------------------------------------------

// sched_tick(): under the rq lock the class's task_tick (slice accounting), changes' tick work
// (Hook::sched_tick); then rq->idle_balance and sched_balance_trigger(): SCHED_SOFTIRQ when a balance is due (it runs
// at irq_exit()) and the NOHZ idle-balance kick.
void sched_tick(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  rq.c.ticks++;
  int64_t c = k.cost(k.m.costs.tick_ns);
  const int64_t at = cpu.queued_ns();
  const int64_t wait = spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, rq.cpu, at);
  rq.curr->sched_class->task_tick(k, rq, rq.curr);
  for (Change* ch : k.hooks(Hook::sched_tick)) c += ch->on_sched_tick(rq).cost_ns;
  update_rq_util(k, rq);
  update_load_avg(k, rq, rq.curr);  // entity_tick()
  c += wait;
  spin_unlock(k, rq.lock, at + c);  // the balance trigger runs after rq_unlock()
  rq.idle_balance = idle_cpu(k, rq.cpu);
  int64_t kick = 0;
  sched_balance_trigger(k, rq, kick);
  cpu.push_step(KernelPath::Tick, c + kick);
}

// --- sched_yield() ------------------------------------------------------------------------

// do_sched_yield(): the class's yield_task(), then schedule() with prev still runnable
// (pick_next_task() runs synchronously inside __schedule()). Left out: the syscall entry cost,
// SCHED_DEADLINE.
void do_sched_yield(Kernel& k, Rq& rq) {
  rq.c.yld_count++;
  rq.curr->sched_class->yield_task(k, rq);
  __schedule(k, rq, SchedMode::SM_NONE);
  rq.yield_to_tail = false;
}

// --- sched_setaffinity() -------------------------------------------------------------------

// sched_setaffinity() of the running task p on itself (__set_cpus_allowed_ptr()): the new mask
// takes effect at once. If p's CPU is still in it, nothing moves. Otherwise affine_move_task()
// has this CPU's stopper run migration_cpu_stop(): p is switched out (preempted, still
// runnable), dequeued, and enqueued on the first CPU of the new mask (cpumask_any_and_distribute()
// as its first CPU: its per-CPU rotation is not modeled), whose current task it may preempt
// (wakeup_preempt(): a resched IPI to an idle CPU), as move_queued_task() does. The move costs
// costs.migrate_task_ns on this CPU. Returns true when p was moved. Left out: the stopper
// thread's own context switch (the one switch away from p stands for it).
bool set_cpus_allowed_ptr(Kernel& k, Rq& rq, Task* p, const std::vector<bool>* mask) {
  p->allowed = mask;
  p->nr_cpus_allowed = static_cast<int>(std::count(mask->begin(), mask->end(), true));
  if (p->allowed_on(rq.cpu)) return false;
  int dest = static_cast<int>(std::find(mask->begin(), mask->end(), true) - mask->begin());
  deactivate_task(k, rq, p);  // update_curr() and the lag, as dequeue_task() of curr does
  int64_t c = k.cost(k.m.costs.migrate_task_ns);
  k.cpu(rq.cpu).push_step(KernelPath::Schedule, c);
  __schedule(k, rq, SchedMode::SM_NONE);  // p is off this runqueue: it is not picked again
  // move_queued_task(), once p is no longer this CPU's current task.
  set_task_cpu(k, p, dest);
  Rq& to = k.rq(dest);
  activate_task(k, to, p);
  wakeup_preempt(k, rq.cpu, to, p, c);
  return true;
}

// --- exit ---------------------------------------------------------------------------------

void do_exit(Kernel& k, Rq& rq, Task* p) {
  p->state = TaskState::Dead;
  p->exit_time = k.now();
  k.nr_assigned(p->cpu)--;
  __schedule(k, rq, SchedMode::SM_NONE);
}

// --- try_to_wake_up() ---------------------------------------------------------------------

static int first_allowed_cpu(const Kernel& k, const Task* p) {
  if (p->allowed_on(p->cpu)) return p->cpu;
  for (int c = 0; c < k.nr_cpus(); ++c)
    if (p->allowed_on(c)) return c;
  return p->cpu;
}

// select_fallback_rq(): `cpu` is not in p's allowed mask: the first allowed CPU of cpu's node,
// else the first allowed CPU at all (the cpuset fallback is not modeled: a mask is never empty).
int select_fallback_rq(const Kernel& k, int cpu, const Task* p) {
  int node = k.topo.socket_of(cpu);
  int any = -1;
  for (int c = 0; c < k.nr_cpus(); ++c) {
    if (!p->allowed_on(c)) continue;
    if (k.topo.socket_of(c) == node) return c;
    if (any < 0) any = c;
  }
  return any;
}

// select_task_rq(): a task allowed on one CPU only goes there (cpumask_any()); otherwise the
// class chooses. The choice is checked against p's allowed mask (is_cpu_allowed()): every path
// of the classes and of the changes' hooks ends here, so none can place p where it may not run.
int select_task_rq(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost) {
  int cpu = p->nr_cpus_allowed == 1
                ? first_allowed_cpu(k, p)
                : p->sched_class->select_task_rq(k, this_cpu, waker, p, sync, cost);
  if (!p->allowed_on(cpu)) cpu = select_fallback_rq(k, p->cpu, p);
  return cpu;
}

// Models try_to_wake_up() on `this_cpu` (waker may be null: interrupt context). Returns the
// waker-side cost. Decisions are taken now; remote effects (IPIs, polling kicks) are scheduled
// at the offset within the waker's cost where they happen. p->pi_lock is held from the start to
// the end (a wait for it is part of the cost). Left out: the on_cpu wait (the wakee's CPU is
// assumed to have finished switching out).
int64_t try_to_wake_up(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync) {
  int64_t c = k.cost(k.m.costs.ttwu_ns);
  if (!p) return c;
  const int64_t at = k.cpu(this_cpu).queued_ns();
  c += spin_lock(k, p->pi_lock, LockClass::Pi, p->pid, this_cpu, at);
  c = try_to_wake_up_locked(k, this_cpu, waker, p, sync, at, c);
  spin_unlock(k, p->pi_lock, at + c);
  return c;
}

// try_to_wake_up() under p->pi_lock; `at` is where the waker's cost starts in its chain, `c` the
// cost so far. Returns the new total.
int64_t try_to_wake_up_locked(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync,
                              int64_t at, int64_t c) {
  if (p->state != TaskState::Interruptible) return c;
  if (k.sink) k.sink->sched_waking(k.now(), this_cpu, k.info(p), p->cpu);
  // A delayed task (DELAY_DEQUEUE) on a busy rq that may run elsewhere is dequeued for good and
  // takes the full wakeup path, select_task_rq() included (ttwu_runnable() since v6.13,
  // d68803506ffb "Dequeue sched_delayed tasks when waking to a busy CPU").
  if (p->on_rq && p->sched_delayed && k.rq(p->cpu).nr_running > 1 && p->nr_cpus_allowed > 1) {
    c += k.remote_read(this_cpu, p->cpu) + k.cost(k.m.costs.dequeue_ns);
    k.rq(p->cpu).c.delay_dequeue_woken++;
    finish_delayed_dequeue_fair(k, k.rq(p->cpu), p);
  }
  if (p->on_rq) return ttwu_runnable(k, this_cpu, p, c);
  p->state = TaskState::Running;
  int prev_cpu = p->cpu;
  int cpu = select_task_rq(k, this_cpu, waker, p, sync, c);
  if (cpu != prev_cpu) set_task_cpu(k, p, cpu);
  if (cpu == this_cpu)
    k.rq(this_cpu).c.ttwu_local++;
  else
    k.rq(this_cpu).c.ttwu_remote++;
  if (cpu != this_cpu)
    if (int l = lowest_sd_level_spanning(k.topo, k.rq(this_cpu), cpu); l >= 0)
      k.rq(this_cpu).c.ttwu_wake_remote[l]++;  // ttwu_stat()
  c += ttwu_queue(k, this_cpu, p, cpu, c, at);
  return c;
}

// ttwu_runnable(): still queued (a change kept it on its runqueue while it blocked, or
// DELAY_DEQUEUE did): just mark it running (one line transfer), no select_task_rq(). A delayed
// task is requeued in place (ENQUEUE_DELAYED: the enqueue's cost) and, not being on a CPU, may
// preempt the one running there (wakeup_preempt()). Left out: the wait for that rq's lock.
// `c` is the waker's cost so far; returns the new total.
int64_t ttwu_runnable(Kernel& k, int this_cpu, Task* p, int64_t c) {
  p->state = TaskState::Running;
  k.rq(this_cpu).c.ttwu_runnable++, k.rq(this_cpu).c.ttwu_runnable_local += p->cpu == this_cpu;  // ttwu_stat()
  c += k.remote_read(this_cpu, p->cpu);
  if (p->sched_delayed) {
    Rq& rq = k.rq(p->cpu);
    c += k.cost(k.m.costs.enqueue_ns);
    requeue_delayed_fair(k, rq, p);
    if (rq.curr != p) c += wakeup_preempt(k, this_cpu, rq, p, c);
  }
  for (Change* ch : k.hooks(Hook::ttwu_runnable)) ch->on_ttwu_runnable(this_cpu, p, c);
  if (k.sink) k.sink->sched_wakeup(k.now(), p->cpu, k.info(p), p->cpu);
  return c;
}

// ttwu_queue_cond(): use the wake list when the target does not share our LLC, or shares it and
// has nothing running (TTWU_QUEUE_IDLE: since v6.0, f3dd3f674555 and 28156108fecb, Tianchen
// Ding). Before v6.0 a same-LLC target's wake list was used only for a wakee still on_cpu there
// (WF_ON_CPU, the wakelist call before select_task_rq()), which the model never has (the wakee's
// CPU has finished switching out): every other same-LLC wakeup took the target's rq lock.
bool ttwu_queue_cond(const Kernel& k, int this_cpu, int cpu) {
  if (!k.f.on(Feature::TTWU_QUEUE)) return false;
  if (cpu == this_cpu) return false;
  if (!k.topo.share_llc(cpu, this_cpu)) return true;
  return k.f.on(Feature::TTWU_QUEUE_IDLE) && k.rq(cpu).nr_running == 0;
}

// `offset`: the waker's cost so far; `at`: where that cost starts in the waker's chain.
int64_t ttwu_queue(Kernel& k, int this_cpu, Task* p, int cpu, int64_t offset, int64_t at) {
  Rq& t = k.rq(cpu);
  if (ttwu_queue_cond(k, this_cpu, cpu)) {
    // __ttwu_queue_wakelist(): set ttwu_pending, llist_add, IPI only if the queue was empty.
    k.rq(this_cpu).c.ttwu_wakelist++;
    bool first = t.wake_list.empty() && t.call_queue.empty();
    t.ttwu_pending = true;
    line_write(t.line, this_cpu);
    t.wake_list.push_back(p);
    int64_t c = k.remote_read(this_cpu, cpu);
    if (first) c += send_call_function_single_ipi(k, this_cpu, cpu, offset + c);
    return c;
  }
  // Direct: lock the target rq (a wait for it first), activate, maybe preempt, unlock. The
  // enqueue reaches the rq when the waker's steps reach activate_task(): until then other
  // wakers' scans still read the CPU as idle and may choose it too (ttwu_enqueue_unseen).
  int64_t c = spin_lock(k, t.lock, LockClass::Rq, cpu, this_cpu, at + offset);
  c += k.remote_read(this_cpu, cpu) + k.cost(k.m.costs.enqueue_ns);
  if (cpu != this_cpu) {
    const int64_t now = k.now().count();
    std::vector<int64_t>& pend = t.enqueue_pending;
    pend.erase(pend.begin(), std::upper_bound(pend.begin(), pend.end(), now));
    if (!pend.empty() && t.curr == t.idle && t.nr_running == static_cast<int>(pend.size()))
      k.rq(this_cpu).c.ttwu_enqueue_unseen++;
    const int64_t lands = now + at + offset + c;
    pend.insert(std::upper_bound(pend.begin(), pend.end(), lands), lands);
  }
  c += ttwu_do_activate(k, this_cpu, t, p, offset + c);
  spin_unlock(k, t.lock, at + offset + c);
  return c;
}

int64_t ttwu_do_activate(Kernel& k, int this_cpu, Rq& rq, Task* p, int64_t offset) {
  activate_task(k, rq, p);
  if (p->background) {
    rq.c.background_events++;
    if (rq.nr_running >= 2) rq.c.background_overload++;
  }
  if (k.sink) k.sink->sched_wakeup(k.now(), rq.cpu, k.info(p), rq.cpu);
  update_avg_idle_on_wakeup(k, rq);
  return wakeup_preempt(k, this_cpu, rq, p, offset);
}

// wakeup_preempt(): a higher class preempts a lower one (idle is always preempted); within a
// class the class decides (EEVDF: the wakee is now the pick). A change may decide instead
// (Hook::wakeup_preempt).
int64_t wakeup_preempt(Kernel& k, int this_cpu, Rq& rq, Task* p, int64_t offset) {
  Task* curr = rq.curr;
  std::optional<bool> decision;  // a change's, else the class rules
  int64_t c = 0;
  for (Change* ch : k.hooks(Hook::wakeup_preempt)) {
    HookResult<std::optional<bool>> r = ch->on_wakeup_preempt(rq, p, decision);
    decision = r.value;
    c += r.cost_ns;
    if (decision) break;
  }
  bool preempt;
  if (decision)
    preempt = *decision;
  else if (p->sched_class == curr->sched_class)
    preempt = p->sched_class->wakeup_preempt(k, rq, p);
  else
    preempt = p->sched_class->rank > curr->sched_class->rank;
  // update_curr() asked for a reschedule in the wakee's enqueue or in wakeup_preempt_fair():
  // resched_curr_lazy() there, delivered here with the same IPI rule.
  if (rq.fair_resched) {
    rq.fair_resched = false;
    preempt = true;
  }
  if (!preempt) return c;
  return c + resched_curr(k, this_cpu, rq, offset);
}

// resched_curr(): local -> set the flag; remote -> set_nr_and_not_polling(): an IPI unless the
// target's idle task is polling.
int64_t resched_curr(Kernel& k, int this_cpu, Rq& t, int64_t offset) {
  if (t.need_resched) return 0;
  if (t.cpu == this_cpu) {
    t.need_resched = true;
    return 0;
  }
  if (t.polling) {
    t.need_resched = true;
    wake_polling_idle(k, this_cpu, t, offset);
    return k.remote_read(this_cpu, t.cpu);
  }
  t.need_resched = true;
  return send_ipi(k, this_cpu, t.cpu, IpiKind::Reschedule, offset);
}

}  // namespace schedlab::kernel
