// End-to-end: `schedlab run` output, determinism, golden runs and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include "../common/process.hpp"

using namespace schedlab::fixture;

namespace {
std::string tmp(const std::string& name) {
  return "/tmp/schedlab_cli_" + std::to_string(::getpid()) + "_" + name;
}

// Golden files live in tests/golden; SCHEDLAB_UPDATE_GOLDEN=1 rewrites them.
void check_golden(const std::string& name, const std::string& actual) {
  std::string path = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("SCHEDLAB_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
  }
  ASSERT_TRUE(file_exists(path)) << path << " missing (run with SCHEDLAB_UPDATE_GOLDEN=1)";
  EXPECT_EQ(slurp(path), actual) << "golden " << name;
}
}  // namespace

TEST(CliRun, GoldenHackbenchOnTiny4) {
  auto r = run_schedlab("run --machine tiny-4 --seed 1 -- hackbench -g 2 -l 50");
  ASSERT_EQ(r.status, 0) << r.err;
  check_golden("run_hackbench_tiny4.txt", r.out);
  EXPECT_NE(r.out.find("Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n"
                       "Each sender will pass 50 messages of 100 bytes\nTime: "),
            std::string::npos);
}

TEST(CliRun, GoldenPerfPipeOnTiny4) {
  auto r = run_schedlab("run --machine tiny-4 -- perf bench sched pipe -l 2000");
  ASSERT_EQ(r.status, 0) << r.err;
  check_golden("run_perf_pipe_tiny4.txt", r.out);
  EXPECT_NE(r.out.find("# Running 'sched/pipe' benchmark:\n# Executed 2000 pipe operations between two processes\n"),
            std::string::npos);
  EXPECT_NE(r.out.find(" usecs/op\n"), std::string::npos);
}

TEST(CliRun, SameSeedGivesByteIdenticalJson) {
  std::string a = tmp("a.json"), b = tmp("b.json");
  std::string cmd = " --machine epyc-milan-2s --seed 7 --json ";
  auto r1 = run_schedlab("run" + cmd + a + " -- hackbench -p -g 2 -l 20");
  auto r2 = run_schedlab("run" + cmd + b + " -- hackbench -p -g 2 -l 20");
  ASSERT_EQ(r1.status, 0) << r1.err;
  ASSERT_EQ(r2.status, 0) << r2.err;
  std::string ja = slurp(a), jb = slurp(b);
  EXPECT_FALSE(ja.empty());
  EXPECT_EQ(ja, jb);
  EXPECT_EQ(r1.out, r2.out);
  EXPECT_NE(ja.find("\"per_cpu\""), std::string::npos);
  EXPECT_NE(ja.find("\"select_idle_cpu_scanned\""), std::string::npos);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(CliRun, DifferentSeedsWithJitterGiveDifferentSamples) {
  auto r1 = run_schedlab("run --machine tiny-4 --set noise.jitter_cov=0.05 --seed 1 -- perf bench sched pipe -l 2000");
  auto r2 = run_schedlab("run --machine tiny-4 --set noise.jitter_cov=0.05 --seed 2 -- perf bench sched pipe -l 2000");
  ASSERT_EQ(r1.status, 0) << r1.err;
  ASSERT_EQ(r2.status, 0) << r2.err;
  auto line = [](const std::string& s) { return s.substr(0, s.find(" usecs/op")); };
  EXPECT_NE(line(r1.out), line(r2.out));
}

struct BadInput {
  const char* args;
  const char* expect;  // substring of the one error line
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, OneClearErrorExit2NoPartialFile) {
  std::string json = tmp("bad.json");
  std::remove(json.c_str());
  auto r = run_schedlab(std::string("run --json ") + json + " " + GetParam().args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(GetParam().expect), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(file_exists(json));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadInput{"--machine nosuch -- hackbench", "nosuch"},
        BadInput{"--machine /nonexistent/x.toml -- hackbench", "x.toml"},
        BadInput{"--features SM_IDLE,BOGUS -- hackbench", "BOGUS"},
        BadInput{"-- hackbench -g", "-g"},
        BadInput{"-- hackbench -g zero", "-g"},
        BadInput{"-- hackbench -g 0", "-g"},
        BadInput{"-- hackbench --frobnicate", "frobnicate"},
        BadInput{"-- perf bench sched pipe -l -5", "-l"},
        BadInput{"-- perf bench sched messaging", "sched pipe"},
        BadInput{"-- fio --rw=read", "fio"},
        BadInput{"--set costs.context_switch_ns=-1 -- hackbench", "context_switch_ns"},
        BadInput{"--set nosuchkey=1 -- hackbench", "nosuchkey"},
        BadInput{"--set change.IDLE_SPIN.max_ns=-5 -- hackbench", "outside [0, 10000000000]"},
        BadInput{"--set change.IDLE_SPIN.bound=5 -- hackbench", "tunables: max_ns"},
        BadInput{"--set change.NOPE.x=5 -- hackbench", "unknown scheduler change 'NOPE'"},
        BadInput{"--idle-disable C9 -- hackbench", "C9"},
        BadInput{"--seed -3 -- hackbench", "seed"},
        BadInput{"--bogus-flag -- hackbench", "bogus-flag"},
        BadInput{"-- taskset -c 9 hackbench", "CPU 9"},
        BadInput{"-- taskset zz hackbench", "zz"},
        BadInput{"-- taskset -c 0", "no benchmark"}));

TEST(CliRun, UnknownSubcommandAndListsWork) {
  auto r = run_schedlab("frobnicate");
  EXPECT_EQ(r.status, 2);
  auto m = run_schedlab("machines");
  EXPECT_EQ(m.status, 0);
  EXPECT_NE(m.out.find("epyc-milan-2s"), std::string::npos);
  EXPECT_NE(m.out.find("spr-2s"), std::string::npos);
  auto f = run_schedlab("features");
  EXPECT_NE(f.out.find("SM_IDLE"), std::string::npos);
  EXPECT_NE(f.out.find("IDLE_CPUMASK"), std::string::npos);
  EXPECT_NE(f.out.find("IDLE_SPIN"), std::string::npos);
  EXPECT_EQ(f.out.find("origin:"), std::string::npos);
  // --verbose: each change's origin, counters and tunables.
  auto v = run_schedlab("features --verbose");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("origin: 3dcac251b066"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("counter sm_idle_fastpath (count), in ab:"), std::string::npos);
  EXPECT_NE(v.out.find("tunable change.IDLE_SPIN.max_ns = 1000000 ns [0, 10000000000]"),
            std::string::npos);
  auto w = run_schedlab("workloads");
  EXPECT_NE(w.out.find("hackbench"), std::string::npos);
}
