// Every workload at its real default length (netperf -l 60, schbench -r 30, hackbench at a
// published loop count's scale) stays steady to the end: no counter, buffer or loop limit stops
// it or bends its output. Each test keeps its wall time small with a small machine, few tasks,
// and (netperf) costs raised so that 60 simulated seconds are few events. tbench's is in
// tbench_test.cpp (Tbench.LongRunLoopsTheLoadfileAndStaysSteady).
#include <gtest/gtest.h>

#include <regex>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "workload/netperf.hpp"

using namespace schedlab;
using wltest::metric;
using wltest::run_workload;

namespace {

std::vector<double> numbers_after(const std::string& text, const std::string& pattern) {
  std::vector<double> out;
  std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

}  // namespace

// netperf TCP_RR at its documented length (-l 60): the transactions of the second half
// (the -l 60 count less the -l 30 count: same seed, so the first 30 s are the same run) come at
// the first half's rate, and the report says 60.00 s.
TEST(LongRun, NetperfSixtySecondsSteadyByHalves) {
  auto m = fixture::test_machine();
  // Loopback costs x1000: about 100 transactions per simulated second, so 60 s is a short test.
  m.costs.tcp_send_ns *= 1000;
  m.costs.tcp_recv_ns *= 1000;
  auto half = run_workload(m, {"netperf", "-t", "TCP_RR", "-l", "30"});
  auto full = run_workload(m, {"netperf", "-t", "TCP_RR", "-l", "60"});
  ASSERT_TRUE(half.w->finished());
  ASSERT_TRUE(full.w->finished());
  double first = metric(*half.w, "trans_rate") * 30;
  double second = metric(*full.w, "trans_rate") * 60 - first;
  ASSERT_GT(first, 2000);
  EXPECT_NEAR(second, first, 0.02 * first);
  std::string rep = full.w->report();
  auto rates = numbers_after(rep, R"(\n16384  131072 1      +1      +60\.00 +([0-9.]+) +\n)");
  ASSERT_EQ(rates.size(), 1u) << rep;
  EXPECT_NEAR(rates[0], metric(*full.w, "trans_rate"), 0.01) << rep;
}

// schbench at its default runtime (-r 30) with a block every 5 s: every interval's
// "current rps" within 3 % of the first one's, the request count growing by the same step each
// block, and the average rps the same rate.
TEST(LongRun, SchbenchThirtySecondsSteadyPerInterval) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-m", "1", "-t", "2", "-r", "30", "-i", "5"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  auto rps = numbers_after(rep, R"(\ncurrent rps: ([0-9.]+)\n)");
  ASSERT_EQ(rps.size(), 6u) << rep;  // at 5, 10, ..., 30 s
  ASSERT_GT(rps[0], 0) << rep;
  for (size_t i = 1; i < rps.size(); ++i) EXPECT_NEAR(rps[i], rps[0], 0.03 * rps[0]) << i << "\n" << rep;
  auto samples = numbers_after(rep, R"(\nRequest Latencies percentiles \(usec\) runtime \d+ \(s\) \((\d+) total samples\)\n)");
  ASSERT_EQ(samples.size(), 7u) << rep;  // six interval blocks and the final one
  double step = samples[1] - samples[0];
  for (size_t i = 2; i < 6; ++i) EXPECT_NEAR(samples[i] - samples[i - 1], step, 0.03 * step) << i << "\n" << rep;
  EXPECT_NEAR(metric(*r.w, "average_rps"), rps[0], 0.03 * rps[0]) << rep;
}

// hackbench: twice the loops take twice the time (the second half of the messages at the first
// half's pace), so a published loop count is the scaled run's time times the scale.
TEST(LongRun, HackbenchTwiceTheLoopsTwiceTheTime) {
  auto m = fixture::test_machine();
  auto one = run_workload(m, {"hackbench", "-g", "1", "-f", "2", "-l", "10000"});
  auto two = run_workload(m, {"hackbench", "-g", "1", "-f", "2", "-l", "20000"});
  ASSERT_TRUE(one.w->finished());
  ASSERT_TRUE(two.w->finished());
  double t1 = metric(*one.w, "time"), t2 = metric(*two.w, "time");
  ASSERT_GT(t1, 0);
  EXPECT_NEAR(t2 - t1, t1, 0.03 * t1);
}
