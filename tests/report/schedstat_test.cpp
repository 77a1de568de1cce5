// /proc/schedstat v17 snapshots and `perf sched stats` reports: byte for byte against outputs
// engineers posted, fed with the numbers they show; the snapshot format; bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/schedstat.hpp"

using namespace schedlab::report;
using namespace schedlab::report::schedstat;

namespace {

std::string read_file(const std::string& rel) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A one-CPU recording file (a zero snapshot, then one with the counts) in /proc/schedstat form.
struct Dom {
  std::string name;
  std::vector<uint64_t> v;  // 45 fields
};
std::string recording_text(uint64_t jiffies, const std::vector<uint64_t>& cpu, const std::vector<Dom>& doms) {
  std::string before = "version 17\ntimestamp 1000\ncpu0 0 0 0 0 0 0 0 0 0\n";
  std::string after = "version 17\ntimestamp " + std::to_string(1000 + jiffies) + "\ncpu0";
  for (auto v : cpu) after += std::string(" ") += std::to_string(v);
  after += "\n";
  for (size_t i = 0; i < doms.size(); ++i) {
    before += "domain" + std::to_string(i) + " " + doms[i].name + " 1";
    after += "domain" + std::to_string(i) + " " + doms[i].name + " 1";
    for (int k = 0; k < kDomainFields; ++k) before += " 0";
    for (auto v : doms[i].v) after += std::string(" ") += std::to_string(v);
    before += "\n";
    after += "\n";
  }
  return before + after;
}

// 11 lb fields per idle type (count, balanced, failed, 4 imbalances, gained, hot, nobusyq,
// nobusyg), then alb, sbe, sbf and the three ttwu fields.
std::vector<uint64_t> dom_fields(std::vector<uint64_t> busy, std::vector<uint64_t> idle, std::vector<uint64_t> newidle,
                                 std::vector<uint64_t> ttwu) {
  std::vector<uint64_t> v;
  for (auto* t : {&busy, &idle, &newidle}) {
    t->resize(kLbFields, 0);
    v.insert(v.end(), t->begin(), t->end());
  }
  v.insert(v.end(), 9, 0);
  ttwu.resize(3, 0);
  v.insert(v.end(), ttwu.begin(), ttwu.end());
  return v;
}

}  // namespace

// aws/repro-collection, repros/repro-mysql-EEVDF-regression/results/20250430/README.md (commit
// a5fde16689118df81696caa10671a9bd77ccbb42): the first `perf sched stats diff` (kernel 6.15-rc4,
// 3 ms against 6 ms base slice), whole. Its numbers are the summary of all CPUs; fed as one-CPU
// recordings, they are that summary.
TEST(perfSchedStatsGolden, PostedDiffByteForByte) {
  const std::string a = recording_text(
      150000, {138180, 0, 5654101, 1226028, 3696655, 1363332, 509996068491ULL, 760362205701ULL, 4349575},
      {{"MC", dom_fields({10, 9, 0, 39, 0, 0, 0, 0, 0, 0, 9},
                         {17399, 5886, 9575, 12702, 0, 13064, 0, 2954, 0, 42, 5844},
                         {1488633, 185791, 871226, 0, 0, 1716632, 0, 715096, 51, 2008, 133188}, {2333320, 1037495, 0})}});
  const std::string b = recording_text(
      150000, {146373, 0, 5723044, 1231886, 3738102, 1377915, 511066738327ULL, 764903176187ULL, 4406813},
      {{"MC", dom_fields({11, 11, 0, 17, 0, 0, 0, 0, 0, 0, 11},
                         {17581, 5795, 9819, 11798, 0, 13392, 0, 3005, 0, 40, 5755},
                         {1499263, 182950, 879762, 0, 0, 1736189, 0, 723345, 50, 2047, 130047}, {2360184, 1048220, 0})}});
  Snapshot ra = recording_of_file("a", a), rb = recording_of_file("b", b);
  const std::string expected = read_file("tests/report/golden/perf_sched_stats_diff_aws_20250430.txt");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(perf_sched_stats(ra, &rb), expected);
}

