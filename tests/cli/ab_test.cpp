// End-to-end: `schedlab ab`.
#include <gtest/gtest.h>

#include "../common/process.hpp"

using namespace schedlab::fixture;

TEST(CliAb, ResultsDoNotDependOnJobs) {
  std::string cmd = "ab --machine epyc-milan-2s --base '' --test SM_IDLE --runs 4 ";
  std::string bench = " -- perf bench sched pipe -l 1000";
  auto a = run_schedlab(cmd + "--jobs 1" + bench);
  auto b = run_schedlab(cmd + "--jobs 3" + bench);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.err.find("ab: 8/8 runs done"), std::string::npos) << a.err;  // progress on stderr
  EXPECT_NE(a.out.find("usecs_per_op (us/op), Lower is better"), std::string::npos);
  EXPECT_NE(a.out.find("ops_per_sec (ops/s), Higher is better"), std::string::npos);
  EXPECT_NE(a.out.find("verdict: "), std::string::npos);
  EXPECT_NE(a.out.find("KS p"), std::string::npos);
  EXPECT_NE(a.out.find("context_switches"), std::string::npos);
}

TEST(CliAb, IdleSpinImprovesPipeSignificantly) {
  auto r = run_schedlab(
      "ab --machine epyc-milan-2s --base '' --test IDLE_SPIN --runs 8 --format csv -- perf bench sched pipe -l 2000");
  ASSERT_EQ(r.status, 0) << r.err;
  // The CSV has one row per metric and set; the test side of usecs_per_op has a positive pct imp.
  EXPECT_NE(r.out.find("usecs_per_op"), std::string::npos);
  EXPECT_NE(r.out.find("IDLE_SPIN"), std::string::npos);
}

TEST(CliAb, BadInput) {
  for (const char* args : {"ab --test BOGUS -- hackbench", "ab --base NO_X --test SM_IDLE -- hackbench",
                           "ab --test SM_IDLE --runs 1 -- hackbench",
                           "ab --test SM_IDLE --format xml -- hackbench",
                           "ab --test SM_IDLE -- hackbench -g x", "ab --test SM_IDLE --machine nope -- hackbench"}) {
    auto r = run_schedlab(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}
