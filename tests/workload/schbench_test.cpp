#include <gtest/gtest.h>

#include <regex>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "workload/schbench.hpp"

using namespace schedlab;
using wltest::metric;
using wltest::parse_error;
using wltest::run_workload;
using workload::SchbenchHist;

TEST(SchbenchHist, ExactBelow512AndMidpointsAbove) {
  for (unsigned v = 0; v < 512; ++v) EXPECT_EQ(SchbenchHist::idx_to_val(SchbenchHist::val_to_idx(v)), v);
  // 1000: msb 9, one error bit: bucket [1000, 1001], reported as its midpoint.
  EXPECT_EQ(SchbenchHist::val_to_idx(1000), 756u);
  EXPECT_EQ(SchbenchHist::idx_to_val(756), 1001u);
  // Width 2^(msb-8) = 128: 40448..40575 share a bucket reported as its midpoint 40512.
  EXPECT_EQ(SchbenchHist::val_to_idx(40448), SchbenchHist::val_to_idx(40575));
  EXPECT_NE(SchbenchHist::val_to_idx(40447), SchbenchHist::val_to_idx(40448));
  EXPECT_NE(SchbenchHist::val_to_idx(40575), SchbenchHist::val_to_idx(40576));
  EXPECT_EQ(SchbenchHist::idx_to_val(SchbenchHist::val_to_idx(40500)), 40512u);
  for (uint64_t v = 512; v < 5000000; v = v * 3 / 2) {
    unsigned back = SchbenchHist::idx_to_val(SchbenchHist::val_to_idx(v));
    unsigned msb = 63 - __builtin_clzll(v);
    EXPECT_LE(std::llabs(static_cast<long long>(back) - static_cast<long long>(v)), 1LL << (msb - 8)) << v;
  }
}

TEST(SchbenchHist, Percentiles) {
  SchbenchHist h;
  for (int v = 1; v <= 1000; ++v) h.add(v);
  auto p = h.percentiles({50.0, 90.0, 99.0, 99.9});
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].first, 500u);
  EXPECT_EQ(p[0].second, 500u);
  EXPECT_EQ(p[1].first, 901u);  // 900 shares the bucket [900, 901]
  EXPECT_EQ(p[1].second, 401u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 1000u);
}

TEST(Schbench, Defaults) {
  auto o = workload::parse_schbench_options({}, 8);
  EXPECT_EQ(o.message_threads, 1);
  EXPECT_EQ(o.threads, 8);
  EXPECT_EQ(o.runtime, 30);
  EXPECT_EQ(o.sleep_usec, 100);
  EXPECT_EQ(o.operations, 5);
  EXPECT_EQ(o.footprint_kb, 256);
  EXPECT_FALSE(o.no_locking);
  EXPECT_EQ(o.rps, 0);
  EXPECT_EQ(o.intervaltime, 10);
  EXPECT_EQ(o.zerotime, 0);
  EXPECT_EQ(workload::parse_schbench_options({"-m", "3"}, 8).threads, 3);  // ceil(8/3)
}

TEST(Schbench, ParsesFlags) {
  auto o = workload::parse_schbench_options(
      {"-m", "2", "-t", "4", "-r", "60", "-s", "50", "-n", "3", "-F", "128", "-L", "-R", "1000",
       "-w", "5", "-i", "0", "-z", "15", "-C"}, 8);
  EXPECT_EQ(o.message_threads, 2);
  EXPECT_EQ(o.threads, 4);
  EXPECT_EQ(o.runtime, 60);
  EXPECT_EQ(o.sleep_usec, 50);
  EXPECT_EQ(o.operations, 3);
  EXPECT_EQ(o.footprint_kb, 128);
  EXPECT_TRUE(o.no_locking);
  EXPECT_TRUE(o.calibrate);
  EXPECT_EQ(o.rps, 1000);
  EXPECT_EQ(o.warmuptime, 5);
  EXPECT_EQ(o.zerotime, 15);
  // -w is forced to 0 when the runtime is under 30 s, as schbench does.
  EXPECT_EQ(workload::parse_schbench_options({"-r", "10", "-w", "5"}, 8).warmuptime, 0);
}

TEST(Schbench, BadFlagsNameTheFlag) {
  EXPECT_NE(parse_error({"schbench", "-m", "0"}).find("-m"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "-t", "x"}).find("-t"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "-r", "0"}).find("-r"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "-F"}).find("-F"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "-p", "64"}).find("-p"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "--split", "50"}).find("split"), std::string::npos);
  EXPECT_NE(parse_error({"schbench", "-L1"}).find("-L"), std::string::npos);
}

TEST(Schbench, MathCostFollowsFootprint) {
  // 256 KB: three 104x104 matrices of 8-byte words.
  EXPECT_EQ(workload::Schbench::math_ns(256, 1), static_cast<int64_t>(104.0 * 104 * 104 * 1.5));
  EXPECT_EQ(workload::Schbench::math_ns(256, 5), 5 * workload::Schbench::math_ns(256, 1));
  EXPECT_LT(workload::Schbench::math_ns(64, 5), workload::Schbench::math_ns(256, 5));
}

