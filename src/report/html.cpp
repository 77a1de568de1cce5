// The self-contained HTML report: SVG plots drawn here (see html.hpp).
#include "report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

namespace schedlab::report::html {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Plot geometry (CSS pixels; the SVG scales with the page).
constexpr int kWidth = 560;

// A coordinate: two decimals are far below a pixel.
std::string px(double v) {
  if (std::fabs(v) < 0.005) v = 0;  // no "-0.00"
  return fmt::format("{:.2f}", v);
}

struct Axis {
  double d0 = 0, d1 = 1;  // domain
  double r0 = 0, r1 = 1;  // range (pixels)
  bool log = false;
  double operator()(double v) const {
    if (log) {
      const double a = std::log10(d0), b = std::log10(d1);
      return r0 + (std::log10(v) - a) / (b - a) * (r1 - r0);
    }
    return r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  }
};

// "Nice" linear ticks covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
struct Ticks {
  std::vector<double> values;
  int decimals = 0;
};
Ticks linear_ticks(double lo, double hi, int target = 5) {
  Ticks t;
  const double range = hi - lo;
  const double raw = range / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  t.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.values.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_label(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// Powers of ten (and 2, 5 between them when there are few decades) within [lo, hi].
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  const int a = static_cast<int>(std::floor(std::log10(lo))), b = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = b - a <= 2;
  for (int e = a; e <= b; ++e)
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  return out;
}
std::string log_tick_label(double v) {
  if (v >= 1) return fmt::format("{:.0f}", v);
  const int dec = static_cast<int>(std::ceil(-std::log10(v) - 1e-9));
  return fmt::format("{:.{}f}", v, dec);
}

// The domain of some values, padded a little; never empty.
std::pair<double, double> padded(double lo, double hi) {
  if (!(hi > lo)) {
    const double d = lo == 0 ? 1 : std::fabs(lo) * 0.05;
    return {lo - d, hi + d};
  }
  const double d = (hi - lo) * 0.06;
  return {lo - d, hi + d};
}

struct Frame {
  int width = kWidth, height = 320;
  int left = 80, right = 20, top = 44, bottom = 64;
  double x0() const { return left; }
  double x1() const { return width - right; }
  double y0() const { return height - bottom; }  // bottom edge (pixels grow downwards)
  double y1() const { return top; }
};

std::string svg_open(int id, const char* kind, const Frame& f, const std::string& title,
                     const std::string& subtitle) {
  std::string s = fmt::format(
      "<svg class=\"plot\" data-kind=\"{}\" id=\"plot{}\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" aria-labelledby=\"plot{}-title\">\n",
      kind, id, f.width, f.height, f.width, f.height, id);
  s += fmt::format("<title id=\"plot{}-title\">{}</title>\n", id, escape(title));
  s += fmt::format("<text class=\"plot-title\" x=\"{}\" y=\"18\">{}</text>\n", px(f.left), escape(title));
  if (!subtitle.empty())
    s += fmt::format("<text class=\"plot-subtitle\" x=\"{}\" y=\"34\">{}</text>\n", px(f.left), escape(subtitle));
  return s;
}

// The frame's axis lines and titles.
std::string axis_titles(const Frame& f, const std::string& x_title, const std::string& y_title) {
  std::string s;
  s += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(f.x0()), px(f.y0()),
                   px(f.x1()), px(f.y0()));
  s += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(f.x0()), px(f.y0()),
                   px(f.x0()), px(f.y1()));
  s += fmt::format("<text class=\"axis-title x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   px((f.x0() + f.x1()) / 2), px(f.height - 14), escape(x_title));
  s += fmt::format(
      "<text class=\"axis-title y\" x=\"0\" y=\"0\" text-anchor=\"middle\" transform=\"translate(18 {}) rotate(-90)\">{}</text>\n",
      px((f.y0() + f.y1()) / 2), escape(y_title));
  return s;
}

std::string y_ticks(const Frame& f, const Axis& y, const Ticks& t) {
  std::string s;
  for (double v : t.values) {
    const double yy = y(v);
    s += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(f.x0()), px(yy), px(f.x1()),
                     px(yy));
    s += fmt::format("<text class=\"tick y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(f.x0() - 6),
                     px(yy + 4), tick_label(v, t.decimals));
  }
  return s;
}

