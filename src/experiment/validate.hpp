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

namespace schedlab::machine {
struct Machine;
}

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
  stats::Summary real_s, sim_s;   // population Std; .cov = Std / |AMean|
  double error_pct = 0;           // (sim mean - real mean) / real mean * 100
  double cov_ratio = 0;           // sim CoV / real CoV (NaN if the real CoV is 0)
  stats::KsResult ks;             // real vs sim
  std::vector<double> real_other_busy_pct;  // per real run: other processes' busy share
  int reruns = 0;                           // real runs repeated because others were busy
  int loaded_runs = 0;                      // real runs still above the limit after the retries
  // Context switches of the benchmark's processes per run: real (wait4 rusage of the tool,
  // host::BenchRun) and model (workload_nvcsw / workload_nivcsw), voluntary and involuntary.
  std::vector<double> real_vcsw, real_ivcsw, sim_vcsw, sim_ivcsw;
  // CPU migrations of the benchmark's tasks per run: real (perf's cpu-migrations software event,
  // host::BenchRun; NaN where perf events could not be opened) and model (workload_migrations);
  // and perf's context-switches count of the real run (a check on the rusage columns).
  std::vector<double> real_migrations, real_perf_switches, sim_migrations;
  std::string counters_unavailable;  // why real_migrations is NaN ("" when perf counted)
  // IPIs per run: real from /proc/interrupts over the run, the whole machine (rescheduling and
  // function-call interrupts; NaN where unreadable), model ipi_sent (reschedule,
  // call_function_single).
  std::vector<double> real_resched_ipis, real_call_ipis, sim_resched_ipis, sim_call_ipis;
  // Idle per run, all CPUs: cpuidle entries and time (ms); real from sysfs stateN/usage and
  // stateN/time over the run (NaN without cpuidle), model idle_usage and idle_ns.
  std::vector<double> real_idle_entries, real_idle_ms, sim_idle_entries, sim_idle_ms;
  // Wake-ups per run, all CPUs, and those onto the waker's own CPU: real from /proc/schedstat
  // (ttwu_count, ttwu_local; NaN where it is missing or off), model ttwu_local + ttwu_remote.
  std::vector<double> real_wakeups, real_local_wakeups, sim_wakeups, sim_local_wakeups;
};
// Fills real_s, sim_s, error_pct, cov_ratio and ks from real and sim.
void summarize_case(CaseResult& c);

// What the acceptance of issue 14 counts: cases within `error_limit_pct` in AMean, and within
// `cov_factor` x in CoV (sim CoV / real CoV in [1/f, f]).
struct Agreement {
  int cases = 0;
  int within_error = 0;
  int within_cov = 0;
  int within_both = 0;
};
Agreement agreement(const std::vector<CaseResult>& cases, double error_limit_pct = 15, double cov_factor = 2);

struct ValidateOptions {
  int runs = 10;                  // real runs and simulated seeds per case
  std::string machine = "host";   // `host`, a profile path or a built-in name
  bool quick = false;
  std::vector<std::string> sets;  // --set KEY=VALUE, applied to the model only (sensitivity)
  std::string only;               // run only the cases whose name contains this (empty: all)
  // `--machine host` without a host profile: probe and calibrate this machine first and write the
  // profile (first use). allow_busy is passed to calibrate; quick makes it a quick calibration.
  bool allow_busy = false;
  // A real run during which other processes kept more than max_busy_pct of the CPUs busy is run
  // again, at most max_reruns times (then kept and counted as loaded). 100: never.
  double max_busy_pct = 10;
  int max_reruns = 2;
  std::function<void(const std::string& message)> on_first_use;  // told before calibrating
  // Called before each case (done == nullptr) and after it; may be empty.
  std::function<void(int index, int total, const ValidationCase& c, const CaseResult* done)> progress;
};

struct ValidationReport {
  std::string machine;          // as given
  std::string profile_path;     // the file loaded ("" for a built-in name)
  std::string profile_kind;     // "calibrated", "probed (costs are base defaults, not measured)", ...
  std::string kernel;           // uname -r of this machine
  std::string model_kernel;     // what the model runs of the kernel's settings: features, base slice, and where from
  std::string hostname;
  std::string started_utc;
  std::string loadavg_before, loadavg_after;  // /proc/loadavg, first three fields
  int nr_online_cpus = 0;
  int model_cpus = 0;
  int runs = 0;
  double max_busy_pct = 10;
  bool quick = false;
  std::vector<std::string> sets;
  double elapsed_s = 0;
  std::vector<CaseResult> cases;
  std::vector<std::string> warnings;  // busy machine, uncalibrated profile (also in the report)
  std::string first_use;              // non-empty: the profile was probed and calibrated by this run
};

// Runs everything. Throws host::HostError (tool missing, unparseable output), machine::ProfileError
// (no host profile, bad --set), SpecError (runs < 1, no case matches `only`).
ValidationReport validate(const ValidateOptions& opt);
// The report's header before any run: this machine, the profile and the kernel settings the model
// runs, and the warnings about them (a busy machine, costs not measured here, a [kernel] probed on
// another release or with scheduler settings mainline Linux does not have).
ValidationReport report_header(const ValidateOptions& opt, const machine::Machine& m, const std::string& first_use);

// The report as text (aligned table with a header), markdown, JSON (with every sample) or CSV
// (one row per case). Deterministic for a given report.
std::string render_validation(const ValidationReport& r, report::Format f);

}  // namespace schedlab::experiment
