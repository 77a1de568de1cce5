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
