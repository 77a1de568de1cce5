// Two-sample Kolmogorov-Smirnov test (two-sided) and the Kolmogorov/Smirnov distributions it
// needs. The method choice and the algorithms follow SciPy 1.10's ks_2samp so that p-values agree
// with it; see docs/stats.md. Written from the published algorithms:
//   exact:      Hodges (1958) lattice-path counts; the n1 != n2 case uses the "inside" recursion
//               in the numerically stable form of Viehmann (2021, arXiv:2102.08037), the n1 == n2
//               case the alternating binomial series evaluated Horner-style.
//   asymptotic: Pr(D_en > d) of the one-sample Kolmogorov distribution with en = n1*n2/(n1+n2)
//               rounded, evaluated as in Simard & L'Ecuyer (2011): Ruben-Gambino closed forms,
//               the Durbin matrix (Marsaglia-Tsang-Wang 2003), Birnbaum-Tingey for the one-sided
//               tail, and the Pelz-Good (1976) expansion.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "stats/detail.hpp"
#include "stats/stats.hpp"

namespace schedlab::stats {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kScaleExp = 128;  // rescale by 2^128 to keep products in range

std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
  std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {  // b > 0
  return -floor_div(-a, b);
}

// ---- exact two-sample p-values -------------------------------------------------------------

// Pr(D_{n,n} >= h/n): 2 * sum_k (-1)^(k+1) C(2n, n-kh) / C(2n, n), each ratio built as a product
// of h factors and the alternating sum folded from its small end to avoid cancellation.
double prob_outside_square(std::int64_t n, std::int64_t h) {
  double p = 0.0;
  for (std::int64_t k = n / h; k >= 0; --k) {
    double ratio = 1.0;
    for (std::int64_t j = 0; j < h; ++j)
      ratio = static_cast<double>(n - k * h - j) * ratio / static_cast<double>(n + k * h + j + 1);
    p = ratio * (1.0 - p);
  }
  return 2.0 * p;
}

// Proportion of lattice paths (0,0)->(m,n) that leave the band |x/m - y/n| < h/lcm(m,n), computed
// column by column as 1 - (paths inside)/C(m+n,n) directly (Viehmann's recursion), keeping only
// the sliding window of rows that can be inside.
double prob_outside_band(std::int64_t m, std::int64_t n, std::int64_t g, std::int64_t h) {
  if (m < n) std::swap(m, n);
  const std::int64_t mg = m / g, ng = n / g;
  std::int64_t minj = 0, maxj = std::min(ceil_div(h, mg), n + 1);
  std::int64_t curlen = maxj - minj;
  const std::int64_t len = std::min(2 * maxj + 2, n + 1);
  std::vector<double> a(static_cast<std::size_t>(len), 1.0);
  std::fill(a.begin() + minj, a.begin() + maxj, 0.0);
  for (std::int64_t i = 1; i <= m; ++i) {
    const std::int64_t lastminj = minj, lastlen = curlen;
    minj = std::min(std::max(floor_div(ng * i - h, mg) + 1, std::int64_t{0}), n);
    maxj = std::min(ceil_div(ng * i + h, mg), n + 1);
    if (maxj <= minj) return 1.0;
    double val = minj == 0 ? 0.0 : 1.0;
    for (std::int64_t jj = 0; jj < maxj - minj; ++jj) {
      const std::int64_t j = jj + minj;
      val = (a[static_cast<std::size_t>(jj + minj - lastminj)] * static_cast<double>(i) +
             val * static_cast<double>(j)) /
            static_cast<double>(i + j);
      a[static_cast<std::size_t>(jj)] = val;
    }
    curlen = maxj - minj;
    if (lastlen > curlen)
      std::fill(a.begin() + (maxj - minj), a.begin() + (maxj - minj) + (lastlen - curlen), 1.0);
  }
  return a[static_cast<std::size_t>(maxj - minj - 1)];
}

// ---- one-sample Kolmogorov distribution -----------------------------------------------------

// log(n! / n^n) by Stirling's series with the n*log(n) removed up front (no cancellation).
double log_nfact_over_n_pow_n(double n) {
  // B_{2j} / (2j (2j-1)) for j = 8 .. 1.
  static constexpr double kCoef[] = {-3617.0 / 122400.0, 1.0 / 156.0, -691.0 / 360360.0,
                                     1.0 / 1188.0,       -1.0 / 1680.0, 1.0 / 1260.0,
                                     -1.0 / 360.0,       1.0 / 12.0};
  const double rn = 1.0 / n, x = rn / n;
  double poly = 0.0;
  for (double c : kCoef) poly = poly * x + c;
  return std::log(n) / 2 - n + std::log(2 * kPi) / 2 + rn * poly;
}

// Pr(D_n <= d) by the Durbin matrix algorithm in the Marsaglia-Tsang-Wang form: with
// k = ceil(n d), h = k - n d, the answer is n!/n^n times element (k,k) of H^n for a (2k-1)^2
// matrix H. Powers are rescaled by 2^128 with the exponent kept apart.
double kolmogorov_cdf_durbin(std::int64_t n, double d) {
  if (d >= 1.0) return 1.0;
  const double nd = static_cast<double>(n) * d;
  if (nd <= 0.5) return 0.0;
  const int k = static_cast<int>(std::ceil(nd));
  const double h = k - nd;
  const int m = 2 * k - 1;
  using Mat = std::vector<double>;  // row-major m x m
  Mat H(static_cast<std::size_t>(m) * m, 0.0);
  auto idx = [m](int r, int c) { return static_cast<std::size_t>(r) * m + c; };
  // H[r][c] = 1/(r-c+1)! for r-c+1 >= 0; corrections on the first column and the last row.
  std::vector<double> inv_fact(m + 2);
  inv_fact[0] = 1.0;
  for (int i = 1; i < m + 2; ++i) inv_fact[i] = inv_fact[i - 1] / i;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c)
      if (r - c + 1 >= 0) H[idx(r, c)] = inv_fact[r - c + 1];
  for (int r = 0; r < m; ++r) H[idx(r, 0)] -= std::pow(h, r + 1) * inv_fact[r + 1];
  for (int c = 0; c < m; ++c) H[idx(m - 1, c)] -= std::pow(h, m - c) * inv_fact[m - c];
  // Corner: counted twice above; add back the (2h-1)^m term when 2h > 1.
  H[idx(m - 1, 0)] += (2 * h - 1 > 0 ? std::pow(2 * h - 1, m) : 0.0) * inv_fact[m];

