// The mmtests compare table (see mmtests.hpp; the rules are described in docs/stats.md).
#include "report/mmtests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <regex>
#include <stdexcept>

namespace schedlab::report::mmtests {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// mmtests reads R's answers from R's printed output, which has 7 significant digits.
double r_printed(double v) {
  if (!std::isfinite(v)) return v;
  return std::stod(fmt::format("{:.7g}", v));
}

bool higher(Direction d) { return d == Direction::HigherIsBetter; }

// The mean of a prefix of the sorted sample, summed in that order as mmtests does.
double amean_of(std::span<const double> xs) {
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}
// The harmonic mean; NaN when a value is not positive (mmtests' calc_hmean).
double hmean_of(std::span<const double> xs) {
  double sum = 0;
  for (double x : xs) {
    if (!(x > 0)) return kNaN;
    sum += 1 / x;
  }
  return static_cast<double>(xs.size()) / sum;
}

// Percentage cell: NaN is printed as Perl prints it.
std::string pct_cell(double v, int width) {
  if (std::isnan(v)) return fmt::format("{:>{}}", "NaN", width);
  return fmt::format("{:{}.2f}", v, width);
}

}  // namespace

std::string_view to_string(Significance s) {
  return s == Significance::ConfidenceInterval ? "ci" : "ttest";
}

Significance parse_significance(std::string_view name) {
  if (name == "ci") return Significance::ConfidenceInterval;
  if (name == "ttest") return Significance::TTest;
  throw std::invalid_argument(fmt::format("unknown mmtests significance rule '{}' (use ci or ttest)", name));
}

Stats summarize(std::span<const double> values, Direction dir, const Options& opts) {
  if (values.empty()) throw std::invalid_argument("mmtests summary: empty sample");
  for (double v : values)
    if (!std::isfinite(v))
      throw std::invalid_argument("mmtests summary: sample holds a NaN or infinite value");
  // mmtests sorts the sample best first: ascending when lower is better, descending otherwise,
  // and sums in that order.
  std::vector<double> s(values.begin(), values.end());
  if (higher(dir))
    std::sort(s.begin(), s.end(), std::greater<>());
  else
    std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  Stats st;
  st.n = n;
  st.dir = dir;
  st.min = higher(dir) ? s.back() : s.front();
  st.max = higher(dir) ? s.front() : s.back();
  st.mean = higher(dir) ? hmean_of(s) : amean_of(s);
  // Stddev (arithmetic): the sample standard deviation, sum (x - mean)^2 / (n - 1).
  // HStddev (harmonic): sqrt(sum (1/x - 1/H)^2 * H^4 / n), the spread of 1/x carried back to the
  // scale of x (mmtests 8a0e63a2); NaN for one sample or when H is.
  if (n <= 1 || std::isnan(st.mean)) {
    st.stddev = kNaN;
  } else if (!higher(dir)) {
    double d = 0;
    for (double x : s) d += (x - st.mean) * (x - st.mean);
    st.stddev = std::sqrt(d / static_cast<double>(n - 1));
  } else {
    double d = 0;
    for (double x : s) d += (1 / x - 1 / st.mean) * (1 / x - 1 / st.mean);
    st.stddev = std::sqrt(d * std::pow(st.mean, 4) / static_cast<double>(n));
  }
  {
    const double sd = std::isnan(st.stddev) ? 0 : st.stddev;
    const double m = std::isnan(st.mean) ? 0 : st.mean;
    st.coeffvar = m != 0 ? sd * 100 / m : 0;
  }
  for (int p : opts.best_percents) {
    std::size_t count = n * static_cast<std::size_t>(p) / 100;
    count = std::max<std::size_t>(count, 1);
    std::span<const double> head(s.data(), std::min(count, n));
    st.best.push_back(higher(dir) ? hmean_of(head) : amean_of(head));
  }
  return st;
}

