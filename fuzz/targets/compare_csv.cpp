// `schedlab compare [--column NAME] a.csv ...`: the input's first line is the --column value
// (empty: none), the rest the CSV file.
#include "fuzz/compare_common.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  auto [column, file] = fuzz::first_line(text);
  fuzz::compare_sample("a.csv", file, report::sample_format_for("a.CSV"), column);
}
