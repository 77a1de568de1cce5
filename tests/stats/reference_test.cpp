// Compares schedlab::stats against SciPy 1.10 / NumPy 1.24 results recorded in
// tests/reference/scipy_fixtures.json (written by tests/reference/make_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats/stats.hpp"

using namespace schedlab::stats;
using nlohmann::json;

namespace {

const json& fixtures() {
  static const json doc = [] {
    std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/reference/scipy_fixtures.json");
    if (!in) throw std::runtime_error("cannot open scipy_fixtures.json");
    return json::parse(in);
  }();
  return doc;
}

// Same expansion as make_fixtures.py: SplitMix64 uniforms, loc + scale * u, optional floor.
std::vector<double> expand(const json& gen) {
  std::uint64_t x = gen.at("seed").get<std::uint64_t>();
  const auto n = gen.at("n").get<std::size_t>();
  const double loc = gen.at("loc").get<double>(), scale = gen.at("scale").get<double>();
  const bool fl = gen.at("floor").get<bool>();
  std::vector<double> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    x += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1p-53;
    const double t = scale * u;
    double v = loc + t;
    if (fl) v = std::floor(v);
    out.push_back(v);
  }
  return out;
}

std::vector<double> sample(const json& pair, const char* key, const char* gen_key) {
  if (pair.contains(key)) return pair.at(key).get<std::vector<double>>();
  return expand(pair.at(gen_key));
}

// |actual - expected| <= rel * |expected|, with a tiny absolute floor for values that are 0.
::testing::AssertionResult close(double actual, double expected, double rel, double abs_floor) {
  if (std::fabs(actual - expected) <= rel * std::fabs(expected) + abs_floor)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "actual " << std::setprecision(17) << actual << " expected " << expected
         << " (rel err " << std::fabs(actual - expected) / std::fabs(expected) << ")";
}

constexpr double kStatRel = 1e-9;
constexpr double kPRel = 1e-6;
constexpr double kPAbs = 1e-300;

}  // namespace

TEST(statsScipyReference, FixtureFileHasEnoughCases) {
  EXPECT_GE(fixtures().at("pairs").size(), 24u);
  EXPECT_EQ(fixtures().at("scipy").get<std::string>(), "1.10.1");
}

TEST(statsScipyReference, KsTwoSampleMatchesScipy) {
  for (const auto& pair : fixtures().at("pairs")) {
    SCOPED_TRACE(pair.at("name").get<std::string>());
    auto a = sample(pair, "a", "a_gen");
    auto b = sample(pair, "b", "b_gen");
    auto r = ks_2samp(a, b);
    EXPECT_TRUE(close(r.statistic, pair.at("ks").at("d").get<double>(), kStatRel, 0)) << "D";
    EXPECT_TRUE(close(r.pvalue, pair.at("ks").at("p").get<double>(), kPRel, kPAbs)) << "p";
    EXPECT_EQ(r.method, std::max(a.size(), b.size()) <= 10000 ? KsMethod::Exact
                                                               : KsMethod::Asymptotic);
  }
}

TEST(statsScipyReference, MannWhitneyMatchesScipy) {
  for (const auto& pair : fixtures().at("pairs")) {
    SCOPED_TRACE(pair.at("name").get<std::string>());
    auto a = sample(pair, "a", "a_gen");
    auto b = sample(pair, "b", "b_gen");
    auto r = mann_whitney_u(a, b);
    EXPECT_TRUE(close(r.u, pair.at("mwu").at("u").get<double>(), kStatRel, 0)) << "U";
    EXPECT_TRUE(close(r.pvalue, pair.at("mwu").at("p").get<double>(), kPRel, kPAbs)) << "p";
  }
}

TEST(statsScipyReference, QuantilesAndSummaryMatchNumpy) {
  for (const auto& c : fixtures().at("quantiles")) {
    auto xs = c.at("sample").get<std::vector<double>>();
    auto qs = c.at("q").get<std::vector<double>>();
    SCOPED_TRACE("n=" + std::to_string(xs.size()));
    for (const auto& [name, values] : c.at("quantiles").items()) {
      const auto method = parse_quantile_method(name);
      for (std::size_t i = 0; i < qs.size(); ++i) {
        SCOPED_TRACE(name + " q=" + std::to_string(qs[i]));
        EXPECT_TRUE(close(quantile(xs, qs[i], method), values.at(i).get<double>(), kStatRel, 1e-300));
      }
    }
    EXPECT_TRUE(close(mean(xs), c.at("mean").get<double>(), kStatRel, 1e-12));
    EXPECT_TRUE(close(stddev(xs), c.at("pstd").get<double>(), kStatRel, 1e-12));
    if (!c.at("sstd").is_null()) {
      EXPECT_TRUE(close(stddev(xs, StdKind::Sample), c.at("sstd").get<double>(), kStatRel, 1e-12));
    }
    EXPECT_TRUE(close(summarize(xs).median, c.at("median").get<double>(), kStatRel, 1e-300));
  }
}

TEST(statsScipyReference, KolmogorovDistributionMatchesKstwo) {
  for (const auto& c : fixtures().at("kstwo_sf")) {
    const auto n = c.at("n").get<std::int64_t>();
    const double x = c.at("x").get<double>();
    SCOPED_TRACE("n=" + std::to_string(n) + " x=" + std::to_string(x));
    EXPECT_TRUE(close(kolmogorov_sf(n, x), c.at("sf").get<double>(), kPRel, kPAbs));
  }
}

TEST(statsScipyReference, SmirnovDistributionMatchesScipy) {
  for (const auto& c : fixtures().at("smirnov_sf")) {
    const auto n = c.at("n").get<std::int64_t>();
    const double x = c.at("x").get<double>();
    SCOPED_TRACE("n=" + std::to_string(n) + " x=" + std::to_string(x));
    EXPECT_TRUE(close(smirnov_sf(n, x), c.at("sf").get<double>(), kPRel, kPAbs));
  }
}