  auto mul = [&](const Mat& A, const Mat& B) {
    Mat C(A.size(), 0.0);
    for (int r = 0; r < m; ++r)
      for (int t = 0; t < m; ++t) {
        const double art = A[idx(r, t)];
        if (art == 0.0) continue;
        for (int c = 0; c < m; ++c) C[idx(r, c)] += art * B[idx(t, c)];
      }
    return C;
  };
  Mat P(H.size(), 0.0);
  for (int i = 0; i < m; ++i) P[idx(i, i)] = 1.0;
  long pexp = 0, hexp = 0;
  const double big = std::ldexp(1.0, kScaleExp);
  for (std::int64_t e = n; e > 0; e /= 2) {
    if (e % 2) {
      P = mul(P, H);
      pexp += hexp;
    }
    H = mul(H, H);
    hexp *= 2;
    if (std::fabs(H[idx(k - 1, k - 1)]) > big) {
      for (double& v : H) v = std::ldexp(v, -kScaleExp);
      hexp += kScaleExp;
    }
  }
  double p = P[idx(k - 1, k - 1)];
  const double small = std::ldexp(1.0, -kScaleExp);
  const double dn = static_cast<double>(n);
  for (std::int64_t i = 1; i <= n; ++i) {
    p = static_cast<double>(i) * p / dn;
    if (std::fabs(p) < small) {
      p = std::ldexp(p, kScaleExp);
      pexp -= kScaleExp;
    }
  }
  if (pexp != 0) p = std::ldexp(p, static_cast<int>(pexp));
  return p;
}