std::pair<std::string, std::string> split_label(std::string_view label) {
  const auto dash = label.find('-');
  if (dash == std::string_view::npos) return {"", std::string(label)};
  std::size_t index = dash;
  // mmtests' "-rcN" rule: a "-rc<digit>" within the index + 3 characters from the dash keeps
  // the release candidate in row 1.
  static const std::regex rc("-rc[0-9]");
  const std::string window(label.substr(index, index + 3));
  if (std::regex_search(window, rc)) index += 4;
  std::string first(label.substr(0, std::min(index, label.size())));
  std::string second = index + 1 <= label.size() ? std::string(label.substr(index + 1)) : "";
  return {first, second};
}

double pdiff(double value, double base) {
  if (value == base || value == 0) return 0;
  if (base == 0 || std::isnan(base)) return 100;
  return value * 100 / base - 100;
}

double pndiff(double value, double base) {
  if (value == base) return 0;
  if (value == 0) return 100;
  if (base == 0) return -99;
  return 100 - (value * 100 / base);
}

bool significant(const Stats& base, const Stats& set, const Options& opts) {
  if (opts.significance == Significance::ConfidenceInterval) {
    // The interval of each mean; a set without one (stddev undefined) is not compared.
    if (std::isnan(base.stddev) || std::isnan(set.stddev) || std::isnan(base.mean) ||
        std::isnan(set.mean))
      return false;
    const double z = boost::math::quantile(boost::math::normal(0, 1), 1 - opts.ci_alpha / 2);
    const double qb = r_printed(z * base.stddev), qs = r_printed(z * set.stddev);
    const double b_lo = base.mean - qb, b_hi = base.mean + qb;
    const double s_lo = set.mean - qs, s_hi = set.mean + qs;
    const double diff = base.mean - set.mean;
    const double cisum =
        base.mean < set.mean ? b_hi - base.mean + set.mean - s_lo : base.mean - b_lo + s_hi - set.mean;
    const double ratio = cisum == 0 ? diff : diff / cisum;
    return std::fabs(ratio) > 1;
  }
  // The two-sample t-test of mmtests before 8cd087ae.
  const double mb = std::isnan(base.mean) ? 0 : base.mean, ms = std::isnan(set.mean) ? 0 : set.mean;
  const double sb = std::isnan(base.stddev) ? 0 : base.stddev;
  const double ss = std::isnan(set.stddev) ? 0 : set.stddev;
  const double nb = static_cast<double>(base.n), ns = static_cast<double>(set.n);
  const double stderror = (nb > 0 && ns > 0) ? std::sqrt(sb * sb / nb + ss * ss / ns) : 0;
  if (stderror == 0) return mb - ms != 0;
  const double t = std::fabs(mb - ms) / stderror;
  const double df = nb + ns - 2;
  const double upper = boost::math::cdf(boost::math::complement(boost::math::students_t(df), t));
  const double p = r_printed(upper) * 2;
  return p < opts.ttest_level;
}

