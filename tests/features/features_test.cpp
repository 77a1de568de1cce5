// The three idle-path mechanisms, each shown by its effect on the counters.
#include <gtest/gtest.h>

#include <sstream>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::change_counter;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::KernelPath;
using sim::Time;

namespace {

// A --features list, then `change.NAME.KEY=VALUE` tunables separated by spaces.
Features feats(const std::string& s) {
  Features f;
  std::istringstream in(s);
  std::string list, set;
  in >> list;
  f.apply(list);
  while (in >> set) f.apply_set(set);
  return f;
}

struct Storm {
  std::unique_ptr<Kernel> k;
  Task* caller = nullptr;
};

// A kernel thread on CPU 0 sends `n` synchronous call-functions to idle CPU 1, optionally
// sleeping `gap_ns` between them. `pick_ns` overrides the cost of pick_next_task().
Storm call_storm(const std::string& features, int n, int64_t gap_ns, int64_t pick_ns = -1) {
  Storm s;
  auto m = test_machine(1, 2, 1, 2);
  if (pick_ns >= 0) m.costs.pick_next_task_ns = pick_ns;
  s.k = std::make_unique<Kernel>(m, feats(features), KernelOptions{1, nullptr});
  s.caller = s.k->create_task("ipistorm/0", lambda([n, gap_ns](Api&, Task&, int i) {
                                if (i == 0) return Action::sleep(100000);
                                int call = gap_ns > 0 ? (i - 1) / 2 : i - 1;
                                if (call >= n) return Action::exit();
                                if (gap_ns > 0 && (i - 1) % 2 == 1) return Action::sleep(gap_ns);
                                return Action::call_func(1, 0, true);
                              }),
                              [] {
                                auto o = pinned(0);
                                o.mm = 0;  // a kernel thread, as ipistorm's
                                return o;
                              }());
  s.k->run(Time::sec(10));
  return s;
}

}  // namespace

TEST(SmIdle, SkipsPickNextTaskFromIdleButNotScheduleIdle) {
  auto off = call_storm("", 200, 50000);
  auto on = call_storm("SM_IDLE", 200, 50000);
  const auto& c_off = off.k->rq(1).c;
  const auto& c_on = on.k->rq(1).c;
  EXPECT_EQ(c_off.call_functions_run, 200);
  EXPECT_EQ(c_on.call_functions_run, 200);
  EXPECT_GT(c_off.pick_next_task_from_idle, 0);
  EXPECT_EQ(c_on.pick_next_task_from_idle, 0);
  EXPECT_EQ(c_on.schedule_idle_calls, c_off.schedule_idle_calls);
  EXPECT_EQ(change_counter(c_on, "sm_idle_fastpath"), c_on.schedule_idle_calls);
  // Nothing to balance either way, but the newidle attempt itself is skipped.
  EXPECT_GT(c_off.newidle_balance_calls, 0);
  EXPECT_EQ(c_on.newidle_balance_calls, 0);
}

TEST(SmIdle, BackToBackStormFinishesSoonerWhenThePickPathIsLong) {
  // The sender's next call reaches the target while it is still in schedule_idle() (IRQs off,
  // not polling) only if that path outlasts the IPI round trip: here pick_next_task() costs
  // 5 us (e.g. many cgroups to walk). Then the fast path shortens every other call.
  auto off = call_storm("", 2000, 0, 5000);
  auto on = call_storm("SM_IDLE", 2000, 0, 5000);
  EXPECT_EQ(on.k->rq(1).c.pick_next_task_from_idle, 0);
  EXPECT_LT(on.caller->exit_time, off.caller->exit_time);
  EXPECT_LT(on.k->rq(1).c.kernel_ns[static_cast<int>(KernelPath::ScheduleIdle)],
            off.k->rq(1).c.kernel_ns[static_cast<int>(KernelPath::ScheduleIdle)]);
}

namespace {
// 16 CPUs in one LLC, no SMT; long-running hogs on CPUs 2-15; CPUs 0 and 1 idle.
std::unique_ptr<Kernel> busy_llc(const std::string& features) {
  auto k = std::make_unique<Kernel>(test_machine(1, 16, 1, 16), feats(features),
                                    KernelOptions{1, nullptr});
  for (int c = 2; c < 16; ++c)
    k->create_task("hog", lambda([](Api&, Task&, int) { return Action::compute(1000000000); }),
                   pinned(c));
  return k;
}
}  // namespace

