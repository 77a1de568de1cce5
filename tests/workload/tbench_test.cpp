#include <gtest/gtest.h>

#include <cmath>
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

namespace {

// A Tbench built from options (for the test-only loadfile_divisor), run to completion.
wltest::Ran run_tbench(const machine::Machine& m, const workload::TbenchOptions& o) {
  wltest::Ran r;
  r.k = std::make_unique<kernel::Kernel>(m, kernel::Features{}, kernel::KernelOptions{1, nullptr});
  r.w = std::make_unique<workload::Tbench>(o);
  r.w->setup(r.k->api());
  r.k->run(r.w->time_limit());
  return r;
}

struct StatusLine {
  long long lines;  // loadfile lines per client so far
  double mbs;       // MB/sec since the end of the warm-up
};

std::vector<StatusLine> execute_lines(const std::string& rep) {
  std::vector<StatusLine> out;
  std::regex re(R"(\n +\d+ +(\d+) +([0-9.]+) MB/sec  execute +\d+ sec)");
  for (auto it = std::sregex_iterator(rep.begin(), rep.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoll((*it)[1]), std::stod((*it)[2])});
  return out;
}

}  // namespace

// dbench loops its loadfile until the time is up (child_run() rewinds it at the end): a run
// long enough to pass the end of the file, and its Deltree line (no traffic), many times keeps
// its pace to the end. The loadfile cut 200x (every op kept, Deltree once) and TCP costs 10x
// make that a short test: about 20 passes in 6 simulated seconds.
TEST(Tbench, LongRunLoopsTheLoadfileAndStaysSteady) {
  auto m = fixture::test_machine();
  m.costs.tcp_send_ns *= 10;
  m.costs.tcp_recv_ns *= 10;
  workload::TbenchOptions o;
  o.nprocs = 1;
  o.timelimit = 5;
  o.loadfile_divisor = 200;
  auto r = run_tbench(m, o);
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  auto st = execute_lines(rep);
  ASSERT_EQ(st.size(), 4u) << rep;
  const long long file_lines = 458344 / 200;
  EXPECT_GT(st.back().lines, 5 * file_lines) << rep;  // the file was replayed from its start
  // Lines per second in each interval within 3 % of the first interval's.
  long long first = st[1].lines - st[0].lines;
  ASSERT_GT(first, 0) << rep;
  for (size_t i = 1; i < st.size(); ++i) {
    long long d = st[i].lines - st[i - 1].lines;
    EXPECT_NEAR(static_cast<double>(d), static_cast<double>(first), 0.03 * first) << "interval " << i << "\n" << rep;
  }
  EXPECT_NEAR(metric(*r.w, "throughput"), st.front().mbs, 0.03 * st.front().mbs) << rep;
}

// tbench -t `seconds` with one client on the shipped tiny-4 profile: seconds - 1 execute lines,
// more than `passes` replays of the 458,344-line loadfile, every one-second interval's lines
// within 3 % of the first interval's, and the last status line and the throughput within 3 %
// of the first status line's.
static void expect_tiny4_steady(int seconds, long long passes) {
  auto r = run_workload(machine::load_profile("tiny-4"), {"tbench", "-t", std::to_string(seconds), "1"});
  ASSERT_TRUE(r.w->finished());
  std::string rep = r.w->report();
  auto st = execute_lines(rep);
  ASSERT_EQ(st.size(), static_cast<size_t>(seconds - 1)) << rep;  // execute 1 .. seconds - 1
  EXPECT_GT(st.back().lines, passes * 458344LL) << rep;
  long long first = st[1].lines - st[0].lines;
  ASSERT_GT(first, 0) << rep;
  int off = 0;
  size_t first_off = 0;
  for (size_t i = 1; i < st.size(); ++i) {
    long long d = st[i].lines - st[i - 1].lines;
    if (std::fabs(static_cast<double>(d - first)) > 0.03 * static_cast<double>(first) && off++ == 0) first_off = i;
  }
  EXPECT_EQ(off, 0) << "first interval off: " << first_off << "\n" << rep;
  EXPECT_NEAR(st.back().mbs, st.front().mbs, 0.03 * st.front().mbs) << rep;
  EXPECT_NEAR(metric(*r.w, "throughput"), st.front().mbs, 0.03 * st.front().mbs) << rep;
}

// The issue's acceptance run, tbench at its default length on the shipped tiny-4 profile (no
// cost or loadfile changed), cut to the length a test can afford: -t 600 with one client takes
// about 220 s of wall time in Release on this project's machine (-t 60: 22 s, 159 M events), so
// this test runs -t 50 (about 18 s; TbenchLong below runs -t 600 outside the sanitizer run), which still replays the 458,344-line loadfile about ten
// times (the bug it guards against stopped every client after ~412,000 lines, at 0 MB/sec).
// Every one-second execute interval's loadfile lines within 3 % of the first interval's, from
// the start to the end, and the final throughput within 3 % of the first status line's.
TEST(Tbench, TinyFourFiftySecondsSteadyPerInterval) { expect_tiny4_steady(50, 8); }

// The issue's acceptance run itself: tbench at -t 600 with one client on the shipped tiny-4
// profile (no cost or loadfile changed), the loadfile replayed about 120 times. It takes about
// 220 s of wall time in Release (1.3 G events), so the suite name TbenchLong keeps it out of the
// sanitizer run (Makefile, test-sanitize: the same code paths run there in the -t 50 test above).
// Every one-second execute interval within 3 % of the first, and the throughput to the end.
TEST(TbenchLong, TinyFourSixHundredSecondsSteadyPerInterval) { expect_tiny4_steady(600, 100); }

// dbench 4.00 releases its clients from the start barrier in fork order, one wakeup after
// another by the parent: client k is released after client k-1 and runs only after its release.
TEST(Tbench, ClientsStartInForkOrderAfterTheRelease) {
  auto m = fixture::test_machine(1, 4, 2, 4);  // 8 CPUs, more than the clients
  auto r = run_workload(m, {"tbench", "-t", "1", "6"});
  ASSERT_TRUE(r.w->finished());
  auto starts = dynamic_cast<const workload::Tbench&>(*r.w).client_starts();
  ASSERT_EQ(starts.size(), 6u);
  for (size_t i = 0; i < starts.size(); ++i) {
    EXPECT_GT(starts[i].first, sim::Time()) << i;          // released after the parent ran
    EXPECT_GT(starts[i].second, starts[i].first) << i;     // ran only after its release
    if (i > 0) EXPECT_GT(starts[i].first, starts[i - 1].first) << i;  // fork order, one at a time
  }
  // Each wakeup costs the parent at least try_to_wake_up() (ttwu_ns): the pace is the kernel's.
  EXPECT_GE((starts[5].first - starts[0].first).count(), 5 * m.costs.ttwu_ns);
}
