#include "experiment/reproduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace schedlab::experiment {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string pct_str(double pct) { return fmt::format("{:+.2f} %", pct); }

std::string published_str(const Case& c) {
  return fmt::format("{} (gain {:.3f})", pct_str(c.published.pct_imp()), c.published.gain());
}

std::string model_str(const CaseOutcome& o) {
  if (o.status == CaseStatus::NotRunnable) return "-";
  return fmt::format("{} (gain {:.3f})", pct_str(o.pct), o.gain);
}

std::string result_str(const CaseOutcome& o) {
  switch (o.status) {
    case CaseStatus::InBand: return "in band";
    case CaseStatus::Miss: return "miss";
    case CaseStatus::NotRunnable: return "not runnable yet: needs " + join(o.c->missing);
  }
  return "?";
}

std::string sides(const Case& c) {
  auto side = [](const std::string& f, const std::vector<std::string>& sets, const std::vector<std::string>& idle) {
    std::vector<std::string> parts;
    parts.push_back(f.empty() ? "default" : f);
    for (const auto& s : sets) parts.push_back("--set " + s);
    if (!idle.empty()) parts.push_back("--idle-disable " + join(idle, ","));
    return join(parts, " ");
  };
  return fmt::format("base {} / test {}", side(c.model.base_features, c.model.base_sets, c.model.base_idle_disable),
                     side(c.model.test_features, c.model.test_sets, c.model.test_idle_disable));
}

std::string common_settings(const Case& c) {
  std::vector<std::string> parts;
  for (const auto& s : c.model.sets) parts.push_back("--set " + s);
  if (!c.model.idle_disable.empty()) parts.push_back("--idle-disable " + join(c.model.idle_disable, ","));
  return join(parts, " ");
}

std::string catalogue_label(const Catalogue& cat) {
  return std::filesystem::path(cat.dir).lexically_normal().filename().string() + "/";
}

// Markdown table cells must not contain a bare '|'.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

nlohmann::ordered_json case_json(const Case& c) {
  nlohmann::ordered_json j;
  j["case"] = c.name;
  j["title"] = c.title;
  j["source"] = {{"thread", c.source.thread}, {"message_id", c.source.message_id}, {"url", c.source.url},
                 {"date", c.source.date}, {"author", c.source.author}, {"notes", c.source.notes}};
  j["machine"] = {{"profile", c.machine.profile}, {"cpu", c.machine.cpu}, {"sockets", c.machine.sockets},
                  {"cores_per_socket", c.machine.cores_per_socket}, {"threads_per_core", c.machine.threads_per_core},
                  {"llc", c.machine.llc}, {"idle_states", c.machine.idle_states}, {"boost", c.machine.boost},
                  {"governor", c.machine.governor}};
  j["kernel"] = {{"base", c.kernel_base}, {"test", c.kernel_test}};
  const auto& p = c.published;
  j["published"] = {{"commands", p.commands}, {"statistic", p.statistic}, {"runs", p.runs},
                    {"higher_is_better", p.higher_is_better}, {"unit", p.unit}, {"base", p.base},
                    {"test", p.test}, {"pct_imp", p.pct_imp()}, {"gain", p.gain()}, {"doubts", p.doubts}};
  const auto& m = c.model;
  j["model_setup"] = {{"command", m.command_line}, {"metric", m.metric}, {"base_features", m.base_features},
                      {"test_features", m.test_features}, {"sets", m.sets}, {"idle_disable", m.idle_disable},
                      {"base_sets", m.base_sets}, {"test_sets", m.test_sets},
                      {"base_idle_disable", m.base_idle_disable}, {"test_idle_disable", m.test_idle_disable},
                      {"runs", m.runs}, {"scaling", m.scaling}, {"lacks", m.lacks}};
  nlohmann::ordered_json band = {{"direction", to_string(c.band.direction)}};
  if (c.band.direction == BandDirection::None) {
    band["max_change_pct"] = c.band.max_change_pct;
  } else {
    band["factor"] = c.band.factor;
    auto [lo, hi] = c.band.interval(p.gain());
    band["gain_min"] = lo;
    band["gain_max"] = hi;
  }
  band["justification"] = c.band.justification;
  j["band"] = band;
  j["missing"] = c.missing;
  return j;
}

}  // namespace

AbSpec case_ab_spec(const Case& c, const ReproduceOptions& opt) {
  AbSpec s;
  s.base.machine = c.machine.profile;
  s.base.command = c.model.command;
  s.base.sets = c.model.sets;
  s.base.idle_disable = c.model.idle_disable;
  s.base_features = c.model.base_features;
  s.test_features = c.model.test_features;
  s.base_sets = c.model.base_sets;
  s.test_sets = c.model.test_sets;
  s.base_idle_disable = c.model.base_idle_disable;
  s.test_idle_disable = c.model.test_idle_disable;
  s.runs = opt.runs > 0 ? opt.runs : c.model.runs;
  s.jobs = std::max(1, opt.jobs);
  return s;
}