std::string x_tick(const Frame& f, double xx, const std::string& label) {
  return fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(xx), px(f.y0()), px(xx),
                     px(f.y1())) +
         fmt::format("<text class=\"tick x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(xx),
                     px(f.y0() + 16), escape(label));
}

std::string legend(const Frame& f, const std::vector<std::string>& labels,
                   const std::vector<std::string>& colours = {}) {
  std::string s;
  double x = f.x1();
  // Right-aligned, one entry per side, at the height of the title.
  for (std::size_t i = labels.size(); i-- > 0;) {
    const double w = 22 + 7.0 * static_cast<double>(labels[i].size());
    x -= w;
    s += fmt::format("<rect class=\"legend-swatch\" x=\"{}\" y=\"10\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", px(x),
                     i < colours.size() ? colours[i] : std::string(side_colour(static_cast<int>(i))));
    s += fmt::format("<text class=\"legend\" x=\"{}\" y=\"20\">{}</text>\n", px(x + 16), escape(labels[i]));
  }
  return s;
}

double quantile_sorted(const std::vector<double>& s, double q) {
  return stats::quantile_sorted(s, q, stats::QuantileMethod::Linear);
}

}  // namespace

const char* side_colour(int side) {
  static const char* kColours[] = {"#1f77b4", "#e8710a", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};
  return kColours[static_cast<std::size_t>(side) % 6];
}

std::string num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a < 1e15 && v == std::floor(v)) return fmt::format("{:.0f}", v == 0 ? 0.0 : v);
  int dec = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
  if (a != 0 && a < 0.001) return fmt::format("{:.3e}", v);
  std::string s = fmt::format("{:.{}f}", v, dec);
  if (s == "-0" || s.find_first_not_of("-0.") == std::string::npos) s = s[0] == '-' ? s.substr(1) : s;
  return s;
}

std::string escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

Document::Document(std::string title) : title_(std::move(title)) {}

