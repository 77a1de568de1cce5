// Policy decisions on hand-built runqueues, without a simulation: a Kernel is built on a test
// machine and never run; its runqueues are set by hand (a CPU is busy when its rq has a current
// task) and the policy function is called directly. Each test asserts the decision and the
// counters it moves.
#include <gtest/gtest.h>

#include <cmath>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"
#include "kernel/schedstat.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::KernelOptions;
using kernel::Rq;
using sim::Time;

namespace {

struct Hand {
  std::unique_ptr<Kernel> k;
  explicit Hand(const machine::Machine& m, const std::string& features = "") {
    Features f;
    f.apply(features);
    k = std::make_unique<Kernel>(m, f, KernelOptions{1, nullptr});
  }
  // A sleeping task whose task_cpu() is `cpu`, allowed on `cpus` (empty: all).
  Task* task(int cpu, std::vector<int> cpus = {}) {
    kernel::TaskOptions o;
    o.cpus = std::move(cpus);
    o.pin_cpu = cpu;
    o.start_blocked = true;
    return k->create_task("t", lambda([](Api&, Task&, int) { return Action::exit(); }), o);
  }
  // `cpu` runs a task (its curr), with `queued` more fair tasks waiting.
  std::vector<Task*> busy(int cpu, int queued = 0) {
    std::vector<Task*> ts;
    Rq& rq = k->rq(cpu);
    for (int i = 0; i <= queued; ++i) {
      Task* t = task(cpu);
      t->state = kernel::TaskState::Running;
      t->on_rq = true;
      if (i == 0)
        rq.curr = t;
      else
        rq.cfs.push_back(t);
      kernel::add_nr_running(*k, rq, 1);
      kernel::pelt_enqueue(*k, rq, t);  // a new task's load: its weight
      ts.push_back(t);
    }
    return ts;
  }
  Rq& rq(int cpu) { return k->rq(cpu); }
  // A task asleep after running on `cpu`: its load (the weight: it is new) still attached there.
  Task* sleeper(int cpu) {
    Task* t = task(cpu);
    kernel::pelt_enqueue(*k, k->rq(cpu), t);
    kernel::pelt_dequeue(*k, k->rq(cpu), t);
    return t;
  }
};

// Four CPUs without SMT in one LLC; 2 x 2 cores with SMT (CPU c and c + 4 are siblings) in
// one LLC; two sockets of two single-CPU LLCs.
machine::Machine flat4() { return test_machine(1, 4, 1, 4); }
machine::Machine smt8() { return test_machine(1, 4, 2, 4); }
machine::Machine numa4() { return test_machine(2, 2, 1, 1); }

}  // namespace

// --- EEVDF ------------------------------------------------------------------------------------

TEST(Policy, PickEevdfTakesTheEarliestDeadlineAmongEligibleTasks) {
  Hand h(flat4());
  Rq& rq = h.rq(0);
  Task* a = h.task(0);
  Task* b = h.task(0);
  Task* c = h.task(0);
  // avg_vruntime = 2000: a and b are eligible (vruntime <= V), c is not although its deadline
  // is the earliest.
  a->vruntime = 1000, a->deadline = 9000;
  b->vruntime = 2000, b->deadline = 8000;
  c->vruntime = 3000, c->deadline = 4000;
  rq.cfs = {a, b, c};
  EXPECT_EQ(kernel::avg_vruntime(rq), 2000);
  EXPECT_EQ(kernel::pick_eevdf(rq), b);
  // The average is weighted: with c weighing 3x, V = (1000 + 2000 + 3 * 3000) / 5 = 2400, still
  // below c; at vruntime 1500 c pulls V down to 1500, is eligible and has the earliest deadline
  // (b, at 2000, is not eligible any more).
  c->weight = 3 * 1024;
  EXPECT_EQ(kernel::avg_vruntime(rq), 2400);
  EXPECT_EQ(kernel::pick_eevdf(rq), b);
  c->vruntime = 1500;
  EXPECT_EQ(kernel::avg_vruntime(rq), 1500);
  EXPECT_EQ(kernel::pick_eevdf(rq), c);
}

TEST(Policy, PickEevdfConsidersARunnableCurr) {
  Hand h(flat4());
  auto ts = h.busy(0, 1);  // curr + one queued
  Task* curr = ts[0];
  Task* queued = ts[1];
  curr->vruntime = 1000, curr->deadline = 2000;
  queued->vruntime = 1000, queued->deadline = 5000;
  EXPECT_EQ(kernel::pick_eevdf(h.rq(0)), curr);
  curr->deadline = 6000;
  EXPECT_EQ(kernel::pick_eevdf(h.rq(0)), queued);
}

// Slice protection (RUN_TO_PARITY, PREEMPT_SHORT; v6.17 check_preempt_wakeup_fair()). CPU 0
// runs `curr`, picked by set_next_task (vprot set there) at vruntime 0 with deadline 3 ms; the
// wakee `p` is queued, eligible (both at vruntime 1 ms = V) with an earlier deadline (2 ms).
struct Protect {
  Hand h;
  Task* curr;
  Task* p;
  Protect(const std::string& features, int64_t curr_slice, int64_t p_slice) : h(flat4(), features) {
    auto ts = h.busy(0, 0);
    curr = ts[0];
    curr->slice = curr_slice;
    curr->vruntime = 0, curr->deadline = 3000000;
    h.rq(0).curr = h.rq(0).idle;  // set_next_task runs with prev still current
    kernel::fair_sched_class.set_next_task(*h.k, h.rq(0), curr);
    h.rq(0).curr = curr;
    curr->vruntime = 1000000;  // it has run 1 ms since
    p = h.task(0);
    p->state = kernel::TaskState::Running;
    p->on_rq = true;
    p->slice = p_slice;
    p->vruntime = 1000000, p->deadline = 2000000;
    h.rq(0).cfs.push_back(p);
    kernel::add_nr_running(*h.k, h.rq(0), 1);
  }
  bool wakeup_preempts() { return kernel::fair_sched_class.wakeup_preempt(*h.k, h.rq(0), p); }
};

