// ttwu_queue_cond() per kernel era: the same wakeup, a waker on CPU 0 waking a task that sleeps
// on idle CPU 1, goes through CPU 1's wake list (v6.0: TTWU_QUEUE_IDLE) or activates the task
// on CPU 1's runqueue from CPU 0 (before v6.0: NO_TTWU_QUEUE_IDLE). Across LLCs both eras use
// the wake list.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {

struct Woken {
  std::unique_ptr<Kernel> k;
  Task* sleeper = nullptr;
};

// One wakeup of a task pinned to idle CPU 1 by a task on CPU 0, on a machine of two
// single-thread cores, `cores_per_llc` of them per LLC.
Woken one_wakeup(const std::string& feats, int cores_per_llc) {
  Woken w;
  w.k = std::make_unique<Kernel>(test_machine(1, 2, 1, cores_per_llc), features(feats),
                                 KernelOptions{1, nullptr});
  w.sleeper = w.k->create_task("sleeper", lambda([](Api&, Task&, int n) {
                                 return n == 0 ? Action::compute(1000) : Action::exit();
                               }),
                               pinned(1, true));
  Task* s = w.sleeper;
  w.k->create_task("waker", lambda([s](Api&, Task&, int n) {
                     if (n == 0) return Action::compute(100000);
                     if (n == 1) return Action::wake(s, false);
                     return Action::exit();
                   }),
                   pinned(0));
  w.k->run(Time::ms(5));
  return w;
}

}  // namespace

TEST(TtwuQueueCond, SameLlcIdleTargetWakeListSinceV60RemoteActivationBefore) {
  Woken v60 = one_wakeup("", 2), v5 = one_wakeup("NO_TTWU_QUEUE_IDLE", 2);
  for (const Woken* w : {&v60, &v5}) {
    EXPECT_EQ(w->sleeper->state, kernel::TaskState::Dead);
    EXPECT_EQ(w->k->rq(0).c.ttwu_remote, 1);
  }
  // v6.0: queued on CPU 1's call_single_queue, one call-function IPI (or polling kick), and
  // CPU 1 enqueues it itself (sched_ttwu_pending()).
  EXPECT_EQ(v60.k->rq(0).c.ttwu_wakelist, 1);
  // v5.x: CPU 0 takes CPU 1's rq lock and enqueues it there: no wake list entry.
  EXPECT_EQ(v5.k->rq(0).c.ttwu_wakelist, 0);
  EXPECT_GT(v60.k->rq(0).c.ttwu_wakelist, v5.k->rq(0).c.ttwu_wakelist);
}

TEST(TtwuQueueCond, OtherLlcWakeListInBothEras) {
  for (const char* f : {"", "NO_TTWU_QUEUE_IDLE"}) {
    Woken w = one_wakeup(f, 1);
    EXPECT_EQ(w.sleeper->state, kernel::TaskState::Dead) << f;
    EXPECT_EQ(w.k->rq(0).c.ttwu_wakelist, 1) << f;
  }
  // NO_TTWU_QUEUE turns the wake list off in every era.
  Woken off = one_wakeup("NO_TTWU_QUEUE", 1);
  EXPECT_EQ(off.k->rq(0).c.ttwu_wakelist, 0);
}

namespace {

struct Herd {
  std::unique_ptr<Kernel> k;
  Task* a = nullptr;
  Task* b = nullptr;
  int64_t unseen = 0, sis_failed = 0;
};

// Two wakers, pinned to CPUs 0 and 1 of three single-thread cores in one LLC, each wake at the
// same instant a task that last ran on the waker's own (busy) CPU: each select_idle_cpu() finds
// CPU 2 idle. Before v6.0 (NO_TTWU_QUEUE_IDLE) each waker takes CPU 2's rq lock and enqueues
// there some hundreds of ns after it chose it, so the second waker still reads CPU 2 idle.
Herd herd(const std::string& feats) {
  Herd h;
  h.k = std::make_unique<Kernel>(test_machine(1, 3, 1, 3), features(feats), KernelOptions{1, nullptr});
  auto sleeper = [&](int cpu) {
    kernel::TaskOptions o;
    o.pin_cpu = cpu;  // last ran there; allowed everywhere
    o.start_blocked = true;
    return h.k->create_task("sleeper", lambda([](Api&, Task&, int n) {
                              return n == 0 ? Action::compute(1000) : Action::exit();
                            }),
                            o);
  };
  h.a = sleeper(0);
  h.b = sleeper(1);
  for (auto [cpu, s] : {std::pair{0, h.a}, std::pair{1, h.b}})
    h.k->create_task("waker", lambda([s = s](Api&, Task&, int n) {
                       if (n == 0) return Action::compute(100000);
                       if (n == 1) return Action::wake(s, false);
                       if (n == 2) return Action::compute(50000);
                       return Action::exit();
                     }),
                     pinned(cpu));
  h.k->run(Time::ms(5));
  for (int c = 0; c < 3; ++c) {
    h.unseen += h.k->rq(c).c.ttwu_enqueue_unseen;
    h.sis_failed += h.k->rq(c).c.sis_failed;
  }
  return h;
}

}  // namespace

TEST(TtwuQueueCond, DirectEnqueueIsUnseenUntilTheWakerReachesActivate) {
  Herd v5 = herd("NO_TTWU_QUEUE_IDLE");
  EXPECT_EQ(v5.a->state, kernel::TaskState::Dead);
  EXPECT_EQ(v5.b->state, kernel::TaskState::Dead);
  // Both wakers chose CPU 2: the second while the first's enqueue was still ahead.
  EXPECT_EQ(v5.a->cpu, 2);
  EXPECT_EQ(v5.b->cpu, 2);
  EXPECT_EQ(v5.unseen, 1);
  EXPECT_EQ(v5.sis_failed, 0);
  // v6.0: the first waker's wake-list entry sets CPU 2's ttwu_pending at once, so the second
  // reads it busy, finds nothing idle and keeps its wakee on its own CPU (from where newidle
  // balance may pull it later).
  Herd v60 = herd("");
  EXPECT_EQ(v60.unseen, 0);
  EXPECT_EQ(v60.sis_failed, 1);
}
