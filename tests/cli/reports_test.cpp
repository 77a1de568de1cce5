// End-to-end: the report formats kernel engineers already read: `--format mmtests` (ab, compare),
// `--html` (run, ab, reproduce), `--schedstat` (run) and `--format perf-sched-stats` (ab, compare).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "../common/process.hpp"

using namespace schedlab::fixture;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The samples of tests/report/mmtests/hackbench_pan_samples.txt, one file per set.
std::map<std::string, std::string> write_lkml_samples(const fs::path& dir) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/report/mmtests/hackbench_pan_samples.txt");
  std::map<std::string, std::string> files;
  std::ofstream out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      const std::string label = line.substr(1, line.find(']') - 1);
      files[label] = (dir / (label + ".txt")).string();
      out.close();
      out.open(files[label]);
      continue;
    }
    out << line << "\n";
  }
  return files;
}

}  // namespace

TEST(CliMmtests, CompareReadsPostedSamplesWithEitherRule) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab_mmtests_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto f = write_lkml_samples(dir);
  const std::string args = "compare --format mmtests --mmtests-decimals 4 --metric hackbench --labels "
                           "hackbench-default,hackbench-pan " +
                           f["hackbench-default"] + " " + f["hackbench-pan"];
  auto ci = run_schedlab(args);
  auto tt = run_schedlab(args + " --mmtests-significance ttest");
  fs::remove_all(dir);
  ASSERT_EQ(ci.status, 0) << ci.err;
  ASSERT_EQ(tt.status, 0) << tt.err;
  auto lc = lines_of(ci.out), lt = lines_of(tt.out);
  ASSERT_EQ(lc.size(), 9u) << ci.out;
  EXPECT_EQ(lc[0], "hackbench");
  // The operation is the metric: a stat column of 9, an operation column of 9, then 23 per set.
  EXPECT_EQ(lc[1], std::string(19, ' ') + "              hackbench              hackbench");
  EXPECT_EQ(lc[2], std::string(19, ' ') + "                default                    pan");
  // The posted numbers (see tests/report/golden/mmtests_lkml_20220128052851.txt), the asterisk by
  // the rule chosen: the 2022 t-test marks the 1.74%, today's confidence intervals do not.
  EXPECT_EQ(lt[4], "Amean     hackbench     24.4604 (   0.00%)     24.0353 *   1.74%*");
  EXPECT_EQ(lc[4], "Amean     hackbench     24.4604 (   0.00%)     24.0353 (   1.74%)");
  EXPECT_EQ(lc[5], "Stddev    hackbench      0.4420 (   0.00%)      0.7611 ( -72.18%)");
}

TEST(CliMmtests, AbNamesTheReportAsMmtests) {
  std::string cmd = "ab --machine tiny-4 --base '' --test SM_IDLE --runs 3 --format mmtests ";
  auto a = run_schedlab(cmd + "--jobs 1 -- hackbench -p -T -g 2 -l 50");
  auto b = run_schedlab(cmd + "--jobs 2 -- hackbench -p -T -g 2 -l 50");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // byte-deterministic, whatever --jobs
  auto l = lines_of(a.out);
  ASSERT_EQ(l.size(), 9u) << a.out;
  EXPECT_EQ(l[0], "hackbench-thread-pipes");
  EXPECT_EQ(l[2], "                              base                SM_IDLE");
  EXPECT_EQ(l[3].substr(0, 14), "Min       2   ");  // the group count is the operation, as in mmtests
  // 4 decimals for hackbench (mmtests' shellpack DecimalPlaces), cells of 12 + 11 characters.
  EXPECT_TRUE(std::regex_match(l[4], std::regex(R"(Amean     2 {6}\d\.\d{4} \(   0\.00%\) {6}\d\.\d{4} [(*] +-?\d+\.\d\d%[)*])")))
      << l[4];
}

