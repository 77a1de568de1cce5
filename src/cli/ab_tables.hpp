// The tables `schedlab ab` prints, shared with `schedlab sweep merge` (one per comparison).
#pragma once
#include <string>
#include <vector>

#include "report/report.hpp"

namespace schedlab::cli {

// For metrics as experiment::ab_metrics() gives them (the first `nbench` the benchmark's own):
// the benchmark's metrics as full tables in format f, then the key counters as one compact
// table (a row per counter; of the CPUs `counters_cpu` when it is not empty). Text and
// markdown; a new table format (mmtests) plugs in here for both commands.
std::string ab_tables(const std::vector<report::Metric>& metrics, size_t nbench, report::Format f,
                      const std::string& counters_cpu);

}  // namespace schedlab::cli
