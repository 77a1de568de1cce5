// The cost jitter's normal: its distribution, and that it spends about one draw per value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <boost/random/normal_distribution.hpp>

#include "sim/rng.hpp"

using schedlab::sim::Rng;

namespace {
std::vector<double> draw(uint64_t seed, int n) {
  Rng r(seed);
  std::vector<double> x(n);
  for (auto& v : x) v = r.normal();
  return x;
}
}  // namespace

TEST(RngNormal, MomentsAreThoseOfTheStandardNormal) {
  auto x = draw(7, 200000);
  double n = static_cast<double>(x.size()), m = 0;
  for (double v : x) m += v;
  m /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : x) {
    double d = v - m;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  // Standard errors at n = 200000: mean 0.0022, variance 0.0032, skewness 0.0055, kurtosis 0.011.
  EXPECT_NEAR(m, 0.0, 0.01);
  EXPECT_NEAR(m2, 1.0, 0.015);
  EXPECT_NEAR(m3 / std::pow(m2, 1.5), 0.0, 0.025);
  EXPECT_NEAR(m4 / (m2 * m2), 3.0, 0.05);
}

TEST(RngNormal, KolmogorovSmirnovAgainstPhi) {
  auto x = draw(11, 100000);
  std::sort(x.begin(), x.end());
  double n = static_cast<double>(x.size()), d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double cdf = 0.5 * std::erfc(-x[i] / std::sqrt(2.0));
    d = std::max({d, cdf - i / n, (i + 1) / n - cdf});
  }
  EXPECT_LT(d * std::sqrt(n), 1.63);  // the 1 % critical value of the KS statistic
}

TEST(RngNormal, TailsHaveTheRightMass) {
  auto x = draw(13, 400000);
  double beyond2 = 0, beyond3 = 0;
  for (double v : x) {
    if (std::fabs(v) > 2) ++beyond2;
    if (std::fabs(v) > 3) ++beyond3;
  }
  beyond2 /= x.size();
  beyond3 /= x.size();
  EXPECT_NEAR(beyond2, 0.0455, 0.0015);   // 2 * (1 - Phi(2)); sd 0.00033
  EXPECT_NEAR(beyond3, 0.0027, 0.00025);  // 2 * (1 - Phi(3)); sd 0.000082
}

TEST(RngNormal, UsesAboutOneDrawPerValue) {
  // Box-Muller as it was used here spent two uniform draws per value and threw one result away;
  // the ziggurat (128 layers) needs more draws only in a wedge or the tail: 1.04 per value.
  const int n = 100000;
  Rng a(3), b(3);
  for (int i = 0; i < n; ++i) a.normal();
  int64_t draws = 0;
  while (!(a == b)) {
    b.next();
    ++draws;
  }
  EXPECT_GE(draws, n);
  EXPECT_LT(draws, n * 105 / 100);
}

TEST(RngNormal, SameSeedSameValues) {
  EXPECT_EQ(draw(5, 1000), draw(5, 1000));
  EXPECT_NE(draw(5, 10), draw(6, 10));
}

// normal() takes the ziggurat's fast path itself and hands the rest to Boost: every value and
// every draw must be Boost's, bit for bit, including the wedge and tail cases (about 1.2 % of
// the values, so 1 M draws exercise each thousands of times) and the sign of zero.
TEST(RngNormal, BitIdenticalToBoostsNormalDistribution) {
  Rng a(11), b(11);
  boost::random::normal_distribution<double> boost_normal;
  int slow = 0;
  for (int i = 0; i < 1000000; ++i) {
    Rng before = b;
    const double x = a.normal();
    const double y = boost_normal(b);
    ASSERT_EQ(std::signbit(x), std::signbit(y)) << "draw " << i;
    ASSERT_EQ(x, y) << "draw " << i;
    ASSERT_TRUE(a == b) << "draw " << i << ": the streams took different numbers of draws";
    before.next();
    if (!(before == b)) ++slow;  // Boost took more than one draw for this value
  }
  EXPECT_GT(slow, 1000);  // the slow path was exercised
}