TEST(IdleCpumask, VisitsOnlyIdleCpusOnABusyLlc) {
  int64_t scanned[2], cost[2];
  int found[2];
  int i = 0;
  for (const char* f : {"NO_SIS_UTIL", "NO_SIS_UTIL,IDLE_CPUMASK"}) {
    auto k = busy_llc(f);
    k->run(Time::ms(10));  // every busy CPU has ticked: its stale bit is cleared
    Task p;
    p.cpu = 2;
    cost[i] = 0;
    found[i] = kernel::select_idle_cpu(*k, 2, &p, 2, false, cost[i]);
    scanned[i] = k->rq(2).c.select_idle_cpu_scanned;
    EXPECT_EQ(change_counter(k->rq(2).c, "idle_cpumask_stale"), 0);
    ++i;
  }
  EXPECT_EQ(found[0], 0);
  EXPECT_EQ(found[1], 0);
  EXPECT_EQ(scanned[0], 14);  // CPUs 3..15 busy, then 0
  EXPECT_EQ(scanned[1], 1);   // only CPU 0's bit is visited before it is found
  EXPECT_LT(cost[1], cost[0]);
}

TEST(IdleCpumask, StaleBitsBeforeTheTickAreVisitedAndCounted) {
  auto k = busy_llc("NO_SIS_UTIL,IDLE_CPUMASK");
  k->run(Time::us(300));  // hogs started at 0 but no tick has cleared their bits yet
  Task p;
  p.cpu = 2;
  int64_t cost = 0;
  int found = kernel::select_idle_cpu(*k, 2, &p, 2, false, cost);
  EXPECT_EQ(found, 0);
  EXPECT_EQ(change_counter(k->rq(2).c, "idle_cpumask_stale"), 13);
}

TEST(IdleCpumask, CombinesWithSisUtilLimit) {
  auto k = busy_llc("IDLE_CPUMASK");
  k->run(Time::us(300));
  k->llc_shared(0).nr_idle_scan = 4;
  Task p;
  p.cpu = 2;
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(*k, 2, &p, 2, false, cost), -1);
  EXPECT_LE(k->rq(2).c.select_idle_cpu_scanned, 4);
}

namespace {
struct PingPong {
  std::unique_ptr<Kernel> k;
  Task* a = nullptr;
  Task* b = nullptr;
  Task* c = nullptr;
};

// a (CPU 0) and b (CPU 1) ping-pong `rounds` times with `work` ns of compute per turn.
// Optionally a is SCHED_FIFO and a fair task c on CPU 0 wakes every 200 us for 20 us of work.
PingPong ping_pong(const std::string& features, int rounds, bool with_fair = false, bool a_rt = true) {
  const bool rt_with_fair = with_fair;
  PingPong r;
  r.k = std::make_unique<Kernel>(test_machine(1, 2, 1, 2), feats(features),
                                 KernelOptions{1, nullptr});
  auto* pr = &r;
  kernel::TaskOptions ob = pinned(1, true);
  r.b = r.k->create_task("pong", lambda([pr, rounds](Api&, Task&, int n) {
                           int round = n / 3;
                           if (round >= rounds) return Action::exit();
                           switch (n % 3) {  // starts blocked: woken first
                             case 0: return Action::compute(2000);
                             case 1: return Action::wake(pr->a, true);
                             default: return Action::block();
                           }
                         }),
                         ob);
  kernel::TaskOptions oa = pinned(0);
  if (rt_with_fair && a_rt) {
    oa.policy = kernel::Policy::Fifo;
    oa.rt_prio = 50;
  }
  r.a = r.k->create_task("ping", lambda([pr, rounds](Api&, Task&, int n) {
                           int round = n / 3;
                           if (round >= rounds) return Action::exit();
                           switch (n % 3) {
                             case 0: return Action::compute(2000);
                             case 1: return Action::wake(pr->b, true);
                             default: return Action::block();
                           }
                         }),
                         oa);
  if (rt_with_fair) {
    r.c = r.k->create_task("fair", lambda([rounds](Api&, Task&, int n) {
                             if (n >= 40) return Action::exit();
                             return n % 2 == 0 ? Action::sleep(200000) : Action::compute(20000);
                           }),
                           pinned(0));
  }
  r.k->run(Time::sec(10));
  return r;
}
}  // namespace