TEST(CliMmtests, AbMetricsAreOperationsWithTheirOwnMeans) {
  auto r = run_schedlab("ab --machine tiny-4 --base '' --test IDLE_SPIN --runs 3 --format mmtests -- "
                        "perf bench sched pipe -l 500");
  ASSERT_EQ(r.status, 0) << r.err;
  auto l = lines_of(r.out);
  ASSERT_GE(l.size(), 6u);
  EXPECT_EQ(l[0], "perfpipe");
  bool amean = false, hmean = false;
  for (const auto& x : l) {
    amean |= x.rfind("Amean     usecs_per_op", 0) == 0;
    hmean |= x.rfind("Hmean     ops_per_sec", 0) == 0;
  }
  EXPECT_TRUE(amean) << r.out;
  EXPECT_TRUE(hmean) << r.out;
  // The key counters are not part of the mmtests table.
  EXPECT_EQ(r.out.find("context_switches"), std::string::npos);
}

TEST(CliMmtests, BadRuleIsAUsageError) {
  for (const char* args :
       {"ab --test SM_IDLE --runs 2 --format mmtests --mmtests-significance welch -- hackbench",
        "compare --format mmtests --mmtests-significance welch /dev/null /dev/null",
        "compare --format mmtests --mmtests-decimals 40 /dev/null /dev/null"}) {
    auto r = run_schedlab(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}

namespace {
std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}
}  // namespace

TEST(CliHtml, AbReportIsDeterministicAndHasAPlotPerMetric) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab_html_ab_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string cmd = "ab --machine tiny-4 --base '' --test IDLE_SPIN --runs 3 ";
  auto a = run_schedlab(cmd + "--jobs 1 --html " + (dir / "a.html").string() + " -- schbench -m 1 -t 2 -r 1");
  auto b = run_schedlab(cmd + "--jobs 2 --format mmtests --html " + (dir / "b.html").string() +
                        " -- schbench -m 1 -t 2 -r 1");
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  const std::string ha = slurp_file(dir / "a.html"), hb = slurp_file(dir / "b.html");
  fs::remove_all(dir);
  EXPECT_EQ(ha, hb);  // whatever --jobs and --format
  // schbench: five metrics, the wakeup and request latency distributions (a curve per run and
  // side), the key counters; the text tables as printed.
  EXPECT_EQ(count_of(ha, "<svg class=\"plot\" data-kind=\"strip\""), 5u);
  EXPECT_EQ(count_of(ha, "<svg class=\"plot\" data-kind=\"cdf\""), 2u);
  EXPECT_EQ(count_of(ha, "<svg class=\"plot\" data-kind=\"counters\""), 1u);
  EXPECT_EQ(count_of(ha, "class=\"curve thin\""), 12u);  // 2 distributions x 2 sides x 3 runs
  EXPECT_NE(ha.find("wakeup_p99 (us), Lower is better"), std::string::npos);
  EXPECT_NE(ha.find("\"command\": \"ab\""), std::string::npos);
}

TEST(CliHtml, RunReportOfRtappUsesItsLogs) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab_html_run_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/workload/rtapp/periodic.json", dir / "periodic.json");
  auto r = run_schedlab("run --machine tiny-4 --html r.html -- rt-app periodic.json", dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string h = slurp_file(dir / "r.html");
  fs::remove_all(dir);
  EXPECT_EQ(count_of(h, "data-kind=\"cdf\""), 1u);
  EXPECT_EQ(count_of(h, "data-kind=\"cpu\""), 1u);
  EXPECT_EQ(count_of(h, "<g class=\"cpu\""), 4u);  // tiny-4
  EXPECT_NE(h.find("rt-app wakeup latency (wu_lat)"), std::string::npos);
}

TEST(CliHtml, ReproduceReportHasTheBands) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab_html_rep_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = run_schedlab("reproduce haltpoll-arm64-guest-pipe --runs 2 --html " + (dir / "r.html").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string h = slurp_file(dir / "r.html");
  fs::remove_all(dir);
  EXPECT_EQ(count_of(h, "data-kind=\"bands\""), 1u);
  EXPECT_EQ(count_of(h, "<g class=\"case\""), 1u);
  EXPECT_NE(h.find("20240726201332.626395-1-ankur.a.arora@oracle.com"), std::string::npos);  // in the data
}

