// `schedlab compare [--column NAME] a.json ...`: the input's first line is the --column value
// (empty: none), the rest the JSON file.
#include "fuzz/compare_common.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  auto [column, file] = fuzz::first_line(text);
  fuzz::compare_sample("a.json", file, report::sample_format_for("a.json"), column);
}
