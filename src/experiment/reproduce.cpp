#include "experiment/reproduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "kernel/change.hpp"
#include "stats/stats.hpp"
#include "workload/workload.hpp"

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
  return fmt::format("{} (gain {:.3f}, 95 % {:.3f}..{:.3f})", pct_str(o.pct), o.gain, o.gain_low, o.gain_high);
}

// The model's base over the published one in absolute terms: "0.93x", or "n/a" where the case
// has no absolute figure ([absolute] none).
std::string base_ratio_str(const CaseOutcome& o) {
  if (o.status == CaseStatus::NotRunnable) return "-";
  if (!o.base_compared) return "n/a";
  return fmt::format("{:.3g}x", o.base_ratio);
}

// "model 0.0124 s vs published 3.654 s x 0.0625 = 0.228 s (0.0543x)"
std::string base_detail(const CaseOutcome& o) {
  const AbsoluteBase& a = o.c->absolute;
  return fmt::format("model base {:.4g} {} vs published {:.4g} {}{} ({:.3g}x)", o.base_mean, a.unit, a.base, a.unit,
                     a.scale == 1 ? "" : fmt::format(" x {:g} = {:.4g} {}", a.scale, a.expected(), a.unit),
                     o.base_ratio);
}

// " (bimodal: base, test)" when a side's values look bimodal (Sarle's coefficient > 5/9).
std::string bimodal_str(const CaseOutcome& o) {
  if (o.status == CaseStatus::NotRunnable || !(o.bimodal_base || o.bimodal_test)) return "";
  std::vector<std::string> s;
  if (o.bimodal_base) s.push_back(fmt::format("base b={:.2f}", o.bc_base));
  if (o.bimodal_test) s.push_back(fmt::format("test b={:.2f}", o.bc_test));
  return " (bimodal: " + join(s) + ")";
}

// Why a case that ran did not exercise its change.
std::string not_exercised_reason(const CaseOutcome& o) {
  if (o.identical_sides) return "sides identical";
  return join(o.silent_changes) + (o.silent_changes.size() == 1 ? " counters all 0" : " counters all 0 (each)");
}

// A side's share of select_idle_cpu() calls that took SIS_UTIL's depth from the start state, as a
// percentage ("none": SIS_UTIL set no depth on that side).
std::string share_str(double share) {
  return share < 0 ? std::string("none") : fmt::format("{} %", static_cast<int>(std::lround(100 * share)));
}

