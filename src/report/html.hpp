// schedlab::report::html: one self-contained HTML report (no network access, no script that runs,
// no external font or image): the plots are inline SVG drawn here, the data behind them is
// embedded as JSON in a <script type="application/json"> block that no browser executes. The
// document is byte-deterministic for given inputs (no timestamp, fixed number formatting).
// docs/reports.md describes what each command's report holds.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "stats/stats.hpp"

namespace schedlab::report::html {

using stats::Direction;

// One side (sample set) of a comparison.
struct Series {
  std::string label;
  std::vector<double> values;
};

// A distribution drawn as a cumulative curve: points (value, cumulative fraction) in order of
// value. `side` picks the colour (0: base, 1: test, ...); `thin` draws it as one of many (a
// curve per run).
struct Curve {
  std::string label;
  int side = 0;
  bool thin = false;
  std::vector<std::pair<double, double>> points;
};

// A key counter of an A/B: the means per run of both sides.
struct CounterRow {
  std::string name, unit;
  double base_mean = 0, test_mean = 0;
  double ks_p = 1;
};

// A published result against the model (reproduce): gains are test performance over base
// performance (> 1 better); the band is the interval of model gains that counts as reproduced.
struct BandRow {
  std::string name;
  double published_gain = 1, model_gain = 1;
  double band_lo = 1, band_hi = 1;
  bool ran = false;
  bool in_band = false;
  std::string note;  // "in band", "miss", "not runnable: ..."
};

// Per-CPU time shares of a run (each row sums to 1).
struct CpuTime {
  int cpu = 0;
  double busy = 0, kernel = 0, idle = 0;
};

// Formats a number for display: fixed decimals chosen from its magnitude (at most 4 significant
// decimals), "-" for NaN. Locale-independent.
std::string num(double v);
// Escapes &, <, >, " and ' for HTML text and attributes.
std::string escape(const std::string& s);

class Document {
 public:
  explicit Document(std::string title);

  void heading(const std::string& text);            // <h2>
  void paragraph(const std::string& text);          // <p>, escaped
  void preformatted(const std::string& text);       // <pre>, escaped
  // A table; the first row is the header. Cells are escaped.
  void table(const std::vector<std::vector<std::string>>& rows);

  // Samples per side: each run a dot (deterministic jitter), the box from the first to the third
  // quartile with the median, whiskers to min and max, the mean with its 95% interval
  // (mean +- t(0.975, n - 1) s / sqrt(n)).
  void strip_box(const std::string& title, const std::string& unit, Direction dir,
                 const std::vector<Series>& sides);
  // Cumulative distributions; the x axis is logarithmic when the values span more than two
  // decades and are all positive.
  void cdf(const std::string& title, const std::string& x_label, const std::vector<Curve>& curves,
           const std::vector<std::string>& side_labels);
  // Key counters: test mean / base mean on a log2 axis (1 = unchanged), a filled dot where the
  // KS test rejects equal distributions at 5%.
  void counters(const std::string& title, const std::string& base_label, const std::string& test_label,
                const std::vector<CounterRow>& rows);
  // Published vs model gain per case, against the case's band (log axis).
  void bands(const std::string& title, const std::vector<BandRow>& rows);
  // A run's CPU time per CPU: busy, kernel and idle shares as stacked columns.
  void cpu_time(const std::string& title, const std::vector<CpuTime>& cpus);

  // The data embedded as JSON (the same numbers the plots show, at full precision).
  void set_data(nlohmann::ordered_json data) { data_ = std::move(data); }

  // The whole document.
  std::string str() const;

 private:
  void close_group();
  void figure(const std::string& svg, const std::string& caption, int width);
  std::string title_;
  std::string body_;
  bool group_open_ = false;
  int plots_ = 0;
  nlohmann::ordered_json data_ = nlohmann::ordered_json::object();
};

// The colour of side i (base blue, test orange, then more).
const char* side_colour(int side);

}  // namespace schedlab::report::html