TEST(CliHtml, BadPathIsAnErrorBeforeAnyRun) {
  for (const char* args : {"run --html /nonexistent/dir/r.html -- hackbench -l 10",
                           "ab --test SM_IDLE --runs 2 --html /nonexistent/dir/r.html -- hackbench -l 10",
                           "reproduce haltpoll-arm64-guest-pipe --html /nonexistent/dir/r.html",
                           "reproduce --list --html /tmp/x.html", "run --html '' -- hackbench -l 10"}) {
    auto r = run_schedlab(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists("/tmp/x.html"));
}

TEST(CliSchedstat, RunWritesTwoSnapshotsThatCompareReads) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab_schedstat_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = run_schedlab("run --machine tiny-4 --schedstat " + (dir / "a.txt").string() + " -- hackbench -g 2 -l 50");
  auto r2 = run_schedlab("run --machine tiny-4 --features IDLE_SPIN --schedstat " + (dir / "b.txt").string() +
                         " -- hackbench -g 2 -l 50");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r2.status, 0) << r2.err;
  const std::string a = slurp_file(dir / "a.txt");
  EXPECT_EQ(a.rfind("version 17\ntimestamp 0\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 SMT 5 ", 0), 0u) << a.substr(0, 200);
  EXPECT_EQ(count_of(a, "version 17\n"), 2u);
  EXPECT_EQ(count_of(a, "\ndomain1 MC f "), 8u);  // 4 CPUs x 2 snapshots
  auto rep = run_schedlab("compare --format perf-sched-stats " + (dir / "a.txt").string());
  auto diff = run_schedlab("compare --format perf-sched-stats " + (dir / "a.txt").string() + " " + (dir / "b.txt").string());
  auto three = run_schedlab("compare --format perf-sched-stats " + (dir / "a.txt").string() + " " +
                            (dir / "a.txt").string() + " " + (dir / "a.txt").string());
  std::ofstream(dir / "bad.txt") << "version 16\n";
  auto bad = run_schedlab("compare --format perf-sched-stats " + (dir / "bad.txt").string());
  fs::remove_all(dir);
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(rep.out.find("\nCPU 3, DOMAIN MC CPUS 0-3\n"), std::string::npos);  // report: every CPU
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("COUNT1      COUNT2   PCT_CHANGE"), std::string::npos);
  EXPECT_EQ(diff.out.find("\nCPU 0\n"), std::string::npos);  // diff: the summary only
  EXPECT_NE(diff.out.find("CPU <ALL CPUS SUMMARY>, DOMAIN SMT\n"), std::string::npos);
  for (const auto* e : {&three, &bad}) {
    EXPECT_EQ(e->status, 2) << e->err;
    EXPECT_EQ(e->out, "");
    EXPECT_EQ(std::count(e->err.begin(), e->err.end(), '\n'), 1) << e->err;
  }
  EXPECT_NE(bad.err.find("schedstat version 16 (schedlab reads version 17)"), std::string::npos) << bad.err;
}

TEST(CliSchedstat, AbDiffsTheTwoSides) {
  const std::string cmd = "ab --machine tiny-4 --base '' --test IDLE_SPIN --runs 3 --format perf-sched-stats ";
  auto a = run_schedlab(cmd + "--jobs 1 -- perf bench sched pipe -l 500");
  auto b = run_schedlab(cmd + "--jobs 2 -- perf bench sched pipe -l 500");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.rfind("Columns description\n", 0), 0u);
  // IDLE_SPIN keeps the CPU busy-waiting instead of idle: far fewer idle picks.
  auto line = a.out.substr(a.out.find("schedule() left the processor idle"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("-9"), std::string::npos) << line;  // a change of -9x.xx%
}
