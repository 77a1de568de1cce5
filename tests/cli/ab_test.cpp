// End-to-end: `schedlab ab`.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "../common/process.hpp"

using namespace schedlab::fixture;

TEST(CliAb, ResultsDoNotDependOnJobs) {
  std::string cmd = "ab --machine epyc-milan-2s --base '' --test SM_IDLE --runs 4 ";
  std::string bench = " -- perf bench sched pipe -l 1000";
  auto a = run_schedlab(cmd + "--jobs 1" + bench);
  auto b = run_schedlab(cmd + "--jobs 3" + bench);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.err.find("ab: 8/8 runs done"), std::string::npos) << a.err;  // progress on stderr
  EXPECT_NE(a.out.find("usecs_per_op (us/op), Lower is better"), std::string::npos);
  EXPECT_NE(a.out.find("ops_per_sec (ops/s), Higher is better"), std::string::npos);
  EXPECT_NE(a.out.find("verdict: "), std::string::npos);
  EXPECT_NE(a.out.find("KS p"), std::string::npos);
  EXPECT_NE(a.out.find("context_switches"), std::string::npos);
  // The key counters of the change that is on (SM_IDLE), not those of the others.
  EXPECT_NE(a.out.find("\nsm_idle_fastpath (count) "), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("idle_spin_ns"), std::string::npos);
}

TEST(CliAb, IdleSpinImprovesPipeSignificantly) {
  auto r = run_schedlab(
      "ab --machine epyc-milan-2s --base '' --test IDLE_SPIN --runs 8 --format csv -- perf bench sched pipe -l 2000");
  ASSERT_EQ(r.status, 0) << r.err;
  // The CSV has one row per metric and set; the test side of usecs_per_op has a positive pct imp.
  EXPECT_NE(r.out.find("usecs_per_op"), std::string::npos);
  EXPECT_NE(r.out.find("IDLE_SPIN"), std::string::npos);
}

TEST(CliAb, PerSideTunables) {
  // The same feature on both sides, the spin bound on one: a zero bound spins for nothing.
  auto r = run_schedlab(
      "ab --machine tiny-4 --base IDLE_SPIN --test IDLE_SPIN --test-set change.IDLE_SPIN.max_ns=0 "
      "--runs 3 -- perf bench sched pipe -l 500");
  ASSERT_EQ(r.status, 0) << r.err;
  auto row = r.out.find("\nidle_spin_ns (ns) ");
  ASSERT_NE(row, std::string::npos) << r.out;
  std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" 0 "), std::string::npos) << line;  // the test side's mean
  // A change's own counter is neutral: its normalized change (0), no pct imp.
  EXPECT_NE(line.find(" neutral          0         - "), std::string::npos) << line;
  auto bad = run_schedlab("ab --test IDLE_SPIN --test-set change.IDLE_SPIN.max_ns=-1 --runs 2 -- hackbench");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--test-set: --set change.IDLE_SPIN.max_ns=-1: -1 is outside"), std::string::npos)
      << bad.err;
}

