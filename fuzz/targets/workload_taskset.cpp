// The taskset command line after `--` (argv from the input's words): bad input is a
// WorkloadError naming the flag, on machines of 4 and 256 CPUs.
#include "fuzz/harness.hpp"
#include "workload/workload.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  const auto argv = fuzz::words(text, "taskset");
  for (int cpus : {4, 256}) fuzz::expect<workload::WorkloadError>([&] { workload::parse_workload(argv, cpus); });
}
