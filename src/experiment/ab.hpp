// A/B series: N runs per side, run i of both sides with seed i (common random numbers), spread
// over J threads; results are collected by index, so they do not depend on J.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "experiment/run.hpp"
#include "report/report.hpp"

namespace schedlab::experiment {

struct AbSpec {
  RunSpec base;        // features = the --base set; machine, command, sets shared
  std::string base_features;
  std::string test_features;
  // Per-side settings on top of base.sets / base.idle_disable, for comparisons that differ in a
  // machine setting rather than (only) in features (e.g. a guest with and without a polling state).
  std::vector<std::string> base_sets, test_sets;
  std::vector<std::string> base_idle_disable, test_idle_disable;
  // The CPUs whose counters the key-counter rows sum (--counters-cpu); empty: all CPUs.
  std::vector<int> counter_cpus;
  int runs = 10;
  int jobs = 1;
  uint64_t first_seed = 1;
};

struct AbResult {
  std::vector<RunResult> base, test;  // index i = seed first_seed + i
};

// progress(done, total) is called from worker threads under a lock.
AbResult run_ab(const AbSpec& spec, const std::function<void(int, int)>& progress = nullptr);

// One report::Metric per benchmark metric and per key counter, sets labelled by the feature
// strings ("base"/"test" when they are empty or equal).
std::vector<report::Metric> ab_metrics(const AbSpec& spec, const AbResult& r);

// The counters an A/B table shows, with how each is derived from a run: the core's key counters
// (kAb in SCHEDLAB_CPU_COUNTERS), the key counters of the changes on in either side, and the
// share of CPU time in the kernel; of spec.counter_cpus only when it is set.
struct CounterMetric {
  std::string name;
  std::string unit;
  std::function<double(const RunResult&)> get;
  // From the counter's kLower / kHigher flag in SCHEDLAB_CPU_COUNTERS; a scheduler change's
  // own counters are neutral.
  stats::Direction dir = stats::Direction::Neutral;
};
std::vector<CounterMetric> ab_counters(const AbSpec& spec);

}  // namespace schedlab::experiment