TEST(CliAb, BadInput) {
  for (const char* args : {"ab --test BOGUS -- hackbench", "ab --base NO_X --test SM_IDLE -- hackbench",
                           "ab --test SM_IDLE --runs 1 -- hackbench",
                           "ab --test SM_IDLE --format xml -- hackbench",
                           "ab --test SM_IDLE -- hackbench -g x", "ab --test SM_IDLE --machine nope -- hackbench"}) {
    auto r = run_schedlab(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}

// --counters-cpu: the key counters of the target CPU only. ipistorm's target (CPU 2 of tiny-4:
// cpulist=1 offset=1) runs every call function and sends nothing; the sender's row would differ.
TEST(CliAb, CountersOfOneCpu) {
  std::string cmd = "ab --machine tiny-4 --base '' --test SM_IDLE --runs 2 --format csv ";
  std::string bench = " -- ipistorm numipi=200 single=1 offset=1 cpulist=1 wait=1";
  auto all = run_schedlab(cmd + bench);
  auto target = run_schedlab(cmd + "--counters-cpu 2" + bench);
  auto sender = run_schedlab(cmd + "--counters-cpu 1" + bench);
  ASSERT_EQ(all.status, 0) << all.err;
  ASSERT_EQ(target.status, 0) << target.err;
  ASSERT_EQ(sender.status, 0) << sender.err;
  EXPECT_NE(all.out, target.out);
  // The sender runs no call function from its idle loop; the target runs them all.
  auto row = [](const std::string& csv, const std::string& name) {
    auto p = csv.find("\n" + name + ",");
    return p == std::string::npos ? std::string() : csv.substr(p + 1, csv.find('\n', p + 1) - p - 1);
  };
  EXPECT_FALSE(row(target.out, "csd_run_idle").empty()) << target.out;
  EXPECT_NE(row(target.out, "csd_run_idle"), row(sender.out, "csd_run_idle"));
  auto bad = run_schedlab(cmd + "--counters-cpu 9" + bench);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("schedlab: error: --counters-cpu"), std::string::npos) << bad.err;
}

// A side whose runs are all equal (tiny-4 has no noise) is said on stderr, naming the side and
// the reason; with noise there is no such line. --help names the default machine. (perf bench
// sched pipe: two tasks that no balance moves. hackbench on tiny-4 differs between seeds since
// cache-hot tasks wait for failed periodic balances, whose times the warm start draws.)
TEST(CliAb, WarnsWhenASidesSamplesAreAllEqual) {
  auto r = run_schedlab("ab --base '' --test SM_IDLE --runs 3 --jobs 1 -- perf bench sched pipe -l 1000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("schedlab: warning: ab: the base side's 3 runs gave identical usecs_per_op, ops_per_sec, "
                       "total_time: machine tiny-4 has no noise"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the test side's 3 runs gave identical usecs_per_op"), std::string::npos) << r.err;
  auto noisy = run_schedlab("ab --test SM_IDLE --runs 3 --jobs 1 --set noise.jitter_cov=0.02 -- perf bench sched pipe -l 1000");
  ASSERT_EQ(noisy.status, 0) << noisy.err;
  EXPECT_EQ(noisy.err.find("gave identical"), std::string::npos) << noisy.err;
  auto help = run_schedlab("ab --help");
  EXPECT_NE(help.out.find("the default, tiny-4, is a 4-CPU test machine without cost noise (the seed still "
                          "staggers the warm start's balance times"),
            std::string::npos);
}

// Each key counter has its direction from src/kernel/counters.hpp: a cost is "lower", an IPI
// avoided "higher", a count of which path ran "neutral" (no pct imp, and "neutral" in JSON).
TEST(CliAb, KeyCountersHaveADirectionOrAreNeutral) {
  auto r = run_schedlab("ab --base '' --test SM_IDLE --runs 2 --jobs 1 -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  auto row = [&](const std::string& name) {
    auto at = r.out.find("\n" + name + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(row("csd_run_idle").find(" neutral "), std::string::npos) << row("csd_run_idle");
  EXPECT_NE(row("migrations").find(" neutral "), std::string::npos) << row("migrations");
  EXPECT_NE(row("context_switches").find("  lower "), std::string::npos) << row("context_switches");
  EXPECT_NE(row("wake_polling_no_ipi").find(" higher "), std::string::npos) << row("wake_polling_no_ipi");
  EXPECT_EQ(r.out.find("(lower is better)"), std::string::npos);
  auto j = run_schedlab("ab --base '' --test SM_IDLE --runs 2 --jobs 1 --format json -- hackbench -g 1 -l 10");
  ASSERT_EQ(j.status, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  std::map<std::string, std::string> dir;
  for (const auto& m : doc.at("metrics")) dir[m.at("name")] = m.at("direction");
  EXPECT_EQ(dir["csd_run_idle"], "neutral");
  EXPECT_EQ(dir["ipi_sent.reschedule"], "lower_is_better");
  EXPECT_EQ(dir["wake_polling_no_ipi"], "higher_is_better");
}

// A posted table or file says everything needed to rerun it: the header has the seeds and every
// --set; JSON and CSV carry machine, command, features and sets per side, seeds and raw samples.
TEST(CliAb, ResultsRecordTheirSetup) {
  const std::string args =
      "ab --base '' --test SM_IDLE --runs 2 --jobs 1 --first-seed 7 --set noise.jitter_cov=0.02 "
      "--base-set change.IDLE_SPIN.max_ns=0 --test-set costs.ipi_send_ns=150";
  auto t = run_schedlab(args + " -- hackbench -g 1 -l 10");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(t.out.rfind("# schedlab ab: machine=tiny-4 runs=2 first_seed=7 base=\"\" test=\"SM_IDLE\" "
                        "set=\"noise.jitter_cov=0.02\" base_set=\"change.IDLE_SPIN.max_ns=0\" "
                        "test_set=\"costs.ipi_send_ns=150\" -- hackbench -g 1 -l 10\n", 0), 0u)
      << t.out.substr(0, 300);
  auto j = run_schedlab(args + " --format json -- hackbench -g 1 -l 10");
  ASSERT_EQ(j.status, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  const auto& setup = doc.at("setup");
  EXPECT_EQ(setup.at("machine"), "tiny-4");
  EXPECT_EQ(setup.at("command"), nlohmann::json({"hackbench", "-g", "1", "-l", "10"}));
  EXPECT_EQ(setup.at("seeds"), nlohmann::json({7, 8}));
  EXPECT_EQ(setup.at("set"), nlohmann::json({"noise.jitter_cov=0.02"}));
  EXPECT_EQ(setup.at("base").at("set"), nlohmann::json({"change.IDLE_SPIN.max_ns=0"}));
  EXPECT_EQ(setup.at("test").at("features"), "SM_IDLE");
  EXPECT_EQ(setup.at("test").at("set"), nlohmann::json({"costs.ipi_send_ns=150"}));
  const auto& time = doc.at("metrics").at(0);
  EXPECT_EQ(time.at("sets").at(0).at("samples").size(), 2u);
  std::vector<double> samples = time.at("sets").at(0).at("samples");
  EXPECT_EQ(*std::min_element(samples.begin(), samples.end()), time.at("sets").at(0).at("min").get<double>());
  EXPECT_EQ(*std::max_element(samples.begin(), samples.end()), time.at("sets").at(0).at("max").get<double>());
  auto c = run_schedlab(args + " --format csv -- hackbench -g 1 -l 10");
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string header = c.out.substr(0, c.out.find('\n'));
  EXPECT_NE(header.find(",machine,features,set,first_seed,runs,command,samples"), std::string::npos) << header;
  const std::string row1 = c.out.substr(header.size() + 1, c.out.find('\n', header.size() + 1) - header.size() - 1);
  EXPECT_NE(row1.find(",\"tiny-4\",\"\",\"noise.jitter_cov=0.02 change.IDLE_SPIN.max_ns=0\",7,2,\"hackbench -g 1 -l 10\","),
            std::string::npos) << row1;
}
