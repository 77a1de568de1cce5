// Hand-checked cases for schedlab::stats (values worked out on paper, not taken from the code).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "stats/stats.hpp"

using namespace schedlab::stats;

namespace {
const std::vector<double> kWiki{2, 4, 4, 4, 5, 5, 7, 9};  // mean 5, population std 2
}

TEST(statsDescriptive, PopulationStdIsTheDefault) {
  EXPECT_DOUBLE_EQ(mean(kWiki), 5.0);
  EXPECT_DOUBLE_EQ(stddev(kWiki), 2.0);
  EXPECT_DOUBLE_EQ(stddev(kWiki, StdKind::Population), 2.0);
  // sum of squares 32, / 7
  EXPECT_DOUBLE_EQ(stddev(kWiki, StdKind::Sample), std::sqrt(32.0 / 7.0));
}

TEST(statsDescriptive, SummaryOfKnownSample) {
  auto s = summarize(kWiki);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.stddev, 2.0);
  EXPECT_DOUBLE_EQ(s.cov, 0.4);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  // h = 0.9 * 7 = 6.3 -> 7 + 0.3 * (9 - 7)
  EXPECT_NEAR(s.q90, 7.6, 1e-12);
  // h = 0.99 * 7 = 6.93 -> 7 + 0.93 * 2
  EXPECT_NEAR(s.q99, 8.86, 1e-12);
  auto ss = summarize(kWiki, StdKind::Sample);
  EXPECT_DOUBLE_EQ(ss.stddev, std::sqrt(32.0 / 7.0));
}

TEST(statsDescriptive, SummaryDoesNotDependOnInputOrder) {
  std::vector<double> shuffled{9, 4, 5, 2, 7, 4, 5, 4};
  auto a = summarize(kWiki), b = summarize(shuffled);
  EXPECT_EQ(a.q90, b.q90);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.stddev, b.stddev);
}

TEST(statsDescriptive, QuantileMethodsOnTenValues) {
  std::vector<double> x{10, 1, 9, 2, 8, 3, 7, 4, 6, 5};  // sorted 1..10
  // q = 0.25: h = 2.25 -> x[2] = 3, x[3] = 4
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::Linear), 3.25);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::Lower), 3.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::Higher), 4.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::Nearest), 3.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::Midpoint), 3.5);
  // nearest rank: ceil(0.25 * 10) = 3rd smallest
  EXPECT_DOUBLE_EQ(quantile(x, 0.25, QuantileMethod::InvertedCdf), 3.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.5, QuantileMethod::InvertedCdf), 5.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.51, QuantileMethod::InvertedCdf), 6.0);
  // q = 0.5: h = 4.5, nearest rounds half to even -> x[4] = 5
  EXPECT_DOUBLE_EQ(quantile(x, 0.5, QuantileMethod::Nearest), 5.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0, QuantileMethod::InvertedCdf), 10.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.0, QuantileMethod::InvertedCdf), 1.0);
}

TEST(statsDescriptive, QuantileMethodNamesRoundTrip) {
  for (auto m : {QuantileMethod::Linear, QuantileMethod::Lower, QuantileMethod::Higher,
                 QuantileMethod::Nearest, QuantileMethod::Midpoint, QuantileMethod::InvertedCdf})
    EXPECT_EQ(parse_quantile_method(to_string(m)), m);
  EXPECT_THROW(parse_quantile_method("type7"), std::invalid_argument);
}

TEST(statsDescriptive, RejectsEmptyAndNonFiniteSamples) {
  std::vector<double> empty;
  EXPECT_THROW(mean(empty), std::invalid_argument);
  EXPECT_THROW(summarize(empty), std::invalid_argument);
  std::vector<double> nan{1, std::numeric_limits<double>::quiet_NaN()};
  std::vector<double> inf{1, std::numeric_limits<double>::infinity()};
  EXPECT_THROW(summarize(nan), std::invalid_argument);
  EXPECT_THROW(stddev(inf), std::invalid_argument);
  EXPECT_THROW(ks_2samp(kWiki, nan), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u(empty, kWiki), std::invalid_argument);
  EXPECT_THROW(quantile(kWiki, 1.5), std::invalid_argument);
}

