#include <gtest/gtest.h>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "kernel/kernel.hpp"
#include "workload/workload.hpp"

using namespace schedlab;

namespace {
using wltest::run_workload;
}  // namespace

TEST(Smoke, PerfPipeFinishesAndConservesTime) {
  auto r = run_workload(fixture::test_machine(), {"perf", "bench", "sched", "pipe", "-l", "1000"});
  ASSERT_TRUE(r.w->finished());
  std::cout << r.w->report();
  for (int c = 0; c < r.k->nr_cpus(); ++c) {
    const auto& cc = r.k->rq(c).c;
    EXPECT_EQ(cc.busy_ns + kernel::derived::kernel_total_ns(cc) + kernel::derived::idle_total_ns(cc), r.k->end_time().count());
  }
}

TEST(Smoke, HackbenchFinishes) {
  auto r = run_workload(fixture::test_machine(), {"hackbench", "-g", "2", "-l", "50"});
  ASSERT_TRUE(r.w->finished());
  std::cout << r.w->report();
  for (const auto& t : r.k->tasks())
    if (t->pid != 0) {
      EXPECT_EQ(t->state, kernel::TaskState::Dead) << t->pid;
    }
}