TEST(Policy, RunToParityKeepsAnEligibleCurrInsideItsProtection) {
  // Equal 3 ms slices: protected up to its deadline (3 ms), so the wakee's earlier deadline
  // does not preempt.
  Protect on("", 3000000, 3000000);
  EXPECT_EQ(on.curr->vprot, 3000000);
  EXPECT_FALSE(on.wakeup_preempts());
  EXPECT_EQ(on.curr->vprot, 3000000);  // untouched (no PREEMPT_SHORT case)
  // Without RUN_TO_PARITY the protection is the normalized base slice (0.70 ms): at 1 ms it is
  // over, and the wakee is the pick.
  Protect off("NO_RUN_TO_PARITY", 3000000, 3000000);
  EXPECT_EQ(off.curr->vprot, 700000);
  EXPECT_TRUE(off.wakeup_preempts());
  // An ineligible curr is never protected: curr ahead of V.
  Protect ahead("", 3000000, 3000000);
  ahead.curr->vruntime = 1500000;  // V = 1.25 ms
  EXPECT_TRUE(ahead.wakeup_preempts());
  // A slice no longer than the base slice is protected up to the deadline either way.
  Protect shortcurr("NO_RUN_TO_PARITY", 500000, 500000);
  EXPECT_EQ(shortcurr.curr->vprot, 3000000);
}

TEST(Policy, PreemptShortLetsAShorterSliceWakeeThroughTheProtection) {
  // The wakee asks for 1 ms against curr's 3 ms: the pick ignores curr's protection, the wakee
  // preempts and curr's protection is cancelled.
  Protect on("", 3000000, 1000000);
  EXPECT_TRUE(on.wakeup_preempts());
  EXPECT_EQ(on.curr->vprot, on.curr->vruntime);
  // Without PREEMPT_SHORT the protection holds.
  Protect off("NO_PREEMPT_SHORT", 3000000, 1000000);
  EXPECT_FALSE(off.wakeup_preempts());
  EXPECT_EQ(off.curr->vprot, 3000000);
  // A shorter-slice wakee that is not the pick even unprotected (a later deadline): no preemption,
  // and curr's protection shrinks to the shortest slice on the rq (update_protect_slice()).
  Protect later("", 3000000, 1000000);
  later.p->deadline = 4000000;
  EXPECT_FALSE(later.wakeup_preempts());
  EXPECT_EQ(later.curr->vprot, 1000000 + 1000000);
}

TEST(Policy, TickReschedulesACurrPastItsProtection) {
  // NO_RUN_TO_PARITY: protected for 0.70 ms of its 3 ms slice. At 1 ms, with a task queued, the
  // tick reschedules although the deadline is still ahead.
  // (The tick's update_curr() charges the 1 us since exec_start; with nothing to charge it
  // does nothing, as the kernel's returns early on delta_exec <= 0.)
  Protect off("NO_RUN_TO_PARITY", 3000000, 3000000);
  off.curr->exec_start = off.h.k->now() - Time::ns(1000);
  kernel::fair_sched_class.task_tick(*off.h.k, off.h.rq(0), off.curr);
  EXPECT_TRUE(off.h.rq(0).need_resched);
  EXPECT_FALSE(off.h.rq(0).fair_resched);  // the tick delivered update_curr()'s request
  Protect on("", 3000000, 3000000);
  on.curr->exec_start = on.h.k->now() - Time::ns(1000);
  kernel::fair_sched_class.task_tick(*on.h.k, on.h.rq(0), on.curr);
  EXPECT_FALSE(on.h.rq(0).need_resched);
  // Picked again while it is the running task (put_prev_set_next_task() with next == prev): the
  // protection is not renewed.
  off.curr->deadline = 6000000;
  kernel::fair_sched_class.set_next_task(*off.h.k, off.h.rq(0), off.curr);
  EXPECT_EQ(off.curr->vprot, 700000);
}

