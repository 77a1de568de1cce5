// Descriptive statistics, quantiles and the base-relative comparisons.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "stats/detail.hpp"
#include "stats/stats.hpp"

namespace schedlab::stats {

namespace detail {
void check_sample(std::span<const double> xs, const char* what) {
  if (xs.empty()) throw std::invalid_argument(std::string(what) + ": empty sample");
  for (double x : xs)
    if (!std::isfinite(x))
      throw std::invalid_argument(std::string(what) + ": sample holds a NaN or infinite value");
}

std::vector<double> sorted_copy(std::span<const double> xs) {
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace detail

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// a + t * (b - a), evaluated from whichever end is nearer so that t == 1 gives b exactly
// (the same rule NumPy's quantile uses).
double lerp(double a, double b, double t) {
  double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}
}  // namespace

std::string_view to_string(QuantileMethod m) {
  switch (m) {
    case QuantileMethod::Linear: return "linear";
    case QuantileMethod::Lower: return "lower";
    case QuantileMethod::Higher: return "higher";
    case QuantileMethod::Nearest: return "nearest";
    case QuantileMethod::Midpoint: return "midpoint";
    case QuantileMethod::InvertedCdf: return "inverted_cdf";
  }
  return "?";
}

QuantileMethod parse_quantile_method(std::string_view name) {
  for (auto m : {QuantileMethod::Linear, QuantileMethod::Lower, QuantileMethod::Higher,
                 QuantileMethod::Nearest, QuantileMethod::Midpoint, QuantileMethod::InvertedCdf})
    if (to_string(m) == name) return m;
  throw std::invalid_argument("unknown quantile method '" + std::string(name) + "'");
}

double mean(std::span<const double> xs) {
  detail::check_sample(xs, "mean");
  // Neumaier-compensated sum: the mean does not depend on the order of magnitude mix.
  double sum = 0, comp = 0;
  for (double x : xs) {
    double t = sum + x;
    comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  return (sum + comp) / static_cast<double>(xs.size());
}

double stddev(std::span<const double> xs, StdKind kind) {
  double m = mean(xs);
  std::size_t n = xs.size();
  if (kind == StdKind::Sample && n < 2) return kNaN;
  double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  double div = static_cast<double>(kind == StdKind::Population ? n : n - 1);
  return std::sqrt(ss / div);
}

double quantile_sorted(std::span<const double> x, double q, QuantileMethod method) {
  detail::check_sample(x, "quantile");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile: q must be in [0, 1]");
  const std::size_t n = x.size();
  const double last = static_cast<double>(n - 1);
  auto at = [&](double idx) {
    idx = std::clamp(idx, 0.0, last);
    return x[static_cast<std::size_t>(idx)];
  };
  if (method == QuantileMethod::InvertedCdf) {
    // Smallest order statistic whose ECDF reaches q.
    return at(std::ceil(static_cast<double>(n) * q - 1.0));
  }
  const double h = last * q;
  const double lo = std::floor(h);
  const double hi = std::ceil(h);
  switch (method) {
    case QuantileMethod::Lower: return at(lo);
    case QuantileMethod::Higher: return at(hi);
    case QuantileMethod::Nearest: return at(std::nearbyint(h));  // ties to even
    case QuantileMethod::Midpoint: return lo == hi ? at(lo) : lerp(at(lo), at(hi), 0.5);
    case QuantileMethod::Linear:
    default: {
      double a = at(lo), b = at(lo + 1);
      return a == b ? a : lerp(a, b, h - lo);
    }
  }
}

double quantile(std::span<const double> xs, double q, QuantileMethod method) {
  detail::check_sample(xs, "quantile");
  auto v = detail::sorted_copy(xs);
  return quantile_sorted(v, q, method);
}

Summary summarize(std::span<const double> xs, StdKind kind, QuantileMethod method) {
  detail::check_sample(xs, "summarize");
  auto v = detail::sorted_copy(xs);
  Summary s;
  s.count = v.size();
  s.mean = mean(v);
  s.stddev = stddev(v, kind);
  s.cov = s.mean == 0 ? kNaN : s.stddev / std::fabs(s.mean);
  s.min = v.front();
  s.max = v.back();
  s.median = quantile_sorted(v, 0.5, method);
  s.q90 = quantile_sorted(v, 0.9, method);
  s.q99 = quantile_sorted(v, 0.99, method);
  return s;
}

double normalized(double base, double value) { return base == 0 ? kNaN : value / base; }

double pct_improvement(double base, double value, Direction dir) {
  if (base == 0) return kNaN;
  double diff = dir == Direction::LowerIsBetter ? base - value : value - base;
  return diff / std::fabs(base) * 100.0;  // |base|: the sign means better/worse even if base < 0
}

}  // namespace schedlab::stats
