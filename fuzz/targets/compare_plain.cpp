// `schedlab compare a.txt ...`: one number per line, # comments.
#include "fuzz/compare_common.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) { fuzz::compare_sample("a.txt", text, report::sample_format_for("a.txt"), ""); }
