// An rt-app use case (`rt-app FILE.json`): bad input is a WorkloadError "FILE:LINE: KEY: what".
#include "fuzz/harness.hpp"
#include "workload/rtapp.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<workload::WorkloadError>([&] { workload::parse_rtapp(std::string(text), "fuzz.json", 16); });
}
