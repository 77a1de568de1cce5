// `schedlab validate`: the model against the real kernel of this machine. Runs a fixed set of real
// benchmarks (hackbench, perf bench sched pipe) N times with host::run_real_benchmark, runs the same
// command lines N times in the model on the host profile (seeds 1..N), and reports per case the
// real and simulated AMean/Std, the model's error and a KS p-value. Nothing here fits costs: the
// profile's costs come from `schedlab host calibrate` (microbenchmarks only). See docs/validation.md.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "stats/stats.hpp"

namespace schedlab::experiment {

struct ValidationCase {
  std::string name;               // short label, e.g. "hackbench pipe thread 2g"
  std::vector<std::string> argv;  // the command line, run for real and in the model
  std::string sim_metric;         // workload metric compared ("time", "usecs_per_op")
  std::string unit;               // "s", "us/op"
};

// The fixed cases: hackbench {socket, pipe} x {process, thread} x {1, 2 groups} with -l 200, and
// perf bench sched pipe -l 20000 {process, -T}. quick (tests): -l 10 and -l 1000.
std::vector<ValidationCase> validation_cases(bool quick);

struct CaseResult {
  ValidationCase c;
  std::vector<double> real, sim;  // samples, run order / seed order
  stats::Summary real_s, sim_s;   // population Std
  double error_pct = 0;           // (sim mean - real mean) / real mean * 100
  stats::KsResult ks;             // real vs sim
};

struct ValidateOptions {
  int runs = 10;                  // real runs and simulated seeds per case
  std::string machine = "host";   // `host`, a profile path or a built-in name
  bool quick = false;
  std::vector<std::string> sets;  // --set KEY=VALUE, applied to the model only (sensitivity)
  std::string only;               // run only the cases whose name contains this (empty: all)
  // Called before each case (done == nullptr) and after it; may be empty.
  std::function<void(int index, int total, const ValidationCase& c, const CaseResult* done)> progress;
};

struct ValidationReport {
  std::string machine;          // as given
  std::string profile_path;     // the file loaded ("" for a built-in name)
  std::string profile_kind;     // "calibrated", "probed (costs are base defaults, not measured)", ...
  std::string kernel;           // uname -r of this machine
  std::string hostname;
  std::string started_utc;
  std::string loadavg_before, loadavg_after;  // /proc/loadavg, first three fields
  int nr_online_cpus = 0;
  int model_cpus = 0;
  int runs = 0;
  bool quick = false;
  std::vector<std::string> sets;
  double elapsed_s = 0;
  std::vector<CaseResult> cases;
  std::vector<std::string> warnings;  // busy machine, uncalibrated profile (also in the report)
};

// Runs everything. Throws host::HostError (tool missing, unparseable output), machine::ProfileError
// (no host profile, bad --set), SpecError (runs < 1, no case matches `only`).
ValidationReport validate(const ValidateOptions& opt);

// The report as text (aligned table with a header), markdown, JSON (with every sample) or CSV
// (one row per case). Deterministic for a given report.
std::string render_validation(const ValidationReport& r, report::Format f);

}  // namespace schedlab::experiment