// DELAY_DEQUEUE (v6.12): CPU 0 runs `a` with `b` queued. A curr that blocks while eligible
// leaves as before; one that blocks past the average stays queued (sched_delayed), counted in
// avg_vruntime() and nr_running, until the pick reaches it (then it is dequeued for good, a
// positive lag dropped by DELAY_ZERO) or a wakeup requeues it in place.
TEST(Policy, DelayDequeueKeepsAnIneligibleSleeperQueuedUntilPicked) {
  for (bool on : {false, true}) {
    Hand h(flat4(), on ? "DELAY_DEQUEUE" : "");
    auto ts = h.busy(0, 1);
    Task* a = ts[0];
    Task* b = ts[1];
    Rq& rq = h.rq(0);
    a->exec_start = h.k->now();
    a->vruntime = 3000, a->deadline = 5000;  // V = 2000: a is ahead (negative lag)
    b->vruntime = 1000, b->deadline = 9000;
    a->state = kernel::TaskState::Interruptible;  // it blocks
    const bool delayed = kernel::delay_dequeue_fair(*h.k, rq, a);
    EXPECT_EQ(delayed, on);
    if (!on) continue;
    EXPECT_TRUE(a->sched_delayed);
    EXPECT_TRUE(a->on_rq);
    EXPECT_EQ(rq.c.delay_dequeue, 1);
    EXPECT_EQ(rq.nr_running, 2);
    // __schedule() puts it back like a preempted prev; it still counts in the average.
    kernel::fair_sched_class.put_prev_task(*h.k, rq, a);
    rq.curr = rq.idle;
    EXPECT_EQ(kernel::avg_vruntime(rq), 2000);
    // Not eligible: b is the pick, a stays delayed.
    EXPECT_EQ(kernel::fair_sched_class.pick_task(*h.k, rq), b);
    EXPECT_TRUE(a->sched_delayed);
    EXPECT_EQ(rq.c.delay_dequeue_picked, 0);
    // b has run past it (V = 5000 with a at 3000 is behind it): a is eligible and the earlier
    // deadline, so the pick dequeues it for good (its lag +2000 dropped: DELAY_ZERO) and picks
    // again.
    b->vruntime = 7000, b->deadline = 12000;
    rq.cfs.push_back(b);
    EXPECT_EQ(kernel::fair_sched_class.pick_task(*h.k, rq), b);
    EXPECT_FALSE(a->sched_delayed);
    EXPECT_FALSE(a->on_rq);
    EXPECT_EQ(a->vlag, 0);
    EXPECT_EQ(rq.nr_running, 1);
    EXPECT_EQ(rq.c.delay_dequeue_picked, 1);
    EXPECT_TRUE(rq.cfs.empty());
  }
  // A wakeup of a delayed task requeues it where it is (negative lag: not re-placed).
  Hand h(flat4(), "DELAY_DEQUEUE");
  auto ts = h.busy(0, 1);
  Task* a = ts[0];
  Rq& rq = h.rq(0);
  a->exec_start = h.k->now();
  a->vruntime = 3000, a->deadline = 5000;
  ts[1]->vruntime = 1000, ts[1]->deadline = 9000;
  a->state = kernel::TaskState::Interruptible;
  ASSERT_TRUE(kernel::delay_dequeue_fair(*h.k, rq, a));
  kernel::fair_sched_class.put_prev_task(*h.k, rq, a);
  rq.curr = rq.idle;
  kernel::requeue_delayed_fair(*h.k, rq, a);
  EXPECT_FALSE(a->sched_delayed);
  EXPECT_EQ(a->vruntime, 3000);
  EXPECT_EQ(rq.c.delay_requeue, 1);
  EXPECT_EQ(rq.cfs.size(), 2u);
  EXPECT_EQ(rq.nr_running, 2);
}

TEST(Policy, PlaceEntityKeepsLagAndGivesNewTasksHalfASlice) {
  Hand h(flat4());
  Rq& rq = h.rq(0);
  Task* a = h.task(0);
  a->vruntime = 10000;
  rq.cfs = {a};
  Task* fresh = h.task(0);
  fresh->slice = 3000;
  ASSERT_TRUE(fresh->new_task);
  kernel::place_entity(rq, fresh);
  EXPECT_EQ(fresh->vruntime, 10000);
  EXPECT_EQ(fresh->deadline, 10000 + 1500);  // PLACE_DEADLINE_INITIAL: half a slice
  EXPECT_FALSE(fresh->new_task);
  // A woken task keeps its lag (scaled by the load: PlaceLagScalesTheLagByTheQueuedLoad);
  // deadline one weighted slice after its vruntime.
  Task* woken = h.task(0);
  woken->new_task = false;
  woken->vlag = 400;
  woken->slice = 3000;
  woken->weight = 2048;
  kernel::place_entity(rq, woken);
  const int64_t lag = 400 * (1024 + 2048) / 1024;
  EXPECT_EQ(woken->vruntime, 10000 - lag);
  EXPECT_EQ(woken->deadline, 10000 - lag + 3000 * 1024 / 2048);
}

// update_curr() (v6.6 update_deadline(); v6.17 `resched || !protect_slice(curr)`): at every
// charge, not only the tick, a curr that reached its deadline gets a new one a slice out and,
// with another task queued, is rescheduled; so is one past its slice protection. The request
// waits in rq.fair_resched until wakeup_preempt() or the tick delivers it.
TEST(Policy, UpdateCurrReschedulesAtTheDeadlineAndPastTheProtection) {
  // RUN_TO_PARITY, equal slices: protected up to the deadline (3 ms). 2 us short of it, curr
  // runs 3 us more.
  Protect dl("", 3000000, 3000000);
  Rq& rq = dl.h.rq(0);
  dl.curr->vruntime = 2998000;
  dl.curr->exec_start = dl.h.k->now() - Time::ns(3000);
  kernel::update_curr(*dl.h.k, rq);
  EXPECT_EQ(dl.curr->vruntime, 3001000);
  EXPECT_EQ(dl.curr->deadline, 3001000 + 3000000);
  EXPECT_TRUE(rq.fair_resched);
  EXPECT_FALSE(rq.need_resched);
  EXPECT_EQ(rq.c.eevdf_deadline_renewed, 1);
  EXPECT_EQ(rq.c.eevdf_update_curr_resched, 1);
  // The next wakeup's wakeup_preempt() delivers it (the wakee's enqueue asked: no pick needed).
  kernel::wakeup_preempt(*dl.h.k, 0, rq, dl.p, 0);
  EXPECT_TRUE(rq.need_resched);
  EXPECT_FALSE(rq.fair_resched);
  // Inside the protection and short of the deadline: no request.
  Protect in("", 3000000, 3000000);
  in.curr->exec_start = in.h.k->now() - Time::ns(1000);
  kernel::update_curr(*in.h.k, in.h.rq(0));
  EXPECT_FALSE(in.h.rq(0).fair_resched);
  EXPECT_EQ(in.h.rq(0).c.eevdf_update_curr_resched, 0);
  // Past the protection (NO_RUN_TO_PARITY: 0.70 ms), the deadline still ahead: a request at the
  // first charge, not only at the tick.
  Protect past("NO_RUN_TO_PARITY", 3000000, 3000000);
  past.curr->exec_start = past.h.k->now() - Time::ns(1000);
  kernel::update_curr(*past.h.k, past.h.rq(0));
  EXPECT_TRUE(past.h.rq(0).fair_resched);
  EXPECT_EQ(past.h.rq(0).c.eevdf_deadline_renewed, 0);
  // Alone on the rq (cfs_rq->nr_queued == 1): a new deadline, no request.
  Hand alone(flat4());
  Task* a = alone.busy(0, 0)[0];
  a->vruntime = 2998000, a->deadline = 3000000, a->slice = 3000000;
  a->exec_start = alone.k->now() - Time::ns(3000);
  kernel::update_curr(*alone.k, alone.rq(0));
  EXPECT_EQ(a->deadline, 3001000 + 3000000);
  EXPECT_FALSE(alone.rq(0).fair_resched);
  EXPECT_EQ(alone.rq(0).c.eevdf_deadline_renewed, 1);
}

