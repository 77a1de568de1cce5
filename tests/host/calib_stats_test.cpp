// The calibration statistics and round scheduling (host/calib_stats.hpp), on recorded samples and
// hand-made ones; nothing here times anything.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "host/calib_stats.hpp"

using namespace schedlab::host;

namespace {

nlohmann::json recorded() {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/calib/busy-kvm-2vcpu.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::vector<double> recorded_values(const std::string& key, const char* field) {
  static const nlohmann::json j = recorded();
  for (auto& m : j["measurements"])
    if (m["key"] == key) return m[field].get<std::vector<double>>();
  ADD_FAILURE() << key << " not in the fixture";
  return {};
}

double classic_cov(const std::vector<double>& v) {
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / v.size()) / m;
}

}  // namespace

TEST(CalibStats, QuantilesAndRobustSpread) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(quantile(v, 2.0), 5);  // clamped
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
  // MAD of {1..5} around 3 is 1: 1.4826 / 3.
  EXPECT_NEAR(robust_cov(v), 1.4826 / 3, 1e-12);
  EXPECT_EQ(robust_cov({7}), 0);
}

TEST(CalibStats, EstimateIsALowQuantileThatIgnoresPreemptedBatches) {
  // Recorded batch values of a pipe round trip between the two vCPUs on the busy VM.
  auto v = recorded_values("pipe_rtt_llc", "batch_values_ns");
  ASSERT_EQ(v.size(), 30u);
  Estimate e = estimate(v);
  EXPECT_EQ(e.n, 30);
  EXPECT_DOUBLE_EQ(e.value, quantile(v, kEstimateQuantile));
  EXPECT_LE(e.value, e.median);
  EXPECT_LE(e.min, e.value);
  EXPECT_GE(e.max, e.median);
  // Three batches preempted for 20x their time: the classic CoV explodes, the estimate and the
  // robust spread hardly move.
  auto bad = v;
  for (int i = 0; i < 3; ++i) bad.push_back(20 * e.max);
  Estimate b = estimate(bad);
  EXPECT_GT(classic_cov(bad), 5 * classic_cov(v));
  EXPECT_LT(std::fabs(b.value - e.value) / e.value, 0.05);
  EXPECT_LT(b.spread, 2 * e.spread + 0.02);
}

