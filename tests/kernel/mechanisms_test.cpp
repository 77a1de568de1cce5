// The mechanisms of the core model, each shown by its effect on the counters.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::KernelPath;
using sim::Time;

namespace {

}  // namespace

TEST(Mechanisms, DisabledIdleStatesAreNeverEntered) {
  auto m = test_machine();
  machine::disable_idle_states(m, {"C1", "C6"});
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  Task* a = nullptr;
  Task* b = nullptr;
  // Ping-pong with long sleeps so that the governor would like deep states.
  b = k.create_task("b", lambda([&a](Api&, Task&, int n) {
                      if (n >= 40) return Action::exit();
                      return n % 2 == 0 ? Action::block() : Action::wake(a, false);
                    }),
                    pinned(1, true));
  a = k.create_task("a", lambda([&b](Api&, Task&, int n) {
                      if (n >= 40) return Action::exit();
                      return n % 2 == 0 ? Action::sleep(2000000) : Action::wake(b, false);
                    }),
                    pinned(0));
  k.run(Time::ms(200));
  auto t = k.total();
  for (size_t i = 0; i < m.idle_states.size(); ++i) {
    if (!m.idle_states[i].disabled) continue;
    EXPECT_EQ(t.idle_usage[i], 0) << m.idle_states[i].name;
    EXPECT_EQ(t.idle_ns[i], 0) << m.idle_states[i].name;
  }
  EXPECT_GT(t.idle_usage[0], 0);  // POLL is all that is left
}

TEST(Mechanisms, SelectIdleCpuNeverVisitsMoreThanSisUtilAllows) {
  // 16 CPUs in one LLC, no SMT; 8 busy hogs on CPUs 0-7, CPUs 8-15 idle.
  auto m = test_machine(1, 16, 1, 16);
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  for (int c = 0; c < 8; ++c)
    k.create_task("hog", lambda([](Api&, Task&, int) { return Action::compute(1000000000); }),
                  pinned(c));
  Task p;
  p.cpu = 0;
  k.run(Time::ms(5));
  auto& sds = k.llc_shared(0);
  for (int limit : {0, 1, 3, 7}) {
    sds.nr_idle_scan = limit;
    auto before = k.rq(0).c.select_idle_cpu_scanned;
    int64_t cost = 0;
    // Scan starts after target 0: CPUs 1-7 are busy, so an idle CPU is 8 probes away.
    int found = kernel::select_idle_cpu(k, 0, &p, 0, false, cost);
    auto scanned = k.rq(0).c.select_idle_cpu_scanned - before;
    EXPECT_LE(scanned, limit) << "nr_idle_scan=" << limit;
    EXPECT_EQ(found, -1) << "nr_idle_scan=" << limit;
  }
  sds.nr_idle_scan = 16;
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, false, cost), 8);
}

TEST(Mechanisms, SisUtilStopsScanningOnABusyLlc) {
  // All 4 CPUs of the LLC busy for a while: the periodic balance drives nr_idle_scan to 0.
  auto m = test_machine(1, 4, 1, 4);
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  for (int c = 0; c < 4; ++c)
    k.create_task("hog", lambda([](Api&, Task&, int) { return Action::compute(1000000000); }),
                  pinned(c));
  k.run(Time::ms(300));
  EXPECT_EQ(k.llc_shared(0).nr_idle_scan, 0);
  Task p;
  p.cpu = 0;
  int64_t cost = 0;
  auto before = k.rq(0).c.select_idle_cpu_scanned;
  EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, false, cost), -1);
  EXPECT_EQ(k.rq(0).c.select_idle_cpu_scanned, before);
}

TEST(Mechanisms, NewidleBalanceSkippedWhenAvgIdleBelowCost) {
  for (bool cheap : {false, true}) {
    auto m = test_machine(1, 2, 1, 2);
    Kernel k(m, Features(), KernelOptions{1, nullptr});
    // CPU 0 runs a task that blocks after 100 us; three runnable tasks wait on CPU 1
    // (created after it, so CPU 0 is no longer idle when they are placed).
    k.create_task("blocker", lambda([](Api&, Task&, int n) {
                    return n == 0 ? Action::compute(100000) : Action::block();
                  }),
                  pinned(0));
    for (int i = 0; i < 3; ++i) {
      kernel::TaskOptions o;
      o.pin_cpu = 1;
      k.create_task("busy", lambda([](Api&, Task&, int n) {
                      return n < 1 ? Action::compute(5000000) : Action::exit();
                    }),
                    o);
    }
    auto& rq0 = k.rq(0);
    rq0.avg_idle = cheap ? 10000000 : 10;
    for (auto& sd : rq0.sd) sd.max_newidle_lb_cost = 50000;
    k.run(Time::us(150));
    const auto& c = k.rq(0).c;
    EXPECT_GE(c.newidle_balance_calls, 1);
    if (cheap) {
      EXPECT_GE(c.newidle_balance_pulled, 1);
      EXPECT_GT(c.kernel_ns[static_cast<int>(KernelPath::NewidleBalance)], 0);
    } else {
      EXPECT_EQ(c.newidle_balance_pulled, 0);
      EXPECT_EQ(c.newidle_balance_skipped, c.newidle_balance_calls);
      EXPECT_EQ(c.kernel_ns[static_cast<int>(KernelPath::NewidleBalance)], 0);
    }
  }
}

TEST(Mechanisms, TimeIsConservedPerCpuAndEveryTaskAccountedFor) {
  auto m = test_machine();
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  std::vector<Task*> ts;
  for (int i = 0; i < 6; ++i)
    ts.push_back(k.create_task("w", lambda([](Api&, Task&, int n) {
                                 if (n > 30) return Action::exit();
                                 return n % 2 ? Action::compute(300000) : Action::sleep(100000);
                               }),
                               {}));
  k.run(Time::sec(1));
  for (int c = 0; c < k.nr_cpus(); ++c) {
    const auto& cc = k.rq(c).c;
    EXPECT_EQ(cc.busy_ns + kernel::derived::kernel_total_ns(cc) + kernel::derived::idle_total_ns(cc), k.end_time().count());
  }
  for (Task* t : ts) EXPECT_EQ(t->state, kernel::TaskState::Dead);
  for (int c = 0; c < k.nr_cpus(); ++c) EXPECT_EQ(k.nr_running(c), 0);
}
