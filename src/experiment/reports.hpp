// Result plumbing for the report formats that need more than report::Metric: mmtests tables of an
// A/B series (the benchmark named as mmtests names its reports) and the data of the HTML report.
#pragma once
#include <string>
#include <vector>

#include "experiment/ab.hpp"
#include "report/mmtests.hpp"

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

}  // namespace schedlab::experiment
