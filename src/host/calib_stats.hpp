// The statistics and the round scheduling behind `schedlab host calibrate`, kept apart from the
// timing code so they can be tested on recorded samples (tests/host/calib_stats_test.cpp).
// docs/host.md ("Rounds, estimate and spread", "Load check") describes the rules.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace schedlab::host {

// stats::quantile, linear (NumPy's default); p clamped to [0, 1]; NaN for an empty sample.
double quantile(const std::vector<double>& v, double p);
double median_of(const std::vector<double>& v);
// Robust coefficient of variation: 1.4826 * MAD / median (equals the CoV for normal data; one
// preempted batch does not blow it up). 0 for fewer than two values.
double robust_cov(const std::vector<double>& v);
// Lognormal shape from the p10 and p90 quantiles: sigma = (ln p90 - ln p10) / (2 x 1.2816), exact
// for lognormal data. 0 when a quantile is not positive or there are fewer than two values.
double lognormal_sigma(const std::vector<double>& v);

// What calibrate reports for one measurement from its batch values.
struct Estimate {
  double value = 0;  // the low quantile kEstimateQuantile of the batch values: the estimate
  double median = 0;
  double spread = 0;  // robust CoV of the batch values
  double min = 0, max = 0;
  int n = 0;
};
constexpr double kEstimateQuantile = 0.25;
Estimate estimate(const std::vector<double>& batch_values, double q = kEstimateQuantile);

// Per-event samples (wake-up latencies): quantiles and the lognormal fit of their distribution.
struct Distribution {
  double p10 = 0, p50 = 0, p90 = 0, p99 = 0;
  double sigma = 0;  // lognormal_sigma(p10, p90)
  int n = 0;
};
Distribution distribution(const std::vector<double>& samples);

// ---- load check ------------------------------------------------------------------------------

// One reading of the machine's CPU time: /proc/stat's `cpu` line in USER_HZ ticks, and this
// process's own CPU time (itself and waited-for children) in seconds.
struct CpuSnapshot {
  double wall_s = 0;
  long long busy_ticks = 0;  // user+nice+system+irq+softirq+steal
  long long total_ticks = 0;
  long long steal_ticks = 0;
  double self_cpu_s = 0;
};
// Parses the `cpu` line of a /proc/stat text into *s (busy, total, steal). false if malformed.
bool parse_proc_stat_cpu(const std::string& proc_stat, CpuSnapshot* s);

// Busy share of *other* processes between two snapshots, in % of all CPUs: (machine busy time -
// our own CPU time) / (wall time x CPUs), clamped to [0, 100]. `user_hz` ticks per second.
double other_busy_pct(const CpuSnapshot& a, const CpuSnapshot& b, int nr_cpus, long user_hz);
// Steal share between two snapshots, in % of all CPU time.
double steal_pct(const CpuSnapshot& a, const CpuSnapshot& b);

enum class LoadVerdict { Quiet, Busy, TooBusy };
struct LoadLimits {
  double warn_pct = 5;     // other processes' busy share above this (or a load average above the
                           // CPU count, which lags by a minute): warn
  double refuse_pct = 25;  // busy share above this: refuse
};
struct LoadReading {
  double other_busy_pct = 0;
  double loadavg1 = 0;
  int nr_cpus = 1;
};
LoadVerdict judge_load(const LoadReading& r, const LoadLimits& lim = {});
// One line describing the reading, e.g. "other processes kept 43.0% of 2 CPUs busy over 1.0 s
// (load average 3.10)".
std::string describe_load(const LoadReading& r, double over_s);

// ---- rounds ----------------------------------------------------------------------------------

// Interleaved rounds: every round runs one batch of each benchmark in turn, so a burst of
// outside load hits all of them alike and the per-round load can be told apart. Stops when every
// benchmark is stable (at least min_rounds, spread below target), at max_rounds, or when the time
// budget is spent (checked after each batch). Rounds whose other-busy share exceeded
// round_busy_pct are marked loaded; estimates leave them out when enough quiet rounds remain.
struct RoundPlan {
  int min_rounds = 5;
  int max_rounds = 25;
  double budget_s = 20;
  double target_spread = 0.05;
  double round_busy_pct = 10;
  int min_quiet_rounds = 3;  // fewer quiet rounds than this: use all rounds (and say so)
};

struct RoundBench {
  std::string name;
  int outputs = 1;  // values one batch yields
  // Runs one batch; returns its `outputs` values, or nullopt if the benchmark cannot run (it is
  // then dropped for the remaining rounds).
  std::function<std::optional<std::vector<double>>()> batch;
};

struct RoundsResult {
  // values[b][o]: batch values of output o of bench b, one per round the bench ran in;
  // loaded[b][k]: whether the k-th of those rounds was loaded.
  std::vector<std::vector<std::vector<double>>> values;
  std::vector<std::vector<bool>> loaded;
  std::vector<bool> failed;
  std::vector<double> round_busy_pct;  // per round
  int rounds = 0;
  bool budget_exhausted = false;
  bool converged = false;
  // The values of output o of bench b to estimate from: the quiet rounds', or all if too few.
  std::vector<double> usable(size_t b, size_t o, const RoundPlan& plan, bool* used_loaded = nullptr) const;
};

// `now_s()` is a monotonic clock in seconds; `round_load()` is called at the start (returns
// nothing useful) and after each round and returns the other-busy share of that round in %.
RoundsResult run_rounds(const std::vector<RoundBench>& benches, const RoundPlan& plan,
                        const std::function<double()>& now_s, const std::function<double()>& round_load);

}  // namespace schedlab::host