// K Prateek Nayak, "[RFC PATCH 0/8] sched/fair: Propagate load balancing stats up the sched
// domain hierarchy", <20250313093746.6760-1-kprateek.nayak@amd.com> (2025-03-13): the CPU block
// of its `perf sched stats diff` whole, and the newidle rows it quotes of each domain (the
// recordings' lengths, 1215 and 1645 jiffies, follow from its AVG_JIFFIES: 303.75 x 4, 235.00 x 7).
TEST(perfSchedStatsGolden, PostedLkmlRows) {
  auto nd = [](std::vector<uint64_t> n) {  // newidle: count balanced failed gained hot nobusyq nobusyg
    return dom_fields({}, {}, {n[0], n[1], n[2], 0, 0, 0, 0, n[3], n[4], n[5], n[6]}, {});
  };
  const std::string a = recording_text(1215, {0, 0, 117639, 58581, 58973, 30, 2338057783ULL, 27373872, 59052},
                                       {{"SMT", nd({1576, 1552, 4, 19, 0, 0, 1342})},
                                        {"MC", nd({717, 503, 203, 10, 0, 0, 475})},
                                        {"PKG", nd({112, 39, 66, 6, 0, 0, 17})},
                                        {"NUMA", nd({46, 36, 9, 1, 0, 0, 10})}});
  const std::string b = recording_text(1645, {0, 0, 125511, 58104, 65141, 191, 2190178756ULL, 284078866, 67395},
                                       {{"SMT", nd({11323, 11146, 48, 128, 0, 0, 10519})},
                                        {"MC", nd({8824, 5608, 3200, 15, 0, 1724, 3756})},
                                        {"PKG", nd({4199, 1989, 2198, 12, 0, 1059, 816})},
                                        {"NUMA", nd({844, 836, 7, 0, 0, 0, 781})}});
  Snapshot ra = recording_of_file("a", a), rb = recording_of_file("b", b);
  const auto out = lines_of(perf_sched_stats(ra, &rb));
  const std::string sep(100, '-');
  const std::vector<std::string> cpu_block = {
      sep,
      "CPU <ALL CPUS SUMMARY>",
      sep,
      "DESC                                                                    COUNT1      COUNT2   PCT_CHANGE    PCT_CHANGE1 PCT_CHANGE2",
      sep,
      "sched_yield() count                                              :           0,          0  |     0.00% |",
      "Legacy counter can be ignored                                    :           0,          0  |     0.00% |",
      "schedule() called                                                :      117639,     125511  |     6.69% |",
      "schedule() left the processor idle                               :       58581,      58104  |    -0.81% |  (    49.80%,     46.29% )",
      "try_to_wake_up() was called                                      :       58973,      65141  |    10.46% |",
      "try_to_wake_up() was called to wake up the local cpu             :          30,        191  |   536.67% |  (     0.05%,      0.29% )",
      "total runtime by tasks on this processor (in jiffies)            :  2338057783, 2190178756  |    -6.32% |",
      "total waittime by tasks on this processor (in jiffies)           :    27373872,  284078866  |   937.77% |  (     1.17%,     12.97% )",
      "total timeslices run on this cpu                                 :       59052,      67395  |    14.13% |",
      sep,
  };
  auto at = std::find(out.begin(), out.end(), "CPU <ALL CPUS SUMMARY>");
  ASSERT_NE(at, out.end());
  ASSERT_GE(at - out.begin(), 1);
  std::vector<std::string> got(at - 1, std::min(out.end(), at - 1 + static_cast<long>(cpu_block.size())));
  EXPECT_EQ(got, cpu_block);

  struct Quoted {
    const char* domain;
    std::vector<std::string> rows;
  };
  const std::vector<Quoted> quoted = {
      {"SMT",
       {"---------------------------------------- <Category newidle> ----------------------------------------",
        "load_balance() count on cpu newly idle                           :        1576,      11323  |   618.46% |  $        0.77,        0.15 $",
        "load_balance() found balanced on cpu newly idle                  :        1552,      11146  |   618.17% |  $        0.78,        0.15 $",
        "load_balance() move task failed on cpu newly idle                :           4,         48  |  1100.00% |  $      303.75,       34.27 $",
        "pull_task() count on cpu newly idle                              :          19,        128  |   573.68% |",
        "pull_task() when target task was cache-hot on cpu newly idle     :           0,          0  |     0.00% |",
        "load_balance() failed to find busier queue on cpu newly idle     :           0,          0  |     0.00% |  $        0.00,        0.00 $",
        "load_balance() failed to find busier group on cpu newly idle     :        1342,      10519  |   683.83% |  $        0.91,        0.16 $",
        "*load_balance() success count on cpu newly idle                  :          20,        129  |   545.00% |",
        "*avg task pulled per successful lb attempt (cpu newly idle)      :        0.95,       0.99  |     4.45% |"}},
      {"MC",
       {"load_balance() count on cpu newly idle                           :         717,       8824  |  1130.68% |  $        1.69,        0.19 $",
        "load_balance() found balanced on cpu newly idle                  :         503,       5608  |  1014.91% |  $        2.42,        0.29 $",
        "load_balance() move task failed on cpu newly idle                :         203,       3200  |  1476.35% |  $        5.99,        0.51 $",
        "pull_task() count on cpu newly idle                              :          10,         15  |    50.00% |",
        "load_balance() failed to find busier queue on cpu newly idle     :           0,       1724  |     0.00% |  $        0.00,        0.95 $",
        "load_balance() failed to find busier group on cpu newly idle     :         475,       3756  |   690.74% |  $        2.56,        0.44 $",
        "*load_balance() success count on cpu newly idle                  :          11,         16  |    45.45% |",
        "*avg task pulled per successful lb attempt (cpu newly idle)      :        0.91,       0.94  |     3.12% |"}},
      {"PKG",
       {"load_balance() count on cpu newly idle                           :         112,       4199  |  3649.11% |  $       10.85,        0.39 $",
        "load_balance() found balanced on cpu newly idle                  :          39,       1989  |  5000.00% |  $       31.15,        0.83 $",
        "load_balance() move task failed on cpu newly idle                :          66,       2198  |  3230.30% |  $       18.41,        0.75 $",
        "pull_task() count on cpu newly idle                              :           6,         12  |   100.00% |",
        "load_balance() failed to find busier queue on cpu newly idle     :           0,       1059  |     0.00% |  $        0.00,        1.55 $",
        "load_balance() failed to find busier group on cpu newly idle     :          17,        816  |  4700.00% |  $       71.47,        2.02 $",
        "*load_balance() success count on cpu newly idle                  :           7,         12  |    71.43% |",
        "*avg task pulled per successful lb attempt (cpu newly idle)      :        0.86,       1.00  |    16.67% |"}},
      {"NUMA",
       {"load_balance() count on cpu newly idle                           :          46,        844  |  1734.78% |  $       26.41,        1.95 $",
        "load_balance() found balanced on cpu newly idle                  :          36,        836  |  2222.22% |  $       33.75,        1.97 $",
        "load_balance() move task failed on cpu newly idle                :           9,          7  |   -22.22% |  $      135.00,      235.00 $",
        "pull_task() count on cpu newly idle                              :           1,          0  |  -100.00% |",
        "load_balance() failed to find busier group on cpu newly idle     :          10,        781  |  7710.00% |  $      121.50,        2.11 $",
        "*load_balance() success count on cpu newly idle                  :           1,          1  |     0.00% |",
        "*avg task pulled per successful lb attempt (cpu newly idle)      :        1.00,       0.00  |  -100.00% |"}},
  };
  for (const auto& q : quoted) {
    auto start = std::find(out.begin(), out.end(), std::string("CPU <ALL CPUS SUMMARY>, DOMAIN ") + q.domain);
    ASSERT_NE(start, out.end()) << q.domain;
    auto end = std::find_if(start + 1, out.end(), [](const std::string& l) { return l.rfind("CPU <", 0) == 0; });
    for (const auto& row : q.rows) EXPECT_NE(std::find(start, end, row), end) << q.domain << ": " << row;
  }
}