// Pelz-Good asymptotic expansion of Pr(D_n <= x): the Li-Chien/Korolyuk series
// K0(z) + K1(z)/sqrt(n) + K2(z)/n + K3(z)/n^1.5 (z = x sqrt(n)), each term rewritten with
// Jacobi theta identities into sums that converge fast for small z.
double kolmogorov_cdf_pelz_good(std::int64_t n, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double dn = static_cast<double>(n);
  const double z = std::sqrt(dn) * x;
  const double z2 = z * z, z3 = z2 * z, z4 = z2 * z2, z6 = z4 * z2;
  const double pi2 = kPi * kPi, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
  const double qlog = -pi2 / 8 / z2;
  if (qlog < -708) return 0.0;
  double q = std::exp(qlog);

  const double k1a = -z2, k1b = pi2 / 4;
  const double k2a = 6 * z6 + 2 * z4, k2b = (2 * z4 - 5 * z2) * pi2 / 4,
               k2c = pi4 * (1 - 2 * z2) / 16;
  const double k3d = pi6 * (5 - 30 * z2) / 64, k3c = pi4 * (-60 * z2 + 212 * z4) / 16,
               k3b = pi2 * (135 * z4 - 96 * z6) / 4, k3a = -30 * z6 - 90 * z4 * z4;

  double K[4] = {0, 0, 0, 0};
  // Sums over odd j = 2k-1 of c(j) q^(j^2), Horner-style in q^(8k).
  const long maxk = static_cast<long>(std::ceil(16 * z / kPi));
  for (long k = maxk; k > 0; --k) {
    const double j = static_cast<double>(2 * k - 1);
    const double j2 = j * j, j4 = j2 * j2, j6 = j4 * j2;
    const double qpow = std::pow(q, static_cast<double>(8 * k));
    const double c[4] = {1.0, k1a + k1b * j2, k2a + k2b * j2 + k2c * j4,
                         k3a + k3b * j2 + k3c * j4 + k3d * j6};
    for (int i = 0; i < 4; ++i) K[i] = K[i] * qpow + c[i];
  }
  const double sqrt2pi = std::sqrt(2 * kPi);
  const double denom[4] = {z, 6 * z4, 72 * z6 * z, 6480 * z6 * z4};
  for (int i = 0; i < 4; ++i) K[i] = K[i] * q * sqrt2pi / denom[i];

  // The remaining sums over all integers k of k^2 q'^(k^2) terms, q' = exp(-pi^2 / (2 z^2)).
  q = std::exp(-pi2 / 2 / z2);
  const double sqrt3z = std::sqrt(3.0) * z;
  double s2 = 0, s3 = 0;
  for (long k = maxk; k > 0; --k) {
    const double kk = static_cast<double>(k);
    const double qp = std::pow(q, kk * kk);
    s2 += kk * kk * qp;
    s3 += (sqrt3z + kPi * kk) * (sqrt3z - kPi * kk) * kk * kk * qp;
  }
  K[2] += s2 * pi2 * sqrt2pi / (-36 * z3);
  K[3] += s3 * pi2 * sqrt2pi / (216 * z6);
  double sum = 0;
  for (int i = 0; i < 4; ++i) sum += K[i] / std::pow(dn, i / 2.0);
  return sum;
}

double clip01(double p) { return std::clamp(p, 0.0, 1.0); }

}  // namespace