TEST(CalibStats, LognormalSigmaRecoversTheShape) {
  // Deterministic lognormal sample: exp(mu + sigma z) at 999 evenly spaced normal quantiles,
  // obtained by inverting a lognormal CDF table through its own quantiles.
  const double mu = std::log(20000), sigma = 0.35;
  std::vector<double> s;
  for (int i = 1; i < 1000; ++i) {
    double p = i / 1000.0;
    // normal quantile by bisection on erfc
    double lo = -8, hi = 8;
    for (int k = 0; k < 80; ++k) {
      double mid = (lo + hi) / 2;
      (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
    }
    s.push_back(std::exp(mu + sigma * lo));
  }
  EXPECT_NEAR(lognormal_sigma(s), sigma, 0.005);
  Distribution d = distribution(s);
  EXPECT_NEAR(d.p50, 20000, 50);
  EXPECT_LT(d.p10, d.p50);
  EXPECT_LT(d.p90, d.p99);
  EXPECT_NEAR(d.sigma, sigma, 0.005);
  EXPECT_EQ(lognormal_sigma({0, 0, 5}), 0);  // p10 not positive
}

TEST(CalibStats, RecordedWakeLatencyHasAHeavyTail) {
  // Wake-ups on the busy VM: most take ~16 us, a few percent wait for the host or for a CPU.
  // The lognormal fitted to p10..p90 is narrow; the recorded p99 lies far beyond the p99 that
  // fit predicts (median x exp(2.326 sigma)): the tail is a second mode, not lognormal.
  auto ev = recorded_values("wake_latency_llc", "events_ns");
  ASSERT_GT(ev.size(), 1000u);
  Distribution d = distribution(ev);
  EXPECT_LT(d.sigma, 0.2);
  EXPECT_GT(d.p99, 1.5 * d.p50 * std::exp(2.326 * d.sigma));
  auto waker = recorded_values("wake_syscall_llc", "events_ns");
  ASSERT_EQ(waker.size(), ev.size());  // paired per event
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_GT(ev[i], 0) << i;
}

TEST(CalibStats, ProcStatParsingAndOtherBusyShare) {
  CpuSnapshot a, b;
  ASSERT_TRUE(parse_proc_stat_cpu("cpu  100 10 50 800 20 5 5 10 0 0", &a));
  EXPECT_EQ(a.total_ticks, 1000);
  EXPECT_EQ(a.busy_ticks, 1000 - 800 - 20);
  EXPECT_EQ(a.steal_ticks, 10);
  ASSERT_TRUE(parse_proc_stat_cpu("cpu  160 10 70 900 20 5 5 30 0 0", &b));
  a.wall_s = 10.0, b.wall_s = 11.0;  // 1 s on 2 CPUs at USER_HZ 100 = 200 ticks
  a.self_cpu_s = 1.0, b.self_cpu_s = 1.3;
  // busy grew by 100 ticks = 1.0 s of CPU; 0.3 s was ours: 0.7 s / 2 CPU-s = 35%.
  EXPECT_NEAR(other_busy_pct(a, b, 2, 100), 35.0, 1e-9);
  EXPECT_NEAR(steal_pct(a, b), 100.0 * 20 / 200, 1e-9);
  b.self_cpu_s = 5;  // our own time can exceed the tick-sampled total: clamped at 0
  EXPECT_EQ(other_busy_pct(a, b, 2, 100), 0);
  EXPECT_FALSE(parse_proc_stat_cpu("intr 1 2 3", &a));
  EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2", &a));
}

TEST(CalibStats, LoadVerdicts) {
  EXPECT_EQ(judge_load({1.0, 0.1, 2}), LoadVerdict::Quiet);
  EXPECT_EQ(judge_load({6.0, 0.1, 2}), LoadVerdict::Busy);
  EXPECT_EQ(judge_load({1.0, 1.5, 2}), LoadVerdict::Quiet);  // load average under the CPU count
  EXPECT_EQ(judge_load({30.0, 0.1, 2}), LoadVerdict::TooBusy);
  // A load average above the CPU count with a quiet busy share: the average lags (the dev VM
  // showed 6.07 a minute after others' builds, with 5.5% busy): a warning, not a refusal.
  EXPECT_EQ(judge_load({1.0, 6.07, 2}), LoadVerdict::Busy);
  // The recorded busy VM would have been refused.
  auto lb = recorded()["load_before"];
  LoadReading r{lb["other_busy_pct"].get<double>(), lb["loadavg1"].get<double>(), lb["cpus"].get<int>()};
  EXPECT_EQ(judge_load(r), LoadVerdict::TooBusy);
  EXPECT_NE(describe_load(r, 1.0).find("of 2 CPU(s) busy over 1.0 s"), std::string::npos);
}

namespace {
// A fake clock that advances by `step` seconds per batch run.
struct FakeRun {
  double t = 0;
  std::vector<std::string> order;
  RoundBench bench(const std::string& name, std::vector<double> values, double step = 0.01) {
    auto i = std::make_shared<size_t>(0);
    return {name, 1, [this, name, values, step, i]() -> std::optional<std::vector<double>> {
              order.push_back(name);
              t += step;
              return std::vector<double>{values[(*i)++ % values.size()]};
            }};
  }
};
}  // namespace

TEST(CalibRounds, InterleavesAndStopsWhenStable) {
  FakeRun f;
  RoundPlan plan;
  plan.min_rounds = 4;
  plan.max_rounds = 50;
  plan.budget_s = 100;
  auto r = run_rounds({f.bench("a", {10}), f.bench("b", {20}), f.bench("c", {30})}, plan, [&] { return f.t; },
                      [] { return 0.0; });
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.rounds, 4);  // constant values: stable as soon as min_rounds are in
  ASSERT_EQ(f.order.size(), 12u);
  for (size_t i = 0; i < f.order.size(); ++i) EXPECT_EQ(f.order[i], std::string(1, "abc"[i % 3])) << i;
}