TEST(schedstat, SnapshotTextRoundTrips) {
  Snapshot s;
  s.timestamp = 4294892296ULL;
  Cpu c;
  c.cpu = 3;
  c.v = {1, 0, 3, 4, 5, 6, 7, 8, 9};
  Domain d;
  d.index = 0;
  d.name = "MC";
  d.cpumask = cpumask_hex(std::vector<int>{0, 1, 2, 3}, 4);
  for (int i = 0; i < kDomainFields; ++i) d.v[i] = static_cast<uint64_t>(i);
  c.domains.push_back(d);
  s.cpus.push_back(c);
  const std::string text = to_text(s);
  auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "version 17");
  EXPECT_EQ(lines[1], "timestamp 4294892296");
  EXPECT_EQ(lines[2], "cpu3 1 0 3 4 5 6 7 8 9");
  EXPECT_EQ(lines[3].rfind("domain0 MC f 0 1 2 ", 0), 0u) << lines[3];
  EXPECT_EQ(lines[3].substr(lines[3].size() - 9), " 42 43 44");
  auto back = parse("x", text + text);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(to_text(back[1]), text);
}

TEST(schedstat, CpumaskAsTheKernelPrintsIt) {
  EXPECT_EQ(cpumask_hex(std::vector<int>{0, 2}, 4), "5");
  EXPECT_EQ(cpumask_hex(std::vector<int>{0, 64}, 128), "00000000,00000001,00000000,00000001");
  EXPECT_EQ(cpumask_hex(std::vector<int>{35}, 36), "8,00000000");
  EXPECT_EQ(cpulist_of_mask("00000000,00000001,00000000,0000000f"), "0-3,64");
  EXPECT_EQ(cpulist_of_mask("ff"), "0-7");
}

