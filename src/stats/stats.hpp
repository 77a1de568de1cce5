// schedlab::stats: descriptive statistics, comparisons and two-sample tests on plain samples.
// Knows nothing about scheduling; usable on numbers measured on real kernels.
// See docs/stats.md for the definitions and how the tests match SciPy 1.10.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace schedlab::stats {

// ---------------------------------------------------------------------------------------------
// Descriptive statistics. Every function taking samples throws std::invalid_argument on an empty
// sample or on a value that is NaN or infinite.

// Population (divide by n; the default of schedlab's tables) or sample (n - 1; what mmtests prints).
enum class StdKind { Population, Sample };

// How a quantile between two order statistics is chosen. Names and results follow NumPy's
// `np.quantile(method=...)` (R's `quantile(type=...)` in brackets). With sorted x[0..n-1] and
// h = q * (n - 1):
//   Linear      x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h])   (NumPy default, R 7)
//   Lower       x[floor h]
//   Higher      x[ceil h]
//   Nearest     x[round-half-to-even(h)]
//   Midpoint    (x[floor h] + x[ceil h]) / 2
//   InvertedCdf x[ceil(q * n) - 1] (clamped to 0): the nearest-rank definition, the smallest
//               value v with ECDF(v) >= q   (R 1)
enum class QuantileMethod { Linear, Lower, Higher, Nearest, Midpoint, InvertedCdf };

// Name as accepted by parse_quantile_method: "linear", "lower", "higher", "nearest",
// "midpoint", "inverted_cdf".
std::string_view to_string(QuantileMethod m);
// Throws std::invalid_argument on an unknown name.
QuantileMethod parse_quantile_method(std::string_view name);

double mean(std::span<const double> xs);
double stddev(std::span<const double> xs, StdKind kind = StdKind::Population);
// q in [0, 1]; `xs` need not be sorted (a sorted copy is made).
double quantile(std::span<const double> xs, double q,
                QuantileMethod method = QuantileMethod::Linear);
// Same on data the caller already sorted ascending (not checked).
double quantile_sorted(std::span<const double> sorted, double q,
                       QuantileMethod method = QuantileMethod::Linear);

struct Summary {
  std::size_t count = 0;
  double mean = 0;
  double stddev = 0;  // of the kind requested
  double cov = 0;     // coefficient of variation stddev / |mean| (a ratio; NaN if mean == 0)
  double min = 0;
  double max = 0;
  double median = 0;  // the 0.5 quantile with the requested method
  double q90 = 0;
  double q99 = 0;
};
Summary summarize(std::span<const double> xs, StdKind kind = StdKind::Population,
                  QuantileMethod method = QuantileMethod::Linear);

// ---------------------------------------------------------------------------------------------
// Comparison of a value against a base value.

// Neutral: a count that shows which path ran (csd_run_idle, migrations), neither better nor
// worse when it changes; its "improvement" is the signed change (value - base) / |base|.
enum class Direction { LowerIsBetter, HigherIsBetter, Neutral };

// new / base (base itself is 1.00). NaN if base == 0.
double normalized(double base, double value);
// Percentage improvement, positive = better:
//   LowerIsBetter:  (base - value) / |base| * 100;   HigherIsBetter and Neutral (the signed
//   change): (value - base) / |base| * 100.
// (|base| keeps "positive = better" for negative metrics; same as / base for positive ones.)
// NaN if base == 0.
double pct_improvement(double base, double value, Direction dir);

// ---------------------------------------------------------------------------------------------
// Two-sample Kolmogorov-Smirnov test, two-sided; matches scipy.stats.ks_2samp (SciPy 1.10).

enum class KsMethod { Auto, Exact, Asymptotic };

struct KsResult {
  double statistic = 0;  // D = max |ECDF_a - ECDF_b|
  double pvalue = 1;
  KsMethod method = KsMethod::Exact;  // the method actually used (never Auto)
};

// Auto: exact if max(n_a, n_b) <= 10000, else asymptotic. An exact computation that fails
// numerically falls back to the asymptotic one, as SciPy does.
KsResult ks_2samp(std::span<const double> a, std::span<const double> b,
                  KsMethod method = KsMethod::Auto);

// Survival function Pr(D_n > x) of the one-sample two-sided Kolmogorov statistic for sample size
// n (SciPy's `kstwo.sf(x, n)`), used by the asymptotic two-sample p-value.
double kolmogorov_sf(std::int64_t n, double x);
// Survival function of the one-sided Smirnov statistic D_n^+ (SciPy's `special.smirnov(n, x)`).
double smirnov_sf(std::int64_t n, double x);

// ---------------------------------------------------------------------------------------------
// Mann-Whitney U test, two-sided; matches scipy.stats.mannwhitneyu defaults (SciPy 1.10).

enum class MwuMethod { Auto, Exact, Asymptotic };

struct MwuResult {
  double u = 0;  // U statistic of the first sample (SciPy's `statistic`)
  double pvalue = 1;
  MwuMethod method = MwuMethod::Exact;  // the method actually used (never Auto)
};

// Auto: exact when one sample has at most 8 values and there are no ties, else the normal
// approximation with tie correction and continuity correction.
MwuResult mann_whitney_u(std::span<const double> x, std::span<const double> y,
                         MwuMethod method = MwuMethod::Auto);

// ---------------------------------------------------------------------------------------------
// Seeded percentile bootstrap of mean(other) - mean(base).

struct BootstrapCi {
  double estimate = 0;  // mean(other) - mean(base) on the samples themselves
  double low = 0;       // lower end of the interval
  double high = 0;      // upper end of the interval
  double level = 0.95;
  unsigned resamples = 0;
  std::uint64_t seed = 0;
};

// Resamples both samples with replacement `resamples` times with a sim::Rng stream seeded by
// `seed` (xoshiro256** seeded via SplitMix64); the interval is the Linear quantiles (1-level)/2 and (1+level)/2 of
// the resampled differences. Deterministic for a given (inputs, level, resamples, seed).
BootstrapCi bootstrap_mean_diff_ci(std::span<const double> base, std::span<const double> other,
                                   double level = 0.95, unsigned resamples = 2000,
                                   std::uint64_t seed = 1);

// Seeded percentile bootstrap of mean(num) / mean(den) (a gain: test over base performance),
// resampling both samples as bootstrap_mean_diff_ci() does; `estimate` is the ratio of the
// samples' own means. Throws std::invalid_argument when mean(den) is 0.
BootstrapCi bootstrap_mean_ratio_ci(std::span<const double> num, std::span<const double> den,
                                    double level = 0.95, unsigned resamples = 2000,
                                    std::uint64_t seed = 1);

// ---------------------------------------------------------------------------------------------
// Sarle's bimodality coefficient, b = (g^2 + 1) / (G + 3 (n-1)^2 / ((n-2)(n-3))), with g the
// sample skewness and G the sample excess kurtosis, both bias-corrected (SAS's, as in Pfister et
// al. 2013, Frontiers in Psychology 4:700). b > 5/9 (kBimodalityThreshold, the value of a uniform
// distribution) suggests two modes (or a heavy one-sided tail). Needs n >= 4 and a non-zero
// spread: otherwise 0.
inline constexpr double kBimodalityThreshold = 5.0 / 9.0;
double bimodality_coefficient(std::span<const double> xs);
inline bool looks_bimodal(std::span<const double> xs) {
  return bimodality_coefficient(xs) > kBimodalityThreshold;
}

}  // namespace schedlab::stats
