// Bad input found by the issue-9 sweep: each gets one error line that names the problem, exit 2.
// The plain message checks are golden files now (tests/golden/cli/*.tesh); these need more than
// the output of one command (a JSON file, two runs compared, a long run).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <sstream>

#include "../common/process.hpp"

using namespace schedlab::fixture;

namespace {

// Exit 2, nothing on stdout, one line on stderr containing `want`.
void expect_error(const std::string& args, const std::string& want) {
  auto r = run_schedlab(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.out, "") << args;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("schedlab: error: ", 0), 0u) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << args << "\nwant: " << want << "\ngot:  " << r.err;
}

std::string tmp(const std::string& name) { return "/tmp/schedlab_msg_" + std::to_string(::getpid()) + "_" + name; }

}  // namespace

// The `ab` command line is checked against the machine it runs on: the ipistorm line of the
// SM_IDLE posting names CPU 8, which a 1-CPU check rejected.
TEST(CliMessages, AbChecksTheCommandLineAgainstItsMachine) {
  auto r = run_schedlab("ab --machine epyc-milan-2s --base '' --test SM_IDLE --runs 4 -- ipistorm numipi=2000 single=1 offset=8 cpulist=8 wait=1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("-- ipistorm numipi=2000 single=1 offset=8 cpulist=8 wait=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict"), std::string::npos) << r.out;
  // 4 samples a side (the column widths follow the values' fixed decimals).
  auto at = r.out.find("\nSamples ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream samples(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
  std::string word, a, b, rest;
  samples >> word >> a >> b >> rest;
  EXPECT_EQ(a, "4");
  EXPECT_EQ(b, "4");
  EXPECT_EQ(rest, "");
  expect_error("ab --machine tiny-4 --test SM_IDLE --runs 2 -- ipistorm cpulist=8", "CPU 8 is beyond the machine (4 CPUs)");
}

// A repeatable --set used to take `--` as its terminator and leave the benchmark's flags to
// schedlab ("The following arguments were not expected: -l -g").
TEST(CliMessages, SetDoesNotSwallowTheBenchmarkFlags) {
  auto r = run_schedlab("run --machine tiny-4 --set costs.context_switch_ns=100 -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("with 1 groups"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pass 10 messages"), std::string::npos) << r.out;
  auto two = run_schedlab("run --machine tiny-4 --set costs.context_switch_ns=100 --set tunables.hz=250 -- perf bench sched pipe -l 500 -T");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("500 pipe operations between two threads"), std::string::npos) << two.out;
  // The value really reaches the model: a 100x dearer switch makes the pipe slower.
  auto slow = run_schedlab("run --machine tiny-4 --set costs.context_switch_ns=500000 -- perf bench sched pipe -l 500 -T");
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_NE(slow.out, two.out);
  auto ab = run_schedlab("ab --machine tiny-4 --set costs.context_switch_ns=100 --test SM_IDLE --runs 2 -- hackbench -g 1 -l 10");
  EXPECT_EQ(ab.status, 0) << ab.err;
  EXPECT_NE(ab.out.find("-- hackbench -g 1 -l 10"), std::string::npos) << ab.out;
  // ab's per-side --base-set / --test-set are repeatable too.
  auto sides = run_schedlab("ab --machine tiny-4 --test SM_IDLE --runs 2 --base-set costs.context_switch_ns=100 "
                            "--test-set costs.context_switch_ns=200 --test-set tunables.hz=100 -- hackbench -g 1 -l 10");
  EXPECT_EQ(sides.status, 0) << sides.err;
  EXPECT_NE(sides.out.find("-- hackbench -g 1 -l 10"), std::string::npos) << sides.out;
  // Benchmark words that look like schedlab options are the benchmark's.
  auto j = run_schedlab("run --machine tiny-4 --set noise.jitter_cov=0 -- hackbench --json x");
  EXPECT_EQ(j.status, 2);
  EXPECT_NE(j.err.find("hackbench: unknown option '--json'"), std::string::npos) << j.err;
}

// A run that cannot finish within its simulated-time limit says so, by type (not as an
// "internal error"), naming the command and the --set that made it slow.
TEST(CliMessages, DidNotFinishIsAClearError) {
  // (HZ=100 and one CPU keep the hour of simulated ticks cheap.)
  auto r = run_schedlab("run --machine tiny-4 --set tunables.hz=100 --set costs.pipe_write_ns=100000000 --set "
                        "costs.pipe_read_ns=100000000 -- taskset -c 0 hackbench -p -g 1 -l 100000");
  // A run that takes more than 3 s of wall time (a slow or sanitized build) also prints its
  // progress lines ("run: ...") on stderr; the error compared below is the rest.
  for (size_t at; (at = r.err.find("run: ")) != std::string::npos;) r.err.erase(at, r.err.find('\n', at) + 1 - at);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("schedlab: error: 'taskset -c 0 hackbench -p -g 1 -l 100000' did not finish within 3600 s "
                       "of simulated time"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--set costs.pipe_write_ns=100000000"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ask for less work (fewer loops, groups or seconds) or smaller costs"), std::string::npos) << r.err;
  // In an ab series the error is that of the first failed run in run order, whatever --jobs
  // (the base side's run 1 here: the same run as above, with the same events simulated).
  const std::string ab = "ab --machine tiny-4 --test SM_IDLE --runs 2 --set tunables.hz=100 --set costs.pipe_write_ns=100000000 "
                         "--set costs.pipe_read_ns=100000000 --jobs ";
  const std::string slow = " -- taskset -c 0 hackbench -p -g 1 -l 100000";
  auto one = run_schedlab(ab + "1" + slow);
  auto three = run_schedlab(ab + "3" + slow);
  EXPECT_EQ(one.status, 2) << one.err;
  EXPECT_EQ(one.err, r.err);
  EXPECT_EQ(three.err, one.err);
  // Costs are bounded where a single operation stops being a kernel operation.
  expect_error("run --set costs.context_switch_ns=10000000000 -- hackbench", "is absurd (maximum 100000000 ns)");
  // The line: both costs are refused by their range (the first named), before any run.
  expect_error("run --set costs.context_switch_ns=10000000000 --set costs.pipe_write_ns=10000000000 -- hackbench",
               "--set costs.context_switch_ns=10000000000: costs.context_switch_ns = 10000000000 is absurd");
}