void Document::close_group() {
  if (group_open_) body_ += "</div>\n";
  group_open_ = false;
}
void Document::figure(const std::string& svg, const std::string& caption, int width) {
  if (!group_open_) body_ += "<div class=\"plots\">\n";
  group_open_ = true;
  body_ += fmt::format("<figure style=\"max-width: {}px\">\n", width) + svg + "<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}

void Document::heading(const std::string& text) {
  close_group();
  body_ += "<h2>" + escape(text) + "</h2>\n";
}
void Document::paragraph(const std::string& text) {
  close_group();
  body_ += "<p>" + escape(text) + "</p>\n";
}
void Document::preformatted(const std::string& text) {
  close_group();
  body_ += "<pre>" + escape(text) + "</pre>\n";
}

void Document::table(const std::vector<std::vector<std::string>>& rows) {
  close_group();
  if (rows.empty()) return;
  body_ += "<table>\n<thead><tr>";
  for (const auto& c : rows[0]) body_ += "<th>" + escape(c) + "</th>";
  body_ += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 1; r < rows.size(); ++r) {
    body_ += "<tr>";
    for (std::size_t c = 0; c < rows[r].size(); ++c)
      body_ += (c == 0 ? "<td>" : "<td class=\"num\">") + escape(rows[r][c]) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
}

void Document::strip_box(const std::string& title, const std::string& unit, Direction dir,
                         const std::vector<Series>& sides) {
  const int id = ++plots_;
  Frame f;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : sides)
    for (double v : s.values) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  auto [d0, d1] = padded(lo, hi);
  const Ticks ticks = linear_ticks(d0, d1);
  Axis y{d0, d1, f.y0(), f.y1(), false};
  const std::string y_title = unit.empty() ? title : fmt::format("{} ({})", title, unit);
  std::string s = svg_open(id, "strip", f, title,
                           dir == Direction::Neutral         ? "neutral"
                           : dir == Direction::LowerIsBetter ? "lower is better"
                                                             : "higher is better");
  s += y_ticks(f, y, ticks);
  const double band = (f.x1() - f.x0()) / static_cast<double>(std::max<std::size_t>(sides.size(), 1));
  for (std::size_t i = 0; i < sides.size(); ++i) {
    const auto& side = sides[i];
    const double cx = f.x0() + band * (static_cast<double>(i) + 0.5);
    const char* col = side_colour(static_cast<int>(i));
    s += x_tick(f, cx, fmt::format("{} (n={})", side.label, side.values.size()));
    if (side.values.empty()) continue;
    std::vector<double> sorted = side.values;
    std::sort(sorted.begin(), sorted.end());
    const double q1 = quantile_sorted(sorted, 0.25), med = quantile_sorted(sorted, 0.5),
                 q3 = quantile_sorted(sorted, 0.75);
    const double bw = std::min(band * 0.28, 90.0);
    const double bx = cx - bw * 0.75;  // the box left of the centre, the mean right of it
    // Whiskers (min to max) and the box.
    s += fmt::format("<g class=\"side\" data-label=\"{}\">\n", escape(side.label));
    s += fmt::format("<line class=\"whisker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
                     px(bx + bw / 2), px(y(sorted.front())), px(bx + bw / 2), px(y(sorted.back())), col);
    s += fmt::format("<rect class=\"box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" stroke=\"{}\"/>\n", px(bx),
                     px(y(q3)), px(bw), px(std::max(y(q1) - y(q3), 0.5)), col);
    s += fmt::format("<line class=\"median\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", px(bx),
                     px(y(med)), px(bx + bw), px(y(med)), col);
    // The runs, jittered deterministically over the box's width (golden-ratio sequence).
    for (std::size_t k = 0; k < side.values.size(); ++k) {
      const double frac = std::fmod(0.5 + 0.6180339887498949 * static_cast<double>(k), 1.0);
      s += fmt::format("<circle class=\"run\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n",
                       px(bx + bw * (0.1 + 0.8 * frac)), px(y(side.values[k])), col);
    }
    // The mean and its 95% interval.
    const auto sum = stats::summarize(side.values, stats::StdKind::Sample);
    double half = 0;
    if (sum.count > 1) {
      const double t = boost::math::quantile(boost::math::students_t(static_cast<double>(sum.count - 1)), 0.975);
      half = t * sum.stddev / std::sqrt(static_cast<double>(sum.count));
    }
    const double mx = cx + bw * 0.55;
    s += fmt::format("<line class=\"interval\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", px(mx),
                     px(y(std::max(sum.mean - half, d0))), px(mx), px(y(std::min(sum.mean + half, d1))), col);
    s += fmt::format(
        "<path class=\"mean\" d=\"M{} {}l6 6l-6 6l-6 -6z\" fill=\"#fff\" stroke=\"{}\"><title>mean {} (95% interval {} .. {})</title></path>\n",
        px(mx), px(y(sum.mean) - 6), col, num(sum.mean), num(sum.mean - half), num(sum.mean + half));
    s += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}</text>\n", px(mx + 9), px(y(sum.mean) + 4),
                     num(sum.mean));
    s += "</g>\n";
  }
  s += axis_titles(f, "side", y_title);
  s += "</svg>\n";
  figure(s, y_title + ": dots are runs; box: quartiles and median; whiskers: min..max; diamond: mean, bar: its 95% interval", f.width);
}