TEST(statsDescriptive, SampleStdOfOneValueIsNaN) {
  std::vector<double> one{3.0};
  EXPECT_DOUBLE_EQ(stddev(one), 0.0);
  EXPECT_TRUE(std::isnan(stddev(one, StdKind::Sample)));
}

TEST(statsCompare, NormalizedIsRelativeToBase) {
  EXPECT_DOUBLE_EQ(normalized(100, 100), 1.0);
  EXPECT_DOUBLE_EQ(normalized(100, 95.9), 0.959);
  EXPECT_TRUE(std::isnan(normalized(0, 1)));
}

TEST(statsCompare, PctImprovementSignFollowsDirection) {
  // Latency went down from 100 to 90: 10% better when lower is better.
  EXPECT_DOUBLE_EQ(pct_improvement(100, 90, Direction::LowerIsBetter), 10.0);
  EXPECT_DOUBLE_EQ(pct_improvement(100, 110, Direction::LowerIsBetter), -10.0);
  // Throughput went up from 200 to 250: 25% better when higher is better.
  EXPECT_DOUBLE_EQ(pct_improvement(200, 250, Direction::HigherIsBetter), 25.0);
  EXPECT_DOUBLE_EQ(pct_improvement(200, 150, Direction::HigherIsBetter), -25.0);
  EXPECT_DOUBLE_EQ(pct_improvement(5, 5, Direction::HigherIsBetter), 0.0);
  // A negative base keeps "positive = better": -10 -> -12 is lower, so better.
  EXPECT_DOUBLE_EQ(pct_improvement(-10, -12, Direction::LowerIsBetter), 20.0);
  EXPECT_TRUE(std::isnan(pct_improvement(0, 1, Direction::LowerIsBetter)));
}

TEST(statsKs, DisjointSmallSamplesHaveExactP) {
  std::vector<double> a{1, 2, 3, 4, 5, 6}, b{11, 12, 13, 14, 15, 16};
  auto r = ks_2samp(a, b);
  EXPECT_DOUBLE_EQ(r.statistic, 1.0);
  // Only the 2 of C(12,6) = 924 orderings that separate the samples reach D = 1.
  EXPECT_NEAR(r.pvalue, 2.0 / 924.0, 1e-15);
  EXPECT_EQ(r.method, KsMethod::Exact);
}

TEST(statsKs, IdenticalSamplesGiveDZeroPOne) {
  auto r = ks_2samp(kWiki, kWiki);
  EXPECT_EQ(r.statistic, 0.0);
  EXPECT_EQ(r.pvalue, 1.0);
}

TEST(statsKs, StatisticIsSymmetricAndHandlesTies) {
  std::vector<double> a{1, 1, 2, 2}, b{1, 2, 2, 2, 3, 3};
  // ECDF at 1: 2/4 vs 1/6; at 2: 1 vs 4/6; at 3: 1 vs 1 -> D = 1/3
  auto r1 = ks_2samp(a, b), r2 = ks_2samp(b, a);
  EXPECT_NEAR(r1.statistic, 1.0 / 3.0, 1e-15);
  EXPECT_EQ(r1.statistic, r2.statistic);
  EXPECT_EQ(r1.pvalue, r2.pvalue);
}

TEST(statsKs, ForcedAsymptoticDiffersButAgreesRoughly) {
  std::vector<double> a, b;
  for (int i = 0; i < 300; ++i) a.push_back(i * 0.37 - std::floor(i * 0.37));
  for (int i = 0; i < 200; ++i) b.push_back(i * 0.53 - std::floor(i * 0.53) + 0.05);
  auto ex = ks_2samp(a, b, KsMethod::Exact), as = ks_2samp(a, b, KsMethod::Asymptotic);
  EXPECT_EQ(ex.method, KsMethod::Exact);
  EXPECT_EQ(as.method, KsMethod::Asymptotic);
  EXPECT_NEAR(ex.pvalue, as.pvalue, 0.05);
}