// PLACE_LAG's load scaling (place_entity(), v6.6): a task placed with lag L among load W moves the
// average towards itself by w / (W + w) of its offset, so it is placed L * (W + w) / W behind V
// and keeps L after the enqueue.
TEST(Policy, PlaceLagScalesTheLagByTheQueuedLoad) {
  Hand h(flat4());
  Rq& rq = h.rq(0);
  Task* a = h.task(0);
  a->vruntime = 10000;
  rq.cfs = {a};  // W = 1024
  Task* woken = h.task(0);
  woken->new_task = false;
  woken->vlag = 400;
  woken->slice = 3000;
  woken->weight = 2048;
  kernel::place_entity(rq, woken);
  EXPECT_EQ(woken->vruntime, 10000 - 400 * (1024 + 2048) / 1024);
  rq.cfs.push_back(woken);
  EXPECT_EQ(kernel::avg_vruntime(rq) - woken->vruntime, 400);  // the lag is kept
  // A negative lag is scaled the same way (placed further ahead).
  Task* ahead = h.task(0);
  ahead->new_task = false;
  ahead->vlag = -300;
  const int64_t V = kernel::avg_vruntime(rq);
  kernel::place_entity(rq, ahead);
  EXPECT_EQ(ahead->vruntime, V + 300 * (1024 + 2048 + 1024) / (1024 + 2048));
  // Nothing queued: no lag to keep, the task lands on the rq's zero point.
  Hand e(flat4());
  Task* lone = e.task(0);
  lone->new_task = false;
  lone->vlag = 400;
  kernel::place_entity(e.rq(0), lone);
  EXPECT_EQ(lone->vruntime, kernel::avg_vruntime(e.rq(0)));
}

// PLACE_REL_DEADLINE (v6.12): a queued task that migrates (detach_task()) keeps what is left of
// its request on the new rq; a sleeper's wakeup gets a fresh slice.
TEST(Policy, MigrationKeepsWhatIsLeftOfTheRequest) {
  Hand h(flat4());
  auto ts = h.busy(0, 1);
  Task* b = ts[1];
  b->new_task = false;
  b->vruntime = 1000, b->deadline = 1500, b->slice = 3000;
  kernel::detach_task_fair(*h.k, h.rq(0), b);
  EXPECT_TRUE(b->rel_deadline);
  EXPECT_EQ(b->deadline, 500);
  h.rq(0).cfs.clear();
  Task* c = h.busy(1, 0)[0];
  c->vruntime = 50000;
  kernel::place_entity(h.rq(1), b);
  EXPECT_FALSE(b->rel_deadline);
  EXPECT_EQ(b->deadline, b->vruntime + 500);
  // A task that blocks is dequeued with an absolute deadline: placed with a new slice.
  Task* s = ts[0];
  s->vruntime = 2000, s->deadline = 2100, s->slice = 3000;
  s->state = kernel::TaskState::Interruptible;
  kernel::fair_sched_class.dequeue_task(*h.k, h.rq(0), s);
  EXPECT_FALSE(s->rel_deadline);
  s->new_task = false;
  kernel::place_entity(h.rq(1), s);
  EXPECT_EQ(s->deadline, s->vruntime + 3000);
}

// --- wake_affine() ----------------------------------------------------------------------------

TEST(Policy, WakeAffineIdle) {
  Hand h(flat4());
  Task* p = h.task(2);
  int64_t cost = 0;
  // WA_IDLE: this CPU idle and sharing the LLC: prev if it is idle too, else this CPU.
  EXPECT_EQ(kernel::wake_affine(*h.k, 0, 2, false, nullptr, p, cost), 2);
  h.busy(2);
  EXPECT_EQ(kernel::wake_affine(*h.k, 0, 2, false, nullptr, p, cost), 0);
  EXPECT_EQ(cost, 2 * h.k->remote_read(0, 2));  // prev's runqueue line, each time
  // A sync wakeup from a CPU running only the waker goes to the waker's CPU.
  Hand s(flat4(), "NO_WA_WEIGHT");
  Task* q = s.task(2);
  s.busy(0);
  s.busy(2);
  EXPECT_EQ(kernel::wake_affine(*s.k, 0, 2, true, nullptr, q, cost), 0);
  // Not sync: no decision: prev.
  EXPECT_EQ(kernel::wake_affine(*s.k, 0, 2, false, nullptr, q, cost), 2);
  // This CPU busy, prev idle: prev.
  Hand t(flat4(), "NO_WA_WEIGHT");
  Task* r = t.task(2);
  t.busy(0, 2);
  EXPECT_EQ(kernel::wake_affine(*t.k, 0, 2, true, nullptr, r, cost), 2);
}

