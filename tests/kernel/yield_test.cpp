// sched_yield() (Action::Yield): yield_task_fair() / yield_task_rt(), then schedule().
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {

machine::Machine one_cpu() { return test_machine(1, 1, 1, 1); }

struct Pair {
  std::unique_ptr<Kernel> k;
  Task* a = nullptr;
  Task* b = nullptr;
  Time b_first_run;  // when B's program first ran
};

// A wakes B, then computes 20 x 100 us (yielding after each piece if `yield`); B computes 2 ms.
// Both run on CPU 0 with `policy`; A is running when B becomes runnable.
Pair run_pair(bool yield, kernel::Policy policy) {
  Pair r;
  r.k = std::make_unique<Kernel>(one_cpu(), Features(), KernelOptions{1, nullptr});
  auto o = pinned(0);
  o.policy = policy;
  o.rt_prio = policy == kernel::Policy::Fifo ? 10 : 0;
  auto ob = o;
  ob.start_blocked = true;
  Pair* rp = &r;
  r.b = r.k->create_task("b", lambda([rp](Api& k, Task&, int n) {
                           if (n == 0) {
                             rp->b_first_run = k.now();
                             return Action::compute(2000000);
                           }
                           return Action::exit();
                         }),
                         ob);
  r.a = r.k->create_task("a", lambda([rp, yield](Api&, Task&, int n) {
                           if (n == 0) return Action::wake(rp->b, false);
                           if (n > 40) return Action::exit();
                           if (n % 2 == 1) return Action::compute(100000);
                           return yield ? Action::yield() : Action::compute(0);
                         }),
                         o);
  r.k->run(Time::ms(100));
  return r;
}

}  // namespace

TEST(SchedYield, FairYieldHandsTheCpuToAnEligibleTask) {
  auto no = run_pair(false, kernel::Policy::Normal);
  auto yes = run_pair(true, kernel::Policy::Normal);
  // Without yield B waits until A's deadline passes at a tick (place_entity gives a new task
  // half a slice); with it B runs at A's first yield, after 100 us.
  EXPECT_GE(no.b_first_run, Time::ms(1));
  EXPECT_LT(yes.b_first_run, Time::us(150));
  EXPECT_EQ(yes.a->state, kernel::TaskState::Dead);
  EXPECT_EQ(yes.b->state, kernel::TaskState::Dead);
}

TEST(SchedYield, RtYieldRequeuesBehindEqualPriority) {
  auto no = run_pair(false, kernel::Policy::Fifo);
  auto yes = run_pair(true, kernel::Policy::Fifo);
  // SCHED_FIFO without yield: B runs only when A exits (20 x 100 us).
  EXPECT_GE(no.b_first_run, Time::ms(2));
  // With yield A goes behind B at its first yield.
  EXPECT_LT(yes.b_first_run, Time::us(150));
  EXPECT_EQ(yes.b->state, kernel::TaskState::Dead);
}

TEST(SchedYield, AloneItSchedulesButDoesNotSwitch) {
  auto k = std::make_unique<Kernel>(one_cpu(), Features(), KernelOptions{1, nullptr});
  Task* a = k->create_task("a", lambda([](Api&, Task&, int n) {
                             if (n >= 10) return Action::exit();
                             return n % 2 == 0 ? Action::compute(10000) : Action::yield();
                           }),
                           pinned(0));
  k->run(Time::ms(10));
  EXPECT_EQ(a->state, kernel::TaskState::Dead);
  const auto& c = k->rq(0).c;
  // 5 yields, each a schedule() that picks A again: no switch beyond idle->A and A->idle.
  EXPECT_GE(c.schedule_calls, 5);
  EXPECT_EQ(c.context_switches, 2);
  // schedstat: yld_count counts every do_sched_yield(); the two switches in: pcount (A once,
  // after boot), sched_goidle (idle picked once A exits).
  EXPECT_EQ(c.yld_count, 5);
  EXPECT_EQ(c.pcount, 1);
  EXPECT_EQ(c.sched_goidle, 1);
  // A waited only for the idle CPU to wake and switch to it (no other task to wait behind).
  EXPECT_GT(c.run_delay, 0);
  EXPECT_LT(c.run_delay, 10000);
  EXPECT_GT(c.rq_cpu_time, 50000);  // its five 10 us pieces and the kernel work between them
}
