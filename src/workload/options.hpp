// Command-line helpers shared by the workload parsers: a small getopt, CPU lists, key=value
// module parameters.
#pragma once
#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

// Short flags with attached or separate values (-g4, -g 4), long flags with '=' or a separate
// value (--groups=4, --groups 4). short_name 0 = long form only.
struct OptSpec {
  char short_name;
  const char* long_name;
  bool takes_value;
};

struct ParsedOpt {
  const OptSpec* spec;
  std::string flag;   // as written
  std::string value;
};

// Throws WorkloadError naming the tool and the flag. Positional arguments go to *positional
// (an error if positional is null). "--" ends the options; what follows is positional.
std::vector<ParsedOpt> getopt(const std::string& tool, const std::vector<std::string>& args,
                              const std::vector<OptSpec>& specs,
                              std::vector<std::string>* positional);

// A kernel-style CPU list ("0", "0-3", "0,4-7"); every CPU must be < nr_cpus. Throws
// WorkloadError naming `flag`. Returns ascending, de-duplicated CPU ids.
std::vector<int> parse_cpulist(const std::string& flag, const std::string& value, int nr_cpus);

// A non-negative decimal number (e.g. seconds); throws WorkloadError naming the flag.
double parse_number(const std::string& flag, const std::string& value, double min, double max);

}  // namespace schedlab::workload