TEST(Policy, WakeAffineWeightComparesLoads) {
  Hand h(flat4(), "NO_WA_IDLE");
  Task* p = h.sleeper(2);
  int64_t cost = 0;
  h.busy(0);     // this: 1 task
  h.busy(2, 2);  // prev: 3 tasks
  EXPECT_EQ(kernel::wake_affine(*h.k, 0, 2, false, nullptr, p, cost), 0);
  Hand g(flat4(), "NO_WA_IDLE");
  Task* q = g.sleeper(2);
  g.busy(0, 2);  // this: 3 tasks
  g.busy(2);     // prev: 1
  EXPECT_EQ(kernel::wake_affine(*g.k, 0, 2, false, nullptr, q, cost), 2);
  // Equal loads (this 1 + p vs prev 2 + p, p's own load taken out of prev's): WA_BIAS scales
  // prev's load by 100 + (117 - 100) / 2 % against this CPU's by 100 %: this CPU. Without the
  // bias 2048 < 2048 is false: prev; a sync wakeup takes the waker's own load out (and adds 1 to
  // prev's): this CPU.
  Hand e(flat4(), "NO_WA_IDLE");
  Task* r = e.sleeper(2);
  e.busy(0);
  e.busy(2, 1);
  EXPECT_EQ(kernel::wake_affine(*e.k, 0, 2, false, nullptr, r, cost), 0);
  Hand u(flat4(), "NO_WA_IDLE,NO_WA_BIAS");
  Task* v = u.sleeper(2);
  u.busy(0);
  u.busy(2, 1);
  EXPECT_EQ(kernel::wake_affine(*u.k, 0, 2, false, nullptr, v, cost), 2);
  EXPECT_EQ(kernel::wake_affine(*u.k, 0, 2, true, nullptr, v, cost), 0);
}

// The loads are PELT's, not the runqueues' task counts: one task on each CPU, but this CPU's has
// run little lately (load 100 of 1024) and prev's fully; p (asleep on prev) is pulled to this
// CPU, where counting tasks (1 + p against 1 - 0, biased) would keep it on prev.
TEST(Policy, WakeAffineWeightUsesPeltLoadNotTaskCounts) {
  Hand h(flat4(), "NO_WA_IDLE");
  Task* p = h.sleeper(2);
  p->load_avg = 300;
  h.rq(2).load_avg -= 1024 - 300;
  Task* light = h.busy(0)[0];
  light->load_avg = 100;
  h.rq(0).load_avg = 100;
  h.busy(2);
  int64_t cost = 0;
  // this: (100 + 300) x 100 = 40000; prev: (1024 + 300 - 300) x 108 = 110592.
  EXPECT_EQ(kernel::wake_affine(*h.k, 0, 2, false, nullptr, p, cost), 0);
  // The same CPUs with prev's task as light as this one's: prev (400 x 100 against 100 x 108).
  h.rq(2).load_avg = 100 + 300;
  EXPECT_EQ(kernel::wake_affine(*h.k, 0, 2, false, nullptr, p, cost), 2);
}

TEST(Pelt, DecayHalvesEvery32Periods) {
  EXPECT_DOUBLE_EQ(kernel::pelt_decay(0), 1.0);
  EXPECT_NEAR(kernel::pelt_decay(int64_t{32} << 20), 0.5, 1e-12);   // 32 x 1024 us
  EXPECT_NEAR(kernel::pelt_decay(int64_t{64} << 20), 0.25, 1e-12);
  EXPECT_NEAR(kernel::pelt_decay(int64_t{1} << 20), std::exp2(-1.0 / 32), 1e-12);
  EXPECT_EQ(kernel::pelt_decay(int64_t{32 * 64} << 20), 0.0);
}

// A task that runs 64 periods and sleeps 64: its load stays near its weight while it runs and
// decays while it sleeps, all of it still its CPU's (blocked load) until it wakes elsewhere.
TEST(Pelt, BlockedLoadDecaysOnItsCpuUntilTheTaskMigrates) {
  auto k =
      std::make_unique<Kernel>(test_machine(1, 2, 1, 2), features(""), KernelOptions{1, nullptr});
  constexpr int64_t kPeriod = int64_t{1} << 20;  // 1024 us
  Task* t = k->create_task("t", lambda([](Api&, Task&, int i) {
                             if (i == 0) return Action::compute(64 * kPeriod);
                             if (i == 1) return Action::sleep(64 * kPeriod);
                             return Action::block();
                           }),
                           pinned(0));
  k->run(Time::ns(60 * kPeriod));
  kernel::update_load_avg(*k, k->rq(0), t);
  EXPECT_NEAR(t->load_avg, 1024, 1);  // started at its weight, runnable all along
  k->run(Time::ns(140 * kPeriod));    // the sleep's timer woke it at 128 periods; it blocked
  EXPECT_EQ(t->load_cpu, 0);
  EXPECT_FALSE(t->load_runnable);
  Rq& rq = k->rq(0);
  EXPECT_NEAR(t->load_avg, 256, 8);   // 64 periods asleep: a quarter left
  EXPECT_NEAR(rq.load_avg, t->load_avg, 1e-6);  // ... and all of it CPU 0's
  EXPECT_EQ(rq.load_weight, 0);
  kernel::set_task_cpu(*k, t, 1);  // a wakeup migrating it: detached from CPU 0
  EXPECT_EQ(t->load_cpu, -1);
  EXPECT_NEAR(rq.load_avg, 0, 1e-6);
}

// --- select_idle_sibling() and select_task_rq() -------------------------------------------------

