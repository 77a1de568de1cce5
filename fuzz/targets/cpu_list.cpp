// A kernel CPU list as sysfs prints it (host probe): parse -> format -> parse is the identity.
#include <algorithm>

#include "fuzz/harness.hpp"
#include "host/probe.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  auto cpus = host::parse_cpu_list(text);
  if (!cpus) return;
  FUZZ_CHECK(std::is_sorted(cpus->begin(), cpus->end()));
  auto again = host::parse_cpu_list(host::format_cpu_list(*cpus));
  FUZZ_CHECK(again && *again == *cpus);
}