void Document::cdf(const std::string& title, const std::string& x_label, const std::vector<Curve>& curves,
                   const std::vector<std::string>& side_labels) {
  const int id = ++plots_;
  Frame f;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& c : curves)
    for (const auto& [x, p] : c.points) lo = std::min(lo, x), hi = std::max(hi, x);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  const bool log = lo > 0 && hi / lo > 100;
  Axis x;
  std::string ticks;
  if (log) {
    x = Axis{lo / 1.2, hi * 1.2, f.x0(), f.x1(), true};
    for (double v : log_ticks(x.d0, x.d1)) ticks += x_tick(f, x(v), log_tick_label(v));
  } else {
    auto [d0, d1] = padded(lo, hi);
    if (lo >= 0) d0 = std::max(d0, 0.0);
    const Ticks t = linear_ticks(d0, d1);
    x = Axis{d0, d1, f.x0(), f.x1(), false};
    for (double v : t.values) ticks += x_tick(f, x(v), tick_label(v, t.decimals));
  }
  Axis y{0, 1, f.y0(), f.y1(), false};
  std::string s = svg_open(id, "cdf", f, title, log ? "logarithmic value axis" : "");
  s += y_ticks(f, y, Ticks{{0, 0.25, 0.5, 0.75, 1}, 2});
  s += ticks;
  for (const auto& c : curves) {
    if (c.points.empty()) continue;
    std::string d = fmt::format("M{} {}", px(x(c.points.front().first)), px(y(0)));
    for (const auto& [vx, p] : c.points) d += fmt::format("H{}V{}", px(x(vx)), px(y(p)));
    s += fmt::format("<path class=\"curve{}\" d=\"{}\" stroke=\"{}\"><title>{}</title></path>\n",
                     c.thin ? " thin" : "", d, side_colour(c.side), escape(c.label));
  }
  s += legend(f, side_labels);
  s += axis_titles(f, x_label, "cumulative fraction");
  s += "</svg>\n";
  figure(s, title, f.width);
}

void Document::counters(const std::string& title, const std::string& base_label, const std::string& test_label,
                        const std::vector<CounterRow>& rows) {
  const int id = ++plots_;
  Frame f;
  f.width = 900;
  f.left = 300;
  f.right = 110;
  f.top = 48;
  f.height = f.top + 22 * static_cast<int>(rows.size()) + 70;
  const double lim = 6;  // log2 ratio range: 1/64 .. 64
  Axis x{-lim, lim, f.x0(), f.x1(), false};
  std::string s = svg_open(id, "counters", f, title,
                           fmt::format("{} mean / {} mean per run; filled: KS p < 0.05", test_label, base_label));
  for (int e = -6; e <= 6; e += 2) {
    const std::string label = e >= 0 ? fmt::format("{:.0f}", std::pow(2.0, e)) : fmt::format("1/{:.0f}", std::pow(2.0, -e));
    s += x_tick(f, x(e), label);
  }
  s += fmt::format("<line class=\"unity\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(x(0)), px(f.y0()),
                   px(x(0)), px(f.y1()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double yy = f.top + 22.0 * static_cast<double>(i) + 14;
    const std::string name = r.unit.empty() ? r.name : fmt::format("{} ({})", r.name, r.unit);
    s += fmt::format("<g class=\"counter\" data-name=\"{}\">\n", escape(r.name));
    s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(f.x0() - 8),
                     px(yy + 4), escape(name));
    const bool sig = r.ks_p < 0.05;
    std::string note;
    double lx = kNaN;
    if (r.base_mean == 0 && r.test_mean == 0) {
      note = "0 on both sides";
    } else if (r.base_mean == 0) {
      lx = lim, note = "base 0";
    } else {
      const double ratio = r.test_mean / r.base_mean;
      note = fmt::format("x{:.3g}", ratio);
      lx = ratio <= 0 ? -lim : std::clamp(std::log2(ratio), -lim, lim);
    }
    if (!std::isnan(lx)) {
      s += fmt::format("<line class=\"stem\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(x(0)), px(yy), px(x(lx)),
                       px(yy));
      s += fmt::format("<circle class=\"ratio{}\" cx=\"{}\" cy=\"{}\" r=\"5\" stroke=\"{}\" fill=\"{}\"><title>{}: {} {} / {} {}</title></circle>\n",
                       sig ? " significant" : "", px(x(lx)), px(yy), side_colour(1), sig ? side_colour(1) : "#fff",
                       escape(name), escape(test_label), num(r.test_mean), escape(base_label), num(r.base_mean));
    }
    s += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}</text>\n", px(f.x1() + 6), px(yy + 4), escape(note));
    s += "</g>\n";
  }
  s += axis_titles(f, fmt::format("{} / {} (log scale, 1 = unchanged)", test_label, base_label), "counter");
  s += "</svg>\n";
  figure(s, title, f.width);
}