TEST(Policy, SelectIdleSiblingOrder) {
  Hand h(flat4());
  h.k->llc_shared(0).nr_idle_scan = 4;  // SIS_UTIL lets the scan cover the LLC (it starts at 0)
  Task* p = h.task(1);
  p->recent_used_cpu = 3;
  int64_t cost = 0;
  // An idle target first.
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 0);
  EXPECT_EQ(p->recent_used_cpu, 3);  // untouched when target or prev is taken
  // Target busy: an idle prev.
  h.busy(0);
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 1);
  // Target and prev busy: recent_used_cpu if idle.
  h.busy(1);
  p->recent_used_cpu = 3;
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 3);
  EXPECT_EQ(p->recent_used_cpu, 1);  // prev becomes the recent CPU
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_calls, 0);  // no scan so far
  // Recent busy too: the LLC scan from target + 1 finds CPU 2.
  h.busy(3);
  p->recent_used_cpu = 3;
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 2);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_calls, 1);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_found, 1);
  // Nothing idle: target.
  h.busy(2);
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 0);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_found, 1);
}

TEST(Policy, SelectIdleSiblingRespectsTheAllowedMask) {
  Hand h(flat4());
  h.k->llc_shared(0).nr_idle_scan = 4;  // SIS_UTIL lets the scan cover the LLC (it starts at 0)
  Task* p = h.task(1, {1, 3});
  p->recent_used_cpu = 2;
  int64_t cost = 0;
  // Target 0 and recent 2 are idle but not allowed; prev 1 is allowed and idle.
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 1);
  // prev busy: the scan skips 2 (not allowed) and finds 3.
  h.busy(1);
  EXPECT_EQ(kernel::select_idle_sibling(*h.k, 0, p, 1, 0, cost), 3);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_scanned, 2);  // CPUs 1 (busy) and 3; 2 skipped
}

TEST(Policy, SelectTaskRqNeverPlacesATaskOutsideItsMask) {
  // sched_setaffinity() after p last ran on CPU 1: now allowed on 2 and 3 only, both busy.
  // Waker 0 is not allowed (no wake_affine), prev 1 is idle but not allowed, the LLC of 1 has
  // no allowed CPU: select_idle_sibling() falls back to target = prev. select_task_rq() then
  // takes select_fallback_rq(): nothing allowed on prev's node, so the first allowed CPU.
  Hand h(numa4());  // sockets {0, 1} and {2, 3}; one CPU per LLC
  Task* p = h.task(1);
  static const std::vector<bool> far = {false, false, true, true};
  p->allowed = &far;
  p->nr_cpus_allowed = 2;
  h.busy(2);
  h.busy(3);
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_task_rq_fair(*h.k, 0, nullptr, p, false, cost), 1);
  EXPECT_EQ(kernel::select_task_rq(*h.k, 0, nullptr, p, false, cost), 2);
  // select_fallback_rq(): the first allowed CPU of the node of the given CPU, else any.
  EXPECT_EQ(kernel::select_fallback_rq(*h.k, 0, p), 2);
  static const std::vector<bool> mixed = {false, true, false, true};
  p->allowed = &mixed;
  EXPECT_EQ(kernel::select_fallback_rq(*h.k, 2, p), 3);  // CPU 2's node: 2, 3
  EXPECT_EQ(kernel::select_fallback_rq(*h.k, 0, p), 1);
}

// --- select_idle_cpu() and select_idle_core() ---------------------------------------------------

TEST(Policy, SelectIdleCpuWrapsFromTargetAndIsBoundedBySisUtil) {
  Hand h(flat4());
  Task* p = h.task(0);
  int64_t cost = 0;
  auto& sds = const_cast<kernel::SchedDomainShared&>(h.k->llc_shared(0));
  sds.nr_idle_scan = 4;
  h.busy(2);
  // From target 1: 2 (busy), 3 (idle).
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 1, false, cost), 3);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_scanned, 2);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_found, 1);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_scan_ns, 2 * h.k->remote_read(0, 2));
  // From target 3 it wraps: 0 is idle.
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 3, false, cost), 0);
  // SIS_UTIL: nr_idle_scan = 1 lets one CPU be looked at: 2 (busy), then stop.
  sds.nr_idle_scan = 1;
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 1, false, cost), -1);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_scanned, 2 + 1 + 1);
  // An overloaded LLC (nr_idle_scan 0): no scan at all.
  sds.nr_idle_scan = 0;
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 1, false, cost), -1);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_scanned, 4);
  EXPECT_EQ(h.rq(0).c.select_idle_cpu_calls, 4);
}

TEST(Policy, SelectIdleCorePrefersAWholeIdleCore) {
  Hand h(smt8());
  Task* p = h.task(0);
  int64_t cost = 0;
  auto& sds = const_cast<kernel::SchedDomainShared&>(h.k->llc_shared(0));
  sds.has_idle_cores = true;
  h.busy(5);  // core 1 = {1, 5}: half busy
  // From target 0: core 1 (CPU 1 idle, 5 busy) is not a whole idle core; core 2 is.
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 0, true, cost), 2);
  EXPECT_TRUE(sds.has_idle_cores);
  // No whole idle core left: the first idle CPU seen is the fallback and has_idle_cores is
  // cleared (set_idle_cores(false)).
  h.busy(0);
  h.busy(6);
  h.busy(3);
  EXPECT_EQ(kernel::select_idle_cpu(*h.k, 0, p, 0, true, cost), 1);
  EXPECT_FALSE(sds.has_idle_cores);
  // An allowed mask: the fallback must be allowed (CPU 4 is idle, its sibling 0 busy).
  Hand m(smt8());
  Task* q = m.task(0, {4, 7});
  auto& msds = const_cast<kernel::SchedDomainShared&>(m.k->llc_shared(0));
  msds.has_idle_cores = true;
  for (int c : {0, 1, 2, 3}) m.busy(c);
  EXPECT_EQ(kernel::select_idle_cpu(*m.k, 0, q, 0, true, cost), 4);
}

