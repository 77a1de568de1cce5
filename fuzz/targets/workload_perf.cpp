// `perf [--no-pager] bench [-f FORMAT] sched pipe [-l N] [-T]` (argv from the input's words):
// bad input is a WorkloadError naming the flag.
#include "fuzz/harness.hpp"
#include "workload/workload.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  const auto argv = fuzz::words(text, "perf");
  fuzz::expect<workload::WorkloadError>([&] { workload::parse_workload(argv, 4); });
}
