// schedstat's counters as the model keeps them (counted where the kernel counts them): each
// agrees with the model's own counters of the same events, and the --schedstat snapshots carry
// them in version 17's fields.
#include <gtest/gtest.h>

#include "experiment/reports.hpp"
#include "experiment/run.hpp"

using namespace schedlab;

namespace {
experiment::RunResult run(const std::string& machine, std::vector<std::string> cmd) {
  experiment::RunSpec s;
  s.machine = machine;
  s.command = std::move(cmd);
  s.schedstat = true;
  return experiment::run_one(s);
}
}  // namespace

TEST(Schedstat, BalanceAndWakeupCountersAgreeWithTheModelsOwn) {
  auto r = run("epyc-milan-2s", {"hackbench", "-g", "4", "-l", "200"});
  const auto& t = r.total;
  int64_t lb_newidle = 0, lb_periodic = 0, gained = 0, wake_remote = 0, affine = 0;
  for (int l = 0; l < kernel::kNumSdLevels; ++l) {
    for (int type = 0; type < kernel::kNumIdleTypes; ++type) {
      const int i = l * kernel::kNumIdleTypes + type;
      (type == 2 ? lb_newidle : lb_periodic) += t.lb_count[i];
      gained += t.lb_gained[i];
      // Every sched_balance_rq() ends balanced, failed or having pulled; the model's balanced
      // case is "no busiest group" (it has no groups, so never "no busiest queue").
      EXPECT_GE(t.lb_count[i], t.lb_balanced[i] + t.lb_failed[i]) << i;
      EXPECT_EQ(t.lb_balanced[i], t.lb_nobusyg[i]) << i;
      EXPECT_EQ(t.lb_nobusyq[i], 0) << i;
      EXPECT_LE(t.lb_hot_gained[i], t.lb_gained[i]) << i;
    }
    wake_remote += t.ttwu_wake_remote[l];
    affine += t.ttwu_move_affine[l];
  }
  EXPECT_EQ(lb_newidle, t.newidle_balance_lb_count);
  EXPECT_EQ(lb_periodic, t.load_balance_calls);
  EXPECT_EQ(gained, t.newidle_balance_pulled + t.load_balance_pulled);
  EXPECT_GT(lb_newidle, 0);
  // Every remote wakeup lies in one of the waker's domains (the top one spans every CPU).
  EXPECT_EQ(wake_remote, t.ttwu_remote);
  EXPECT_GT(affine, 0);
  EXPECT_LE(affine, t.ttwu_local + t.ttwu_remote);
  // sched_info: tasks switched in, the time they ran and waited.
  EXPECT_GT(t.pcount, 0);
  EXPECT_LE(t.pcount, t.context_switches);
  EXPECT_GT(t.run_delay, 0);
  for (const auto& c : r.per_cpu) EXPECT_LE(c.rq_cpu_time, r.simulated_ns);
}

TEST(Schedstat, SnapshotsCarryTheCountersInVersion17Fields) {
  auto r = run("tiny-4", {"hackbench", "-g", "2", "-l", "50"});
  namespace ss = report::schedstat;
  const auto start = experiment::schedstat_snapshot(r, false), end = experiment::schedstat_snapshot(r, true);
  ASSERT_EQ(end.cpus.size(), 4u);
  EXPECT_EQ(start.timestamp, 0u);
  EXPECT_EQ(end.timestamp, static_cast<uint64_t>(r.simulated_ns / r.tick_period_ns));
  for (size_t c = 0; c < 4; ++c) {
    const auto& k = r.per_cpu[c];
    const auto& e = end.cpus[c];
    EXPECT_EQ(start.cpus[c].v, (std::array<uint64_t, ss::kCpuFields>{}));
    EXPECT_EQ(e.v[ss::kSchedCount], static_cast<uint64_t>(k.schedule_calls + k.schedule_idle_calls));
    EXPECT_EQ(e.v[ss::kTtwuCount], static_cast<uint64_t>(k.ttwu_local + k.ttwu_remote + k.ttwu_runnable));
    EXPECT_EQ(e.v[ss::kPcount], static_cast<uint64_t>(k.pcount));
    // tiny-4: SMT pairs {0,2} {1,3} (as its profile numbers them) in one MC domain.
    ASSERT_EQ(e.domains.size(), 2u);
    EXPECT_EQ(e.domains[0].name, "SMT");
    EXPECT_EQ(e.domains[1].name, "MC");
    EXPECT_EQ(e.domains[1].cpumask, "f");
    EXPECT_EQ(e.domains[1].v[ss::kTtwuWakeRemote], static_cast<uint64_t>(k.ttwu_wake_remote[kernel::kNumSdLevels > 1 ? 1 : 0]));
    EXPECT_EQ(e.domains[0].v[2 * ss::kLbFields + ss::kLbCount], static_cast<uint64_t>(k.lb_count[0 * 3 + 2]));
  }
  // The file is the two snapshots, and reads back as one recording equal to the end snapshot.
  const std::string file = experiment::schedstat_file(r);
  const auto rec = ss::recording_of_file("f", file);
  EXPECT_EQ(ss::to_text(rec), ss::to_text(end));
}