TEST(IdleSpin, PingPongSkipsIdleAndSwitches) {
  auto off = ping_pong("", 500);
  auto on = ping_pong("IDLE_SPIN", 500);
  auto t_off = off.k->total();
  auto t_on = on.k->total();
  int64_t idle_entries_off = 0, idle_entries_on = 0;
  for (auto u : t_off.idle_usage) idle_entries_off += u;
  for (auto u : t_on.idle_usage) idle_entries_on += u;
  EXPECT_LT(idle_entries_on, idle_entries_off);
  EXPECT_LT(t_on.context_switches, t_off.context_switches);
  EXPECT_GT(change_counter(t_on, "idle_spin_hit"), 0);
  EXPECT_GT(t_on.kernel_ns[static_cast<int>(KernelPath::Spin)], 0);
  EXPECT_EQ(t_off.kernel_ns[static_cast<int>(KernelPath::Spin)], 0);
  // Round trips complete sooner.
  EXPECT_LT(on.a->exit_time, off.a->exit_time);
}

TEST(IdleSpin, BoundIsTheTunable) {
  // Each turn waits a few us for its wakeup (the other side's 2 us of work and the wakeup): a
  // 1 ms bound catches every wakeup but the last, a 1 us bound none, a zero bound none either
  // (the task then blocks for real).
  auto full = ping_pong("IDLE_SPIN", 500).k->total();
  auto short_bound = ping_pong("IDLE_SPIN change.IDLE_SPIN.max_ns=1000", 500).k->total();
  auto zero = ping_pong("IDLE_SPIN change.IDLE_SPIN.max_ns=0", 500).k->total();
  EXPECT_EQ(change_counter(full, "idle_spin_hit"), change_counter(full, "idle_spin") - 1);
  EXPECT_EQ(change_counter(short_bound, "idle_spin_hit"), 0);
  EXPECT_GT(change_counter(short_bound, "idle_spin_ns"), 0);
  EXPECT_EQ(change_counter(zero, "idle_spin_hit"), 0);
  EXPECT_EQ(change_counter(zero, "idle_spin_ns"), 0);
  EXPECT_LT(full.context_switches, short_bound.context_switches);
}

TEST(IdleSpin, SpinningRtTaskHidesQueuedFairTask) {
  auto off = ping_pong("", 2000, true);
  auto on = ping_pong("IDLE_SPIN", 2000, true);
  EXPECT_EQ(change_counter(off.k->total(), "idle_spin_hidden_ns"), 0);
  EXPECT_GT(change_counter(on.k->total(), "idle_spin_hidden_ns"), 0);
  // The fair task waited longer for the CPU.
  EXPECT_GT(on.c->run_delay_ns, off.c->run_delay_ns);
}

TEST(IdleSpin, FairArrivalEndsAFairSpin) {
  // Same as above but ping is a fair task: the fair task queued on its CPU ends the spin at
  // once instead of waiting for the bound (the RFC spins only while prev is alone).
  auto off = ping_pong("", 2000, true, false);
  auto on = ping_pong("IDLE_SPIN", 2000, true, false);
  EXPECT_GT(change_counter(on.k->total(), "idle_spin"), 0);
  EXPECT_EQ(change_counter(on.k->total(), "idle_spin_hidden_ns"), 0);
  // 20 wakeups of the fair task: none waits anywhere near the 1 ms spin bound. (It may wait for
  // ping's turns: it comes back with the negative lag of its 20 us runs, kept at its placement
  // by PLACE_LAG's load scaling, so it is not eligible at once; 50 us a wakeup on average.)
  EXPECT_LT(on.c->run_delay_ns, off.c->run_delay_ns + 20 * 50000);
}

TEST(IdleCpumask, CombinesWithSisPropLimit) {
  // SIS_PROP instead of SIS_UTIL (as the RFC's v10 kept it): with no idle time to spend the
  // scan is cut at SIS_PROP's floor of 4, stale mask bits included.
  auto k = busy_llc("NO_SIS_UTIL,SIS_PROP,IDLE_CPUMASK");
  k->run(Time::us(300));  // bits of the busy CPUs are still set (no tick yet)
  k->rq(2).wake_avg_idle = 0;
  Task p;
  p.cpu = 2;
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(*k, 2, &p, 2, false, cost), -1);
  EXPECT_LE(k->rq(2).c.select_idle_cpu_scanned, 4);
  EXPECT_GE(change_counter(k->rq(2).c, "idle_cpumask_stale"), 1);
}