TEST(CliMessages, NetperfWithoutTestNameIsNotRunAsTcpRr) {
  expect_error("run --machine tiny-4 -- netperf -l 1", "without -t, netperf runs TCP_STREAM, which is not modeled");
  auto r = run_schedlab("run --machine tiny-4 -- netperf -t tcp_rr -l 1");
  EXPECT_EQ(r.status, 0) << r.err;
}

// Real taskset: the innermost one sets the mask last, so the benchmark runs on CPU 1 only.
TEST(CliMessages, NestedTasksetInnerWins) {
  std::string json = tmp("taskset.json");
  auto r = run_schedlab("run --machine tiny-4 --json " + json + " -- taskset -c 0 taskset -c 1 hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(slurp(json));
  std::remove(json.c_str());
  ASSERT_EQ(j["per_cpu"].size(), 4u);
  EXPECT_GT(j["per_cpu"][1]["busy_ns"].get<int64_t>(), 0);
  for (int c : {0, 2, 3}) EXPECT_EQ(j["per_cpu"][c]["busy_ns"].get<int64_t>(), 0) << "cpu " << c;
}

// NaN and the infinities pass a plain `v < min || v > max` check: every numeric range rejects them.
TEST(CliMessages, NanAndInfinitiesAreRejected) {
  expect_error("host calibrate --budget nan", "--budget: 'nan' is not a finite number");
  expect_error("host calibrate --budget inf", "--budget: 'inf' is not a finite number");
  expect_error("validate --max-busy nan", "'nan' is not a finite number");
  expect_error("run --machine tiny-4 --set noise.jitter_cov=nan -- hackbench -g 1 -l 1", "'nan' is not a finite number");
  expect_error("run --machine tiny-4 --set noise.jitter_cov=inf -- hackbench -g 1 -l 1", "'inf' is not a finite number");
  expect_error("run --machine tiny-4 --set noise.jitter_cov=-inf -- hackbench -g 1 -l 1", "'-inf' is not a finite number");
  expect_error("run --machine tiny-4 --set change.IDLE_SPIN.max_ns=nan -- hackbench -g 1 -l 1", "'nan' is not an integer");
}

// A change's tunable given while the change is off would be silently unused: one warning line.
TEST(CliMessages, SetOfAChangeThatIsOffWarns) {
  auto r = run_schedlab("run --machine tiny-4 --set change.IDLE_SPIN.max_ns=1000 -- hackbench -g 1 -l 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("schedlab: warning: --set change.IDLE_SPIN.max_ns=1000: scheduler change IDLE_SPIN is off, "
                       "so this value is not used (turn it on with --features IDLE_SPIN)\n"),
            std::string::npos) << r.err;
  auto on = run_schedlab("run --machine tiny-4 --features IDLE_SPIN --set change.IDLE_SPIN.max_ns=1000 -- hackbench -g 1 -l 1");
  ASSERT_EQ(on.status, 0) << on.err;
  EXPECT_EQ(on.err.find("is off"), std::string::npos) << on.err;
  auto ab = run_schedlab("ab --base '' --test SM_IDLE --runs 2 --jobs 1 --test-set change.IDLE_SPIN.max_ns=0 -- hackbench -g 1 -l 1");
  ASSERT_EQ(ab.status, 0) << ab.err;
  EXPECT_NE(ab.err.find("schedlab: warning: --test-set change.IDLE_SPIN.max_ns=0: scheduler change IDLE_SPIN is off"),
            std::string::npos) << ab.err;
}

// Inputs have a size cap: /dev/zero and /dev/urandom read as a sample file or a profile end in
// one clear error naming the cap, not in minutes of reading and an internal error.
TEST(CliMessages, InputsHaveASizeCap) {
  const std::string a = tmp("cap_a.txt");
  { FILE* f = std::fopen(a.c_str(), "w"); std::fputs("1\n2\n", f); std::fclose(f); }
  expect_error("compare " + a + " /dev/zero", "/dev/zero: larger than 64 MiB, the limit for an input file");
  expect_error("compare " + a + " /dev/urandom", "/dev/urandom: larger than 64 MiB");
  expect_error("run --machine /dev/zero -- hackbench -g 1 -l 1", "/dev/zero: larger than 64 MiB, the limit for a profile");
  expect_error("run --machine " + std::string(300, 'x') + " -- hackbench -g 1 -l 1", "(300 characters): File name too long");
  std::remove(a.c_str());
}
