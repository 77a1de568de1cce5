// The feature list (--features, --base, --test), core features and scheduler changes: bad input is
// a SpecError; an accepted list describes itself as a list that parses to the same features.
#include "experiment/run.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<experiment::SpecError>([&] {
    kernel::Features f = experiment::parse_features(std::string(text));
    kernel::Features g = experiment::parse_features(f.describe());
    const auto table = kernel::feature_table();
    for (size_t i = 0; i < table.size(); ++i) {
      if (table[i].change < 0) {
        auto id = static_cast<kernel::Feature>(i);
        FUZZ_CHECK(f.on(id) == g.on(id));
      } else {
        FUZZ_CHECK(f.change_on(table[i].change) == g.change_on(table[i].change));
      }
    }
  });
}
