// schedlab::report::mmtests: the comparison table as mmtests' compare-kernels.sh prints it
// (bin/compare-mmtests.pl with a Multiops summary), so that a table from schedlab reads, parses
// and pastes like the ones posted on LKML. Written from mmtests' behaviour at the commit named by
// kPinnedCommit (docs/stats.md, "The mmtests table"); no mmtests code is used.
//
//   <title>
//                       <row 1 of each label: up to its first '-'>
//                       <row 2 of each label: after it>
//   Min       <op>   %12.Nf (  %7.2f%)  ...
//   Amean     <op>   ...        (Hmean, HStddev, HCoeffVar, BHmean.95 for higher-is-better)
//   Stddev    <op>
//   CoeffVar  <op>
//   Max       <op>
//   BAmean.95 <op>
//
// One row per statistic and operation (all operations of a statistic together), one column per
// sample set; the first set is the base. The Amean/Hmean cell of a set that differs significantly
// from the base is printed `*  x.xx%*` instead of `(  x.xx%)`.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/stats.hpp"

namespace schedlab::report::mmtests {

using stats::Direction;

// The mmtests commit whose layout and rules this module follows.
inline constexpr std::string_view kPinnedCommit = "638401e07e70d67fa5a1e6295e1315ae0af831b2";

// How the asterisk is decided.
//   ConfidenceInterval  mmtests since 8cd087ae (2024-11-28) and at kPinnedCommit: each set's mean
//                       has the interval mean +- z(1 - alpha/2) * stddev (alpha 0.05); the
//                       difference is significant when |base - set| exceeds the sum of the two
//                       half-widths.
//   TTest               mmtests before 8cd087ae: two-sample t statistic
//                       |base - set| / sqrt(sd_b^2/n_b + sd_s^2/n_s) with n_b + n_s - 2 degrees
//                       of freedom, significant when the two-sided p-value is below 0.10 (equal
//                       means with both stddevs 0: not significant, different: significant).
enum class Significance { ConfidenceInterval, TTest };
std::string_view to_string(Significance s);  // "ci", "ttest"
// Throws std::invalid_argument on an unknown name.
Significance parse_significance(std::string_view name);

struct Options {
  Significance significance = Significance::ConfidenceInterval;
  double ci_alpha = 0.05;     // the mean's confidence interval (ConfidenceInterval)
  double ttest_level = 0.10;  // mmtests' default _SignificanceLevel (TTest)
  // The "best mean" rows: the mean of the best p% of the samples for each p. mmtests at
  // kPinnedCommit prints {95} named BAmean.95; from 05288a05 (2026-03-04) back to 2019 it printed
  // {50, 95, 99}, and before fa1c230f (2026-04-08) named them BAmean-95. (Kept as options so
  // tables posted from older mmtests can be reproduced; the CLI uses the defaults.)
  std::vector<int> best_percents = {95};
  char best_separator = '.';
  int field_length = 12;    // width of a value (mmtests' _FieldLength)
  int compare_length = 7;   // width of a percentage (_CompareLength)
};

// The summary mmtests computes for one operation of one set. Values are NaN where mmtests has
// "NaN" (stddev of one sample, a harmonic mean of values that are not all positive).
struct Stats {
  std::size_t n = 0;
  Direction dir = Direction::LowerIsBetter;
  double min = 0;
  double mean = 0;      // arithmetic (lower is better) or harmonic (higher is better)
  double stddev = 0;    // Stddev: sample (n - 1) around the arithmetic mean; HStddev: see .cpp
  double coeffvar = 0;  // stddev * 100 / mean; 0 where mmtests has 0 (NaN parts, mean 0)
  double max = 0;
  std::vector<double> best;  // one per Options::best_percents
};

// mmtests' summary of one sample (its statistics, its sort order and its summation order).
// Throws std::invalid_argument on an empty sample or a NaN / infinite value.
Stats summarize(std::span<const double> values, Direction dir, const Options& opts = {});

// One row group: an operation (a benchmark parameter such as hackbench's group count, or a
// metric name) with one Stats per set.
struct Operation {
  std::string name;
  std::vector<Stats> sets;  // sets[0] is the base; all operations have as many as labels
};

struct Table {
  std::string title;                // printed on its own line above the header; may be empty
  std::vector<std::string> labels;  // one per set ("6.18.0-rc1-vanilla", "base", ...)
  int precision = 2;                // decimals of the values (mmtests' DecimalPlaces; 4 for hackbench)
  std::vector<Operation> ops;
};

// The two header rows of a label, as mmtests splits it: at the first '-' (after "-rcN" when the
// label has it there: "6.18.0-rc1-vanilla" -> {"6.18.0-rc1", "vanilla"}). A label without '-'
// goes whole into row 2 (mmtests would print it there too, and all but its last character in
// row 1).
std::pair<std::string, std::string> split_label(std::string_view label);

// mmtests' two percentage rules: pdiff (higher is better: new / base - 1) and pndiff (lower is
// better: 1 - new / base), in %, with its special cases for equal and zero values.
double pdiff(double value, double base);
double pndiff(double value, double base);

// Whether `set` differs from `base` significantly by the rule chosen (the cell gets '*').
bool significant(const Stats& base, const Stats& set, const Options& opts = {});

// The table (ends with a newline). Throws std::invalid_argument if an operation does not have one
// Stats per label or there is no label.
std::string render(const Table& t, const Options& opts = {});

// A table from raw samples: samples[op][set]. The sweep's entry point (ops = its points).
struct OperationSamples {
  std::string name;
  Direction dir = Direction::LowerIsBetter;
  std::vector<std::vector<double>> sets;
};
Table make_table(std::string title, std::vector<std::string> labels, int precision,
                 const std::vector<OperationSamples>& ops, const Options& opts = {});

}  // namespace schedlab::report::mmtests