TEST(CalibRounds, NoisyBenchKeepsGoingUntilMaxRounds) {
  FakeRun f;
  RoundPlan plan;
  plan.min_rounds = 3;
  plan.max_rounds = 7;
  plan.budget_s = 100;
  auto r = run_rounds({f.bench("steady", {10}), f.bench("noisy", {10, 20, 5, 40})}, plan, [&] { return f.t; },
                      [] { return 0.0; });
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.rounds, 7);
  EXPECT_EQ(r.values[0][0].size(), 7u);
  EXPECT_EQ(r.values[1][0].size(), 7u);
}

TEST(CalibRounds, TimeBudgetBoundsTheTotal) {
  FakeRun f;
  RoundPlan plan;
  plan.min_rounds = 3;
  plan.max_rounds = 1000;
  plan.budget_s = 1.0;
  auto r = run_rounds({f.bench("a", {1, 2, 3, 4}, 0.1), f.bench("b", {1, 3, 9}, 0.1)}, plan, [&] { return f.t; },
                      [] { return 0.0; });
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LE(f.t, 1.0 + 0.1 + 1e-9);  // at most one batch past the budget
  EXPECT_GE(r.rounds, 5);
}

TEST(CalibRounds, LoadedRoundsAreLeftOutUnlessTooFewQuietRemain) {
  FakeRun f;
  RoundPlan plan;
  plan.min_rounds = 6;
  plan.max_rounds = 6;
  plan.budget_s = 100;
  plan.round_busy_pct = 10;
  // Rounds 2 and 4 (0-based) are loaded; their values are 10x.
  std::vector<double> load = {0, 0, 50, 0, 80, 0};
  std::vector<double> vals = {100, 101, 1000, 99, 1000, 100};
  size_t k = 0;
  auto r = run_rounds({f.bench("x", vals)}, plan, [&] { return f.t; },
                      [&, first = true]() mutable {
                        if (first) return first = false, 0.0;
                        return load[k++];
                      });
  ASSERT_EQ(r.round_busy_pct, load);
  EXPECT_EQ(r.loaded[0], (std::vector<bool>{false, false, true, false, true, false}));
  bool used_loaded = true;
  auto u = r.usable(0, 0, plan, &used_loaded);
  EXPECT_FALSE(used_loaded);
  EXPECT_EQ(u, (std::vector<double>{100, 101, 99, 100}));
  EXPECT_NEAR(estimate(u).value, 99.75, 1e-9);
  // With 5 of 6 rounds loaded, fewer than min_quiet_rounds (3) are quiet: all are used, flagged.
  plan.min_quiet_rounds = 3;
  RoundsResult r2 = r;
  r2.loaded[0] = {true, true, true, false, true, true};
  auto all = r2.usable(0, 0, plan, &used_loaded);
  EXPECT_TRUE(used_loaded);
  EXPECT_EQ(all.size(), 6u);
}

TEST(CalibRounds, FailingBenchIsDropped) {
  FakeRun f;
  RoundPlan plan;
  plan.min_rounds = 2;
  plan.max_rounds = 3;
  RoundBench broken{"broken", 1, []() -> std::optional<std::vector<double>> { return std::nullopt; }};
  auto r = run_rounds({broken, f.bench("ok", {5})}, plan, [&] { return f.t; }, [] { return 0.0; });
  EXPECT_TRUE(r.failed[0]);
  EXPECT_TRUE(r.values[0][0].empty());
  EXPECT_EQ(r.values[1][0].size(), 2u);
  EXPECT_TRUE(r.converged);
}
