// schedlab::report: the A/B comparison table printed by `schedlab compare` (and later `ab`).
// One table per metric; sets[0] of a metric is the base the others are compared against.
// Output is byte-deterministic for given inputs and options. See docs/stats.md for the layout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats/stats.hpp"

namespace schedlab::report {

using stats::Direction;

// "lower_is_better", "higher_is_better", "neutral": the id in JSON and CSV.
std::string direction_id(Direction d);

struct SampleSet {
  std::string label;
  std::vector<double> values;
};

struct Metric {
  std::string name;
  std::string unit;  // may be empty
  Direction dir = Direction::LowerIsBetter;
  std::vector<SampleSet> sets;  // sets[0] is the base
};

enum class Format { Text, Markdown, Json, Csv };

// "text", "markdown", "json", "csv".
std::string_view to_string(Format f);
std::optional<Format> parse_format(std::string_view name);

struct Options {
  double alpha = 0.05;  // significance level of the KS verdict
  stats::StdKind std_kind = stats::StdKind::Population;
  stats::QuantileMethod quantile_method = stats::QuantileMethod::Linear;
  unsigned bootstrap_resamples = 1000;  // 0: no bootstrap interval
  double bootstrap_level = 0.95;
  std::uint64_t bootstrap_seed = 1;
};

// The numbers behind one column of the table.
struct SetResult {
  std::string label;
  stats::Summary summary;
  double normalized = 1.0;  // mean / base mean
  double pct_imp = 0.0;     // against the base mean, positive = better
  // Against the base; empty for the base itself.
  std::optional<stats::KsResult> ks;
  std::optional<stats::MwuResult> mwu;
  std::optional<stats::BootstrapCi> ci;  // of mean(this) - mean(base)
};

struct Verdict {
  std::string base;
  std::string label;
  double pct_imp = 0.0;
  double ks_p = 1.0;
  bool significant = false;  // ks_p < alpha
  std::string text;          // "B is 4.10% better than A (KS p=0.0012, significant at 5%)"
};

struct MetricResult {
  std::string name;
  std::string unit;
  Direction dir = Direction::LowerIsBetter;
  std::vector<SetResult> sets;
  std::vector<Verdict> verdicts;  // one per non-base set
};

// Throws std::invalid_argument if the metric has no set, or a set is empty or holds NaN/inf.
MetricResult analyze(const Metric& metric, const Options& opts = {});

// The tables for all metrics in the given format (text and markdown end with a newline, JSON is
// one document, CSV one header row then one row per metric and set).
std::string render(const std::vector<Metric>& metrics, Format f, const Options& opts = {});
std::string render(const std::vector<MetricResult>& results, Format f, const Options& opts = {});

}  // namespace schedlab::report
