// The comparison table: golden text/markdown layout, machine-readable JSON/CSV, verdicts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/report.hpp"

using namespace schedlab::report;

namespace {

std::vector<Metric> example_metrics() {
  Metric lat{"wakeup-latency", "usec", Direction::LowerIsBetter, {}};
  lat.sets.push_back({"base", {100, 102, 98, 101, 99.5, 100.7, 103, 97.9, 100.2, 99.1}});
  lat.sets.push_back({"patched", {96, 95.5, 97, 94.8, 96.3, 95.9, 96.6, 95.1, 96.2, 95.7}});
  lat.sets.push_back({"noise", {100.3, 101.2, 98.8, 99.9, 100.4, 101.0, 99.2, 100.8, 99.6, 100.1}});
  Metric tput{"hackbench-throughput", "ops/s", Direction::HigherIsBetter, {}};
  tput.sets.push_back({"base", {5120, 5080, 5210, 5150, 5098, 5177}});
  tput.sets.push_back({"patched", {4990, 5012, 4950, 5031, 4977, 5003}});
  return {lat, tput};
}

std::string golden_path(const std::string& name) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/tests/report/golden/" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compares with the golden file; SCHEDLAB_UPDATE_GOLDEN=1 rewrites it instead (then review the
// diff before committing).
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (const char* u = std::getenv("SCHEDLAB_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << path;
  EXPECT_EQ(actual, expected) << "golden mismatch for " << name;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(reportGolden, TextTable) { expect_golden("two_metrics.txt", render(example_metrics(), Format::Text)); }

TEST(reportGolden, MarkdownTable) {
  expect_golden("two_metrics.md.txt", render(example_metrics(), Format::Markdown));
}

TEST(reportText, HeaderNamesMetricUnitAndDirection) {
  auto lines = lines_of(render(example_metrics(), Format::Text));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "wakeup-latency (usec), Lower is better");
  bool found = false;
  for (const auto& l : lines) found |= l == "hackbench-throughput (ops/s), Higher is better";
  EXPECT_TRUE(found);
}

TEST(reportText, ColumnsAreAligned) {
  auto metrics = example_metrics();
  auto lines = lines_of(render({metrics[0]}, Format::Text));
  // Title, then the grid (header + rows) whose right edges all line up, then verdicts.
  std::size_t width = lines.at(1).size();
  int grid_lines = 0;
  for (std::size_t i = 1; i < lines.size() && lines[i].rfind("verdict:", 0) != 0; ++i) {
    EXPECT_EQ(lines[i].size(), width) << "line " << i << ": '" << lines[i] << "'";
    ++grid_lines;
  }
  EXPECT_EQ(grid_lines, 13);  // header + 12 statistics
}

TEST(reportText, VerdictsSayBetterWorseAndSignificance) {
  auto text = render(example_metrics(), Format::Text);
  // patched latency mean 95.91 vs 100.14: 4.22% better, all 10 below all 10 -> exact KS p tiny.
  EXPECT_NE(text.find("verdict: patched is 4.22% better than base (KS p<0.0001, significant at 5%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: noise is "), std::string::npos);
  EXPECT_NE(text.find("difference not significant at 5%"), std::string::npos);
  // Throughput dropped (higher is better): a regression.
  EXPECT_NE(text.find("verdict: patched is 2.83% worse than base"), std::string::npos) << text;
}

TEST(reportAnalyze, NumbersBehindTheTable) {
  auto r = analyze(example_metrics()[1]);
  ASSERT_EQ(r.sets.size(), 2u);
  EXPECT_DOUBLE_EQ(r.sets[0].normalized, 1.0);
  EXPECT_DOUBLE_EQ(r.sets[0].pct_imp, 0.0);
  EXPECT_FALSE(r.sets[0].ks.has_value());
  const double base_mean = (5120 + 5080 + 5210 + 5150 + 5098 + 5177) / 6.0;
  const double new_mean = (4990 + 5012 + 4950 + 5031 + 4977 + 5003) / 6.0;
  EXPECT_DOUBLE_EQ(r.sets[1].summary.mean, new_mean);
  EXPECT_NEAR(r.sets[1].pct_imp, (new_mean - base_mean) / base_mean * 100, 1e-12);
  EXPECT_LT(r.sets[1].pct_imp, 0);
  EXPECT_NEAR(r.sets[1].normalized, new_mean / base_mean, 1e-15);
  ASSERT_TRUE(r.sets[1].ks.has_value());
  // Disjoint samples of 6: exact KS p = 2 / C(12, 6).
  EXPECT_NEAR(r.sets[1].ks->pvalue, 2.0 / 924.0, 1e-15);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_TRUE(r.verdicts[0].significant);
  ASSERT_TRUE(r.sets[1].ci.has_value());
  EXPECT_LT(r.sets[1].ci->high, 0);
}

TEST(reportAnalyze, SignificanceLevelIsAnOption) {
  Options strict;
  strict.alpha = 0.001;
  auto r = analyze(example_metrics()[1], strict);
  EXPECT_FALSE(r.verdicts[0].significant);  // p = 0.0022 is above 0.1%
  EXPECT_NE(r.verdicts[0].text.find("not significant at 0.1%"), std::string::npos)
      << r.verdicts[0].text;
}

TEST(reportJson, MachineParseableWithStableFields) {
  auto doc = nlohmann::json::parse(render(example_metrics(), Format::Json));
  EXPECT_EQ(doc.at("schema"), "schedlab.compare.v1");
  ASSERT_EQ(doc.at("metrics").size(), 2u);
  const auto& lat = doc.at("metrics").at(0);
  EXPECT_EQ(lat.at("name"), "wakeup-latency");
  EXPECT_EQ(lat.at("unit"), "usec");
  EXPECT_EQ(lat.at("direction"), "lower_is_better");
  ASSERT_EQ(lat.at("sets").size(), 3u);
  for (const char* key : {"label", "base", "n", "mean", "std", "cov", "min", "median", "max", "q90",
                          "q99", "normalized", "pct_imp", "ks_d", "ks_p", "ks_method", "mwu_u",
                          "mwu_p", "ci_low", "ci_high"})
    EXPECT_TRUE(lat.at("sets").at(1).contains(key)) << key;
  EXPECT_TRUE(lat.at("sets").at(0).at("ks_p").is_null());
  EXPECT_EQ(lat.at("sets").at(1).at("ks_method"), "exact");
  EXPECT_EQ(lat.at("sets").at(1).at("n"), 10);
  EXPECT_DOUBLE_EQ(lat.at("sets").at(0).at("normalized").get<double>(), 1.0);
  ASSERT_EQ(lat.at("verdicts").size(), 2u);
  EXPECT_EQ(lat.at("verdicts").at(0).at("label"), "patched");
  EXPECT_EQ(lat.at("verdicts").at(0).at("significant"), true);
}

TEST(reportCsv, OneRowPerMetricAndSet) {
  auto lines = lines_of(render(example_metrics(), Format::Csv));
  ASSERT_EQ(lines.size(), 1u + 3u + 2u);
  EXPECT_EQ(lines[0],
            "metric,unit,direction,label,base,n,mean,std,cov,min,median,max,q90,q99,normalized,"
            "pct_imp,ks_d,ks_p,mwu_u,mwu_p,ci_low,ci_high,significant");
  EXPECT_EQ(lines[1].rfind("wakeup-latency,usec,lower_is_better,base,true,10,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[5].rfind("hackbench-throughput,ops/s,higher_is_better,patched,false,6,", 0), 0u);
  // Every row has as many fields as the header (no field here needs quoting).
  for (const auto& l : lines) EXPECT_EQ(std::count(l.begin(), l.end(), ','), 22) << l;
}

TEST(reportCsv, QuotesFieldsWithCommas) {
  Metric m{"lat, p99", "", Direction::LowerIsBetter, {{"a \"x\"", {1, 2}}, {"b", {2, 3}}}};
  auto lines = lines_of(render({m}, Format::Csv));
  EXPECT_EQ(lines.at(1).rfind("\"lat, p99\",,lower_is_better,\"a \"\"x\"\"\",true,2,", 0), 0u)
      << lines.at(1);
}

TEST(reportMisc, ByteDeterministic) {
  for (auto f : {Format::Text, Format::Markdown, Format::Json, Format::Csv})
    EXPECT_EQ(render(example_metrics(), f), render(example_metrics(), f)) << to_string(f);
}

TEST(reportMisc, FormatNames) {
  EXPECT_EQ(parse_format("json"), Format::Json);
  EXPECT_EQ(parse_format("markdown"), Format::Markdown);
  EXPECT_FALSE(parse_format("xml").has_value());
}

TEST(reportMisc, RejectsBadMetrics) {
  Metric none{"x", "", Direction::LowerIsBetter, {}};
  EXPECT_THROW(render({none}, Format::Text), std::invalid_argument);
  Metric empty{"x", "", Direction::LowerIsBetter, {{"a", {1, 2}}, {"b", {}}}};
  EXPECT_THROW(render({empty}, Format::Text), std::invalid_argument);
  Metric nan{"x", "", Direction::LowerIsBetter, {{"a", {1, std::nan("")}}, {"b", {1}}}};
  EXPECT_THROW(render({nan}, Format::Json), std::invalid_argument);
}

TEST(reportMisc, ZeroBaseMeanIsUndefinedNotInfinite) {
  Metric m{"delta", "", Direction::LowerIsBetter, {{"a", {-1, 1}}, {"b", {1, 2}}}};
  auto r = analyze(m);
  EXPECT_TRUE(std::isnan(r.sets[1].pct_imp));
  EXPECT_NE(r.verdicts[0].text.find("undefined"), std::string::npos);
  auto doc = nlohmann::json::parse(render({m}, Format::Json));
  EXPECT_TRUE(doc["metrics"][0]["sets"][1]["pct_imp"].is_null());
}

// Fixed decimals as hackbench and mmtests print them: tiny values get more decimals, never
// scientific notation (issue 25: `Amean 8.8075e-03`).
TEST(reportText, TinyValuesGetMoreFixedDecimals) {
  Metric m{"t", "s", Direction::LowerIsBetter,
           {{"a", {0.000123, 0.000125, 0.000119}}, {"b", {0.000101, 0.000099, 0.000104}}}};
  auto text = render({m}, Format::Text);
  EXPECT_NE(text.find("0.0001223 (   0.00%)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.0001013 (  17.17%)"), std::string::npos) << text;
  EXPECT_EQ(text.find("e-0"), std::string::npos) << text;
  Metric ms{"t", "s", Direction::LowerIsBetter, {{"a", {0.0088075, 0.0088}}, {"b", {0.0087, 0.0089}}}};
  EXPECT_NE(render({ms}, Format::Text).find("0.008804"), std::string::npos) << render({ms}, Format::Text);
  Metric big{"t", "s", Direction::LowerIsBetter, {{"a", {0.5, 0.25}}, {"b", {0.5, 0.75}}}};
  EXPECT_NE(render({big}, Format::Text).find("0.3750"), std::string::npos);
}

TEST(reportText, EqualMeansSayEqual) {
  Metric m{"x", "", Direction::HigherIsBetter, {{"a", {1, 3}}, {"b", {2, 2}}}};
  auto r = analyze(m);
  EXPECT_EQ(r.verdicts.at(0).text, "b is equal to a in mean (KS p=1.0000, difference not significant at 5%)");
}
