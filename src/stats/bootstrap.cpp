// Seeded percentile bootstraps for the difference and the ratio of means (the model's own PRNG, sim::Rng).
#include <cmath>
#include <optional>
#include <string>
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

void check_args(const char* fn, std::span<const double> a, std::span<const double> b, double level,
                unsigned resamples) {
  detail::check_sample(a, fn);
  detail::check_sample(b, fn);
  if (!(level > 0.0 && level < 1.0)) throw std::invalid_argument(std::string(fn) + ": level must be in (0, 1)");
  if (resamples == 0) throw std::invalid_argument(std::string(fn) + ": resamples must be > 0");
}

// The percentile interval of stat(mean of a resample of a, mean of a resample of b), drawn in
// that order from one seeded stream; a resample whose stat is empty is left out (none left: the
// interval is the estimate).
template <class Stat>
BootstrapCi percentile_ci(std::span<const double> a, std::span<const double> b, double level,
                          unsigned resamples, std::uint64_t seed, double estimate, Stat stat) {
  BootstrapCi ci;
  ci.estimate = estimate;
  ci.level = level;
  ci.resamples = resamples;
  ci.seed = seed;
  sim::Rng rng(seed);
  std::vector<double> values;
  values.reserve(resamples);
  for (unsigned i = 0; i < resamples; ++i) {
    const double ma = resampled_mean(a, rng);
    const double mb = resampled_mean(b, rng);
    if (std::optional<double> v = stat(ma, mb)) values.push_back(*v);
  }
  if (values.empty()) values.push_back(estimate);
  ci.low = quantile(values, (1.0 - level) / 2.0, QuantileMethod::Linear);
  ci.high = quantile(values, (1.0 + level) / 2.0, QuantileMethod::Linear);
  return ci;
}
}  // namespace

BootstrapCi bootstrap_mean_diff_ci(std::span<const double> base, std::span<const double> other,
                                   double level, unsigned resamples, std::uint64_t seed) {
  check_args("bootstrap_mean_diff_ci", base, other, level, resamples);
  return percentile_ci(base, other, level, resamples, seed, mean(other) - mean(base),
                       [](double mb, double mo) -> std::optional<double> { return mo - mb; });
}

BootstrapCi bootstrap_mean_ratio_ci(std::span<const double> num, std::span<const double> den,
                                    double level, unsigned resamples, std::uint64_t seed) {
  check_args("bootstrap_mean_ratio_ci", num, den, level, resamples);
  if (mean(den) == 0.0) throw std::invalid_argument("bootstrap_mean_ratio_ci: mean of the denominator is 0");
  return percentile_ci(num, den, level, resamples, seed, mean(num) / mean(den),
                       [](double mn, double md) -> std::optional<double> {
                         if (md == 0.0) return std::nullopt;
                         return mn / md;
                       });
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
