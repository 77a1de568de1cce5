// host bench: parsers on outputs captured from the real tools on the dev VM
// (tests/host/fixtures/bench/*.txt), command identification, and an end-to-end run.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "host/bench.hpp"

using namespace schedlab::host;

namespace {
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/bench/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(BenchParse, Hackbench) {
  EXPECT_DOUBLE_EQ(*parse_hackbench_time(fixture("hackbench-g1-l100.txt")), 0.167);
  EXPECT_DOUBLE_EQ(*parse_hackbench_time(fixture("hackbench-p-T-g1-l100.txt")), 0.198);
  EXPECT_FALSE(parse_hackbench_time(fixture("hackbench-bad-option.txt")));
  EXPECT_FALSE(parse_hackbench_time(fixture("perf-pipe-l10000.txt")));
  EXPECT_FALSE(parse_hackbench_time(""));
  EXPECT_FALSE(parse_hackbench_time("Time: soon\n"));
}

TEST(BenchParse, PerfPipe) {
  EXPECT_DOUBLE_EQ(*parse_perf_pipe_usecs_per_op(fixture("perf-pipe-l10000.txt")), 15.2912);
  EXPECT_DOUBLE_EQ(*parse_perf_pipe_usecs_per_op(fixture("perf-pipe-T-l10000.txt")), 10.2646);
  EXPECT_DOUBLE_EQ(*parse_perf_total_time(fixture("perf-pipe-l10000.txt")), 0.152);
  EXPECT_FALSE(parse_perf_pipe_usecs_per_op(fixture("perf-messaging-g1-l10.txt")));
  EXPECT_FALSE(parse_perf_pipe_usecs_per_op(fixture("perf-simple-pipe-l1000.txt")));
  EXPECT_FALSE(parse_perf_pipe_usecs_per_op(fixture("hackbench-g1-l100.txt")));
}

TEST(BenchParse, PerfMessaging) {
  EXPECT_DOUBLE_EQ(*parse_perf_total_time(fixture("perf-messaging-g1-l10.txt")), 0.308);
  EXPECT_DOUBLE_EQ(*parse_perf_total_time(fixture("perf-messaging-p-t-g1-l10.txt")), 0.017);
  EXPECT_FALSE(parse_perf_total_time(fixture("hackbench-g1-l100.txt")));
  EXPECT_FALSE(parse_perf_total_time(fixture("perf-simple-pipe-l1000.txt")));
}

TEST(BenchIdentify, KnownTools) {
  auto h = identify_benchmark({"hackbench", "-g", "1", "-l", "10"});
  EXPECT_EQ(h.tool, BenchTool::Hackbench);
  EXPECT_EQ(h.metric, "time_s");
  auto p = identify_benchmark({"perf", "bench", "sched", "pipe", "-T", "-l", "1000"});
  EXPECT_EQ(p.tool, BenchTool::PerfSchedPipe);
  EXPECT_EQ(p.metric, "usecs_per_op");
  EXPECT_EQ(p.unit, "us");
  EXPECT_EQ(identify_benchmark({"/usr/bin/perf", "bench", "-r", "3", "sched", "messaging"}).tool,
            BenchTool::PerfSchedMessaging);
  EXPECT_EQ(identify_benchmark({"taskset", "-c", "0", "perf", "bench", "sched", "pipe"}).tool, BenchTool::PerfSchedPipe);
  EXPECT_EQ(identify_benchmark({"taskset", "0x3", "hackbench"}).tool, BenchTool::Hackbench);
  EXPECT_EQ(identify_benchmark({"perf", "bench", "-f", "default", "sched", "pipe"}).tool, BenchTool::PerfSchedPipe);
}

TEST(BenchIdentify, RejectsOthers) {
  EXPECT_THROW(identify_benchmark({}), HostError);
  EXPECT_THROW(identify_benchmark({"schbench"}), HostError);
  EXPECT_THROW(identify_benchmark({"perf", "bench", "sched", "all"}), HostError);
  EXPECT_THROW(identify_benchmark({"perf", "stat", "true"}), HostError);
  EXPECT_THROW(identify_benchmark({"perf", "bench", "-f", "simple", "sched", "pipe"}), HostError);
  EXPECT_THROW(identify_benchmark({"perf", "bench", "--format=simple", "sched", "pipe"}), HostError);
  EXPECT_THROW(identify_benchmark({"taskset", "-c", "0"}), HostError);
}

TEST(BenchFile, Format) {
  BenchResult r;
  r.spec = identify_benchmark({"hackbench", "-g", "1"});
  r.argv = {"hackbench", "-g", "1"};
  r.runs = {{0.167, "Time: 0.167", ""}, {0.2, "Time: 0.200", ""}};
  EXPECT_EQ(format_samples_file(r),
            "# metric: time_s\n# unit: s\n# better: lower\n"
            "# source: hackbench Time, real runs on this host (schedlab host bench)\n"
            "# command: hackbench -g 1\n# runs: 2\n0.167\n0.2\n");
  EXPECT_EQ(join_command({"a b", "it's", "-l", "10"}), "'a b' 'it'\\''s' -l 10");
}

TEST(BenchRun, NotInstalledIsAnError) {
  try {
    run_real_benchmark({"/nonexistent/hackbench", "-g", "1"}, 1);
    FAIL();
  } catch (const HostError& e) {
    EXPECT_NE(std::string(e.what()).find("not installed"), std::string::npos) << e.what();
  }
}

TEST(BenchRun, ToolFailureIsAnError) {
  if (find_in_path("hackbench").empty()) GTEST_SKIP() << "hackbench (rt-tests) not installed";
  EXPECT_THROW(run_real_benchmark({"hackbench", "--no-such-option"}, 1), HostError);
}

TEST(BenchRun, HackbenchEndToEnd) {
  if (find_in_path("hackbench").empty()) GTEST_SKIP() << "hackbench (rt-tests) not installed";
  int calls = 0;
  auto r = run_real_benchmark({"hackbench", "-g", "1", "-l", "10"}, 2,
                              [](int, const BenchRun&, void* c) { ++*static_cast<int*>(c); }, &calls);
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(r.runs.size(), 2u);
  for (auto& run : r.runs) {
    EXPECT_GT(run.value, 0.0);
    EXPECT_LT(run.value, 60.0);
    EXPECT_EQ(run.result_line.rfind("Time:", 0), 0u) << run.result_line;
  }
}

TEST(BenchRun, PerfPipeEndToEnd) {
  if (find_in_path("perf").empty()) GTEST_SKIP() << "perf (linux-perf) not installed";
  BenchResult r;
  try {
    r = run_real_benchmark({"perf", "bench", "sched", "pipe", "-l", "1000"}, 1);
  } catch (const HostError& e) {
    GTEST_SKIP() << "perf present but unusable here: " << e.what();
  }
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_GT(r.runs[0].value, 0.0);
}

TEST(BenchRun, CountsTheToolsContextSwitches) {
  // A stand-in `hackbench` first in PATH: a shell that runs five sleeps and waits for each, so its
  // processes block at least five times (voluntary switches, from wait4's rusage), then prints
  // hackbench's result line.
  char tmpl[] = "/tmp/schedlab-fakebench-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::ofstream f(dir + "/hackbench");
    f << "#!/bin/sh\nfor i in 1 2 3 4 5; do sleep 0.01; done\necho 'Time: 0.050'\n";
  }
  ASSERT_EQ(chmod((dir + "/hackbench").c_str(), 0755), 0);
  const char* old = getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", (dir + ":" + saved).c_str(), 1);
  BenchResult r;
  try {
    r = run_real_benchmark({"hackbench", "-g", "1"}, 1);
  } catch (...) {
    setenv("PATH", saved.c_str(), 1);
    throw;
  }
  setenv("PATH", saved.c_str(), 1);
  std::remove((dir + "/hackbench").c_str());
  rmdir(dir.c_str());
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.runs[0].value, 0.05);
  EXPECT_GE(r.runs[0].voluntary_switches, 5);
  EXPECT_GE(r.runs[0].involuntary_switches, 0);
  // The machine's IPIs meanwhile, where /proc/interrupts has them: a count, never negative.
  if (r.runs[0].resched_ipis != -1) {
    EXPECT_GE(r.runs[0].resched_ipis, 0);
  }
  if (r.runs[0].call_function_ipis != -1) {
    EXPECT_GE(r.runs[0].call_function_ipis, 0);
  }
  if (r.runs[0].idle_entries != -1) {
    EXPECT_GE(r.runs[0].idle_time_us, 0);
  }
  if (r.runs[0].wakeups != -1) {
    EXPECT_GE(r.runs[0].wakeups, r.runs[0].local_wakeups);
  }
  // perf's counters of the same processes: the five sleeps' switches at least (perf stops counting
  // a task in do_exit(), so its last switches are in rusage only), and some migrations (or 0).
  if (r.runs[0].counters_unavailable.empty()) {
    EXPECT_GE(r.runs[0].perf_context_switches, 5);
    EXPECT_GE(r.runs[0].cpu_migrations, 0);
  } else {
    EXPECT_EQ(r.runs[0].cpu_migrations, -1);
    EXPECT_EQ(r.runs[0].perf_context_switches, -1);
  }
}