void Document::bands(const std::string& title, const std::vector<BandRow>& rows) {
  const int id = ++plots_;
  Frame f;
  f.width = 900;
  f.left = 260;
  f.right = 110;
  f.top = 48;
  f.height = f.top + 24 * static_cast<int>(rows.size()) + 70;
  double lo = 1, hi = 1;
  for (const auto& r : rows) {
    for (double v : {r.published_gain, r.band_lo, r.band_hi})
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (r.ran && r.model_gain > 0 && std::isfinite(r.model_gain)) lo = std::min(lo, r.model_gain), hi = std::max(hi, r.model_gain);
  }
  Axis x{lo / 1.15, hi * 1.15, f.x0(), f.x1(), true};
  std::string s = svg_open(id, "bands", f, title, "band: the model gains that reproduce it; diamond: published; dot: model");
  for (double v : log_ticks(x.d0, x.d1)) s += x_tick(f, x(v), log_tick_label(v));
  s += fmt::format("<line class=\"unity\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", px(x(1)), px(f.y0()), px(x(1)),
                   px(f.y1()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double yy = f.top + 24.0 * static_cast<double>(i) + 14;
    s += fmt::format("<g class=\"case\" data-name=\"{}\">\n", escape(r.name));
    s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(f.x0() - 8),
                     px(yy + 4), escape(r.name));
    const double b0 = std::clamp(r.band_lo, x.d0, x.d1), b1 = std::clamp(r.band_hi, x.d0, x.d1);
    s += fmt::format("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\"/>\n", px(x(b0)), px(yy - 6),
                     px(std::max(x(b1) - x(b0), 1.0)));
    s += fmt::format("<path class=\"published\" d=\"M{} {}l6 6l-6 6l-6 -6z\"><title>published gain {}</title></path>\n",
                     px(x(r.published_gain)), px(yy - 6), num(r.published_gain));
    if (r.ran)
      s += fmt::format("<circle class=\"model {}\" cx=\"{}\" cy=\"{}\" r=\"5\"><title>model gain {}</title></circle>\n",
                       r.in_band ? "in-band" : "miss", px(x(std::clamp(r.model_gain, x.d0, x.d1))), px(yy),
                       num(r.model_gain));
    s += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}</text>\n", px(f.x1() + 6), px(yy + 4), escape(r.note));
    s += "</g>\n";
  }
  s += axis_titles(f, "gain: test performance / base performance (log scale, 1 = unchanged)", "case");
  s += "</svg>\n";
  figure(s, title, f.width);
}

