// Seeded percentile bootstrap for the difference of means (the model's own PRNG, sim::Rng).
#include <cmath>
#include <stdexcept>
#include <vector>

#include "stats/detail.hpp"
#include "sim/rng.hpp"
#include "stats/stats.hpp"

namespace schedlab::stats {

namespace {
double resampled_mean(std::span<const double> xs, sim::Rng& rng) {
  double sum = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) sum += xs[rng.below(xs.size())];
  return sum / static_cast<double>(xs.size());
}
}  // namespace

BootstrapCi bootstrap_mean_diff_ci(std::span<const double> base, std::span<const double> other,
                                   double level, unsigned resamples, std::uint64_t seed) {
  detail::check_sample(base, "bootstrap_mean_diff_ci");
  detail::check_sample(other, "bootstrap_mean_diff_ci");
  if (!(level > 0.0 && level < 1.0))
    throw std::invalid_argument("bootstrap_mean_diff_ci: level must be in (0, 1)");
  if (resamples == 0) throw std::invalid_argument("bootstrap_mean_diff_ci: resamples must be > 0");
  BootstrapCi ci;
  ci.estimate = mean(other) - mean(base);
  ci.level = level;
  ci.resamples = resamples;
  ci.seed = seed;
  sim::Rng rng(seed);
  std::vector<double> diffs(resamples);
  for (auto& d : diffs) {
    const double mb = resampled_mean(base, rng);
    const double mo = resampled_mean(other, rng);
    d = mo - mb;
  }
  ci.low = quantile(diffs, (1.0 - level) / 2.0, QuantileMethod::Linear);
  ci.high = quantile(diffs, (1.0 + level) / 2.0, QuantileMethod::Linear);
  return ci;
}

}  // namespace schedlab::stats
