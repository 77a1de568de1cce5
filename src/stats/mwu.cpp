// Mann-Whitney U test (two-sided), with SciPy 1.10's `mannwhitneyu` defaults: method "auto",
// continuity correction on, tie correction in the normal approximation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "stats/detail.hpp"
#include "stats/stats.hpp"

namespace schedlab::stats {

namespace {

// Number of arrangements of m x's and n y's for every value k = 0..m*n of U: the coefficients of
// the Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), m <= n.
// T is an exact integer type when the total C(m+n, m) fits, else long double.
template <typename T>
std::vector<T> u_counts(std::int64_t m, std::int64_t n) {
  if (m > n) std::swap(m, n);
  const auto deg = static_cast<std::size_t>(m * n);
  std::vector<T> c(deg + 1, T(0));
  c[0] = T(1);
  std::size_t cur = 0;  // current degree
  for (std::int64_t i = 1; i <= m; ++i) {
    const auto up = static_cast<std::size_t>(n + i), down = static_cast<std::size_t>(i);
    // multiply by (1 - q^up)
    const std::size_t newdeg = cur + up;
    for (std::size_t k = std::min(newdeg, deg); k >= up; --k) c[k] -= c[k - up];
    // divide by (1 - q^down): running sum with stride `down`
    cur = newdeg - down;
    for (std::size_t k = down; k <= cur; ++k) c[k] += c[k - down];
    for (std::size_t k = cur + 1; k <= std::min(newdeg, deg); ++k) c[k] = T(0);
  }
  return c;
}

// Pr(U >= u) for the exact null distribution (U symmetric: equal to Pr(U <= mn - u)).
double exact_sf(std::int64_t u, std::int64_t m, std::int64_t n) {
  const std::int64_t kmax = m * n - u;
  if (kmax < 0) return 0.0;
  const std::int64_t small = std::min(m, n), large = std::max(m, n);
  // log10 C(m+n, small) to choose the arithmetic.
  const double log10_total =
      (std::lgamma(double(m + n + 1)) - std::lgamma(double(small + 1)) -
       std::lgamma(double(large + 1))) / std::log(10.0);
  if (log10_total < 37.0) {
    using i128 = __int128;
    auto c = u_counts<i128>(m, n);
    i128 below = 0, total = 0;
    for (std::size_t k = 0; k < c.size(); ++k) {
      total += c[k];
      if (static_cast<std::int64_t>(k) <= kmax) below += c[k];
    }
    return static_cast<double>(static_cast<long double>(below) / static_cast<long double>(total));
  }
  auto c = u_counts<long double>(m, n);
  long double below = 0, total = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    total += c[k];
    if (static_cast<std::int64_t>(k) <= kmax) below += c[k];
  }
  return static_cast<double>(below / total);
}

}  // namespace

MwuResult mann_whitney_u(std::span<const double> x, std::span<const double> y, MwuMethod method) {
  detail::check_sample(x, "mann_whitney_u");
  detail::check_sample(y, "mann_whitney_u");
  const auto n1 = static_cast<std::int64_t>(x.size()), n2 = static_cast<std::int64_t>(y.size());
  const std::int64_t n = n1 + n2;

  // Average ranks (1-based) of the pooled sample; remember tie group sizes.
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  pooled.reserve(static_cast<std::size_t>(n));
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double r1 = 0;     // rank sum of x
  double tie_term = 0;  // sum of t^3 - t over tie groups
  bool ties = false;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) r1 += rank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  MwuResult r;
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  const double u1 = r1 - dn1 * (dn1 + 1) / 2;
  const double u2 = dn1 * dn2 - u1;
  const double u = std::max(u1, u2);
  r.u = u1;

  if (method == MwuMethod::Auto)
    method = (n1 > 8 && n2 > 8) || ties ? MwuMethod::Asymptotic : MwuMethod::Exact;
  double p;
  if (method == MwuMethod::Exact) {
    p = exact_sf(static_cast<std::int64_t>(u), n1, n2);
  } else {
    const double mu = dn1 * dn2 / 2;
    const double dn = static_cast<double>(n);
    const double s = std::sqrt(dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1))));
    const double z = (u - mu - 0.5) / s;  // continuity correction
    p = 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  r.pvalue = std::clamp(2.0 * p, 0.0, 1.0);
  r.method = method;
  return r;
}

}  // namespace schedlab::stats
