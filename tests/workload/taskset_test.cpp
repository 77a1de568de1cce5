// The taskset prefix: the affinity a benchmark's tasks get.
#include <gtest/gtest.h>

#include "run_helper.hpp"

using namespace schedlab;

TEST(Taskset, ListAndMask) {
  EXPECT_EQ(workload::parse_workload({"taskset", "-c", "1-2", "hackbench"}, 4)->affinity(), (std::vector<int>{1, 2}));
  EXPECT_EQ(workload::parse_workload({"taskset", "0x5", "hackbench"}, 4)->affinity(), (std::vector<int>{0, 2}));
  EXPECT_TRUE(workload::parse_workload({"hackbench"}, 4)->affinity().empty());
}

// Real taskset execs its command after sched_setaffinity(); a nested taskset sets the mask
// again, so the innermost list is the one the benchmark runs with, even outside the outer one.
TEST(Taskset, NestedInnerWins) {
  EXPECT_EQ(workload::parse_workload({"taskset", "-c", "0", "taskset", "-c", "1", "hackbench"}, 4)->affinity(),
            (std::vector<int>{1}));
  EXPECT_EQ(workload::parse_workload({"taskset", "-c", "0-3", "taskset", "0x4", "taskset", "-c", "3", "hackbench"}, 4)
                ->affinity(),
            (std::vector<int>{3}));
  // Every level is still checked against the machine.
  EXPECT_NE(wltest::parse_error({"taskset", "-c", "7", "taskset", "-c", "1", "hackbench"}).find("CPU 7"),
            std::string::npos);
}