// /proc/interrupts' IPI lines summed over CPUs: x86's RES and CAL (the dev VM's file) and arm64's
// IPI0 and IPI1, found by their descriptions; a file without them gives -1.
TEST(IpiTotals, RescheduleAndFunctionCallLines) {
  IpiTotals x = ipi_totals(fixture("../proc/interrupts.0"));
  EXPECT_EQ(x.reschedule, 74831 + 93275);
  EXPECT_EQ(x.call_function, 101302 + 113025);
  IpiTotals a = ipi_totals(
      "           CPU0       CPU1       CPU2\n"
      " 11:       9017       8411       7203     GICv3  27 Level     arch_timer\n"
      "IPI0:       2210       1951       1733       Rescheduling interrupts\n"
      "IPI1:        310        402        377       Function call interrupts\n"
      "IPI2:          0          0          0       CPU stop interrupts\n");
  EXPECT_EQ(a.reschedule, 2210 + 1951 + 1733);
  EXPECT_EQ(a.call_function, 310 + 402 + 377);
  IpiTotals none = ipi_totals("           CPU0\n  1:         9   IO-APIC   1-edge      i8042\n");
  EXPECT_EQ(none.reschedule, -1);
  EXPECT_EQ(none.call_function, -1);
}

// host bench's progress line: every counter as key=value, '-' for one that was not read.
TEST(BenchRun, DescribeCountersKeyValue) {
  BenchRun run;
  run.voluntary_switches = 5342;
  run.involuntary_switches = 1388;
  run.cpu_migrations = 84;
  run.resched_ipis = 263;
  run.call_function_ipis = 130;
  run.idle_entries = 112;
  run.idle_time_us = 16420;
  EXPECT_EQ(describe_counters(run),
            "nvcsw=5342 nivcsw=1388 migrations=84 resched_ipis=263 call_function_ipis=130 idle_entries=112 "
            "idle_ms=16.4 wakeups=- local_wakeups=-");
}