void Document::cpu_time(const std::string& title, const std::vector<CpuTime>& cpus) {
  const int id = ++plots_;
  Frame f;
  Axis y{0, 100, f.y0(), f.y1(), false};
  std::string s = svg_open(id, "cpu", f, title, "");
  s += y_ticks(f, y, Ticks{{0, 25, 50, 75, 100}, 0});
  const double n = static_cast<double>(std::max<std::size_t>(cpus.size(), 1));
  const double w = (f.x1() - f.x0()) / n;
  // Integer CPU numbers, about eight of them.
  const int nc = static_cast<int>(n);
  int step = 1;
  for (int m : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024})
    if (nc / m <= 8) {
      step = m;
      break;
    }
  for (int v = 0; v < nc; v += step) s += x_tick(f, f.x0() + w * (v + 0.5), fmt::format("{}", v));
  const char* colours[3] = {side_colour(0), side_colour(1), "#c7c7c7"};
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const auto& c = cpus[i];
    double acc = 0;
    const double parts[3] = {c.busy, c.kernel, c.idle};
    s += fmt::format("<g class=\"cpu\" data-cpu=\"{}\"><title>CPU {}: busy {}%, kernel {}%, idle {}%</title>\n", c.cpu,
                     c.cpu, num(c.busy * 100), num(c.kernel * 100), num(c.idle * 100));
    for (int k = 0; k < 3; ++k) {
      const double h = parts[k] * 100;
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", px(f.x0() + w * static_cast<double>(i)),
                       px(y(acc + h)), px(std::max(w - (w > 3 ? 1 : 0), 0.2)), px(y(acc) - y(acc + h)), colours[k]);
      acc += h;
    }
    s += "</g>\n";
  }
  s += legend(f, {"busy", "kernel", "idle"}, {colours[0], colours[1], colours[2]});
  s += axis_titles(f, "CPU", "share of simulated time (%)");
  s += "</svg>\n";
  figure(s, title, f.width);
}

std::string Document::str() const {
  // The JSON cannot end the <script> element: '<', '>' and '&' are written as \u escapes.
  std::string json;
  for (char c : data_.dump(1)) {
    if (c == '<') json += "\\u003c";
    else if (c == '>') json += "\\u003e";
    else if (c == '&') json += "\\u0026";
    else json += c;
  }
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be loaded: no script, font, image or connection; inline styles only.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"schedlab\">\n";
  out += "<link rel=\"icon\" href=\"data:,\">\n";
  out += "<title>" + escape(title_) + "</title>\n";
  out += R"(<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1180px; color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.9em; } td, th { border: 1px solid #ccc; padding: 2px 6px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f0f0f0; }
div.plots { display: flex; flex-wrap: wrap; gap: 0 1.5em; } figure { margin: 0.8em 0; } figcaption { font-size: 0.85em; color: #555; }
svg.plot { max-width: 100%; height: auto; background: #fff; }
svg.plot text { font-family: sans-serif; font-size: 11px; fill: #222; }
svg.plot .plot-title { font-size: 14px; font-weight: bold; } svg.plot .plot-subtitle { fill: #555; }
svg.plot .axis-title { font-size: 12px; } svg.plot .axis { stroke: #222; stroke-width: 1; }
svg.plot .grid { stroke: #e4e4e4; stroke-width: 1; } svg.plot .unity { stroke: #555; stroke-dasharray: 4 3; }
svg.plot .box { fill: none; stroke-width: 1.5; } svg.plot .median, svg.plot .whisker { stroke-width: 1.5; }
svg.plot .run { fill-opacity: 0.7; } svg.plot .interval { stroke-width: 3; }
svg.plot .curve { fill: none; stroke-width: 2; } svg.plot .curve.thin { stroke-width: 1; stroke-opacity: 0.45; }
svg.plot .stem { stroke: #999; } svg.plot .band { fill: #b7e0b0; } svg.plot .published { fill: #222; }
svg.plot .model.in-band { fill: #2ca02c; } svg.plot .model.miss { fill: #d62728; }
</style>
</head>
<body>
)";
  out += "<h1>" + escape(title_) + "</h1>\n";
  out += body_;
  if (group_open_) out += "</div>\n";
  out += "<script type=\"application/json\" id=\"schedlab-data\">\n" + json + "\n</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace schedlab::report::html