TEST(Schbench, RunsAndPrintsSchbenchBlocks) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-r", "2", "-i", "1"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  EXPECT_TRUE(std::regex_search(rep, std::regex(
      "Wakeup Latencies percentiles \\(usec\\) runtime 1 \\(s\\) \\(\\d+ total samples\\)\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex(
      "Wakeup Latencies percentiles \\(usec\\) runtime 2 \\(s\\) \\(\\d+ total samples\\)\n"
      "\t  50\\.0th: \\d+ +\\(\\d+ samples\\)\n\t  90\\.0th: \\d+ +\\(\\d+ samples\\)\n"
      "\t\\* 99\\.0th: \\d+ +\\(\\d+ samples\\)\n\t  99\\.9th: \\d+ +\\(\\d+ samples\\)\n"
      "\t  min=\\d+, max=\\d+\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("Request Latencies percentiles \\(usec\\) runtime 2 "))) << rep;
  EXPECT_EQ(rep.rfind("setting worker threads to 4\n", 0), 0u) << rep;
  // RPS samples at 0, 1 and 2 s (the first one is 0, as schbench's first 0/0 sample).
  EXPECT_TRUE(std::regex_search(rep, std::regex("RPS percentiles \\(requests\\) runtime 2 \\(s\\) \\(3 total samples\\)\n"
                                                "\t  20\\.0th: \\d+ +\\(\\d+ samples\\)\n\t\\* 50\\.0th: "))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("current rps: \\d+\\.\\d{2}\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("\naverage rps: \\d+\\.\\d{2}\n"))) << rep;
  EXPECT_GT(metric(*r.w, "wakeup_p99"), 0);
  EXPECT_GT(metric(*r.w, "request_p99"), 0);
  EXPECT_GT(metric(*r.w, "average_rps"), 0);
  for (const auto& m : r.w->metrics())
    EXPECT_EQ(m.higher_is_better, m.name == "average_rps") << m.name;
}

TEST(Schbench, RequestLatencyCoversSleepAndMath) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-r", "2", "-t", "2", "-L"});
  ASSERT_TRUE(r.w->finished());
  double floor_us = workload::Schbench::math_ns(256, 5) / 1000.0 + 100;
  EXPECT_GE(metric(*r.w, "request_p50"), floor_us);
  // Saturated throughput is bounded by the CPUs' capacity for the math.
  EXPECT_LE(metric(*r.w, "average_rps"), 4 * 1e9 / workload::Schbench::math_ns(256, 5));
}

TEST(Schbench, RpsModeMeetsAnAchievableTarget) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-r", "3", "-R", "100", "-i", "0"});
  ASSERT_TRUE(r.w->finished());
  EXPECT_NEAR(metric(*r.w, "average_rps"), 100, 5);
}

TEST(Schbench, Deterministic) {
  auto a = run_workload(fixture::test_machine(), {"schbench", "-r", "2", "-t", "6"}, "", 5);
  auto b = run_workload(fixture::test_machine(), {"schbench", "-r", "2", "-t", "6"}, "", 5);
  EXPECT_EQ(a.w->report(), b.w->report());
}

TEST(Schbench, ZerotimeResetsTheStatistics) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-r", "5", "-z", "2", "-i", "100", "-t", "4"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  // Reset at 2 s and 4 s: the final block (runtime is -r) holds the last second's samples;
  // average rps counts every request of the run.
  EXPECT_EQ(rep.rfind("Wakeup Latencies percentiles (usec) runtime 5 (s) (", 0), 0u) << rep;
  EXPECT_NE(rep.find("RPS percentiles (requests) runtime 5 (s) (1 total samples)\n"), std::string::npos) << rep;
  auto full = run_workload(fixture::test_machine(), {"schbench", "-r", "5", "-i", "100", "-t", "4"});
  EXPECT_EQ(wltest::metric(*r.w, "average_rps"), wltest::metric(*full.w, "average_rps"));
}

TEST(Schbench, WarmupResetsOnceAndSaysSo) {
  auto r = run_workload(fixture::test_machine(), {"schbench", "-r", "30", "-w", "2", "-i", "100", "-t", "1", "-n", "1"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  EXPECT_NE(rep.find("warmup done, zeroing stats\n"), std::string::npos) << rep;
  // Samples at 0, 1, then none at 2 (the reset), then 3..30.
  EXPECT_NE(rep.find("RPS percentiles (requests) runtime 30 (s) (28 total samples)\n"), std::string::npos) << rep;
}

TEST(SchbenchHist, EmptyGivesZeros) {
  SchbenchHist h;
  auto p = h.percentiles({20.0, 50.0});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].first, 0u);
  EXPECT_EQ(p[1].second, 0u);
  h.add(0);
  h.add(7);
  EXPECT_EQ(h.min(), 7u);  // schbench's add_lat(): a 0 minimum is replaced by the next sample
}
