// Internal helpers shared by the stats sources; not part of the public API.
#pragma once
#include <span>
#include <vector>

namespace schedlab::stats::detail {
// Throws std::invalid_argument when xs is empty or holds a NaN/infinite value.
void check_sample(std::span<const double> xs, const char* what);
std::vector<double> sorted_copy(std::span<const double> xs);
}  // namespace schedlab::stats::detail
