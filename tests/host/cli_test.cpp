// `schedlab host ...` end to end through the binary (skipped if it has not been built), and the
// probe -> profile TOML -> loader round trip for every fixture.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "host/bench.hpp"
#include "host/probe.hpp"
#include "machine/machine.hpp"

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

const std::string kFixtures = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/";

struct Result {
  int rc;
  std::string out;  // stdout + stderr
};

Result run(const std::string& args) {
  std::string cmd = std::string(SCHEDLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, ""};
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class HostCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(SCHEDLAB_BINARY)) GTEST_SKIP() << "schedlab binary not built: " << SCHEDLAB_BINARY;
    dir_ = fs::temp_directory_path() / ("schedlab-hostcli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

}  // namespace

// Every fixture's probe gives a profile that the loader accepts and that reads back the same.
TEST(ProbeProfile, FixturesRoundTripThroughToml) {
  for (const char* fx : {"sysfs-this", "sysfs-2s-smt", "sysfs-arm64"}) {
    auto r = host::probe_sysfs(kFixtures + fx);
    host::apply_base(r.machine, machine::load_profile("tiny-4"), r.hz_from_config);
    ASSERT_NO_THROW(machine::validate(r.machine)) << fx;
    std::string header;
    for (auto& l : host::probe_header(r, "tiny-4")) header += l + "\n";
    std::string text = machine::to_toml(r.machine, header);
    machine::Machine back;
    ASSERT_NO_THROW(back = machine::parse_profile(text, fx)) << fx << "\n" << text;
    EXPECT_EQ(back.topo, r.machine.topo) << fx;
    EXPECT_EQ(back.idle_states, r.machine.idle_states) << fx;
    EXPECT_EQ(back.costs, r.machine.costs) << fx;
    EXPECT_EQ(back.arch, r.machine.arch) << fx;
    EXPECT_EQ(back.cpuidle_driver, r.machine.cpuidle_driver) << fx;
  }
}

TEST_F(HostCli, ProbeFixtureWritesLoadableProfile) {
  auto r = run("host probe --sysfs-root " + kFixtures + "sysfs-2s-smt --output " + path("p.toml"));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto m = machine::load_profile(path("p.toml"));
  EXPECT_EQ(m.topo.sockets, 2);
  EXPECT_EQ(m.topo.cores_per_socket, 4);
  EXPECT_EQ(m.topo.threads_per_core, 2);
  EXPECT_EQ(m.topo.cores_per_llc, 2);
  EXPECT_EQ(m.idle_states.size(), 4u);
  EXPECT_EQ(m.costs, machine::load_profile("tiny-4").costs);  // base defaults, not measured
  std::string text = slurp(path("p.toml"));
  EXPECT_NE(text.find("NOT measured"), std::string::npos);
  EXPECT_NE(text.find("warning: CPUs 13 report no level-3 cache"), std::string::npos);
  EXPECT_NE(r.out.find("schedlab: warning: CPUs 13"), std::string::npos) << r.out;
}

