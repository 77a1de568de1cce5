#include <gtest/gtest.h>

#include <regex>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "workload/tbench.hpp"

using namespace schedlab;
using wltest::metric;
using wltest::parse_error;
using wltest::run_workload;

TEST(Tbench, Defaults) {
  auto o = workload::parse_tbench_options({"4"});
  EXPECT_EQ(o.nprocs, 4);
  EXPECT_EQ(o.timelimit, 600);
  EXPECT_EQ(o.warmup(), 120);
  EXPECT_EQ(o.server, "localhost");
}

TEST(Tbench, ParsesOptions) {
  auto o = workload::parse_tbench_options({"-t", "10", "8", "127.0.0.1"});
  EXPECT_EQ(o.timelimit, 10);
  EXPECT_EQ(o.warmup(), 2);
  EXPECT_EQ(o.nprocs, 8);
  EXPECT_EQ(o.server, "127.0.0.1");
  EXPECT_EQ(workload::parse_tbench_options({"--timelimit=7", "2"}).timelimit, 7);
}

TEST(Tbench, BadFlagsNameTheFlag) {
  EXPECT_NE(parse_error({"tbench"}).find("NPROCS"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "0"}).find("NPROCS"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "x"}).find("NPROCS"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "-t", "1.5", "2"}).find("-t"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "-t", "0", "2"}).find("-t"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "-q", "2"}).find("-q"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "-c", "other.txt", "2"}).find("-c"), std::string::npos);
  EXPECT_NE(parse_error({"tbench", "2", "host", "extra"}).find("extra"), std::string::npos);
}

TEST(Tbench, RunsAndPrintsDbenchLines) {
  auto r = run_workload(fixture::test_machine(), {"tbench", "-t", "5", "2"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  EXPECT_NE(rep.find("and minimum warmup 1 secs\n"), std::string::npos) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("\n   2 +\\d+ +\\d+\\.\\d{2} MB/sec  execute   1 sec  latency \\d+\\.\\d{3} ms\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("\n   2  cleanup   5 sec\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("\n ReadX +\\d+ +\\d+\\.\\d{3} +\\d+\\.\\d{3}\n"))) << rep;
  EXPECT_TRUE(std::regex_search(
      rep, std::regex("\nThroughput [0-9.]+ MB/sec  2 clients  2 procs  max_latency=\\d+\\.\\d{3} ms\n$")))
      << rep;
  EXPECT_GT(metric(*r.w, "throughput"), 0);
  EXPECT_GT(metric(*r.w, "max_latency"), 0);
  EXPECT_GT(metric(*r.w, "ops_per_sec_per_client"), 0);
}

TEST(Tbench, ThroughputRisesWithClientsOnEnoughCpus) {
  auto m = fixture::test_machine(1, 4, 2, 4);  // 8 CPUs
  auto one = run_workload(m, {"tbench", "-t", "1", "1"});
  auto four = run_workload(m, {"tbench", "-t", "1", "4"});
  ASSERT_TRUE(one.w->finished());
  ASSERT_TRUE(four.w->finished());
  EXPECT_GT(metric(*four.w, "throughput"), 2 * metric(*one.w, "throughput"));
}

TEST(Tbench, Deterministic) {
  auto a = run_workload(fixture::test_machine(), {"tbench", "-t", "1", "3"}, "", 3);
  auto b = run_workload(fixture::test_machine(), {"tbench", "-t", "1", "3"}, "", 3);
  EXPECT_EQ(a.w->report(), b.w->report());
}