// /proc/schedstat's wake-up counts (fields 5 and 6 of each CPU line, ttwu_count and ttwu_local)
// summed over CPUs; domain lines and the header are left out; no CPU line gives -1.
TEST(WakeupTotals, CpuLinesTtwuCountAndLocal) {
  const std::string v17 =
      "version 17\n"
      "timestamp 4295123456\n"
      "cpu0 0 0 183291 80112 91233 40127 51200034511 2210044512 103179\n"
      "domain0 MC 00000003 12 11 0 0 0 0 0 0 1 0 0 30 29 0 0 0 0 0 0 0 0 0 9 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 55 12 0\n"
      "cpu1 0 0 170110 77920 88004 39001 49811230113 2011004117 92190\n"
      "domain0 MC 00000003 10 10 0 0 0 0 0 0 0 0 0 25 25 0 0 0 0 0 0 0 0 0 8 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 41 10 0\n";
  WakeupTotals t = wakeup_totals(v17);
  EXPECT_EQ(t.ttwu_count, 91233 + 88004);
  EXPECT_EQ(t.ttwu_local, 40127 + 39001);
  WakeupTotals none = wakeup_totals("version 17\ntimestamp 1\n");
  EXPECT_EQ(none.ttwu_count, -1);
  EXPECT_EQ(none.ttwu_local, -1);
}