TEST(schedstat, DomainNameIsOptional) {
  // Without CONFIG_SCHED_DEBUG v17 prints no name: the mask follows the index.
  std::string text = "version 17\ntimestamp 5\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 3";
  for (int i = 0; i < kDomainFields; ++i) text += " 0";
  auto s = parse("x", text + "\n");
  ASSERT_EQ(s[0].cpus[0].domains.size(), 1u);
  EXPECT_EQ(s[0].cpus[0].domains[0].name, "0");
  EXPECT_EQ(s[0].cpus[0].domains[0].cpumask, "3");
}

TEST(schedstat, ReportOfOneRecordingHasEveryCpu) {
  std::string before = "version 17\ntimestamp 0\n", after = "version 17\ntimestamp 250\n";
  for (int c = 0; c < 2; ++c) {
    before += "cpu" + std::to_string(c) + " 0 0 0 0 0 0 0 0 0\ndomain0 MC 3";
    after += "cpu" + std::to_string(c) + " 0 0 " + std::to_string(10 * (c + 1)) + " 0 0 0 0 0 0\ndomain0 MC 3";
    for (int i = 0; i < kDomainFields; ++i) before += " 0", after += i == 0 ? " 5" : " 0";
    before += "\n", after += "\n";
  }
  auto r = recording_of_file("r", before + after);
  const auto out = perf_sched_stats(r, nullptr);
  // The summary is the mean over CPUs: (10 + 20) / 2.
  EXPECT_NE(out.find("schedule() called                                                :          15\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nCPU 1\n"), std::string::npos);
  EXPECT_NE(out.find("\nCPU 1, DOMAIN MC CPUS 0-1\n"), std::string::npos);
  // One recording: COUNT and AVG_JIFFIES (250 / 5).
  EXPECT_NE(out.find("load_balance() count on cpu busy                                 :           5  $       50.00 $"),
            std::string::npos)
      << out;
}

TEST(schedstat, BadInputIsOneClearError) {
  auto msg = [](const std::string& text) {
    try {
      recording_of_file("f.txt", text);
    } catch (const SampleError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("version 16\n"), "f.txt:1: schedstat version 16 (schedlab reads version 17)");
  EXPECT_EQ(msg("cpu0 1 2\n"), "f.txt:1: 'cpu0' before the first \"version\" line");
  EXPECT_EQ(msg("version 17\ntimestamp 1\ncpu0 1 2\n"), "f.txt:3: cpu line with 2 fields (version 17 has 9)");
  EXPECT_EQ(msg("version 17\ntimestamp 1\ncpu0 0 0 0 0 0 0 0 0 0\n"),
            "f.txt: one schedstat snapshot; a recording needs two (before and after)");
  EXPECT_EQ(msg("version 17\ntimestamp 1\ncpu0 0 0 5 0 0 0 0 0 0\nversion 17\ntimestamp 2\ncpu0 0 0 4 0 0 0 0 0 0\n"),
            "f.txt: cpu0 field 3 went backwards");
  EXPECT_EQ(msg("version 17\ntimestamp x\n"), "f.txt:2: not a counter: 'x'");
  EXPECT_EQ(msg(""), "f.txt: no schedstat snapshot (no \"version\" line)");
  EXPECT_EQ(msg("version 17\ntimestamp 1\ncpu0 0 0 0 0 0 0 0 0 0\nversion 17\ntimestamp 2\ncpu1 0 0 0 0 0 0 0 0 0\n"),
            "f.txt: cpu1 where cpu0 was");
}
