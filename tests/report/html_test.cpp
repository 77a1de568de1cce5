// The HTML report: self-contained (nothing to load, no script that runs), plots with labelled
// axes and one mark per sample, the data as parseable JSON, escaping, byte-determinism.
// (tests/browser loads a real report in Chromium.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "report/html.hpp"

using namespace schedlab::report::html;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

std::string example() {
  Document d("a <report> & \"more\"");
  d.heading("Metrics");
  d.paragraph("</script><script>alert(1)</script>");
  d.strip_box("usecs_per_op", "us/op", Direction::LowerIsBetter,
              {{"base", {5.1, 5.3, 5.2, 5.0, 5.25}}, {"IDLE_SPIN", {2.4, 2.45, 2.43}}});
  d.cdf("wakeup latency", "latency (us)",
        {{"base", 0, false, {{1, 0.2}, {2, 0.7}, {40, 1}}}, {"test", 1, true, {{1, 0.5}, {3, 1}}}}, {"base", "test"});
  d.counters("Key counters", "base", "test",
             {{"context_switches", "count", 100, 50, 0.001}, {"migrations", "count", 0, 0, 1},
              {"idle_spin_ns", "ns", 0, 10, 0.01}, {"ipis", "count", 10, 0, 0.2}});
  d.bands("Bands", {{"case-a", 1.5, 1.4, 1.2, 2.0, true, true, "in band"},
                    {"case-b", 0.8, 1.1, 0.6, 0.95, true, false, "miss"},
                    {"case-c", 1.2, 1, 1.0, 1.5, false, false, "not runnable"}});
  d.cpu_time("CPU time", {{0, 0.5, 0.1, 0.4}, {1, 0.2, 0.05, 0.75}});
  d.table({{"metric", "value"}, {"x<y", "1"}});
  nlohmann::ordered_json data;
  data["schema"] = "schedlab.report.v1";
  data["label"] = "</script><!-- & -->";
  data["values"] = {1.5, 2.25};
  d.set_data(data);
  return d.str();
}

}  // namespace

TEST(htmlReport, IsByteDeterministic) { EXPECT_EQ(example(), example()); }

TEST(htmlReport, LoadsNothingAndRunsNoScript) {
  const std::string h = example();
  EXPECT_EQ(h.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(h.find("http:"), std::string::npos);  // no URL at all (inline SVG needs no namespace)
  EXPECT_EQ(h.find("https:"), std::string::npos);
  EXPECT_EQ(h.find("//"), std::string::npos);
  EXPECT_EQ(h.find(" src="), std::string::npos);
  EXPECT_EQ(h.find("@import"), std::string::npos);
  EXPECT_EQ(h.find("url("), std::string::npos);
  // One <script> element, the JSON data block (not executed), and the policy forbids any load.
  EXPECT_EQ(count(h, "<script"), 1u);
  EXPECT_EQ(count(h, "<script type=\"application/json\" id=\"schedlab-data\">"), 1u);
  EXPECT_NE(h.find("content=\"default-src 'none'"), std::string::npos);
}

TEST(htmlReport, DataIsEmbeddedAsJson) {
  const std::string h = example();
  const std::string open = "<script type=\"application/json\" id=\"schedlab-data\">";
  const auto a = h.find(open) + open.size();
  const auto b = h.find("</script>", a);
  ASSERT_NE(b, std::string::npos);
  auto j = nlohmann::json::parse(h.substr(a, b - a));
  EXPECT_EQ(j["schema"], "schedlab.report.v1");
  EXPECT_EQ(j["label"], "</script><!-- & -->");  // escaped as \u003c..., read back whole
  EXPECT_EQ(j["values"][1], 2.25);
}

TEST(htmlReport, TextIsEscaped) {
  const std::string h = example();
  EXPECT_NE(h.find("<title>a &lt;report&gt; &amp; &quot;more&quot;</title>"), std::string::npos);
  EXPECT_NE(h.find("<p>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>"), std::string::npos);
  EXPECT_NE(h.find("<td>x&lt;y</td>"), std::string::npos);
}

TEST(htmlReport, EveryPlotHasTitleAndLabelledAxes) {
  const std::string h = example();
  std::regex svg(R"re(<svg class="plot" data-kind="(\w+)"[^>]*>([\s\S]*?)</svg>)re");
  int plots = 0;
  for (auto it = std::sregex_iterator(h.begin(), h.end(), svg); it != std::sregex_iterator(); ++it) {
    ++plots;
    const std::string body = (*it)[2];
    EXPECT_NE(body.find("<title id="), std::string::npos) << (*it)[1];
    std::smatch m;
    EXPECT_TRUE(std::regex_search(body, m, std::regex(R"(<text class="axis-title x"[^>]*>[^<]+</text>)"))) << (*it)[1];
    EXPECT_TRUE(std::regex_search(body, m, std::regex(R"(<text class="axis-title y"[^>]*>[^<]+</text>)"))) << (*it)[1];
  }
  EXPECT_EQ(plots, 5);
}

TEST(htmlReport, MarksFollowTheData) {
  const std::string h = example();
  EXPECT_EQ(count(h, "<circle class=\"run\""), 8u);  // 5 + 3 runs
  EXPECT_EQ(count(h, "<path class=\"mean\""), 2u);
  EXPECT_EQ(count(h, "class=\"curve"), 2u);
  EXPECT_EQ(count(h, "class=\"curve thin\""), 1u);
  // Counters: a dot unless both sides are 0; filled where KS p < 0.05.
  EXPECT_EQ(count(h, "<circle class=\"ratio"), 3u);
  EXPECT_EQ(count(h, "<circle class=\"ratio significant\""), 2u);
  EXPECT_NE(h.find(">0 on both sides<"), std::string::npos);
  EXPECT_NE(h.find(">x0.5<"), std::string::npos);
  // Bands: a model dot for the cases that ran, coloured by the verdict.
  EXPECT_EQ(count(h, "<circle class=\"model in-band\""), 1u);
  EXPECT_EQ(count(h, "<circle class=\"model miss\""), 1u);
  EXPECT_EQ(count(h, "<path class=\"published\""), 3u);
  EXPECT_EQ(count(h, "<g class=\"cpu\""), 2u);
}

TEST(htmlReport, NumbersAreFormattedStably) {
  EXPECT_EQ(num(0), "0");
  EXPECT_EQ(num(-0.0), "0");
  EXPECT_EQ(num(1374), "1374");
  EXPECT_EQ(num(2.30551), "2.306");
  EXPECT_EQ(num(145041.2991), "145041");
  EXPECT_EQ(num(0.00686), "0.0069");
  EXPECT_EQ(num(0.0000123), "1.230e-05");
  EXPECT_EQ(num(std::nan("")), "-");
}
