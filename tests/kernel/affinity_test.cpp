// sched_setaffinity() on a running task (Action::SetAffinity, set_cpus_allowed_ptr()) and
// /proc/stat's idle time per CPU (Api::cpu_idle_ns()).
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

// Two CPUs on two cores (no SMT): a task's work does not slow down for its sibling.
machine::Machine two_cpus() { return test_machine(1, 2, 1, 2); }

struct Moved {
  std::unique_ptr<Kernel> k;
  Task* t = nullptr;
  int cpu_before = -1, cpu_after = -1;  // task_cpu() before and after the affinity change
};

// A task starts on CPU `from` (allowed on all), computes 1 ms, sets its affinity to `mask`,
// computes 1 ms more, and exits.
Moved run_move(int from, std::vector<int> mask) {
  Moved r;
  r.k = std::make_unique<Kernel>(two_cpus(), Features(), KernelOptions{1, nullptr});
  kernel::TaskOptions o;
  o.pin_cpu = from;  // placed there; allowed everywhere
  int id = r.k->api().cpumask(mask);
  Moved* rp = &r;
  r.t = r.k->create_task("mover", lambda([rp, id](Api& k, Task& self, int n) {
                           switch (n) {
                             case 0: return Action::compute(1000000);
                             case 1:
                               rp->cpu_before = k.task_cpu(self);
                               return Action::set_affinity(id);
                             case 2:
                               rp->cpu_after = k.task_cpu(self);
                               return Action::compute(1000000);
                             default: return Action::exit();
                           }
                         }),
                         o);
  r.k->run(Time::ms(50));
  return r;
}

}  // namespace

TEST(SetAffinity, LeavingTheCurrentCpuMigratesTheTask) {
  Moved r = run_move(0, {1});
  EXPECT_EQ(r.cpu_before, 0);
  EXPECT_EQ(r.cpu_after, 1);  // it runs its next step on CPU 1
  EXPECT_EQ(r.t->nr_migrations, 1);
  EXPECT_EQ(r.k->rq(1).c.migrations, 1);  // counted on the destination, as set_task_cpu()
  EXPECT_EQ(r.t->state, kernel::TaskState::Dead);
  // Its second millisecond ran on CPU 1: CPU 1 was busy for at least that long, CPU 0 for the
  // first millisecond only.
  EXPECT_GE(r.k->rq(1).c.busy_ns, 1000000);
  EXPECT_LT(r.k->rq(1).c.busy_ns, 1300000);  // plus the cache-cold penalty of the move
  EXPECT_GE(r.k->rq(0).c.busy_ns, 1000000);
  EXPECT_LT(r.k->rq(0).c.busy_ns, 1100000);
  // The move is a context switch on CPU 0 (the task leaves it runnable) and a wakeup of CPU 1.
  EXPECT_GE(r.k->rq(0).c.context_switches, 2);  // to the task, away from it
  EXPECT_EQ(r.t->allowed_on(0), false);
}

TEST(SetAffinity, AMaskThatKeepsTheCurrentCpuMovesNothing) {
  Moved r = run_move(0, {0, 1});
  EXPECT_EQ(r.cpu_before, 0);
  EXPECT_EQ(r.cpu_after, 0);
  EXPECT_EQ(r.t->nr_migrations, 0);
  EXPECT_EQ(r.t->nr_cpus_allowed, 2);
  EXPECT_EQ(r.k->rq(1).c.busy_ns, 0);
  EXPECT_EQ(r.t->state, kernel::TaskState::Dead);
}

TEST(SetAffinity, NarrowingToTheCurrentCpuMovesNothing) {
  Moved r = run_move(1, {1});
  EXPECT_EQ(r.cpu_after, 1);
  EXPECT_EQ(r.t->nr_migrations, 0);
  EXPECT_EQ(r.t->nr_cpus_allowed, 1);
}

TEST(CpuIdleNs, CountsIdleStatesUpToNowOnEachCpu) {
  Kernel k(two_cpus(), Features(), KernelOptions{1, nullptr});
  // CPU 0 computes for 4 ms from the start; CPU 1 has nothing to do.
  k.create_task("busy", lambda([](Api&, Task&, int n) { return n == 0 ? Action::compute(4000000) : Action::exit(); }),
                pinned(0));
  int64_t idle0_at2 = -1, idle1_at2 = -1, idle1_at5 = -1, idle0_at8 = -1;
  k.api().at(Time::ms(2), [&] {
    idle0_at2 = k.api().cpu_idle_ns(0);
    idle1_at2 = k.api().cpu_idle_ns(1);
  });
  k.api().at(Time::ms(5), [&] { idle1_at5 = k.api().cpu_idle_ns(1); });
  k.api().at(Time::ms(8), [&] { idle0_at8 = k.api().cpu_idle_ns(0); });
  k.run(Time::ms(10));
  EXPECT_LT(idle0_at2, 100000);  // busy from the start
  // CPU 1: idle but for the idle entry's own kernel work; the interval it is in counts.
  EXPECT_GT(idle1_at2, 1800000);
  EXPECT_LE(idle1_at2, 2000000);
  EXPECT_GT(idle1_at5 - idle1_at2, 2900000);
  EXPECT_LE(idle1_at5 - idle1_at2, 3000000);
  // CPU 0 went idle once the task exited, at about 4 ms.
  EXPECT_GT(idle0_at8, 3000000);
  EXPECT_LE(idle0_at8, 4000000);
}
