// Renders the comparison table in text (mmtests/LKML style), Markdown, JSON and CSV.
#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include "util/text.hpp"

namespace schedlab::report {

namespace {

std::string direction_text(Direction d) {
  if (d == Direction::Neutral) return "Neutral (neither direction is better)";
  return d == Direction::LowerIsBetter ? "Lower is better" : "Higher is better";
}

std::string fmt_p(double p) {
  if (std::isnan(p)) return "-";
  if (p < 0.0001) return "<0.0001";
  return fmt::format("{:.4f}", p);
}

std::string fmt_pct(double pct) {
  if (std::isnan(pct)) return "-";
  return fmt::format("{:.2f}%", pct);
}

std::string alpha_text(double alpha) { return fmt::format("{:g}%", alpha * 100); }

std::string verdict_text(const std::string& label, const std::string& base, double pct,
                         double p, bool significant, double alpha, Direction dir) {
  std::string what;
  if (std::isnan(pct))
    what = fmt::format("{} vs {}: change undefined (base mean is 0)", label, base);
  else if (pct == 0.0)
    what = fmt::format("{} is equal to {} in mean", label, base);
  else if (std::fabs(pct) < 0.005)  // would print as 0.00% better/worse
    what = fmt::format("{} is within 0.01% of {} in mean", label, base);
  else
    what = fmt::format("{} is {:.2f}% {} than {}", label, std::fabs(pct),
                       dir == Direction::Neutral ? (pct > 0 ? "higher" : "lower") : (pct > 0 ? "better" : "worse"),
                       base);
  const std::string ptext = fmt_p(p);
  return fmt::format("{} (KS p{}{}, {} at {})", what, ptext[0] == '<' ? "" : "=", ptext,
                     significant ? "significant" : "difference not significant",
                     alpha_text(alpha));
}

// Values of one metric in fixed decimals, as hackbench and mmtests print them: 4, or when every
// value is below 0.01 as many as keep 4 significant digits of the largest (0.008808, not
// 8.8075e-03), at most 12.
struct ValueFormat {
  int decimals = 4;
  std::string operator()(double v) const {
    if (std::isnan(v)) return "-";
    return fmt::format("{:.{}f}", v, decimals);
  }
};

ValueFormat value_format_for(const MetricResult& m) {
  double biggest = 0;
  for (const auto& s : m.sets)
    biggest = std::max({biggest, std::fabs(s.summary.mean), std::fabs(s.summary.max),
                        std::fabs(s.summary.min)});
  if (biggest == 0 || biggest >= 0.01 || !std::isfinite(biggest)) return ValueFormat{4};
  return ValueFormat{std::min(12, 3 - static_cast<int>(std::floor(std::log10(biggest))))};
}

// The grid shared by the text and Markdown renderers: row label + one cell per set.
struct Grid {
  std::vector<std::string> header;  // header[0] is empty (the row-label column)
  std::vector<std::vector<std::string>> rows;
};

Grid grid_for(const MetricResult& m, bool pad) {
  const ValueFormat vf = value_format_for(m);
  Grid g;
  g.header.push_back("");
  for (const auto& s : m.sets) g.header.push_back(s.label);
  auto row = [&](std::string name, auto cell) {
    std::vector<std::string> r{std::move(name)};
    for (std::size_t i = 0; i < m.sets.size(); ++i) r.push_back(cell(m.sets[i], i));
    g.rows.push_back(std::move(r));
  };
  row("Samples", [](const SetResult& s, std::size_t) { return fmt::format("{}", s.summary.count); });
  row("Min", [&](const SetResult& s, std::size_t) { return vf(s.summary.min); });
  row("Median", [&](const SetResult& s, std::size_t) { return vf(s.summary.median); });
  row("Amean", [&](const SetResult& s, std::size_t) {
    return pad ? fmt::format("{} ({:>8})", vf(s.summary.mean), fmt_pct(s.pct_imp))
               : fmt::format("{} ({})", vf(s.summary.mean), fmt_pct(s.pct_imp));
  });
  row("Stddev", [&](const SetResult& s, std::size_t) { return vf(s.summary.stddev); });
  row("CoV", [](const SetResult& s, std::size_t) { return fmt_pct(s.summary.cov * 100); });
  row("q90", [&](const SetResult& s, std::size_t) { return vf(s.summary.q90); });
  row("q99", [&](const SetResult& s, std::size_t) { return vf(s.summary.q99); });
  row("Max", [&](const SetResult& s, std::size_t) { return vf(s.summary.max); });
  row("Normalized", [](const SetResult& s, std::size_t) {
    return std::isnan(s.normalized) ? std::string("-") : fmt::format("{:.4f}", s.normalized);
  });
  row("KS p", [](const SetResult& s, std::size_t) {
    return s.ks ? fmt_p(s.ks->pvalue) : std::string("-");
  });
  row("MWU p", [](const SetResult& s, std::size_t) {
    return s.mwu ? fmt_p(s.mwu->pvalue) : std::string("-");
  });
  return g;
}

std::string title_of(const MetricResult& m) {
  std::string t = m.name;
  if (!m.unit.empty()) t += fmt::format(" ({})", m.unit);
  return t + ", " + direction_text(m.dir);
}

std::string render_text(const std::vector<MetricResult>& results) {
  std::string out;
  for (std::size_t mi = 0; mi < results.size(); ++mi) {
    const auto& m = results[mi];
    if (mi) out += "\n";
    Grid g = grid_for(m, true);
    std::vector<std::size_t> width(g.header.size(), 0);
    for (std::size_t c = 0; c < g.header.size(); ++c) width[c] = g.header[c].size();
    for (const auto& r : g.rows)
      for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    out += title_of(m) + "\n";
    auto line = [&](const std::vector<std::string>& cells) {
      std::string l = fmt::format("{:<{}}", cells[0], width[0]);
      for (std::size_t c = 1; c < cells.size(); ++c) l += fmt::format("  {:>{}}", cells[c], width[c]);
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    };
    line(g.header);
    for (const auto& r : g.rows) line(r);
    for (const auto& v : m.verdicts) out += "verdict: " + v.text + "\n";
  }
  return out;
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

std::string render_markdown(const std::vector<MetricResult>& results) {
  std::string out;
  for (std::size_t mi = 0; mi < results.size(); ++mi) {
    const auto& m = results[mi];
    if (mi) out += "\n";
    Grid g = grid_for(m, false);
    out += "### " + md_escape(title_of(m)) + "\n\n";
    std::string head = "|", sep = "|";
    for (std::size_t c = 0; c < g.header.size(); ++c) {
      head.append(" ").append(md_escape(g.header[c])).append(" |");
      sep += c == 0 ? "---|" : "---:|";
    }
    out += head + "\n" + sep + "\n";
    for (const auto& r : g.rows) {
      std::string l = "|";
      for (const auto& cell : r) l.append(" ").append(md_escape(cell)).append(" |");
      out += l + "\n";
    }
    if (!m.verdicts.empty()) out += "\n";
    for (const auto& v : m.verdicts) out += "- verdict: " + md_escape(v.text) + "\n";
  }
  return out;
}

// JSON numbers; NaN (undefined) becomes null.
nlohmann::ordered_json num(double v) {
  if (std::isnan(v) || std::isinf(v)) return nullptr;
  return v;
}

std::string render_json(const std::vector<MetricResult>& results, const Options& opts) {
  using nlohmann::ordered_json;
  ordered_json doc;
  doc["schema"] = "schedlab.compare.v1";
  doc["options"] = {{"alpha", opts.alpha},
                    {"std", opts.std_kind == stats::StdKind::Population ? "population" : "sample"},
                    {"quantile_method", std::string(stats::to_string(opts.quantile_method))},
                    {"bootstrap_resamples", opts.bootstrap_resamples},
                    {"bootstrap_level", opts.bootstrap_level},
                    {"bootstrap_seed", opts.bootstrap_seed}};
  ordered_json metrics = ordered_json::array();
  for (const auto& m : results) {
    ordered_json jm;
    jm["name"] = m.name;
    jm["unit"] = m.unit;
    jm["direction"] = direction_id(m.dir);
    ordered_json sets = ordered_json::array();
    for (std::size_t i = 0; i < m.sets.size(); ++i) {
      const auto& s = m.sets[i];
      ordered_json js;
      js["label"] = s.label;
      js["base"] = i == 0;
      js["n"] = s.summary.count;
      js["mean"] = num(s.summary.mean);
      js["std"] = num(s.summary.stddev);
      js["cov"] = num(s.summary.cov);
      js["min"] = num(s.summary.min);
      js["median"] = num(s.summary.median);
      js["max"] = num(s.summary.max);
      js["q90"] = num(s.summary.q90);
      js["q99"] = num(s.summary.q99);
      js["normalized"] = num(s.normalized);
      js["pct_imp"] = num(s.pct_imp);
      js["ks_d"] = s.ks ? num(s.ks->statistic) : ordered_json(nullptr);
      js["ks_p"] = s.ks ? num(s.ks->pvalue) : ordered_json(nullptr);
      js["ks_method"] = s.ks ? ordered_json(s.ks->method == stats::KsMethod::Exact ? "exact"
                                                                                  : "asymptotic")
                             : ordered_json(nullptr);
      js["mwu_u"] = s.mwu ? num(s.mwu->u) : ordered_json(nullptr);
      js["mwu_p"] = s.mwu ? num(s.mwu->pvalue) : ordered_json(nullptr);
      js["ci_low"] = s.ci ? num(s.ci->low) : ordered_json(nullptr);
      js["ci_high"] = s.ci ? num(s.ci->high) : ordered_json(nullptr);
      sets.push_back(std::move(js));
    }
    jm["sets"] = std::move(sets);
    ordered_json verdicts = ordered_json::array();
    for (const auto& v : m.verdicts)
      verdicts.push_back({{"base", v.base},
                          {"label", v.label},
                          {"pct_imp", num(v.pct_imp)},
                          {"ks_p", num(v.ks_p)},
                          {"significant", v.significant},
                          {"text", v.text}});
    jm["verdicts"] = std::move(verdicts);
    metrics.push_back(std::move(jm));
  }
  doc["metrics"] = std::move(metrics);
  return doc.dump(2) + "\n";
}

std::string csv_num(double v) {
  if (std::isnan(v) || std::isinf(v)) return "";
  return fmt::format("{}", v);  // shortest form that reads back to the same double
}

std::string render_csv(const std::vector<MetricResult>& results) {
  std::string out =
      "metric,unit,direction,label,base,n,mean,std,cov,min,median,max,q90,q99,normalized,"
      "pct_imp,ks_d,ks_p,mwu_u,mwu_p,ci_low,ci_high,significant\n";
  for (const auto& m : results) {
    for (std::size_t i = 0; i < m.sets.size(); ++i) {
      const auto& s = m.sets[i];
      std::vector<std::string> f{util::csv_field(m.name),
                                 util::csv_field(m.unit),
                                 direction_id(m.dir),
                                 util::csv_field(s.label),
                                 i == 0 ? "true" : "false",
                                 fmt::format("{}", s.summary.count),
                                 csv_num(s.summary.mean),
                                 csv_num(s.summary.stddev),
                                 csv_num(s.summary.cov),
                                 csv_num(s.summary.min),
                                 csv_num(s.summary.median),
                                 csv_num(s.summary.max),
                                 csv_num(s.summary.q90),
                                 csv_num(s.summary.q99),
                                 csv_num(s.normalized),
                                 csv_num(s.pct_imp),
                                 s.ks ? csv_num(s.ks->statistic) : "",
                                 s.ks ? csv_num(s.ks->pvalue) : "",
                                 s.mwu ? csv_num(s.mwu->u) : "",
                                 s.mwu ? csv_num(s.mwu->pvalue) : "",
                                 s.ci ? csv_num(s.ci->low) : "",
                                 s.ci ? csv_num(s.ci->high) : "",
                                 i == 0 ? "" : (m.verdicts[i - 1].significant ? "true" : "false")};
      std::string line;
      for (std::size_t k = 0; k < f.size(); ++k) line += (k ? "," : "") + f[k];
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace

std::string direction_id(Direction d) {
  if (d == Direction::Neutral) return "neutral";
  return d == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better";
}

std::string_view to_string(Format f) {
  switch (f) {
    case Format::Text: return "text";
    case Format::Markdown: return "markdown";
    case Format::Json: return "json";
    case Format::Csv: return "csv";
  }
  return "?";
}

std::optional<Format> parse_format(std::string_view name) {
  for (auto f : {Format::Text, Format::Markdown, Format::Json, Format::Csv})
    if (to_string(f) == name) return f;
  return std::nullopt;
}

MetricResult analyze(const Metric& metric, const Options& opts) {
  if (metric.sets.empty())
    throw std::invalid_argument("metric '" + metric.name + "' has no sample sets");
  MetricResult r;
  r.name = metric.name;
  r.unit = metric.unit;
  r.dir = metric.dir;
  const auto& base = metric.sets[0];
  for (std::size_t i = 0; i < metric.sets.size(); ++i) {
    const auto& set = metric.sets[i];
    SetResult s;
    s.label = set.label;
    try {
      s.summary = stats::summarize(set.values, opts.std_kind, opts.quantile_method);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("metric '" + metric.name + "', set '" + set.label +
                                  "': " + e.what());
    }
    if (i == 0) {
      s.normalized = 1.0;
      s.pct_imp = 0.0;
    } else {
      const double bm = r.sets[0].summary.mean;
      s.normalized = stats::normalized(bm, s.summary.mean);
      s.pct_imp = stats::pct_improvement(bm, s.summary.mean, metric.dir);
      s.ks = stats::ks_2samp(base.values, set.values);
      s.mwu = stats::mann_whitney_u(set.values, base.values);
      if (opts.bootstrap_resamples > 0)
        s.ci = stats::bootstrap_mean_diff_ci(base.values, set.values, opts.bootstrap_level,
                                             opts.bootstrap_resamples, opts.bootstrap_seed);
      Verdict v;
      v.base = base.label;
      v.label = set.label;
      v.pct_imp = s.pct_imp;
      v.ks_p = s.ks->pvalue;
      v.significant = v.ks_p < opts.alpha;
      v.text = verdict_text(v.label, v.base, v.pct_imp, v.ks_p, v.significant, opts.alpha, r.dir);
      r.verdicts.push_back(std::move(v));
    }
    r.sets.push_back(std::move(s));
  }
  return r;
}

std::string render(const std::vector<MetricResult>& results, Format f, const Options& opts) {
  switch (f) {
    case Format::Text: return render_text(results);
    case Format::Markdown: return render_markdown(results);
    case Format::Json: return render_json(results, opts);
    case Format::Csv: return render_csv(results);
  }
  return {};
}

std::string render(const std::vector<Metric>& metrics, Format f, const Options& opts) {
  std::vector<MetricResult> results;
  results.reserve(metrics.size());
  for (const auto& m : metrics) results.push_back(analyze(m, opts));
  return render(results, f, opts);
}

}  // namespace schedlab::report
