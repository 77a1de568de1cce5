// A sweep file (sweep.toml, `schedlab sweep`): bad input is a SweepError "FILE:LINE: what".
// Expanded and checked against the shipped profiles and workloads, at most 400 cells (each
// combination loads a profile: the cap keeps one input within the fuzzer's time limit).
#include "experiment/sweep.hpp"
#include "fuzz/harness.hpp"
#include "machine/machine.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  static const std::string dir = machine::profile_dir();
  fuzz::expect<experiment::SweepError>([&] {
    experiment::Sweep s = experiment::parse_sweep(std::string(text), dir + "/fuzz.toml", dir, 400);
    // What merge reads back is what run wrote.
    const std::string m = experiment::manifest_text(s);
    FUZZ_CHECK(experiment::manifest_text(experiment::parse_manifest(m, "sweep.json")) == m);
  });
}