CaseOutcome reproduce_case(const Case& c, const ReproduceOptions& opt,
                           const std::function<void(int, int)>& progress) {
  CaseOutcome o;
  o.c = &c;
  if (!c.runnable()) return o;
  AbSpec spec = case_ab_spec(c, opt);
  AbResult r = run_ab(spec, progress);
  auto metrics = ab_metrics(spec, r);
  const size_t nbench = r.base.front().metrics.size();
  auto it = std::find_if(metrics.begin(), metrics.begin() + nbench,
                         [&](const report::Metric& m) { return m.name == c.model.metric; });
  if (it == metrics.begin() + nbench) {
    std::vector<std::string> names;
    for (size_t k = 0; k < nbench; ++k) names.push_back(metrics[k].name);
    throw CatalogueError(fmt::format("{}:{}: model.metric '{}': `{}` reports {}", c.file, c.model.metric_line,
                                     c.model.metric, c.model.command_line, join(names)));
  }
  report::MetricResult res = report::analyze(*it);
  const auto& base = res.sets[0];
  const auto& test = res.sets[1];
  o.runs = spec.runs;
  o.unit = it->unit;
  o.higher_is_better = it->dir == report::Direction::HigherIsBetter;
  o.base_mean = base.summary.mean;
  o.test_mean = test.summary.mean;
  o.gain = o.higher_is_better ? o.test_mean / o.base_mean : o.base_mean / o.test_mean;
  o.pct = test.pct_imp;
  o.ks_p = test.ks ? test.ks->pvalue : 1.0;
  for (auto m = metrics.begin() + nbench; m != metrics.end(); ++m) {
    double a = 0, b = 0;
    for (double v : m->sets[0].values) a += v;
    for (double v : m->sets[1].values) b += v;
    o.counters.push_back({m->name, m->unit, a / m->sets[0].values.size(), b / m->sets[1].values.size()});
  }
  o.status = c.band.contains(c.published.gain(), o.gain, o.pct) ? CaseStatus::InBand : CaseStatus::Miss;
  return o;
}

std::string summary_line(const std::vector<CaseOutcome>& outcomes) {
  int in = 0, miss = 0, skip = 0;
  for (const auto& o : outcomes) {
    if (o.status == CaseStatus::InBand) ++in;
    else if (o.status == CaseStatus::Miss) ++miss;
    else ++skip;
  }
  return fmt::format("{} of {} in band ({} ran: {} in band, {} missed; {} not runnable yet)", in, outcomes.size(),
                     in + miss, in, miss, skip);
}

