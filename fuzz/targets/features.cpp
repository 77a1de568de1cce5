// The feature list (--features, --base, --test): bad input is a SpecError; an accepted list
// describes itself as a list that parses to the same features.
#include "experiment/run.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<experiment::SpecError>([&] {
    kernel::Features f = experiment::parse_features(std::string(text));
    kernel::Features g = experiment::parse_features(f.describe());
    for (const auto& fi : kernel::feature_table()) FUZZ_CHECK(f.on(fi.id) == g.on(fi.id));
  });
}