// cpuidle totals: stateN/usage and stateN/time over every cpuN/cpuidle/stateN of a sysfs tree;
// other directories (cpufreq, cpuidle's own files) and states without the two files are left out.
TEST(IdleTotals, SumsEveryCpusStates) {
  char tmpl[] = "/tmp/schedlab-idle-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path root = tmpl;
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  EXPECT_EQ(idle_totals(root.string()).entries, -1);  // no cpuidle at all
  put("sys/devices/system/cpu/cpu0/cpuidle/state0/usage", "10\n");
  put("sys/devices/system/cpu/cpu0/cpuidle/state0/time", "100\n");
  put("sys/devices/system/cpu/cpu0/cpuidle/state1/usage", "509556\n");
  put("sys/devices/system/cpu/cpu0/cpuidle/state1/time", "262487928\n");
  put("sys/devices/system/cpu/cpu1/cpuidle/state1/usage", "7\n");
  put("sys/devices/system/cpu/cpu1/cpuidle/state1/time", "70\n");
  put("sys/devices/system/cpu/cpu1/cpuidle/state2/usage", "3\n");  // no time file: left out
  put("sys/devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
  put("sys/devices/system/cpu/cpufreq/state9/usage", "1000\n");
  IdleTotals t = idle_totals(root.string());
  EXPECT_EQ(t.entries, 10 + 509556 + 7);
  EXPECT_EQ(t.time_us, 100 + 262487928LL + 70);
  std::filesystem::remove_all(root);
}

namespace {
void move_between_cpus(int times) {
  for (int i = 0; i < times; ++i) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(i % 2, &s);
    sched_setaffinity(0, sizeof s, &s);
  }
  cpu_set_t all;
  CPU_ZERO(&all);
  CPU_SET(0, &all);
  CPU_SET(1, &all);
  sched_setaffinity(0, sizeof all, &all);
}
}  // namespace

// TaskCounters counts what the tasks started after it do (a thread here, the tool's processes in
// run_real_benchmark()), not what the calling thread does itself: a thread that moves between
// CPUs 0 and 1 twenty times makes 19 or 20 migrations (its first move is none when it started on
// CPU 0); the caller moving as often adds none.
TEST(TaskCounters, CountTheChildrenNotTheCaller) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (!CPU_ISSET(0, &mine) || !CPU_ISSET(1, &mine)) GTEST_SKIP() << "needs CPUs 0 and 1";
  {
    TaskCounters c;
    if (!c.unavailable().empty()) GTEST_SKIP() << c.unavailable();
    std::thread([] { move_between_cpus(20); }).join();
    EXPECT_GE(c.children_migrations(), 19);
    EXPECT_GE(c.children_context_switches(), 1);
  }
  {
    TaskCounters c;
    move_between_cpus(20);
    std::thread([] {}).join();
    EXPECT_LT(c.children_migrations(), 5);
  }
  sched_setaffinity(0, sizeof mine, &mine);
}
