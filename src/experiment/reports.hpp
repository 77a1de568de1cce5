// Result plumbing for the report formats that need more than report::Metric: mmtests tables of an
// A/B series (the benchmark named as mmtests names its reports) and the data of the HTML report.
#pragma once
#include <string>
#include <vector>

#include "experiment/ab.hpp"
#include "experiment/reproduce.hpp"
#include "report/html.hpp"
#include "report/mmtests.hpp"
#include "report/schedstat.hpp"

namespace schedlab::experiment {

// How mmtests names the report of a benchmark command line and its operations:
// hackbench -> "hackbench-process-pipes" (or -thread-, -sockets) with the group count as the
// operation and 4 decimals (mmtests' hackbench shellpack); tbench -> "tbench4"; schbench,
// netperf TCP_RR ("netperf-tcp-rr"), perf bench sched pipe ("perfpipe"), ipistorm, rt-app: the
// tool's name, each metric an operation, 2 decimals.
struct MmtestsNaming {
  std::string title;
  std::string op;  // non-empty: the one operation name of a single-metric benchmark (hackbench)
  int precision = 2;
};
MmtestsNaming mmtests_naming(const std::vector<std::string>& command);

// `ab --format mmtests`: the benchmark's metrics as one mmtests table (one operation per metric,
// each with its own direction; hackbench's one metric under its group count). The key counters
// are not in it (mmtests reports monitors separately): `--format text` has them.
std::string ab_mmtests(const AbSpec& spec, const AbResult& r, const report::mmtests::Options& opts);
// The same for metrics as ab_metrics() gives them (the first nbench the benchmark's, the sides
// labelled as the caller wants: `schedlab sweep merge` uses its feature-set labels).
std::string mmtests_table(const std::vector<report::Metric>& metrics, size_t nbench,
                          const std::vector<std::string>& command, const report::mmtests::Options& opts);

// The latency distributions a run's benchmark reports, as cumulative curves: schbench's wakeup
// and request latency percentiles as it prints them (min, p50, p90, p99, p99.9, max; one curve
// per run), rt-app's per-activation wakeup latency (wu_lat) from the logs it writes (the threads
// with a timer, pooled). Empty for the other benchmarks.
struct LatencyDistribution {
  std::string title;   // "schbench wakeup latency", "rt-app wakeup latency (wu_lat)"
  std::string unit;    // "us"
  bool percentiles = false;  // points are the tool's printed percentiles, not every sample
  std::vector<std::pair<double, double>> points;  // (value, cumulative fraction)
};
std::vector<LatencyDistribution> latency_distributions(const RunResult& r);

// The run's /proc/schedstat at its start (boot: every counter 0, jiffies 0) and at its end, from
// the counters the model keeps where the kernel increments them (needs RunSpec::schedstat).
// Fields the model does not count (active balance, sbe/sbf, ttwu_move_balance, lb_nobusyq, the
// load/util/misfit imbalances) are 0.
report::schedstat::Snapshot schedstat_snapshot(const RunResult& r, bool at_end);
// `run --schedstat FILE`: both snapshots, start then end.
std::string schedstat_file(const RunResult& r);
// One side of an A/B as a recording: its runs' recordings added (the runs back to back).
report::schedstat::Snapshot schedstat_recording(const std::vector<RunResult>& runs);

// The HTML reports (report::html::Document): `run --html`, `ab --html` (the text tables are
// passed in as printed) and `reproduce --html`. Byte-deterministic.
std::string run_html(const RunSpec& spec, const RunResult& r);
std::string ab_html(const AbSpec& spec, const AbResult& r, const std::string& text_report);
std::string reproduce_html(const std::vector<CaseOutcome>& outcomes, const std::string& text_report);

}  // namespace schedlab::experiment