TEST(statsKolmogorov, ClosedFormRegions) {
  // n x <= 1/2: D_n >= 1/(2n) always.
  EXPECT_EQ(kolmogorov_sf(10, 0.04), 1.0);
  // x >= 1 - 1/n: Pr(D_n > x) = 2 (1 - x)^n
  EXPECT_NEAR(kolmogorov_sf(4, 0.8), 2 * std::pow(0.2, 4), 1e-15);
  EXPECT_EQ(kolmogorov_sf(4, 1.0), 0.0);
  // n = 1: D_1 = max(U, 1 - U) -> Pr(D_1 > x) = 2 (1 - x) for x >= 1/2
  EXPECT_NEAR(kolmogorov_sf(1, 0.7), 0.6, 1e-15);
}

TEST(statsSmirnov, OneSampleOfOne) {
  // D_1^+ = 1 - U: Pr(D_1^+ >= x) = 1 - x
  EXPECT_NEAR(smirnov_sf(1, 0.25), 0.75, 1e-15);
  EXPECT_EQ(smirnov_sf(5, 0.0), 1.0);
}

TEST(statsMwu, ExactSmallSampleByCounting) {
  // x entirely below y: U1 = 0; exactly 1 of C(7,3) = 35 orderings is as extreme on each side.
  std::vector<double> x{1, 2, 3}, y{4, 5, 6, 7};
  auto r = mann_whitney_u(x, y);
  EXPECT_EQ(r.u, 0.0);
  EXPECT_EQ(r.method, MwuMethod::Exact);
  EXPECT_NEAR(r.pvalue, 2.0 / 35.0, 1e-15);
  auto s = mann_whitney_u(y, x);
  EXPECT_EQ(s.u, 12.0);
  EXPECT_NEAR(s.pvalue, 2.0 / 35.0, 1e-15);
}

TEST(statsMwu, TiesSwitchToNormalApproximation) {
  std::vector<double> x{1, 2, 2, 3}, y{2, 3, 4, 5};
  auto r = mann_whitney_u(x, y);
  EXPECT_EQ(r.method, MwuMethod::Asymptotic);
  // ranks: 1,2,2,2 -> avg 3 for the three 2s; 3s share 5.5
  // x ranks: 1 + 3 + 3 + 5.5 = 12.5 -> U1 = 12.5 - 10 = 2.5
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  EXPECT_GT(r.pvalue, 0.05);
  EXPECT_LT(r.pvalue, 0.2);
}

TEST(statsBootstrap, DeterministicForASeed) {
  std::vector<double> a{10, 11, 9, 10.5, 10.2, 9.8, 10.1, 10.4};
  std::vector<double> b{9, 9.5, 8.7, 9.2, 9.1, 9.4, 9.0, 8.9};
  auto c1 = bootstrap_mean_diff_ci(a, b, 0.95, 1000, 7);
  auto c2 = bootstrap_mean_diff_ci(a, b, 0.95, 1000, 7);
  auto c3 = bootstrap_mean_diff_ci(a, b, 0.95, 1000, 8);
  EXPECT_EQ(c1.low, c2.low);
  EXPECT_EQ(c1.high, c2.high);
  EXPECT_NE(c1.low, c3.low);
  EXPECT_DOUBLE_EQ(c1.estimate, mean(b) - mean(a));
  EXPECT_LT(c1.low, c1.estimate);
  EXPECT_GT(c1.high, c1.estimate);
  EXPECT_LT(c1.high, 0.0);  // b is clearly lower than a
  auto wide = bootstrap_mean_diff_ci(a, b, 0.99, 1000, 7);
  EXPECT_LE(wide.low, c1.low);
  EXPECT_GE(wide.high, c1.high);
  EXPECT_THROW(bootstrap_mean_diff_ci(a, b, 1.0, 1000, 7), std::invalid_argument);
}

