// End-to-end: `--machine host` (no profile -> one clear error for `run`; `validate` probes and
// calibrates on first use; after `schedlab host probe` it runs) and `schedlab validate --quick`
// against the real hackbench and perf of this machine.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../common/process.hpp"
#include "experiment/validate.hpp"
#include "host/bench.hpp"

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

class ValidateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schedlab-validate-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cfg");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the binary with XDG_CONFIG_HOME pointing at this test's own empty config dir.
  Result run(const std::string& args) const {
    std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    std::string cmd = "cd '" + dir_.string() + "' && XDG_CONFIG_HOME='" + cfg() + "' " + SCHEDLAB_BINARY + " " +
                      args + " >'" + out + "' 2>'" + err + "' </dev/null";
    int st = std::system(cmd.c_str());
    Result r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = fixture::slurp(out);
    r.err = fixture::slurp(err);
    return r;
  }
  std::string cfg() const { return (dir_ / "cfg").string(); }
  std::string profile() const { return (dir_ / "cfg" / "schedlab" / "host.toml").string(); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

}  // namespace

TEST(ValidateCases, FixedSetWithStatedLoopCounts) {
  auto full = experiment::validation_cases(false);
  ASSERT_EQ(full.size(), 10u);
  std::set<std::string> names, commands;
  int hackbench = 0, perf = 0;
  for (const auto& c : full) {
    names.insert(c.name);
    commands.insert(host::join_command(c.argv));
    auto spec = host::identify_benchmark(c.argv);  // every case is a command the real runner accepts
    if (spec.tool == host::BenchTool::Hackbench) {
      ++hackbench;
      EXPECT_EQ(c.sim_metric, "time");
      EXPECT_NE(host::join_command(c.argv).find("-l 200"), std::string::npos);
    } else {
      ++perf;
      EXPECT_EQ(c.sim_metric, "usecs_per_op");
      EXPECT_NE(host::join_command(c.argv).find("-l 20000"), std::string::npos);
    }
  }
  EXPECT_EQ(hackbench, 8);
  EXPECT_EQ(perf, 2);
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(commands.size(), 10u);
  EXPECT_TRUE(commands.count("hackbench -p -T -g 2 -l 200"));
  EXPECT_TRUE(commands.count("hackbench -g 1 -l 200"));
  EXPECT_TRUE(commands.count("perf bench sched pipe -l 20000 -T"));
  for (const auto& c : experiment::validation_cases(true)) {
    auto cmd = host::join_command(c.argv);
    EXPECT_TRUE(cmd.find("-l 10") != std::string::npos || cmd.find("-l 1000") != std::string::npos) << cmd;
  }
}

TEST_F(ValidateCli, MachineHostWithoutProfileIsOneClearError) {
  auto r = run("run --machine host -- hackbench -l 10");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "schedlab: error: --machine host: no profile at " + profile() +
                       "; run 'schedlab host probe' (and 'schedlab host calibrate') first\n");
}

