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

BootstrapCi bootstrap_mean_ratio_ci(std::span<const double> num, std::span<const double> den,
                                    double level, unsigned resamples, std::uint64_t seed) {
  detail::check_sample(num, "bootstrap_mean_ratio_ci");
  detail::check_sample(den, "bootstrap_mean_ratio_ci");
  if (!(level > 0.0 && level < 1.0))
    throw std::invalid_argument("bootstrap_mean_ratio_ci: level must be in (0, 1)");
  if (resamples == 0) throw std::invalid_argument("bootstrap_mean_ratio_ci: resamples must be > 0");
  if (mean(den) == 0.0) throw std::invalid_argument("bootstrap_mean_ratio_ci: mean of the denominator is 0");
  BootstrapCi ci;
  ci.estimate = mean(num) / mean(den);
  ci.level = level;
  ci.resamples = resamples;
  ci.seed = seed;
  sim::Rng rng(seed);
  std::vector<double> ratios;
  ratios.reserve(resamples);
  for (unsigned i = 0; i < resamples; ++i) {
    const double mn = resampled_mean(num, rng);
    const double md = resampled_mean(den, rng);
    if (md != 0.0) ratios.push_back(mn / md);
  }
  if (ratios.empty()) ratios.push_back(ci.estimate);
  ci.low = quantile(ratios, (1.0 - level) / 2.0, QuantileMethod::Linear);
  ci.high = quantile(ratios, (1.0 + level) / 2.0, QuantileMethod::Linear);
  return ci;
}

double bimodality_coefficient(std::span<const double> xs) {
  const std::size_t n = xs.size();
  if (n < 4) return 0.0;
  detail::check_sample(xs, "bimodality_coefficient");
  const double m = mean(xs);
  double m2 = 0, m3 = 0, m4 = 0;
  for (double x : xs) {
    const double d = x - m;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const double dn = static_cast<double>(n);
  m2 /= dn;
  m3 /= dn;
  m4 /= dn;
  if (!(m2 > 0.0) || m2 < 1e-24 * m * m) return 0.0;  // no spread (up to rounding)
  const double g1 = m3 / std::pow(m2, 1.5);             // population skewness
  const double g2 = m4 / (m2 * m2) - 3.0;               // population excess kurtosis
  const double skew = g1 * std::sqrt(dn * (dn - 1)) / (dn - 2);
  const double kurt = (dn - 1) / ((dn - 2) * (dn - 3)) * ((dn + 1) * g2 + 6);
  return (skew * skew + 1) / (kurt + 3 * (dn - 1) * (dn - 1) / ((dn - 2) * (dn - 3)));
}

}  // namespace schedlab::stats