TEST(statsBootstrap, ConstantSamplesGiveAPointInterval) {
  std::vector<double> a(5, 3.0), b(7, 4.0);
  auto c = bootstrap_mean_diff_ci(a, b);
  EXPECT_DOUBLE_EQ(c.low, 1.0);
  EXPECT_DOUBLE_EQ(c.high, 1.0);
}


TEST(Bimodality, TwoClustersAreFlaggedOneIsNot) {
  // Two tight clusters (10 runs near 1, 10 near 2): b well above 5/9. Evenly spread values
  // (a uniform sample) sit near 5/9 from below; a bell-shaped sample well below.
  std::vector<double> two, bell, flat;
  for (int i = 0; i < 10; ++i) {
    two.push_back(1.0 + 0.01 * i);
    two.push_back(2.0 + 0.01 * i);
  }
  for (double z : {-1.5, -1.0, -0.7, -0.5, -0.3, -0.15, 0.0, 0.0, 0.15, 0.3, 0.5, 0.7, 1.0, 1.5}) bell.push_back(10 + z);
  for (int i = 0; i < 20; ++i) flat.push_back(i);
  EXPECT_GT(bimodality_coefficient(two), 0.7);
  EXPECT_TRUE(looks_bimodal(two));
  EXPECT_LT(bimodality_coefficient(bell), 0.45);
  EXPECT_FALSE(looks_bimodal(bell));
  EXPECT_LT(bimodality_coefficient(flat), kBimodalityThreshold);
  // Like the SIS_NODE side of issue 20: most runs ~0.017 s, some ten times slower (a heavy tail is
  // flagged too); 7 fast + 1 slow (b 0.70), 7 fast + 3 slow (b 0.66).
  EXPECT_TRUE(looks_bimodal(std::vector<double>{0.017, 0.016, 0.018, 0.017, 0.015, 0.019, 0.016, 0.173}));
  EXPECT_TRUE(looks_bimodal(std::vector<double>{0.017, 0.016, 0.018, 0.017, 0.15, 0.173, 0.16, 0.018, 0.017, 0.016}));
  // Fewer than 4 values, or no spread: not flagged.
  EXPECT_EQ(bimodality_coefficient(std::vector<double>{1, 2, 10}), 0.0);
  EXPECT_EQ(bimodality_coefficient(std::vector<double>{5, 5, 5, 5, 5}), 0.0);
}

TEST(Bootstrap, RatioIntervalIsSeededAndCoversTheRatio) {
  std::vector<double> base = {10, 11, 9, 10.5, 9.5, 10, 10.2, 9.8};
  std::vector<double> test = {12, 13, 11, 12.5, 11.5, 12, 12.2, 11.8};
  auto a = bootstrap_mean_ratio_ci(test, base, 0.95, 2000, 1);
  auto b = bootstrap_mean_ratio_ci(test, base, 0.95, 2000, 1);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_NEAR(a.estimate, 1.2, 1e-12);
  EXPECT_LT(a.low, 1.2);
  EXPECT_GT(a.high, 1.2);
  EXPECT_GT(a.low, 1.1);  // the spread is small: the interval is tight
  EXPECT_LT(a.high, 1.3);
  // Constant samples: a zero-width interval at the ratio.
  auto c = bootstrap_mean_ratio_ci(std::vector<double>{3, 3, 3}, std::vector<double>{2, 2, 2});
  EXPECT_DOUBLE_EQ(c.low, 1.5);
  EXPECT_DOUBLE_EQ(c.high, 1.5);
  EXPECT_THROW(bootstrap_mean_ratio_ci(std::vector<double>{1}, std::vector<double>{0}), std::invalid_argument);
}