std::string render(const Table& t, const Options& opts) {
  if (t.labels.empty()) throw std::invalid_argument("mmtests table: no sample set");
  for (const auto& op : t.ops) {
    if (op.sets.size() != t.labels.size())
      throw std::invalid_argument(fmt::format("mmtests table: operation '{}' has {} sets for {} labels",
                                              op.name, op.sets.size(), t.labels.size()));
    for (const auto& s : op.sets)
      if (s.best.size() != opts.best_percents.size())
        throw std::invalid_argument("mmtests table: summary computed with other best-mean options");
  }

  // The statistics, in mmtests' order, each with its name per direction, its value and the rule
  // its percentage follows (Stddev and CoeffVar: lower is better whatever the metric).
  enum class Rule { Preferred, LowerBetter };
  struct Row {
    std::string a_name, h_name;
    Rule rule;
    bool is_mean;
    std::function<double(const Stats&)> get;
  };
  std::vector<Row> rows = {
      {"Min", "Min", Rule::Preferred, false, [](const Stats& s) { return s.min; }},
      {"Amean", "Hmean", Rule::Preferred, true, [](const Stats& s) { return s.mean; }},
      {"Stddev", "HStddev", Rule::LowerBetter, false, [](const Stats& s) { return s.stddev; }},
      {"CoeffVar", "HCoeffVar", Rule::LowerBetter, false, [](const Stats& s) { return s.coeffvar; }},
      {"Max", "Max", Rule::Preferred, false, [](const Stats& s) { return s.max; }},
  };
  for (std::size_t i = 0; i < opts.best_percents.size(); ++i) {
    const int p = opts.best_percents[i];
    rows.push_back({fmt::format("BAmean{}{}", opts.best_separator, p),
                    fmt::format("BHmean{}{}", opts.best_separator, p), Rule::Preferred, false,
                    [i](const Stats& s) { return s.best[i]; }});
  }
  auto dir_of = [](const Operation& op) { return op.sets.empty() ? Direction::LowerIsBetter : op.sets[0].dir; };
  auto name_of = [&](const Row& r, const Operation& op) {
    return higher(dir_of(op)) ? r.h_name : r.a_name;
  };

  std::size_t stat_w = 0, op_w = 0;
  for (const auto& op : t.ops) {
    op_w = std::max(op_w, op.name.size());
    for (const auto& r : rows) stat_w = std::max(stat_w, name_of(r, op).size());
  }
  const std::size_t op_len = stat_w + op_w + 1;
  const int fl = opts.field_length, cl = opts.compare_length;
  const int col_w = fl + cl + 4;  // "%12.Nf" + " (" + "%7.2f" + "%)"

  std::string out;
  if (!t.title.empty()) out += t.title + "\n";
  std::vector<std::pair<std::string, std::string>> heads;
  for (const auto& l : t.labels) heads.push_back(split_label(l));
  for (int row = 0; row < 2; ++row) {
    std::string line = std::string(op_len, ' ');
    for (const auto& h : heads) line += fmt::format("{:>{}}", row == 0 ? h.first : h.second, col_w);
    out += line + "\n";
  }
  for (const auto& r : rows) {
    for (const auto& op : t.ops) {
      std::string line = fmt::format("{:<{}} {:<{}}", name_of(r, op), stat_w, op.name, op_w);
      const Stats& base = op.sets[0];
      const bool hib = higher(dir_of(op));
      for (std::size_t i = 0; i < op.sets.size(); ++i) {
        const Stats& s = op.sets[i];
        double v = r.get(s);
        double cmp = 0;
        if (std::isnan(v)) {
          v = 0;  // mmtests prints an undefined statistic as 0 with no change
        } else {
          const double b = r.get(base);
          cmp = (r.rule == Rule::LowerBetter || !hib) ? pndiff(v, b) : pdiff(v, b);
        }
        const bool star = r.is_mean && i > 0 && significant(base, s, opts);
        line += fmt::format("{:{}.{}f}", v, fl, t.precision);
        line += star ? " *" + pct_cell(cmp, cl) + "%*" : " (" + pct_cell(cmp, cl) + "%)";
      }
      out += line + "\n";
    }
  }
  return out;
}

Table make_table(std::string title, std::vector<std::string> labels, int precision,
                 const std::vector<OperationSamples>& ops, const Options& opts) {
  Table t;
  t.title = std::move(title);
  t.labels = std::move(labels);
  t.precision = precision;
  for (const auto& o : ops) {
    if (o.sets.size() != t.labels.size())
      throw std::invalid_argument(fmt::format("mmtests table: operation '{}' has {} sets for {} labels",
                                              o.name, o.sets.size(), t.labels.size()));
    Operation op;
    op.name = o.name;
    for (const auto& s : o.sets) op.sets.push_back(summarize(s, o.dir, opts));
    t.ops.push_back(std::move(op));
  }
  return t;
}

}  // namespace schedlab::report::mmtests
