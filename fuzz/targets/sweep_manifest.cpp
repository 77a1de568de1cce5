// A sweep result directory's manifest (DIR/sweep.json, read by `schedlab sweep merge`): bad
// input is a SweepError naming the file; what parses writes back to the same manifest.
#include "experiment/sweep.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<experiment::SweepError>([&] {
    experiment::Sweep s = experiment::parse_manifest(std::string(text), "sweep.json");
    const std::string m = experiment::manifest_text(s);
    FUZZ_CHECK(experiment::manifest_text(experiment::parse_manifest(m, "sweep.json")) == m);
  });
}