TEST_F(HostCli, ProbeBadInput) {
  auto r = run("host probe --sysfs-root /nonexistent-root --output " + path("p.toml"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("schedlab: error:"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("p.toml")));
  r = run("host probe --base no-such-profile --output " + path("p.toml"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_FALSE(fs::exists(path("p.toml")));
}

// What sysfs says can still make an invalid profile (here a C-state exit latency of 2000 s): the
// error says so, and names the file it did not write instead of a line in it.
TEST_F(HostCli, ProbeInvalidProfileNamesWhatWasNotWritten) {
  fs::copy(kFixtures + "sysfs-2s-smt", path("root"), fs::copy_options::recursive);
  std::ofstream(path("root/sys/devices/system/cpu/cpu0/cpuidle/state3/latency")) << "2000000000\n";
  auto r = run("host probe --sysfs-root " + path("root") + " --output " + path("p.toml"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("schedlab: error: (profile from sysfs):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("idle_state.C6.exit_latency_ns = 2000000000000 is absurd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; nothing written to " + path("p.toml")), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("p.toml")));
}

TEST_F(HostCli, ProbeToStdout) {
  auto r = run("host probe --sysfs-root " + kFixtures + "sysfs-arm64 --output -");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("cpuidle_driver = \"psci_idle\""), std::string::npos) << r.out;
}

TEST_F(HostCli, CalibrateQuick) {
  auto r = run("host calibrate --quick --allow-busy --output " + path("c.toml"));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto m = machine::load_profile(path("c.toml"));
  EXPECT_GT(m.costs.context_switch_ns, 0);
  EXPECT_GT(m.costs.futex_wake_ns, 0);
  std::string text = slurp(path("c.toml"));
  EXPECT_NE(text.find("Costs MEASURED"), std::string::npos);
  EXPECT_NE(text.find("costs.futex_wake_ns = "), std::string::npos);
}

TEST_F(HostCli, BenchHackbenchTwoRuns) {
  if (host::find_in_path("hackbench").empty()) GTEST_SKIP() << "hackbench (rt-tests) not installed";
  auto r = run("host bench --runs 2 --output " + path("s.txt") + " -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("run 1/2: Time:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run 2/2: Time:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  (nvcsw="), std::string::npos) << r.out;
  std::istringstream in(slurp(path("s.txt")));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "# metric: time_s");
  int numbers = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) continue;
    double v = std::stod(line);
    EXPECT_GT(v, 0.0);
    ++numbers;
  }
  EXPECT_EQ(numbers, 2);
}

TEST_F(HostCli, BenchErrorsLeaveNoFile) {
  auto r = run("host bench --runs 2 --output " + path("s.txt") + " -- schbench -m 2");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("schedlab: error: unknown benchmark"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("s.txt")));
  if (!host::find_in_path("hackbench").empty()) {
    r = run("host bench --runs 2 --output " + path("s.txt") + " -- hackbench --bogus");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("schedlab: error:"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("s.txt")));
  }
  r = run("host bench --runs 0 -- hackbench");
  EXPECT_EQ(r.rc, 2) << r.out;
  r = run("host bench --output " + path("s.txt") + " -- perf bench -f simple sched pipe");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_FALSE(fs::exists(path("s.txt")));
}

TEST_F(HostCli, CheckReprintsTheSelfCheck) {
  const std::string dir = kFixtures + "selfcheck/";
  auto r = run("host check " + dir + "calq-1607.toml --samples " + dir + "calq-1607.samples.json --json " +
               (dir_ / "c.json").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("# self-check of " + dir + "calq-1607.toml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npipe_rtt_llc "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" within 10 %\n"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "c.json"));
  // Without --samples, from the profile's header: the same table, but for the wake-up and
  // membarrier rows of this guest, which compare medians: of the header's events here, of the
  // batch values from the samples file (it kept no events).
  auto h = run("host check " + dir + "calq-1607.toml");
  EXPECT_EQ(h.rc, 0);
  auto lines = [](const std::string& out, bool median_rows) {
    std::istringstream in(out);
    std::string kept;
    for (std::string l; std::getline(in, l);) {
      const bool m = l.rfind("wake_", 0) == 0 || l.rfind("membarrier_", 0) == 0 || l.rfind("# 1", 0) == 0;
      if (m == median_rows) kept += l + "\n";
    }
    return kept;
  };
  EXPECT_EQ(lines(h.out, false), lines(r.out, false));
  EXPECT_NE(lines(h.out, true).find("(measured: median of 4500 events)"), std::string::npos) << h.out;
  EXPECT_NE(lines(r.out, true).find("(measured: median of the batch values)"), std::string::npos) << r.out;
  // Bad input: one error line, exit 2, no JSON written.
  std::ofstream(dir_ / "bad.json") << "{}";
  auto b = run("host check " + dir + "calq-1607.toml --samples " + (dir_ / "bad.json").string() + " --json " +
               (dir_ / "d.json").string());
  EXPECT_EQ(b.rc, 2);
  EXPECT_EQ(b.out, "schedlab: error: " + (dir_ / "bad.json").string() +
                       ": no 'measurements' array (is it a calibrate --samples file?)\n");
  EXPECT_FALSE(fs::exists(dir_ / "d.json"));
}