std::string result_str(const CaseOutcome& o) {
  switch (o.status) {
    case CaseStatus::InBand: return "in band";
    case CaseStatus::DirectionOnly: return "in band, direction only";
    case CaseStatus::Miss:
      // The gain's interval straddles 1.0: the seeds cannot tell the change from none.
      return o.direction_clear || o.gain_low > 1.0 || o.gain_high < 1.0
                 ? "miss"
                 : fmt::format("miss: 95 % interval {:.3f}..{:.3f} reaches gain 1.0", o.gain_low, o.gain_high);
    case CaseStatus::NotExercised:
      return fmt::format("not exercised: {} (band {})", not_exercised_reason(o), o.band_met ? "met" : "missed");
    case CaseStatus::NotConverged:
      if (o.start_state)
        return fmt::format("not converged: {} of select_idle_cpu() calls took SIS_UTIL's depth from the start "
                           "state's nr_idle_scan, no busy CPU's LLC balance having refreshed it in the {:.3g} s run "
                           "(band {})",
                           share_str(std::max(o.start_state_base, o.start_state_test)), o.simulated_s,
                           o.band_met ? "met" : "missed");
      if (!o.converged)
        return fmt::format("not converged: gain {:.3f} at twice the length (band {} at 1x)", o.gain_2x,
                           o.band_met ? "met" : "missed");
      return fmt::format("not converged: 95 % interval {:.3f} wider than the band's {:.3f} at {} runs per side "
                         "(band {})",
                         o.gain_high - o.gain_low, o.band_width, o.runs, o.band_met ? "met" : "missed");
    case CaseStatus::BaseOff:
      return fmt::format("base off: {:.3g}x the published base (band {})", o.base_ratio, o.band_met ? "met" : "missed");
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
  if (c.absolute.given)
    j["absolute"] = {{"base", c.absolute.base}, {"unit", c.absolute.unit}, {"scale", c.absolute.scale},
                     {"expected_model_base", c.absolute.expected()}, {"source", c.absolute.source}};
  else
    j["absolute"] = {{"none", c.absolute.none}};
  const auto& m = c.model;
  j["model_setup"] = {{"command", m.command_line}, {"metric", m.metric}, {"base_features", m.base_features},
                      {"test_features", m.test_features}, {"sets", m.sets}, {"idle_disable", m.idle_disable},
                      {"base_sets", m.base_sets}, {"test_sets", m.test_sets},
                      {"base_idle_disable", m.base_idle_disable}, {"test_idle_disable", m.test_idle_disable},
                      {"runs", m.runs}, {"scaling", m.scaling}, {"simulated_s", m.simulated_s},
                      {"published_length", m.published_length}, {"lacks", m.lacks}};
  nlohmann::ordered_json band = {{"direction", to_string(c.band.direction)}};
  if (c.band.direction == BandDirection::None) {
    band["max_change_pct"] = c.band.max_change_pct;
  } else {
    band["factor"] = c.band.factor;
    auto [lo, hi] = c.band.interval(p.gain());
    band["gain_min"] = lo;
    band["gain_max"] = hi;
  }
  if (c.band.direction != BandDirection::None) band["direction_only"] = c.band.labelled_direction_only;
  band["justification"] = c.band.justification;
  j["band"] = band;
  j["missing"] = c.missing;
  return j;
}

}  // namespace

std::string to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::InBand: return "in_band";
    case CaseStatus::DirectionOnly: return "direction_only";
    case CaseStatus::Miss: return "miss";
    case CaseStatus::NotExercised: return "not_exercised";
    case CaseStatus::NotConverged: return "not_converged";
    case CaseStatus::BaseOff: return "base_off";
    case CaseStatus::NotRunnable: return "not_runnable";
  }
  return "?";
}

double band_width(const Band& b, double published_gain) {
  if (b.direction == BandDirection::None) return 2 * b.max_change_pct / 100.0;
  auto [lo, hi] = b.interval(published_gain);
  return hi - lo;
}

std::pair<double, double> gain_interval(std::span<const double> base, std::span<const double> test,
                                        bool higher_is_better) {
  const auto ci = higher_is_better ? stats::bootstrap_mean_ratio_ci(test, base, 0.95, 2000, 1)
                                   : stats::bootstrap_mean_ratio_ci(base, test, 0.95, 2000, 1);
  return {ci.low, ci.high};
}

bool direction_clear(const Band& b, double gain_low, double gain_high) {
  if (b.direction == BandDirection::None) return true;
  return b.direction == BandDirection::Better ? gain_low > 1.0 : gain_high < 1.0;
}

bool gain_converged(const Band& b, double gain, double pct, double gain_2x, double pct_2x) {
  if (!std::isfinite(gain) || !std::isfinite(gain_2x) || gain <= 0 || gain_2x <= 0) return false;
  if (b.direction == BandDirection::None) return std::fabs(pct_2x - pct) <= b.max_change_pct;
  const double ratio = gain_2x / gain;
  return std::max(ratio, 1 / ratio) <= b.factor;
}

bool same_run(const RunResult& a, const RunResult& b) {
  if (a.report != b.report || a.simulated_ns != b.simulated_ns || a.events != b.events ||
      a.files.size() != b.files.size() || a.metrics.size() != b.metrics.size() ||
      a.per_cpu.size() != b.per_cpu.size())
    return false;
  for (size_t i = 0; i < a.files.size(); ++i)
    if (a.files[i].path != b.files[i].path || a.files[i].content != b.files[i].content) return false;
  for (size_t i = 0; i < a.metrics.size(); ++i)
    if (a.metrics[i].name != b.metrics[i].name || a.metrics[i].value != b.metrics[i].value) return false;
  // Every counter, the changes' included, by its --json name (the total is their sum).
  for (size_t c = 0; c < a.per_cpu.size(); ++c)
    if (counters_json(a.per_cpu[c], a.idle_state_names) != counters_json(b.per_cpu[c], b.idle_state_names))
      return false;
  return true;
}