std::string render_reproduce(const Catalogue& cat, const std::vector<CaseOutcome>& outcomes, report::Format f) {
  std::string out;
  if (f == report::Format::Json) {
    nlohmann::ordered_json j;
    j["catalogue"] = catalogue_label(cat);
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    int in = 0, miss = 0, skip = 0;
    for (const auto& o : outcomes) {
      nlohmann::ordered_json cj = case_json(*o.c);
      cj["status"] = o.status == CaseStatus::InBand ? "in_band" : o.status == CaseStatus::Miss ? "miss" : "not_runnable";
      if (o.status == CaseStatus::NotRunnable) {
        cj["model"] = nullptr;
        ++skip;
      } else {
        (o.status == CaseStatus::InBand ? in : miss)++;
        nlohmann::ordered_json counters = nlohmann::ordered_json::array();
        for (const auto& k : o.counters)
          counters.push_back({{"name", k.name}, {"unit", k.unit}, {"base", k.base}, {"test", k.test}});
        cj["model"] = {{"runs", o.runs}, {"metric", o.c->model.metric}, {"unit", o.unit},
                       {"higher_is_better", o.higher_is_better}, {"base_mean", o.base_mean},
                       {"test_mean", o.test_mean}, {"pct_imp", o.pct}, {"gain", o.gain}, {"ks_p", o.ks_p},
                       {"counters", counters}};
      }
      arr.push_back(cj);
    }
    j["cases"] = arr;
    j["summary"] = {{"cases", outcomes.size()}, {"in_band", in}, {"missed", miss}, {"not_runnable", skip},
                    {"line", summary_line(outcomes)}};
    return j.dump(2) + "\n";
  }
  const bool md = f == report::Format::Markdown;
  if (md) {
    out += "| case | machine | published | model | band | result |\n|---|---|---:|---:|---|---|\n";
    for (const auto& o : outcomes)
      out += fmt::format("| [{}]({}) | {} | {} | {} | {} | {} |\n", o.c->name, o.c->source.url, o.c->machine.profile,
                         published_str(*o.c), model_str(o), o.c->band.describe(o.c->published.gain()),
                         cell(result_str(o)));
    out += fmt::format("\n{}\n", summary_line(outcomes));
    bool any = false;
    for (const auto& o : outcomes) {
      if (o.status != CaseStatus::Miss) continue;
      if (!any) out += "\n## Misses\n";
      any = true;
      const Case& c = *o.c;
      out += fmt::format("\n### {}\n\n{} ({}, {}, <{}>)\n\n", c.name, c.title, c.source.author, c.source.date,
                         c.source.message_id);
      out += fmt::format("- published: {} ({}; {})\n", published_str(c), c.published.statistic, c.published.doubts);
      out += fmt::format("- model: `{}` on {}, {}{}; {} runs per side: {} {:.6g} -> {:.6g} {}, {}, KS p {:.4g}\n",
                         c.model.command_line, c.machine.profile, sides(c),
                         common_settings(c).empty() ? "" : ", " + common_settings(c), o.runs, c.model.metric,
                         o.base_mean, o.test_mean, o.unit, model_str(o), o.ks_p);
      out += fmt::format("- band: {} ({})\n", c.band.describe(c.published.gain()), c.band.justification);
      out += fmt::format("- what the model lacks: {}\n", c.model.lacks);
    }
    any = false;
    for (const auto& o : outcomes) {
      if (o.status != CaseStatus::InBand) continue;
      if (!any) out += "\n## In band\n\n";
      any = true;
      out += fmt::format("- {}: model {} vs published {}. {}\n", o.c->name, model_str(o), published_str(*o.c),
                         o.c->model.lacks);
    }
    any = false;
    for (const auto& o : outcomes) {
      if (o.status != CaseStatus::NotRunnable) continue;
      if (!any) out += "\n## Not runnable yet\n\n";
      any = true;
      out += fmt::format("- {}: needs {}. {}\n", o.c->name, join(o.c->missing), o.c->model.lacks);
    }
    return out;
  }
  size_t w = 4;
  for (const auto& o : outcomes) w = std::max(w, o.c->name.size());
  out += fmt::format("# schedlab reproduce: {} cases from {}\n\n", outcomes.size(), catalogue_label(cat));
  out += fmt::format("{:<{}}  {:<16} {:>22} {:>22}  {:<28} {}\n", "case", w, "machine", "published", "model", "band",
                     "result");
  for (const auto& o : outcomes)
    out += fmt::format("{:<{}}  {:<16} {:>22} {:>22}  {:<28} {}\n", o.c->name, w, o.c->machine.profile,
                       published_str(*o.c), model_str(o), o.c->band.describe(o.c->published.gain()), result_str(o));
  out += fmt::format("\n{}\n", summary_line(outcomes));
  return out;
}

std::string render_case_list(const Catalogue& cat, const std::vector<const Case*>& cases, report::Format f) {
  if (f == report::Format::Json) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const Case* c : cases) {
      auto j = case_json(*c);
      j["runnable"] = c->runnable();
      arr.push_back(j);
    }
    return nlohmann::ordered_json{{"catalogue", catalogue_label(cat)}, {"cases", arr}}.dump(2) + "\n";
  }
  auto status = [](const Case& c) { return c.runnable() ? std::string("runnable") : "needs " + join(c.missing); };
  std::string out;
  if (f == report::Format::Markdown) {
    out += "| case | machine | published | source | status |\n|---|---|---:|---|---|\n";
    for (const Case* c : cases)
      out += fmt::format("| {} | {} | {} | [{}]({}) {} ({}) | {} |\n", c->name, c->machine.profile, published_str(*c),
                         cell(c->source.message_id), c->source.url, c->source.date, cell(c->source.author),
                         cell(status(*c)));
    return out;
  }
  size_t w = 4;
  for (const Case* c : cases) w = std::max(w, c->name.size());
  for (const Case* c : cases) {
    out += fmt::format("{:<{}}  {:<16} {:>22}  {}\n", c->name, w, c->machine.profile, published_str(*c), status(*c));
    out += fmt::format("{:<{}}  {}\n{:<{}}  <{}> {} {}\n", "", w, c->title, "", w, c->source.message_id,
                       c->source.date, c->source.author);
  }
  int runnable = static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const Case* c) { return c->runnable(); }));
  out += fmt::format("\n{} cases in {} ({} runnable, {} need a change the model lacks)\n", cases.size(),
                     catalogue_label(cat), runnable, cases.size() - runnable);
  return out;
}

}  // namespace schedlab::experiment
