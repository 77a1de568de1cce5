// `schedlab host calibrate`: microbenchmarks with real threads pinned to CPUs (never hackbench or
// perf bench: those are for validation), and their mapping onto machine::Costs fields.
// docs/host.md describes every measurement, its mapping and its assumptions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::host {

// One microbenchmark result. Values are nanoseconds per operation as named by `key`.
struct Measurement {
  std::string key;         // e.g. "futex_wake_nowaiter", "cacheline_llc", "wake_latency_llc"
  std::string what;        // one line: what was timed
  double value_ns = 0;     // median of the batch values
  double cov = 0;          // coefficient of variation of the batch values (the spread)
  double min_ns = 0;       // smallest and largest batch value
  double max_ns = 0;
  int batches = 0;
  bool converged = false;  // cov < target_cov before the batch or time limit
  std::vector<int> cpus;   // real CPUs used (one pair for distance-class results; the value
                           // is then the median over pairs listed in `pairs`)
  int pairs = 1;
  std::string idle_state;  // wake_latency_*: the wakee CPU's most used cpuidle state, if known
};

struct CalibrateOptions {
  bool quick = false;        // short runs (tests): fewer, smaller batches, one pair per class
  double target_cov = 0.05;  // stop a measurement when the CoV of its batch values is below this
  int min_batches = 0;       // 0: 3 (quick) / 5
  int max_batches = 0;       // 0: 6 (quick) / 25
  double time_scale = 1.0;   // multiplies every per-measurement time budget
  // The machine as probed (for distance classes and idle states) and model CPU -> real CPU
  // (ProbeResult::model_to_real; empty = identity). CPUs outside this process's affinity mask
  // are not used.
  machine::Machine machine;
  std::vector<int> model_to_real;
  // Called after each measurement (progress output); may be empty.
  std::function<void(const Measurement&)> progress;
};

struct CalibrationResult {
  std::vector<Measurement> measurements;
  std::vector<std::string> warnings;
  double elapsed_s = 0;
  const Measurement* find(const std::string& key) const;
};

// Runs every microbenchmark this machine allows. Throws HostError only if no CPU can be pinned.
CalibrationResult calibrate(const CalibrateOptions& opt);

// One cost field set from measurements.
struct CostUpdate {
  std::string key;       // TOML key, e.g. "costs.context_switch_ns"
  int64_t value = 0;     // ns
  std::string formula;   // how it was derived, e.g. "futex_pingpong_same_cpu/2 - ..."
  double cov = 0;        // spread of the main measurement it came from
  bool floored = false;  // derivation fell below its floor or was scaled (formula says which)
};

// Maps measurements onto m.costs (m should already hold the base costs: derived fields subtract
// base costs of the parts the microbenchmark also exercised). Returns what it set, in order.
std::vector<CostUpdate> apply_calibration(machine::Machine& m, const CalibrationResult& r);

// Header comment lines for a calibrated profile: each measured value with its spread, which
// costs were measured, and which kept their base defaults. Lines are without "# ".
std::vector<std::string> calibration_header(const CalibrationResult& r, const std::vector<CostUpdate>& updates);

}  // namespace schedlab::host