// NO_CSD_POLL_KICK (the threads' revert of b2a02fc43a1f): every call to the polling idle target
// is an IPI whose handler runs it; do_idle() never flushes and schedule_idle() never runs.
TEST(CsdPollKick, RevertSendsAnIpiPerCallAndSkipsScheduleIdle) {
  auto on = call_storm("", 200, 50000);
  auto off = call_storm("NO_CSD_POLL_KICK", 200, 50000);
  const auto& c_on = on.k->rq(1).c;
  const auto& c_off = off.k->rq(1).c;
  EXPECT_EQ(c_on.csd_run_idle, 200);
  EXPECT_EQ(on.k->rq(0).c.wake_polling_no_ipi, 200);
  // (besides ipistorm's calls, the sender's ticks kick the NOHZ idle balancer: csds too)
  EXPECT_EQ(c_off.call_functions_run - c_off.nohz_csd_run, 200);
  EXPECT_EQ(c_off.csd_run_ipi, c_off.call_functions_run);
  EXPECT_EQ(c_off.csd_run_idle, 0);
  EXPECT_EQ(off.k->rq(0).c.wake_polling_no_ipi, 0);
  EXPECT_GE(off.k->rq(0).c.ipi_sent[1], 200);
  EXPECT_EQ(c_off.schedule_idle_calls, 0);
  EXPECT_EQ(c_on.schedule_idle_calls, 200);
  // The sender tried set_nr_if_polling() for every call (the queue was empty each time).
  EXPECT_EQ(change_counter(on.k->rq(0).c, "csd_poll_kick_tries"), 200);
  EXPECT_EQ(change_counter(off.k->rq(0).c, "csd_poll_kick_tries"), 0);
}

// NI_SKIP_IDLE_PREV: the pick after a kick (prev = the idle task) runs no newidle balance, but
// still picks (unlike SM_IDLE).
TEST(NiSkipIdlePrev, NoNewidleBalanceWhenPrevIsIdle) {
  auto off = call_storm("", 200, 50000);
  auto on = call_storm("NI_SKIP_IDLE_PREV", 200, 50000);
  EXPECT_GT(off.k->rq(1).c.newidle_balance_calls, 0);
  EXPECT_EQ(on.k->rq(1).c.newidle_balance_calls, 0);
  EXPECT_EQ(on.k->rq(1).c.pick_next_task_from_idle, off.k->rq(1).c.pick_next_task_from_idle);
  EXPECT_EQ(change_counter(on.k->rq(1).c, "newidle_skipped_idle_prev"),
            off.k->rq(1).c.newidle_balance_calls);
}

// TIF_NOTIFY_IPI: the kick sets TIF_NOTIFY_IPI, not TIF_NEED_RESCHED: the target flushes and goes
// back into the idle loop without schedule_idle().
TEST(TifNotifyIpi, IpiOnlyWakeupSkipsScheduleIdle) {
  auto off = call_storm("", 200, 50000);
  auto on = call_storm("TIF_NOTIFY_IPI", 200, 50000);
  const auto& c = on.k->rq(1).c;
  EXPECT_EQ(c.csd_run_idle, 200);
  EXPECT_EQ(c.schedule_idle_calls, 0);
  EXPECT_EQ(c.pick_next_task_from_idle, 0);
  EXPECT_EQ(on.k->rq(0).c.wake_polling_no_ipi, 200);
  EXPECT_EQ(change_counter(on.k->rq(0).c, "notify_ipi_kicks"), 200);
  EXPECT_EQ(off.k->rq(1).c.schedule_idle_calls, 200);
  EXPECT_LT(c.irqs_off_ns, off.k->rq(1).c.irqs_off_ns);
}

// TIF_NOTIFY_IPI with a real wakeup: the flush enqueues the task (sched_ttwu_pending()), so
// need_resched is set after it and schedule_idle() switches to the task.
TEST(TifNotifyIpi, WakeListKickStillSchedules) {
  auto m = test_machine(1, 2, 1, 2);
  Kernel k(m, feats("TIF_NOTIFY_IPI"), KernelOptions{1, nullptr});
  // Created asleep: its program starts when it is woken.
  Task* sleeper = k.create_task("sleeper", lambda([](Api&, Task&, int n) {
                                  return n == 0 ? Action::compute(1000) : Action::exit();
                                }),
                                pinned(1, true));
  k.create_task("waker", lambda([sleeper](Api&, Task&, int n) {
                  if (n == 0) return Action::compute(100000);
                  if (n == 1) return Action::wake(sleeper, false);
                  return Action::exit();
                }),
                pinned(0));
  k.run(Time::ms(5));
  EXPECT_EQ(sleeper->state, kernel::TaskState::Dead);
  EXPECT_GE(k.rq(1).c.schedule_idle_calls, 1);
  EXPECT_EQ(k.rq(0).c.ttwu_wakelist, 1);
}
