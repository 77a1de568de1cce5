// workload::scale_length(): each tool's run length doubled in every flag form, added at twice
// the default when absent; tools without one length refused.
#include <gtest/gtest.h>

#include "workload/workload.hpp"

using schedlab::workload::scale_length;
using V = std::vector<std::string>;

TEST(ScaleLength, EachToolsLengthInEveryForm) {
  EXPECT_EQ(*scale_length({"hackbench", "-g", "4", "-l", "1000"}, 2), (V{"hackbench", "-g", "4", "-l", "2000"}));
  EXPECT_EQ(*scale_length({"hackbench", "-l1000", "-p"}, 2), (V{"hackbench", "-l2000", "-p"}));
  EXPECT_EQ(*scale_length({"hackbench", "--loops=10"}, 3), (V{"hackbench", "--loops=30"}));
  EXPECT_EQ(*scale_length({"hackbench", "-g", "2"}, 2), (V{"hackbench", "-g", "2", "-l", "200"}));  // default 100
  EXPECT_EQ(*scale_length({"tbench", "-t", "1", "32"}, 2), (V{"tbench", "-t", "2", "32"}));
  EXPECT_EQ(*scale_length({"tbench", "8"}, 2), (V{"tbench", "-t", "1200", "8"}));  // default 600
  EXPECT_EQ(*scale_length({"netperf", "-t", "TCP_RR", "-l", "1", "--instances=8"}, 2),
            (V{"netperf", "-t", "TCP_RR", "-l", "2", "--instances=8"}));
  // netperf's -l is a global option: before "--", never the test-specific part.
  EXPECT_EQ(*scale_length({"netperf", "-t", "TCP_RR", "--", "-r", "1,1"}, 2),
            (V{"netperf", "-t", "TCP_RR", "-l", "20", "--", "-r", "1,1"}));
  EXPECT_EQ(*scale_length({"schbench", "-r", "2"}, 2), (V{"schbench", "-r", "4"}));
  EXPECT_EQ(*scale_length({"perf", "bench", "sched", "pipe", "-l", "5000"}, 2),
            (V{"perf", "bench", "sched", "pipe", "-l", "10000"}));
  EXPECT_EQ(*scale_length({"ipistorm", "numipi=100000", "single=1"}, 2), (V{"ipistorm", "numipi=200000", "single=1"}));
  EXPECT_EQ(*scale_length({"taskset", "-c", "0-3", "hackbench", "-l", "5"}, 2),
            (V{"taskset", "-c", "0-3", "hackbench", "-l", "10"}));
}

TEST(ScaleLength, NoLengthOrABadValueIsRefused) {
  EXPECT_FALSE(scale_length({"rt-app", "x.json"}, 2));
  EXPECT_FALSE(scale_length({"hackbench", "-l", "x"}, 2));
  EXPECT_FALSE(scale_length({"taskset", "-c", "0"}, 2));
  EXPECT_FALSE(scale_length({}, 2));
}