TEST(Policy, SelectIdleSmtFindsAnIdleSiblingOfPrev) {
  Hand h(smt8());
  Task* p = h.task(1);
  int64_t cost = 0;
  h.busy(1);
  EXPECT_EQ(kernel::select_idle_smt(*h.k, 0, p, 1, cost), 5);
  h.busy(5);
  EXPECT_EQ(kernel::select_idle_smt(*h.k, 0, p, 1, cost), -1);
}

// --- the menu governor ---------------------------------------------------------------------------

TEST(Policy, MenuSelectsByThePredictedIdleTime) {
  Hand h(flat4());  // POLL, C1 (residency 1 us), C6 (800 us); HZ = 1000
  Rq& rq = h.rq(0);
  bool stop_tick = false;
  // No timer, no history: the deepest state, tick stopped.
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 2);
  EXPECT_TRUE(stop_tick);
  // A timer 500 ns away: POLL, the tick kept.
  rq.timers = {500};
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 0);
  EXPECT_FALSE(stop_tick);
  // 200 us away: C1; below a tick: the tick kept.
  rq.timers = {200000};
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 1);
  EXPECT_FALSE(stop_tick);
  // 2 ms: C6 and the tick stopped.
  rq.timers = {2000000};
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 2);
  EXPECT_TRUE(stop_tick);
  // Consistent recent idle periods of ~5 us lower the prediction: C1.
  for (int i = 0; i < 8; ++i) kernel::menu_update(*h.k, 0, 5000 + 10 * i);
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 1);
  EXPECT_FALSE(stop_tick);
  // The history keeps the last 8 periods: 8 long ones replace them.
  for (int i = 0; i < 8; ++i) kernel::menu_update(*h.k, 0, 3000000);
  EXPECT_EQ(h.k->menu(0).nr, 8);
  EXPECT_EQ(kernel::menu_select(*h.k, rq, stop_tick), 2);
  // A disabled state is never chosen; POLL is skipped once it hit its time limit.
  Hand d([] {
    auto m = flat4();
    m.idle_states[2].disabled = true;
    return m;
  }());
  d.rq(0).timers = {2000000};
  EXPECT_EQ(kernel::menu_select(*d.k, d.rq(0), stop_tick), 1);
  d.rq(0).timers = {500};
  d.k->cpuidle(0).poll_time_limit = true;
  EXPECT_EQ(kernel::menu_select(*d.k, d.rq(0), stop_tick), 1);
}

// --- load balancing ------------------------------------------------------------------------------

TEST(Policy, LoadBalancePullsHalfTheImbalanceAndRespectsCacheHotness) {
  // All tasks just ran (task_hot(): within migration_cost). can_migrate_task() leaves them in
  // place, periodic or newly idle, until the MC domain has failed more than cache_nice_tries (1)
  // periodic balances in a row; newidle balance never raises nr_balance_failed.
  Hand h(flat4());
  auto ts = h.busy(1, 3);  // 4 tasks on CPU 1
  for (Task* t : ts) t->nr_switches_in = 1;  // they ran (a task that never ran is cold)
  int64_t cost = 0;
  kernel::SchedDomain& sd = h.rq(0).sd.front();
  const kernel::CpuCounters& hc = h.rq(0).c;
  const int nidle = kernel::sd_idle_index(sd, kernel::CpuIdleType::NewlyIdle);
  const int idle = kernel::sd_idle_index(sd, kernel::CpuIdleType::Idle);  // CPU 0 idles
  ASSERT_EQ(sd.cache_nice_tries, 1);
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), sd, false, cost), 0);
  EXPECT_EQ(sd.nr_balance_failed, 1);
  EXPECT_EQ(hc.nr_failed_migrations_hot, 3);  // the 3 queued tasks (curr is not in the tree)
  for (int i = 0; i < 3; ++i) EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), sd, true, cost), 0);
  EXPECT_EQ(sd.nr_balance_failed, 1);  // newidle failures do not count
  EXPECT_EQ(hc.lb_failed[nidle], 3);
  EXPECT_EQ(hc.nr_failed_migrations_hot, 12);
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), sd, false, cost), 0);  // 1 > 1: no
  EXPECT_EQ(sd.nr_balance_failed, 2);
  EXPECT_EQ(hc.lb_failed[idle], 2);
  // 2 > cache_nice_tries: hot tasks move, (4 - 0) / 2 of them, and the count restarts.
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), sd, false, cost), 2);
  EXPECT_EQ(hc.lb_hot_gained[idle], 2);
  EXPECT_EQ(sd.nr_balance_failed, 0);
  EXPECT_EQ(h.rq(0).nr_running, 2);
  EXPECT_EQ(h.rq(1).nr_running, 2);
  EXPECT_EQ(h.rq(0).c.migrations, 2);
  // Balanced (2 and 2): nothing, and nr_balance_failed stays 0.
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), sd, true, cost), 0);
  EXPECT_EQ(sd.nr_balance_failed, 0);
  // Cold tasks (migration_cost 0) move on a periodic balance, but only where allowed.
  auto m = flat4();
  m.tunables.migration_cost_ns = 0;
  Hand c(m);
  auto cs = c.busy(1, 3);
  static const std::vector<bool> not0 = {false, true, true, true};
  cs[1]->allowed = &not0;
  cs[1]->nr_cpus_allowed = 3;
  kernel::SchedDomain& csd = c.rq(0).sd.front();
  EXPECT_EQ(kernel::sched_balance_rq(*c.k, 0, c.rq(0), csd, false, cost), 2);
  EXPECT_EQ(cs[1]->cpu, 1);  // the pinned one stayed
  EXPECT_EQ(cs[2]->cpu, 0);
  EXPECT_EQ(cs[3]->cpu, 0);
}

