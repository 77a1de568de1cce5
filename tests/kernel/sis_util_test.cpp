// SIS_UTIL's depth hint in select_idle_cpu(): where it starts, what it replaces, when it is not
// applied; each shown on the scan counters.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::Task;
using sim::Time;

TEST(SisUtil, NrIdleScanStartsAtZeroAndFollowsTheLlcLoad) {
  // sched_domain_shared is zero-allocated: on a machine that has just booted (cold), before the
  // first LLC-level balance SIS_UTIL scans nothing, even with idle CPUs around.
  auto m = test_machine(1, 4, 1, 4);
  {
    KernelOptions cold{1, nullptr};
    cold.cold = true;
    Kernel k(m, Features(), cold);
    EXPECT_EQ(k.llc_shared(0).nr_idle_scan, 0);
    Task p;
    p.cpu = 0;
    int64_t cost = 0;
    EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, false, cost), -1);
    EXPECT_EQ(k.rq(0).c.select_idle_cpu_scanned, 0);
  }
  // One hog on 4 CPUs (25 % utilisation): the periodic balance computes a non-zero depth.
  // Four hogs (100 %): the depth drops to 0 and the scan stops.
  for (int hogs : {1, 4}) {
    Kernel k(m, Features(), KernelOptions{1, nullptr});
    for (int c = 0; c < hogs; ++c) k.create_task("hog", hog(), pinned(c));
    k.run(Time::ms(500));
    if (hogs == 1) {
      EXPECT_GT(k.llc_shared(0).nr_idle_scan, 0);
    } else {
      EXPECT_EQ(k.llc_shared(0).nr_idle_scan, 0);
    }
  }
}

TEST(SisUtil, SisUtilDepthReplacesSisPropsWhenBothAreOn) {
  // 16 CPUs in one LLC, hogs on 0-7: from target 0 an idle CPU is 8 probes away. SIS_PROP with
  // no idle history allows its floor (4: 3 probes); SIS_UTIL's nr_idle_scan = 12 replaces it.
  auto m = test_machine(1, 16, 1, 16);
  for (bool util : {false, true}) {
    Kernel k(m, features(util ? "SIS_PROP" : "SIS_PROP,NO_SIS_UTIL"), KernelOptions{1, nullptr});
    for (int c = 0; c < 8; ++c) k.create_task("hog", hog(), pinned(c));
    k.run(Time::ms(2));
    k.llc_shared(0).nr_idle_scan = 12;
    k.rq(0).wake_avg_idle = 0;
    Task p;
    p.cpu = 0;
    int64_t cost = 0;
    auto before = k.rq(0).c.select_idle_cpu_scanned;
    int found = kernel::select_idle_cpu(k, 0, &p, 0, false, cost);
    auto scanned = k.rq(0).c.select_idle_cpu_scanned - before;
    if (util) {
      EXPECT_EQ(found, 8);
      EXPECT_EQ(scanned, 8);
      // SIS_PROP's bookkeeping still learns from the scan that ran to the end.
      EXPECT_GT(k.llc_shared(0).avg_scan_cost, 0);
    } else {
      EXPECT_EQ(found, -1);
      EXPECT_EQ(scanned, 3);
    }
  }
  // The other way round: a deep SIS_PROP estimate does not lift SIS_UTIL's limit.
  Kernel k(m, features("SIS_PROP"), KernelOptions{1, nullptr});
  for (int c = 0; c < 8; ++c) k.create_task("hog", hog(), pinned(c));
  k.run(Time::ms(2));
  k.llc_shared(0).nr_idle_scan = 2;
  k.rq(0).wake_avg_idle = 1000000000;
  k.rq(0).wake_stamp = k.now();
  Task p;
  p.cpu = 0;
  int64_t cost = 0;
  auto before = k.rq(0).c.select_idle_cpu_scanned;
  EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, false, cost), -1);
  EXPECT_EQ(k.rq(0).c.select_idle_cpu_scanned - before, 2);
}

TEST(SisUtil, SisUtilDoesNotLimitTheIdleCoreScan) {
  // Since v6.1 SIS_UTIL is ignored while the LLC has an idle core: nr_idle_scan = 0 does not
  // stop select_idle_core() from finding one.
  auto m = test_machine(1, 4, 2, 4);  // cores {0,4} {1,5} {2,6} {3,7}
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  for (int c : {0, 4, 1, 5, 2}) k.create_task("hog", hog(), pinned(c));
  k.run(Time::ms(2));
  k.llc_shared(0).nr_idle_scan = 0;
  Task p;
  p.cpu = 0;
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, true, cost), 3);
  EXPECT_EQ(kernel::select_idle_cpu(k, 0, &p, 0, false, cost), -1);
}
