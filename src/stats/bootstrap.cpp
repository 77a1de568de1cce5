// Seeded percentile bootstrap for the difference of means, and its small PRNG.
#include <cmath>
#include <stdexcept>
#include <vector>

#include "stats/detail.hpp"
#include "stats/stats.hpp"

namespace schedlab::stats {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double resampled_mean(std::span<const double> xs, Xoshiro256& rng) {
  double sum = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) sum += xs[rng.below(xs.size())];
  return sum / static_cast<double>(xs.size());
}
}  // namespace

Xoshiro256::Xoshiro256(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Xoshiro256::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Xoshiro256::below(std::uint64_t n) {
  // Rejection sampling on the top of the range: unbiased and portable.
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

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
  Xoshiro256 rng(seed);
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
