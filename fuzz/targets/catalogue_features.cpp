// published/features.toml (the changes the catalogue's cases need that the model lacks): bad
// input is a CatalogueError "FILE:LINE: what".
#include "experiment/catalogue.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<experiment::CatalogueError>(
      [&] { experiment::parse_planned_features(std::string(text), "features.toml"); });
}