AbSpec case_ab_spec(const Case& c, const ReproduceOptions& opt) {
  AbSpec s;
  s.base.machine = c.machine.profile;
  s.base.command = c.model.command;
  s.base.sets = c.model.sets;
  s.base.idle_disable = c.model.idle_disable;
  s.base.cold = opt.cold;
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

namespace {
// Enough seeds: double the runs per side (capped at o.max_runs) while the gain's interval is
// wider than the band; seeds first_seed + runs .. are added, the runs so far kept. Stops early
// when both sides are the same run at every seed (not exercised: more seeds tell nothing).
void add_seeds(AbSpec& spec, AbResult& r, std::vector<report::Metric>& metrics, size_t m, CaseOutcome& o,
               const std::function<void(int, int)>& progress) {
  for (;;) {
    std::tie(o.gain_low, o.gain_high) = gain_interval(metrics[m].sets[0].values, metrics[m].sets[1].values,
                                                      o.higher_is_better);
    if (interval_narrower(o.gain_low, o.gain_high, o.band_width) || spec.runs >= o.max_runs) return;
    bool same = true;
    for (size_t i = 0; i < r.base.size() && same; ++i) same = same_run(r.base[i], r.test[i]);
    if (same) return;
    AbSpec more = spec;
    more.first_seed = spec.first_seed + static_cast<uint64_t>(spec.runs);
    more.runs = std::min(2 * spec.runs, o.max_runs) - spec.runs;
    const int have = 2 * spec.runs;  // runs so far, both sides (run_ab counts both)
    AbResult extra = run_ab(more, progress ? std::function<void(int, int)>([&](int done, int total) {
      progress(have + done, have + total);
    }) : nullptr);
    for (auto& x : extra.base) r.base.push_back(std::move(x));
    for (auto& x : extra.test) r.test.push_back(std::move(x));
    spec.runs += more.runs;
    metrics = ab_metrics(spec, r);
  }
}
// The model's base against the case's absolute figure, if it has one; the figure's unit must be
// the model metric's.
void compare_base(const Case& c, const std::string& metric_unit, CaseOutcome& o) {
  const AbsoluteBase& a = c.absolute;
  if (!a.given) return;
  if (a.unit != metric_unit)
    throw CatalogueError(fmt::format("{}:{}: absolute.unit '{}': the model's {} is in {}", c.file, a.unit_line, a.unit,
                                     c.model.metric, metric_unit));
  o.base_compared = true;
  o.base_ratio = o.base_mean / a.expected();
  o.base_off = base_is_off(o.base_ratio);
}
// The changes on in one side only whose counters are all zero on that side in every run.
void find_silent_changes(const AbSpec& spec, const AbResult& r, CaseOutcome& o) {
  const kernel::Features fa = parse_features(spec.base_features, "base_features");
  const kernel::Features fb = parse_features(spec.test_features, "test_features");
  for (const kernel::ChangeType* t : kernel::change_types()) {
    const bool on_base = fa.change_on(t->index), on_test = fb.change_on(t->index);
    if (on_base == on_test || t->info.counters.empty()) continue;
    ++o.changes_with_counters;
    bool acted = false;
    for (const RunResult& run : on_test ? r.test : r.base)
      for (const auto& cc : t->info.counters)
        if (kernel::change_counter(run.total, cc.name) != 0) acted = true;
    if (!acted) o.silent_changes.push_back(t->info.name);
  }
}
// The share of a side's select_idle_cpu() calls whose depth SIS_UTIL set from the start state's
// nr_idle_scan (-1: SIS_UTIL set no depth in any run of the side). Over all the calls, not only
// SIS_UTIL's: a side that mostly scans for an idle core (no SIS_UTIL depth) decides little on it.
double start_state_share(const std::vector<RunResult>& side) {
  int64_t calls = 0, depth = 0, start = 0;
  for (const RunResult& run : side) {
    calls += run.total.select_idle_cpu_calls;
    depth += run.total.sis_util_depth_calls;
    start += run.total.sis_util_start_depth_calls;
  }
  return depth > 0 ? static_cast<double>(start) / static_cast<double>(calls) : -1;
}
// --convergence: the case's A/B again with its command at twice the length; fills o's *_2x
// fields and whether the gain stayed within the band's tolerance.
void run_twice_the_length(const Case& c, const AbSpec& spec, const std::vector<std::string>& cmd_2x,
                          const std::function<void(int, int)>& progress, size_t nbench, CaseOutcome& o) {
  AbSpec spec2 = spec;
  spec2.base.command = cmd_2x;
  o.command_2x = workload::join(cmd_2x);
  AbResult r2 = run_ab(spec2, progress);
  auto m2 = ab_metrics(spec2, r2);
  auto it2 = std::find_if(m2.begin(), m2.begin() + static_cast<std::ptrdiff_t>(nbench),
                          [&](const report::Metric& m) { return m.name == c.model.metric; });
  report::MetricResult res2 = report::analyze(*it2);
  const double b2 = res2.sets[0].summary.mean, t2 = res2.sets[1].summary.mean;
  o.gain_2x = o.higher_is_better ? t2 / b2 : b2 / t2;
  o.pct_2x = res2.sets[1].pct_imp;
  double sim2 = 0;
  for (const auto* side : {&r2.base, &r2.test})
    for (const RunResult& run : *side) sim2 += static_cast<double>(run.simulated_ns) * 1e-9;
  o.simulated_2x_s = sim2 / static_cast<double>(r2.base.size() + r2.test.size());
  o.converged = gain_converged(c.band, o.gain, o.pct, o.gain_2x, o.pct_2x);
}
}  // namespace

CaseOutcome reproduce_case(const Case& c, const ReproduceOptions& opt,
                           const std::function<void(int, int)>& progress) {
  CaseOutcome o;
  o.c = &c;
  if (!c.runnable()) return o;
  AbSpec spec = case_ab_spec(c, opt);
  // With --convergence, progress counts the runs at both lengths.
  std::optional<std::vector<std::string>> cmd_2x;
  if (opt.convergence) cmd_2x = workload::scale_length(spec.base.command, 2);
  const int passes = cmd_2x ? 2 : 1;
  auto pass_progress = [&](int pass) -> std::function<void(int, int)> {
    if (!progress) return nullptr;
    return [&progress, pass, passes](int done, int total) { progress(pass * total + done, passes * total); };
  };
  o.runs_start = spec.runs;
  o.max_runs = std::max(spec.runs, opt.max_runs);
  o.band_width = band_width(c.band, c.published.gain());
  AbResult r = run_ab(spec, pass_progress(0));
  auto metrics = ab_metrics(spec, r);
  const size_t nbench = r.base.front().metrics.size();
  auto find_metric = [&](std::vector<report::Metric>& ms) {
    return std::find_if(ms.begin(), ms.begin() + nbench, [&](const report::Metric& m) { return m.name == c.model.metric; });
  };
  auto it = find_metric(metrics);
  if (it == metrics.begin() + nbench) {
    std::vector<std::string> names;
    for (size_t k = 0; k < nbench; ++k) names.push_back(metrics[k].name);
    throw CatalogueError(fmt::format("{}:{}: model.metric '{}': `{}` reports {}", c.file, c.model.metric_line,
                                     c.model.metric, c.model.command_line, join(names)));
  }
  o.higher_is_better = it->dir == report::Direction::HigherIsBetter;
  const size_t metric_index = static_cast<size_t>(it - metrics.begin());
  add_seeds(spec, r, metrics, metric_index, o, progress);
  it = metrics.begin() + static_cast<std::ptrdiff_t>(metric_index);
  o.seeds_converged = interval_narrower(o.gain_low, o.gain_high, o.band_width);
  o.bc_base = stats::bimodality_coefficient(it->sets[0].values);
  o.bc_test = stats::bimodality_coefficient(it->sets[1].values);
  o.bimodal_base = o.bc_base > stats::kBimodalityThreshold;
  o.bimodal_test = o.bc_test > stats::kBimodalityThreshold;
  report::MetricResult res = report::analyze(*it);
  const auto& base = res.sets[0];
  const auto& test = res.sets[1];
  o.runs = spec.runs;
  o.unit = it->unit;
  o.base_mean = base.summary.mean;
  o.test_mean = test.summary.mean;
  o.gain = o.higher_is_better ? o.test_mean / o.base_mean : o.base_mean / o.test_mean;
  o.pct = test.pct_imp;
  o.ks_p = test.ks ? test.ks->pvalue : 1.0;
  compare_base(c, o.unit, o);
  for (auto m = metrics.begin() + nbench; m != metrics.end(); ++m) {
    double a = 0, b = 0;
    for (double v : m->sets[0].values) a += v;
    for (double v : m->sets[1].values) b += v;
    o.counters.push_back({m->name, m->unit, a / m->sets[0].values.size(), b / m->sets[1].values.size()});
  }
  // Did the change act? Both sides the same run at every seed, or the changed code's counters
  // all zero on the side that has it: then the band says nothing about the change.
  o.identical_sides = true;
  for (size_t i = 0; i < r.base.size() && o.identical_sides; ++i)
    o.identical_sides = same_run(r.base[i], r.test[i]);
  find_silent_changes(spec, r, o);
  o.band_met = c.band.contains(c.published.gain(), o.gain, o.pct);
  // A better/worse band is met only by a change the seeds can tell from none: the gain's 95 %
  // interval must lie on the published side of 1.0. A mean inside the band with an interval
  // that reaches 1.0 is a miss (the model cannot say the change moved anything).
  o.direction_clear = direction_clear(c.band, o.gain_low, o.gain_high);
  if (!o.direction_clear) o.band_met = false;
  o.direction_only = c.band.direction_only(c.published.gain());
  double sim = 0;
  for (const auto* side : {&r.base, &r.test})
    for (const RunResult& run : *side) sim += static_cast<double>(run.simulated_ns) * 1e-9;
  o.simulated_s = sim / static_cast<double>(r.base.size() + r.test.size());
  o.start_state_base = start_state_share(r.base);
  o.start_state_test = start_state_share(r.test);
  o.start_state = std::max(o.start_state_base, o.start_state_test) > kStartStateMajority;
  if (opt.convergence) {
    o.convergence_checked = true;
    if (cmd_2x) run_twice_the_length(c, spec, *cmd_2x, pass_progress(1), nbench, o);
  }
  o.status = !o.exercised() ? CaseStatus::NotExercised
             : o.start_state || !o.converged || !o.seeds_converged ? CaseStatus::NotConverged
             : o.base_off   ? CaseStatus::BaseOff
             : !o.band_met  ? CaseStatus::Miss
             : o.direction_only ? CaseStatus::DirectionOnly
                                : CaseStatus::InBand;
  return o;
}

namespace {
struct Counts {
  int in = 0, direction = 0, miss = 0, idle = 0, unconverged = 0, base_off = 0, skip = 0;
  explicit Counts(const std::vector<CaseOutcome>& outcomes) {
    for (const auto& o : outcomes) {
      switch (o.status) {
        case CaseStatus::NotConverged: ++unconverged; break;
        case CaseStatus::InBand: ++in; break;
        case CaseStatus::DirectionOnly: ++direction; break;
        case CaseStatus::Miss: ++miss; break;
        case CaseStatus::NotExercised: ++idle; break;
        case CaseStatus::BaseOff: ++base_off; break;
        case CaseStatus::NotRunnable: ++skip; break;
      }
    }
  }
  int ran() const { return in + direction + miss + idle + unconverged + base_off; }
};
}  // namespace

std::string summary_line(const std::vector<CaseOutcome>& outcomes) {
  Counts n(outcomes);
  return fmt::format(
      "{} of {} in band ({} ran: {} in band, {} in band by direction only, {} missed, {} not exercised, "
      "{} not converged, {} base off; {} not runnable yet)",
      n.in, outcomes.size(), n.ran(), n.in, n.direction, n.miss, n.idle, n.unconverged, n.base_off, n.skip);
}

namespace {
// One case's model result in the JSON report. `converged`: both the seeds and (with
// --convergence) the doubled length; base_ratio null where the case has no absolute figure.
nlohmann::ordered_json model_json(const CaseOutcome& o) {
  nlohmann::ordered_json counters = nlohmann::ordered_json::array();
  for (const auto& k : o.counters)
    counters.push_back({{"name", k.name}, {"unit", k.unit}, {"base", k.base}, {"test", k.test}});
  auto nullable = [](bool has, const auto& v) { return has ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  nlohmann::ordered_json m = {
      {"runs", o.runs}, {"metric", o.c->model.metric}, {"unit", o.unit}, {"higher_is_better", o.higher_is_better},
      {"base_mean", o.base_mean}, {"test_mean", o.test_mean}, {"pct_imp", o.pct}, {"gain", o.gain},
      {"ks_p", o.ks_p}, {"band_met", o.band_met}, {"direction_clear", o.direction_clear},
      {"direction_only", o.direction_only},
      {"exercised", o.exercised()}, {"identical_sides", o.identical_sides}, {"silent_changes", o.silent_changes},
      {"simulated_s", o.simulated_s}, {"base_ratio", nullable(o.base_compared, o.base_ratio)},
      {"base_off", o.base_off}, {"converged", o.converged && o.seeds_converged && !o.start_state},
      {"start_state", {{"sis_util_share_base", nullable(o.start_state_base >= 0, o.start_state_base)},
                       {"sis_util_share_test", nullable(o.start_state_test >= 0, o.start_state_test)},
                       {"majority", o.start_state}}},
      {"runs_start", o.runs_start},
      {"max_runs", o.max_runs}, {"gain_ci", {{"level", 0.95}, {"low", o.gain_low}, {"high", o.gain_high}}},
      {"band_width", o.band_width}, {"seeds_converged", o.seeds_converged},
      {"bimodal", {{"base", o.bimodal_base}, {"test", o.bimodal_test}, {"coefficient_base", o.bc_base},
                   {"coefficient_test", o.bc_test}}},
      {"counters", counters}};
  if (o.convergence_checked) {
    const bool has = !o.command_2x.empty();
    nlohmann::ordered_json cv = {{"command_2x", nullable(has, o.command_2x)}};
    if (has) {
      cv["simulated_2x_s"] = o.simulated_2x_s;
      cv["gain_2x"] = o.gain_2x;
      cv["pct_imp_2x"] = o.pct_2x;
    }
    cv["converged"] = nullable(has, o.converged);
    m["convergence"] = cv;
  }
  return m;
}

// The JSON report: every case with its model result (`status` is the verdict), and the summary.
std::string reproduce_json(const Catalogue& cat, const std::vector<CaseOutcome>& outcomes) {
  nlohmann::ordered_json j;
  j["catalogue"] = catalogue_label(cat);
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& o : outcomes) {
    nlohmann::ordered_json cj = case_json(*o.c);
    cj["status"] = to_string(o.status);
    cj["model"] = o.status == CaseStatus::NotRunnable ? nlohmann::ordered_json() : model_json(o);
    arr.push_back(cj);
  }
  j["cases"] = arr;
  Counts n(outcomes);
  j["summary"] = {{"cases", outcomes.size()}, {"in_band", n.in}, {"direction_only", n.direction},
                  {"missed", n.miss}, {"not_exercised", n.idle}, {"not_converged", n.unconverged},
                  {"base_off", n.base_off}, {"not_runnable", n.skip}};
  j["summary"]["line"] = summary_line(outcomes);
  return j.dump(2) + "\n";
}

// The Markdown report (docs/reproduction.md): the table, then a section per kind of result.
// A miss or a base-off case in full: the published and model numbers, the band, the base, what
// the model lacks.
std::string case_detail(const CaseOutcome& o) {
  const Case& c = *o.c;
  std::string out = fmt::format("\n### {}\n\n{} ({}, {}, <{}>)\n\n", c.name, c.title, c.source.author,
                                c.source.date, c.source.message_id);
  out += fmt::format("- published: {} ({}; {})\n", published_str(c), c.published.statistic, c.published.doubts);
  out += fmt::format("- model: `{}` on {}, {}{}; {} runs per side: {} {:.6g} -> {:.6g} {}, {}, KS p {:.4g}\n",
                     c.model.command_line, c.machine.profile, sides(c),
                     common_settings(c).empty() ? "" : ", " + common_settings(c), o.runs, c.model.metric,
                     o.base_mean, o.test_mean, o.unit, model_str(o), o.ks_p);
  out += fmt::format("- band: {} ({}){}\n", c.band.describe(c.published.gain()), c.band.justification,
                     o.status == CaseStatus::BaseOff ? fmt::format("; {}", o.band_met ? "met" : "missed") : "");
  if (o.base_compared)
    out += fmt::format("- base: {}{}; {}\n", base_detail(o), o.base_off ? fmt::format(", off by more than {:g}x", kBaseOffFactor) : "",
                       c.absolute.source);
  else
    out += fmt::format("- base: no absolute figure ({})\n", c.absolute.none);
  out += fmt::format("- what the model lacks: {}\n", c.model.lacks);
  return out;
}

std::string not_converged_line(const CaseOutcome& o) {
  const Case& c = *o.c;
  if (o.start_state)
    return fmt::format("- {}: `{}` ({:.4g} s simulated per run) gain {:.3f}; {} of the base's and {} of the "
                       "test's select_idle_cpu() calls took SIS_UTIL's depth from the start state's nr_idle_scan (no "
                       "busy CPU's periodic balance of the LLC level had refreshed it yet); band {} ({})\n",
                       c.name, c.model.command_line, o.simulated_s, o.gain, share_str(o.start_state_base),
                       share_str(o.start_state_test), c.band.describe(c.published.gain()),
                       o.band_met ? "met" : "missed");
  if (o.converged)
    return fmt::format("- {}: gain {:.3f}, 95 % interval {:.3f}..{:.3f} (width {:.3f}) at {} runs per side, wider "
                       "than the band {} (width {:.3f}); band {}\n",
                       c.name, o.gain, o.gain_low, o.gain_high, o.gain_high - o.gain_low, o.runs,
                       c.band.describe(c.published.gain()), o.band_width, o.band_met ? "met" : "missed");
  return fmt::format("- {}: `{}` ({:.4g} s simulated per run) gain {:.3f}, `{}` ({:.4g} s) gain {:.3f}; band {} "
                     "({} at 1x)\n",
                     c.name, c.model.command_line, o.simulated_s, o.gain, o.command_2x, o.simulated_2x_s, o.gain_2x,
                     c.band.describe(c.published.gain()), o.band_met ? "met" : "missed");
}

std::string not_exercised_line(const CaseOutcome& o) {
  const Case& c = *o.c;
  std::string why = o.identical_sides
                        ? fmt::format("both sides the same run at each of the {} seeds (output, events and "
                                      "every counter)",
                                      o.runs)
                        : fmt::format("the counters of {} all 0 on the side that has it, in all {} runs",
                                      join(o.silent_changes), o.runs);
  return fmt::format("- {}: {}; model {} vs published {}, band {} ({}). {}\n", c.name, why, model_str(o),
                     published_str(c), c.band.describe(c.published.gain()), o.band_met ? "met" : "missed",
                     c.model.lacks);
}

std::string in_band_line(const CaseOutcome& o) {
  std::string dir = o.status == CaseStatus::DirectionOnly
                        ? fmt::format(" Direction only: the band ({}) reaches gain 1.0.",
                                      o.c->band.describe(o.c->published.gain()))
                        : "";
  std::string base = o.base_compared ? fmt::format(" Base: {}.", base_detail(o)) : " Base: no absolute figure.";
  return fmt::format("- {}: model {} vs published {}.{}{} {}\n", o.c->name, model_str(o), published_str(*o.c), dir,
                     base, o.c->model.lacks);
}

// A section of the cases whose status is one of `statuses`, each rendered by `line`; nothing
// when there are none.
std::string section(const std::vector<CaseOutcome>& outcomes, std::initializer_list<CaseStatus> statuses,
                    const std::string& head, const std::function<std::string(const CaseOutcome&)>& line) {
  std::string out;
  for (const auto& o : outcomes) {
    if (std::find(statuses.begin(), statuses.end(), o.status) == statuses.end()) continue;
    if (out.empty()) out += head;
    out += line(o);
  }
  return out;
}

std::string reproduce_markdown(const std::vector<CaseOutcome>& outcomes) {
  std::string out;
  out += "| case | machine | published | model | base | band | result |\n|---|---|---:|---:|---:|---|---|\n";
  for (const auto& o : outcomes)
    out += fmt::format("| [{}]({}) | {} | {} | {} | {} | {} | {} |\n", o.c->name, o.c->source.url,
                       o.c->machine.profile, published_str(*o.c), model_str(o), base_ratio_str(o),
                       o.c->band.describe(o.c->published.gain()), cell(result_str(o) + bimodal_str(o)));
  out += fmt::format("\n{}\n", summary_line(outcomes));
  out += section(outcomes, {CaseStatus::Miss}, "\n## Misses\n", case_detail);
  out += section(outcomes, {CaseStatus::BaseOff},
                 "\n## Base off\n\nThe model's base is more than 2x away from the published base in absolute terms "
                 "(after the case's scaling): a right gain on a wrong base is not a reproduction, so these are "
                 "counted apart whatever the band says; the size of the gap points at the work the model skips or "
                 "adds.\n",
                 case_detail);
  out += section(outcomes, {CaseStatus::NotConverged},
                 "\n## Not converged\n\nThe gain at twice the run length moved by more than the band's tolerance "
                 "(the verdict depends on the length), the gain's 95 % interval is still wider than the band at "
                 "the cap on runs per side (the seeds cannot call it), or most of a side's select_idle_cpu() calls "
                 "took SIS_UTIL's depth from the start state's nr_idle_scan (the run ended before the LLC level's periodic "
                 "balance refreshed it: the run measured the start, not the steady state).\n\n",
                 not_converged_line);
  out += section(outcomes, {CaseStatus::NotExercised},
                 "\n## Not exercised\n\nThe change never acted in these runs, so the band (met or not) says nothing "
                 "about it.\n\n",
                 not_exercised_line);
  out += section(outcomes, {CaseStatus::InBand, CaseStatus::DirectionOnly}, "\n## In band\n\n", in_band_line);
  out += section(outcomes, {CaseStatus::NotRunnable}, "\n## Not runnable yet\n\n", [](const CaseOutcome& o) {
    return fmt::format("- {}: needs {}. {}\n", o.c->name, join(o.c->missing), o.c->model.lacks);
  });
  return out;
}
}  // namespace

std::string render_reproduce(const Catalogue& cat, const std::vector<CaseOutcome>& outcomes, report::Format f) {
  if (f == report::Format::Json) return reproduce_json(cat, outcomes);
  if (f == report::Format::Markdown) return reproduce_markdown(outcomes);
  std::string out;
  size_t w = 4;
  for (const auto& o : outcomes) w = std::max(w, o.c->name.size());
  out += fmt::format("# schedlab reproduce: {} cases from {}\n\n", outcomes.size(), catalogue_label(cat));
  out += fmt::format("{:<{}}  {:<16} {:>22} {:>38} {:>8}  {:<28} {}\n", "case", w, "machine", "published", "model",
                     "base", "band", "result");
  for (const auto& o : outcomes)
    out += fmt::format("{:<{}}  {:<16} {:>22} {:>38} {:>8}  {:<28} {}{}\n", o.c->name, w, o.c->machine.profile,
                       published_str(*o.c), model_str(o), base_ratio_str(o), o.c->band.describe(o.c->published.gain()),
                       result_str(o), bimodal_str(o));
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