TEST_F(ValidateCli, FirstUseProbesAndCalibrates) {
  if (host::find_in_path("perf").empty()) GTEST_SKIP() << "perf (linux-perf) not installed";
  ASSERT_FALSE(fs::exists(profile()));
  auto r = run("validate --runs 2 --quick --allow-busy --only 'perf pipe thread' -o v.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("schedlab validate: no host profile at " + profile() +
                       ": probing and calibrating this machine first (`schedlab host probe && schedlab host "
                       "calibrate --quick`)"),
            std::string::npos)
      << r.err;
  ASSERT_TRUE(fs::exists(profile()));
  EXPECT_NE(fixture::slurp(profile()).find("written by `schedlab host calibrate`"), std::string::npos);
  EXPECT_NE(r.out.find("profile:  calibrated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profile:  probed and calibrated by this run"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(fixture::slurp(path("v.json")));
  EXPECT_NE(j["first_use"].get<std::string>().find("probed and calibrated by this run"), std::string::npos);
  // The second run finds the profile and does not calibrate again.
  r = run("validate --runs 1 --quick --only 'perf pipe thread' -o v.txt");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find("probing and calibrating"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("by this run"), std::string::npos) << r.out;
}

TEST_F(ValidateCli, FirstUseChecksTheToolsBeforeCalibrating) {
  // Without hackbench and perf in PATH, validate stops at once: no calibration, no profile.
  std::string cmd = "cd '" + dir_.string() + "' && PATH=/nonexistent XDG_CONFIG_HOME='" + cfg() + "' " +
                    SCHEDLAB_BINARY + " validate --runs 1 --quick >/dev/null 2>'" + path("err") + "'";
  int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  std::string err = fixture::slurp(path("err"));
  EXPECT_NE(err.find("is not installed (not found in PATH)"), std::string::npos) << err;
  EXPECT_EQ(err.find("probing and calibrating"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(profile()));
}

TEST_F(ValidateCli, UnknownMachineMentionsHost) {
  auto r = run("run --machine no-such-machine -- hackbench -l 10");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown machine 'no-such-machine'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'host'"), std::string::npos) << r.err;
}

TEST_F(ValidateCli, MachineHostRunsAfterProbe) {
  auto p = run("host probe");
  ASSERT_EQ(p.rc, 0) << p.err;
  ASSERT_TRUE(fs::exists(profile()));
  // The running kernel's settings are in the profile ([kernel], docs/host.md).
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  const std::string text = fixture::slurp(profile());
  EXPECT_NE(text.find(std::string("\n[kernel]\nrelease = { value = \"") + u.release + "\""), std::string::npos) << text;
  auto r = run("run --machine host --seed 3 -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Time: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("machine=host"), std::string::npos) << r.out;
  // Same model as giving the path.
  auto q = run("run --machine '" + profile() + "' --seed 3 -- hackbench -g 1 -l 10");
  ASSERT_EQ(q.rc, 0) << q.err;
  EXPECT_EQ(q.out, r.out);
}

TEST_F(ValidateCli, BadArguments) {
  ASSERT_EQ(run("host probe").rc, 0);
  auto r = run("validate --runs 0 --quick");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--runs must be at least 1"), std::string::npos) << r.err;
  r = run("validate --runs 1 --quick --max-busy 150");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--max-busy"), std::string::npos) << r.err;
  r = run("validate --runs 1 --quick --only no-such-case");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no validation case matches 'no-such-case'"), std::string::npos) << r.err;
  r = run("validate --runs 1 --quick --machine " + path("missing.toml"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("missing.toml: file not found"), std::string::npos) << r.err;
  r = run("validate --runs 1 --quick --set costs.no_such_cost=1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--set costs.no_such_cost=1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("validation.txt")));
}

TEST_F(ValidateCli, QuickEndToEnd) {
  if (host::find_in_path("hackbench").empty() || host::find_in_path("perf").empty())
    GTEST_SKIP() << "hackbench (rt-tests) or perf (linux-perf) not installed";
  ASSERT_EQ(run("host probe").rc, 0);
  auto r = run("validate --runs 2 --quick --max-busy 100 -o v.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  // stdout: the text table (10 case rows) and where the report went.
  EXPECT_NE(r.out.find("profile:  probed only"), std::string::npos) << r.out;
  // (the columns are as wide as their widest value: the spacing before "CoV x" varies)
  EXPECT_NE(r.out.find("real AMean  real CoV %  sim AMean  sim CoV %  error %  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CoV x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("agree:    "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outside:  other processes kept "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nhackbench -p -T -g 2 -l 10 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nperf bench sched pipe -l 1000 -T "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote v.json"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[10/10] perf bench sched pipe -l 1000 -T ..."), std::string::npos) << r.err;

  auto j = nlohmann::json::parse(fixture::slurp(path("v.json")));
  EXPECT_EQ(j["runs"], 2);
  EXPECT_EQ(j["profile_path"], profile());
  ASSERT_EQ(j["cases"].size(), 10u);
  for (const auto& c : j["cases"]) {
    ASSERT_EQ(c["real"]["samples"].size(), 2u) << c.dump();
    ASSERT_EQ(c["sim"]["samples"].size(), 2u) << c.dump();
    for (const auto& v : c["real"]["samples"]) EXPECT_GT(v.get<double>(), 0) << c.dump();
    for (const auto& v : c["sim"]["samples"]) EXPECT_GT(v.get<double>(), 0) << c.dump();
    double real = c["real"]["mean"], sim = c["sim"]["mean"];
    EXPECT_NEAR(c["error_pct"].get<double>(), (sim - real) / real * 100, 1e-9);
    EXPECT_EQ(c["real"]["other_busy_pct"].size(), 2u) << c.dump();
    if (c["cov_ratio"].is_number()) {
      EXPECT_NEAR(c["cov_ratio"].get<double>(), c["sim"]["cov"].get<double>() / c["real"]["cov"].get<double>(), 1e-9);
    }
    double p = c["ks"]["pvalue"];
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1.0);
  }

  // The text form via --output, restricted to one case with --only.
  r = run("validate --runs 1 --quick --only 'perf pipe thread' -o v.txt");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string txt = fixture::slurp(path("v.txt"));
  EXPECT_NE(txt.find("schedlab validate: the model vs the real kernel on this machine\n"), std::string::npos);
  EXPECT_NE(txt.find("\nperf bench sched pipe -l 1000 -T "), std::string::npos) << txt;
  EXPECT_EQ(txt.find("hackbench -"), std::string::npos) << txt;
}
