// `schedlab compare - b.txt`: standard input, read as one number per line.
#include "fuzz/compare_common.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) { fuzz::compare_sample("<stdin>", text, report::sample_format_for("-"), ""); }