// Birnbaum-Tingey: Pr(D_n^+ >= x) = x * sum_{v=0}^{floor(n(1-x))} C(n,v) (x+v/n)^(v-1)
// (1-x-v/n)^(n-v); every term is positive, evaluated in log space in long double.
double smirnov_sf(std::int64_t n, double x) {
  if (!(n > 0) || !(x >= 0.0 && x <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return 1.0;
  if (x == 1.0) return 0.0;
  using ld = long double;
  const ld dn = static_cast<ld>(n), lx = x;
  const auto vmax = static_cast<std::int64_t>(std::floor(dn * (1 - lx)));
  const ld lg_n1 = std::lgamma(dn + 1);
  ld sum = 0;
  for (std::int64_t v = 0; v <= vmax; ++v) {
    const ld dv = static_cast<ld>(v);
    const ld evn = lx + dv / dn;
    const ld omevn = ((dn - dv) - dn * lx) / dn;  // 1 - x - v/n without the 1 - ... cancellation
    if (omevn <= 0) {
      if (v == n) sum += std::exp((dv - 1) * std::log(evn));
      continue;
    }
    const ld t = lg_n1 - std::lgamma(dv + 1) - std::lgamma(dn - dv + 1) +
                 (dv - 1) * std::log(evn) + (dn - dv) * std::log(omevn);
    sum += std::exp(t);
  }
  return clip01(static_cast<double>(sum * lx));
}

double kolmogorov_sf(std::int64_t n, double x) {
  if (n <= 0 || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x >= 1.0) return 0.0;
  if (x <= 0.0) return 1.0;
  const double dn = static_cast<double>(n);
  const double t = dn * x;
  if (t <= 1.0) {  // Ruben-Gambino: CDF = n!/n^n (2t-1)^n
    if (t <= 0.5) return 1.0;
    double cdf;
    if (n <= 140) {
      cdf = 1.0;
      for (std::int64_t i = 1; i <= n; ++i) cdf *= static_cast<double>(i) * (1.0 / dn) * (2 * t - 1);
    } else {
      cdf = std::exp(log_nfact_over_n_pow_n(dn) + dn * std::log(2 * t - 1));
    }
    return clip01(1.0 - cdf);
  }
  if (t >= dn - 1) return clip01(2 * std::pow(1.0 - x, dn));  // Ruben-Gambino upper tail
  if (x >= 0.5) return clip01(2 * smirnov_sf(n, x));          // the one-sided tails are disjoint
  const double nx2 = t * x;
  if (n <= 140) {
    if (nx2 <= 4) return clip01(1.0 - kolmogorov_cdf_durbin(n, x));
    return clip01(2 * smirnov_sf(n, x));
  }
  if (nx2 >= 370.0) return 0.0;
  if (nx2 >= 2.2) return clip01(2 * smirnov_sf(n, x));
  double cdf;
  if (n <= 100000 && dn * std::pow(x, 1.5) <= 1.4)
    cdf = kolmogorov_cdf_durbin(n, x);
  else
    cdf = kolmogorov_cdf_pelz_good(n, x);
  return clip01(1.0 - cdf);
}

KsResult ks_2samp(std::span<const double> a_in, std::span<const double> b_in, KsMethod method) {
  detail::check_sample(a_in, "ks_2samp");
  detail::check_sample(b_in, "ks_2samp");
  const auto a = detail::sorted_copy(a_in);
  const auto b = detail::sorted_copy(b_in);
  const auto n1 = static_cast<std::int64_t>(a.size());
  const auto n2 = static_cast<std::int64_t>(b.size());

  // Largest |ECDF_a - ECDF_b| over the pooled values, as an exact integer i*n2 - j*n1
  // (ECDFs are right-continuous: all values equal to v count at v).
  std::int64_t best = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    double v = (j >= b.size() || (i < a.size() && a[i] <= b[j])) ? a[i] : b[j];
    while (i < a.size() && a[i] <= v) ++i;
    while (j < b.size() && b[j] <= v) ++j;
    const std::int64_t diff = static_cast<std::int64_t>(i) * n2 - static_cast<std::int64_t>(j) * n1;
    best = std::max(best, diff < 0 ? -diff : diff);
  }
  KsResult r;
  r.statistic = static_cast<double>(best) / (static_cast<double>(n1) * static_cast<double>(n2));

  if (method == KsMethod::Auto)
    method = std::max(n1, n2) <= 10000 ? KsMethod::Exact : KsMethod::Asymptotic;
  const std::int64_t g = std::gcd(n1, n2);
  if (method == KsMethod::Exact && n1 / g >= std::numeric_limits<std::int32_t>::max() / (n2 / g))
    method = KsMethod::Asymptotic;  // lcm too large for the lattice

  if (method == KsMethod::Exact) {
    // D = best / (n1 n2) = h / lcm(n1, n2) with h = best / g.
    const std::int64_t lcm = (n1 / g) * n2;
    const std::int64_t h = best / g;
    r.statistic = static_cast<double>(h) / static_cast<double>(lcm);
    double p;
    if (h == 0)
      p = 1.0;
    else if (n1 == n2)
      p = prob_outside_square(n1, h);
    else
      p = prob_outside_band(n1, n2, g, h);
    if (std::isfinite(p) && p >= 0.0 && p <= 1.0) {
      r.pvalue = p;
      r.method = KsMethod::Exact;
      return r;
    }
    method = KsMethod::Asymptotic;  // numerical failure: fall back like SciPy
  }
  const double m = static_cast<double>(std::max(n1, n2)), n = static_cast<double>(std::min(n1, n2));
  const double en = m * n / (m + n);
  const auto en_rounded = static_cast<std::int64_t>(std::nearbyint(en));  // half to even
  r.pvalue = clip01(kolmogorov_sf(std::max<std::int64_t>(en_rounded, 1), r.statistic));
  r.method = KsMethod::Asymptotic;
  return r;
}

}  // namespace schedlab::stats