TEST(Policy, TaskHotAndCacheNiceTriesPerLevel) {
  // SMT siblings share the cache: task_hot() is false at the SMT level, so newidle balance there
  // pulls a task that just ran; the MC level leaves it. sd_init(): cache_nice_tries 0 at SMT,
  // 1 at MC and PKG, 2 at NUMA.
  Hand h(smt8());
  for (Task* t : h.busy(4, 2)) t->nr_switches_in = 1;  // CPU 4 is CPU 0's sibling
  int64_t cost = 0;
  kernel::SchedDomain& smt = h.rq(0).sd.front();
  kernel::SchedDomain& mc = h.rq(0).sd.back();
  ASSERT_EQ(smt.level, kernel::SdLevel::SMT);
  ASSERT_EQ(mc.level, kernel::SdLevel::MC);
  EXPECT_EQ(smt.cache_nice_tries, 0);
  EXPECT_EQ(mc.cache_nice_tries, 1);
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), mc, true, cost), 0);
  EXPECT_EQ(h.rq(0).c.nr_failed_migrations_hot, 2);
  EXPECT_EQ(kernel::sched_balance_rq(*h.k, 0, h.rq(0), smt, true, cost), 1);
  EXPECT_EQ(h.rq(0).c.lb_hot_gained[kernel::sd_idle_index(smt, kernel::CpuIdleType::NewlyIdle)], 0);
  Hand n(test_machine(2, 2, 1, 2));
  EXPECT_EQ(n.rq(0).sd.back().level, kernel::SdLevel::NUMA);
  EXPECT_EQ(n.rq(0).sd.back().cache_nice_tries, 2);
  // A task that last ran migration_cost ago is cold: newidle balance takes it at once.
  Hand w(flat4());
  auto ts = w.busy(1, 1);
  ts[1]->nr_switches_in = 1;
  ts[1]->exec_start = w.k->now() - Time::ns(w.k->m.tunables.migration_cost_ns);
  EXPECT_EQ(kernel::sched_balance_rq(*w.k, 0, w.rq(0), w.rq(0).sd.front(), true, cost), 1);
  EXPECT_EQ(ts[1]->cpu, 0);
  // One that never ran is cold too (exec_start 0 from __sched_fork()).
  Hand f(flat4());
  auto fs = f.busy(1, 1);
  EXPECT_EQ(kernel::sched_balance_rq(*f.k, 0, f.rq(0), f.rq(0).sd.front(), true, cost), 1);
  EXPECT_EQ(f.rq(0).c.lb_hot_gained[kernel::sd_idle_index(f.rq(0).sd.front(), kernel::CpuIdleType::NewlyIdle)], 0);
}

TEST(Policy, NewidleBalanceGates) {
  Hand h(flat4());
  h.busy(1, 2);  // an overloaded runqueue: rd->overload
  ASSERT_TRUE(h.k->rd().overload);
  Rq& rq = h.rq(0);
  // A wakeup pending: skipped.
  rq.ttwu_pending = true;
  EXPECT_EQ(kernel::sched_balance_newidle(*h.k, rq), 0);
  EXPECT_EQ(rq.c.newidle_balance_calls, 1);
  EXPECT_EQ(rq.c.newidle_balance_skipped, 1);
  rq.ttwu_pending = false;
  // avg_idle below the lowest domain's max_newidle_lb_cost: skipped.
  rq.avg_idle = 1000;
  rq.sd.front().max_newidle_lb_cost = 5000;
  EXPECT_EQ(kernel::sched_balance_newidle(*h.k, rq), 0);
  EXPECT_EQ(rq.c.newidle_balance_skipped, 2);
  // avg_idle covers it: balances and pulls one task.
  rq.avg_idle = 1000000;
  EXPECT_EQ(kernel::sched_balance_newidle(*h.k, rq), 1);
  EXPECT_EQ(rq.c.newidle_balance_calls, 3);
  EXPECT_EQ(rq.c.newidle_balance_skipped, 2);
  EXPECT_EQ(rq.c.newidle_balance_pulled, 1);
  // No overloaded runqueue anywhere: skipped.
  Hand q(flat4());
  q.busy(1);
  q.k->rd().overload = false;
  q.rq(0).avg_idle = 1000000;
  EXPECT_EQ(kernel::sched_balance_newidle(*q.k, q.rq(0)), 0);
  EXPECT_EQ(q.rq(0).c.newidle_balance_skipped, 1);
}

// --- fork placement ------------------------------------------------------------------------------

TEST(Policy, ForkPlacementTakesTheLeastLoadedGroupAndStaysOnALightNode) {
  // Two sockets of 8 CPUs, two LLCs of 4 each: node 0 = LLCs {0-3}, {4-7}.
  Hand h(test_machine(2, 8, 1, 4));
  Task* p = h.task(0);
  Task* q = h.task(0, {0, 1, 2});
  std::vector<int>& load = h.k->sched().nr_assigned;
  load.assign(16, 0);
  // An idle machine: the parent's CPU.
  EXPECT_EQ(kernel::sched_balance_find_dst_cpu(*h.k, p, 0), 0);
  // The parent's node runs fewer tasks than a quarter of its CPUs: the child stays on it
  // (allow_numa_imbalance()), in its idler LLC.
  load[0] = 1;
  EXPECT_EQ(kernel::sched_balance_find_dst_cpu(*h.k, p, 0), 4);
  // Two tasks on 8 CPUs is a quarter: the idler node.
  load[4] = 1;
  EXPECT_EQ(kernel::sched_balance_find_dst_cpu(*h.k, p, 0), 8);
  // Within a group the least loaded CPU; only allowed CPUs count.
  load[1] = 2;
  EXPECT_EQ(kernel::sched_balance_find_dst_cpu(*h.k, q, 0), 2);
  load[2] = 3;
  EXPECT_EQ(kernel::sched_balance_find_dst_cpu(*h.k, q, 0), 0);
}
