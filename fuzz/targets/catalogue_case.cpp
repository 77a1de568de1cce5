// A published-results case file (published/*.toml, `schedlab reproduce`): bad input is a
// CatalogueError "FILE:LINE: what". Checked against the shipped profiles, workloads and the
// planned features of published/features.toml.
#include <fstream>
#include <sstream>

#include "experiment/catalogue.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  static const std::string dir = experiment::default_catalogue_dir();
  static const std::vector<experiment::PlannedFeature> planned = [] {
    std::ifstream in(dir + "/features.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    return experiment::parse_planned_features(ss.str(), dir + "/features.toml");
  }();
  fuzz::expect<experiment::CatalogueError>(
      [&] { experiment::parse_case(std::string(text), dir + "/fuzz.toml", dir, planned); });
}
