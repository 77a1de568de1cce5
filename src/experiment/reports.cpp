#include "experiment/reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>

namespace schedlab::experiment {

namespace {
bool has(const std::vector<std::string>& argv, std::initializer_list<const char*> flags) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) {
    return std::any_of(flags.begin(), flags.end(), [&](const char* f) { return a == f; });
  });
}
// The value after a flag ("-g 4", "--groups=4", "-g4"); empty if absent.
std::string value_of(const std::vector<std::string>& argv, const char* shrt, const char* lng) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if ((a == shrt || a == lng) && i + 1 < argv.size()) return argv[i + 1];
    const std::string eq = std::string(lng) + "=";
    if (a.rfind(eq, 0) == 0) return a.substr(eq.size());
    if (a.size() > 2 && a.rfind(shrt, 0) == 0 && a[1] != '-') return a.substr(2);
  }
  return "";
}
}  // namespace

MmtestsNaming mmtests_naming(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  // `taskset -c LIST <benchmark>`: the benchmark's own words.
  while (argv.size() >= 3 && argv[0] == "taskset") argv.erase(argv.begin(), argv.begin() + 3);
  MmtestsNaming n;
  if (argv.empty()) return n;
  const std::string& tool = argv[0];
  if (tool == "hackbench") {
    const bool threads = has(argv, {"-T", "--threads"});
    const bool pipes = has(argv, {"-p", "--pipe"});
    n.title = fmt::format("hackbench-{}-{}", threads ? "thread" : "process", pipes ? "pipes" : "sockets");
    const std::string g = value_of(argv, "-g", "--groups");
    n.op = g.empty() ? "10" : g;  // hackbench's default group count
    n.precision = 4;
  } else if (tool == "tbench") {
    n.title = "tbench4";
  } else if (tool == "perf") {
    n.title = "perfpipe";
  } else if (tool == "netperf") {
    n.title = "netperf-tcp-rr";
  } else {
    n.title = tool;
  }
  return n;
}

std::string ab_mmtests(const AbSpec& spec, const AbResult& r, const report::mmtests::Options& opts) {
  return mmtests_table(ab_metrics(spec, r), r.base.empty() ? 0 : r.base.front().metrics.size(), spec.base.command,
                       opts);
}

std::string mmtests_table(const std::vector<report::Metric>& metrics, size_t nbench,
                          const std::vector<std::string>& command, const report::mmtests::Options& opts) {
  namespace mm = report::mmtests;
  const MmtestsNaming naming = mmtests_naming(command);
  std::vector<std::string> labels;
  std::vector<mm::OperationSamples> bench;
  for (size_t i = 0; i < nbench && i < metrics.size(); ++i) {
    const auto& m = metrics[i];
    if (labels.empty())
      for (const auto& s : m.sets) labels.push_back(s.label);
    mm::OperationSamples op;
    op.name = nbench == 1 && !naming.op.empty() ? naming.op : m.name;
    op.dir = m.dir;
    for (const auto& s : m.sets) op.sets.push_back(s.values);
    bench.push_back(std::move(op));
  }
  return mm::render(mm::make_table(naming.title, labels, naming.precision, bench, opts), opts);
}

}  // namespace schedlab::experiment

// ---------------------------------------------------------------------------------------------
// The HTML reports.

namespace schedlab::experiment {

namespace {

using nlohmann::ordered_json;

// An empirical CDF (value, fraction of values <= value) with at most `max_points` points: every
// distinct value when there are few, else values at evenly spaced ranks (the last included).
std::vector<std::pair<double, double>> ecdf(std::vector<double> v, std::size_t max_points = 400) {
  std::vector<std::pair<double, double>> out;
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  std::vector<std::pair<double, double>> all;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i + 1 < v.size() && v[i + 1] == v[i]) continue;  // the last of equal values
    all.emplace_back(v[i], static_cast<double>(i + 1) / n);
  }
  if (all.size() <= max_points) return all;
  for (std::size_t k = 0; k < max_points; ++k) {
    const std::size_t idx = (all.size() - 1) * k / (max_points - 1);
    out.push_back(all[idx]);
  }
  return out;
}

// schbench's percentile blocks: "<Kind> Latencies percentiles (usec) ..." then "  50.0th: 3 ..."
// lines and "  min=2, max=44".
std::vector<LatencyDistribution> schbench_latencies(const std::string& report) {
  std::vector<LatencyDistribution> out;
  std::istringstream in(report);
  LatencyDistribution* cur = nullptr;
  double minv = NAN;
  for (std::string line; std::getline(in, line);) {
    const auto lat = line.find(" Latencies percentiles (usec)");
    if (lat != std::string::npos) {
      std::string kind = line.substr(0, lat);
      std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
      out.push_back({"schbench " + kind + " latency", "us", true, {}});
      cur = &out.back();
      minv = NAN;
      continue;
    }
    if (line.find("percentiles") != std::string::npos) {  // RPS: not a latency
      cur = nullptr;
      continue;
    }
    if (!cur) continue;
    std::size_t th = line.find("th:");
    if (th != std::string::npos) {
      std::size_t start = line.find_last_of(" \t*", th);
      const double p = std::stod(line.substr(start + 1, th - start - 1)) / 100;
      const double v = std::stod(line.substr(th + 3));
      cur->points.emplace_back(v, p);
      continue;
    }
    const auto mn = line.find("min="), mx = line.find(", max=");
    if (mn != std::string::npos && mx != std::string::npos) {
      minv = std::stod(line.substr(mn + 4));
      const double maxv = std::stod(line.substr(mx + 6));
      cur->points.insert(cur->points.begin(), {minv, 0.0});
      cur->points.emplace_back(maxv, 1.0);
      // Percentile values are bucket bounds: keep the curve monotonic.
      for (std::size_t i = 1; i < cur->points.size(); ++i)
        cur->points[i].first = std::max(cur->points[i].first, cur->points[i - 1].first);
      cur = nullptr;
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& d) { return d.points.size() < 2; }), out.end());
  return out;
}

// rt-app's logs: the wu_lat column of every thread that has a nonzero one (a timer).
std::vector<double> rtapp_wu_lat(const RunResult& r) {
  std::vector<double> all;
  for (const auto& f : r.files) {
    std::istringstream in(f.content);
    std::string header;
    if (!std::getline(in, header) || header.rfind("#idx", 0) != 0) continue;
    std::istringstream hs(header);
    int col = -1, i = 0;
    for (std::string w; hs >> w; ++i)
      if (w == "wu_lat") col = i;
    if (col < 0) continue;
    std::vector<double> mine;
    bool any = false;
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      std::string w;
      for (int k = 0; k <= col && ls >> w; ++k) {
        if (k == col) {
          const double v = std::stod(w);
          mine.push_back(v);
          any |= v != 0;
        }
      }
    }
    if (any) all.insert(all.end(), mine.begin(), mine.end());
  }
  return all;
}

std::string tool_of(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  std::size_t i = 0;
  while (i + 2 < w.size() && w[i] == "taskset") i += 3;
  return i < w.size() ? w[i] : "";
}

ordered_json curve_json(const std::vector<std::pair<double, double>>& pts) {
  ordered_json a = ordered_json::array();
  for (const auto& [x, p] : pts) a.push_back({x, p});
  return a;
}

}  // namespace

std::vector<LatencyDistribution> latency_distributions(const RunResult& r) {
  const std::string tool = tool_of(r.command);
  if (tool == "schbench") return schbench_latencies(r.report);
  if (tool == "rt-app") {
    auto v = rtapp_wu_lat(r);
    if (v.empty()) return {};
    return {{"rt-app wakeup latency (wu_lat)", "us", false, ecdf(std::move(v))}};
  }
  return {};
}

std::string run_html(const RunSpec& spec, const RunResult& r) {
  using namespace report::html;
  Document doc(fmt::format("schedlab run: {}", r.command));
  doc.paragraph(fmt::format("machine {} ({} CPUs), features {}, seed {}, simulated {} s, {} events. A model run, "
                            "not a measurement: see docs/model.md for what the model leaves out.",
                            r.machine, r.nr_cpus, r.features.empty() ? "default" : r.features, r.seed,
                            num(static_cast<double>(r.simulated_ns) * 1e-9), r.events));
  ordered_json data;
  data["schema"] = "schedlab.report.v1";
  data["command"] = "run";
  data["machine"] = r.machine;
  data["features"] = r.features;
  data["seed"] = r.seed;
  data["benchmark"] = r.command;
  data["simulated_ns"] = r.simulated_ns;

  doc.heading("The benchmark's output");
  doc.preformatted(r.report + summary(r));
  doc.heading("Metrics");
  std::vector<std::vector<std::string>> rows{{"metric", "value", "unit", "better"}};
  ordered_json jm = ordered_json::array();
  for (const auto& m : r.metrics) {
    rows.push_back({m.name, num(m.value), m.unit, m.higher_is_better ? "higher" : "lower"});
    jm.push_back({{"name", m.name}, {"unit", m.unit}, {"value", m.value}, {"higher_is_better", m.higher_is_better}});
  }
  doc.table(rows);
  data["metrics"] = jm;

  ordered_json jl = ordered_json::array();
  for (const auto& d : latency_distributions(r)) {
    doc.heading(d.title);
    doc.cdf(d.title, fmt::format("latency ({}){}", d.unit, d.percentiles ? ", through the percentiles the tool prints" : ""),
            {{"run", 0, false, d.points}}, {"run"});
    jl.push_back({{"title", d.title}, {"unit", d.unit}, {"percentiles", d.percentiles}, {"points", curve_json(d.points)}});
  }
  data["latency"] = jl;

  doc.heading("CPU time");
  std::vector<CpuTime> cpus;
  ordered_json jc = ordered_json::array();
  const double t = static_cast<double>(r.simulated_ns);
  for (std::size_t c = 0; c < r.per_cpu.size(); ++c) {
    const auto& pc = r.per_cpu[c];
    CpuTime ct{static_cast<int>(c), t > 0 ? pc.busy_ns / t : 0,
               t > 0 ? kernel::derived::kernel_total_ns(pc) / t : 0,
               t > 0 ? kernel::derived::idle_total_ns(pc) / t : 0};
    cpus.push_back(ct);
    jc.push_back({{"cpu", c}, {"busy_ns", pc.busy_ns}, {"kernel_ns", kernel::derived::kernel_total_ns(pc)},
                  {"idle_ns", kernel::derived::idle_total_ns(pc)}});
  }
  doc.cpu_time("Busy, kernel and idle time per CPU", cpus);
  data["per_cpu_time"] = jc;

  doc.heading("Key counters (whole run, all CPUs)");
  AbSpec as;
  as.base = spec;
  as.base_features = spec.features;
  as.test_features = spec.features;
  std::vector<std::vector<std::string>> crow{{"counter", "value", "unit"}};
  ordered_json jk = ordered_json::array();
  for (const auto& c : ab_counters(as)) {
    const double v = c.get(r);
    crow.push_back({c.name, num(v), c.unit});
    jk.push_back({{"name", c.name}, {"unit", c.unit}, {"value", v}});
  }
  doc.table(crow);
  data["counters"] = jk;
  doc.set_data(std::move(data));
  return doc.str();
}

namespace {

// ab_html's latency section: every run's curve (percentile curves cannot be pooled), or per
// side all runs' samples pooled; returns the curves' data for the report's JSON.
ordered_json ab_latency_section(report::html::Document& doc, const AbResult& r, const std::string& la,
                                const std::string& lb) {
  using namespace report::html;
  std::map<std::string, std::vector<Curve>> by_title;
  std::vector<std::string> titles;
  ordered_json jl = ordered_json::array();
  for (int side = 0; side < 2; ++side) {
    const auto& runs = side == 0 ? r.base : r.test;
    std::map<std::string, std::vector<double>> pooled;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      for (const auto& d : latency_distributions(runs[i])) {
        if (!by_title.count(d.title)) titles.push_back(d.title);
        auto& curves = by_title[d.title];
        if (d.percentiles) {
          curves.push_back({fmt::format("{} seed {}", side == 0 ? la : lb, runs[i].seed), side, true, d.points});
          jl.push_back({{"title", d.title}, {"side", side == 0 ? la : lb}, {"seed", runs[i].seed},
                        {"percentiles", true}, {"points", curve_json(d.points)}});
        }
      }
      if (tool_of(runs[i].command) == "rt-app") {
        auto v = rtapp_wu_lat(runs[i]);
        auto& p = pooled["rt-app wakeup latency (wu_lat)"];
        p.insert(p.end(), v.begin(), v.end());
      }
    }
    for (auto& [title, v] : pooled) {
      if (v.empty()) continue;
      auto pts = ecdf(v);
      by_title[title].push_back({fmt::format("{}: all runs", side == 0 ? la : lb), side, false, pts});
      jl.push_back({{"title", title}, {"side", side == 0 ? la : lb}, {"seed", nullptr}, {"percentiles", false},
                    {"points", curve_json(pts)}});
    }
  }
  if (!titles.empty()) doc.heading("Latency distributions");
  for (const auto& t : titles) {
    const bool pct = !by_title[t].empty() && by_title[t].front().thin;
    doc.cdf(t, pct ? "latency (us), through the percentiles the tool prints; one curve per run"
                   : "latency (us), every activation of every run",
            by_title[t], {la, lb});
  }
  return jl;
}

}  // namespace

std::string ab_html(const AbSpec& spec, const AbResult& r, const std::string& text_report) {
  using namespace report::html;
  const auto metrics = ab_metrics(spec, r);
  const size_t nbench = r.base.empty() ? 0 : r.base.front().metrics.size();
  const std::string la = metrics.empty() ? "base" : metrics[0].sets[0].label;
  const std::string lb = metrics.empty() ? "test" : metrics[0].sets[1].label;
  const std::string command = r.base.empty() ? "" : r.base.front().command;
  Document doc(fmt::format("schedlab ab: {} vs {} -- {}", la, lb, command));
  doc.paragraph(fmt::format("machine {}, {} runs per side (run i of both sides with seed {} + i), base \"{}\", test "
                            "\"{}\". A model comparison, not a measurement: see docs/model.md.",
                            r.base.empty() ? spec.base.machine : r.base.front().machine, spec.runs, spec.first_seed,
                            spec.base_features, spec.test_features));
  ordered_json data;
  data["schema"] = "schedlab.report.v1";
  data["command"] = "ab";
  data["machine"] = r.base.empty() ? spec.base.machine : r.base.front().machine;
  data["benchmark"] = command;
  data["runs"] = spec.runs;
  data["first_seed"] = spec.first_seed;
  data["base"] = {{"label", la}, {"features", spec.base_features}, {"sets", spec.base_sets}};
  data["test"] = {{"label", lb}, {"features", spec.test_features}, {"sets", spec.test_sets}};

  doc.heading("Benchmark metrics");
  ordered_json jm = ordered_json::array();
  for (size_t k = 0; k < nbench && k < metrics.size(); ++k) {
    const auto& m = metrics[k];
    std::vector<Series> sides;
    ordered_json js = ordered_json::array();
    for (const auto& s : m.sets) {
      Series se{s.label, {}};
      for (double v : s.values)
        if (std::isfinite(v)) se.values.push_back(v);
      js.push_back({{"label", s.label}, {"values", s.values}});
      sides.push_back(std::move(se));
    }
    doc.strip_box(m.name, m.unit, m.dir, sides);
    jm.push_back({{"name", m.name}, {"unit", m.unit},
                  {"direction", report::direction_id(m.dir)},
                  {"sides", js}});
  }
  data["metrics"] = jm;

  data["latency"] = ab_latency_section(doc, r, la, lb);

  doc.heading("Key counters");
  std::vector<CounterRow> rows;
  ordered_json jc = ordered_json::array();
  for (size_t k = nbench; k < metrics.size(); ++k) {
    const auto res = report::analyze(metrics[k]);
    CounterRow row{metrics[k].name, metrics[k].unit, res.sets[0].summary.mean, res.sets[1].summary.mean,
                   res.sets[1].ks ? res.sets[1].ks->pvalue : 1.0};
    jc.push_back({{"name", row.name}, {"unit", row.unit}, {"base_mean", row.base_mean}, {"test_mean", row.test_mean},
                  {"ks_p", row.ks_p}});
    rows.push_back(std::move(row));
  }
  doc.counters(fmt::format("Key counters, {} against {}", lb, la), la, lb, rows);
  data["counters"] = jc;

  doc.heading("The tables");
  doc.preformatted(text_report);
  doc.set_data(std::move(data));
  return doc.str();
}

std::string reproduce_html(const std::vector<CaseOutcome>& outcomes, const std::string& text_report) {
  using namespace report::html;
  Document doc("schedlab reproduce: published results against the model");
  doc.paragraph(summary_line(outcomes) + ". Each case is a result measured on a real machine and posted on LKML, "
                "run as an A/B on the model of that machine; the band is the range of model gains that counts as "
                "reproducing it (published/README.md).");
  std::vector<BandRow> rows;
  ordered_json jc = ordered_json::array();
  for (const auto& o : outcomes) {
    const Case& c = *o.c;
    const double pub = c.published.gain();
    BandRow b;
    b.name = c.name;
    b.published_gain = pub;
    b.ran = o.status != CaseStatus::NotRunnable;
    b.model_gain = o.gain;
    b.in_band = o.status == CaseStatus::InBand || o.status == CaseStatus::DirectionOnly;
    if (c.band.direction == BandDirection::None) {
      // |pct| <= p, as a gain: higher is better pct = (g - 1) 100, lower is better (1 - 1/g) 100.
      const double p = c.band.max_change_pct / 100;
      const bool hib = b.ran ? o.higher_is_better : c.published.higher_is_better;
      b.band_lo = hib ? 1 - p : 1 / (1 + p);
      b.band_hi = hib ? 1 + p : (p < 1 ? 1 / (1 - p) : 1e3);
    } else {
      auto [lo, hi] = c.band.interval(pub);
      if (c.band.direction == BandDirection::Better) lo = std::max(lo, 1.0);
      if (c.band.direction == BandDirection::Worse) hi = std::min(hi, 1.0);
      b.band_lo = lo, b.band_hi = hi;
    }
    b.note = o.status == CaseStatus::NotRunnable    ? "not runnable"
             : o.status == CaseStatus::NotExercised ? "not exercised"
             : o.status == CaseStatus::NotConverged ? "not converged"
             : o.status == CaseStatus::BaseOff      ? "base off"
             : o.status == CaseStatus::DirectionOnly ? "in band, direction only"
             : b.in_band                             ? "in band"
                                                     : "miss";
    ordered_json j = {{"case", c.name},
                      {"title", c.title},
                      {"message_id", c.source.message_id},
                      {"published_gain", pub},
                      {"band", {{"direction", to_string(c.band.direction)}, {"lo", b.band_lo}, {"hi", b.band_hi}}},
                      {"status", b.note}};
    if (b.ran) {
      j["model_gain"] = o.gain;
      j["model_pct"] = o.pct;
      j["runs"] = o.runs;
      j["base_mean"] = o.base_mean;
      j["test_mean"] = o.test_mean;
    } else {
      ordered_json missing = ordered_json::array();
      for (const auto& m : c.missing) missing.push_back(m);
      j["missing"] = missing;
    }
    jc.push_back(std::move(j));
    rows.push_back(std::move(b));
  }
  doc.heading("Published vs model gain");
  doc.bands("Published vs model gain against each case's band", rows);
  doc.heading("The table");
  doc.preformatted(text_report);
  ordered_json data;
  data["schema"] = "schedlab.report.v1";
  data["command"] = "reproduce";
  data["summary"] = summary_line(outcomes);
  data["cases"] = jc;
  doc.set_data(std::move(data));
  return doc.str();
}

}  // namespace schedlab::experiment

// ---------------------------------------------------------------------------------------------
// schedstat.

namespace schedlab::experiment {

report::schedstat::Snapshot schedstat_snapshot(const RunResult& r, bool at_end) {
  namespace ss = report::schedstat;
  ss::Snapshot s;
  s.timestamp = at_end && r.tick_period_ns > 0 ? static_cast<uint64_t>(r.simulated_ns / r.tick_period_ns) : 0;
  for (size_t cpu = 0; cpu < r.per_cpu.size(); ++cpu) {
    const kernel::CpuCounters& c = r.per_cpu[cpu];
    ss::Cpu out;
    out.cpu = static_cast<int>(cpu);
    auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    if (at_end)
      out.v = {u(c.yld_count),
               0,
               u(c.schedule_calls + c.schedule_idle_calls),
               u(c.sched_goidle),
               u(c.ttwu_local + c.ttwu_remote + c.ttwu_runnable),
               u(c.ttwu_local + c.ttwu_runnable_local),
               u(c.rq_cpu_time),
               u(c.run_delay),
               u(c.pcount)};
    const auto& doms = cpu < r.sd.size() ? r.sd[cpu] : std::vector<SchedstatDomain>{};
    for (size_t d = 0; d < doms.size(); ++d) {
      ss::Domain dom;
      dom.index = static_cast<int>(d);
      dom.name = doms[d].name;
      dom.cpumask = doms[d].cpumask;
      if (at_end) {
        const int l = doms[d].level;
        for (int t = 0; t < ss::kIdleTypes; ++t) {
          const int i = l * kernel::kNumIdleTypes + t, b = t * ss::kLbFields;
          dom.v[b + ss::kLbCount] = u(c.lb_count[i]);
          dom.v[b + ss::kLbBalanced] = u(c.lb_balanced[i]);
          dom.v[b + ss::kLbFailed] = u(c.lb_failed[i]);
          dom.v[b + ss::kLbImbalanceLoad] = u(c.lb_imbalance_load[i]);
          dom.v[b + ss::kLbImbalanceUtil] = u(c.lb_imbalance_util[i]);
          dom.v[b + ss::kLbImbalanceTask] = u(c.lb_imbalance_task[i]);
          dom.v[b + ss::kLbImbalanceMisfit] = u(c.lb_imbalance_misfit[i]);
          dom.v[b + ss::kLbGained] = u(c.lb_gained[i]);
          dom.v[b + ss::kLbHotGained] = u(c.lb_hot_gained[i]);
          dom.v[b + ss::kLbNobusyq] = u(c.lb_nobusyq[i]);
          dom.v[b + ss::kLbNobusyg] = u(c.lb_nobusyg[i]);
        }
        dom.v[ss::kTtwuWakeRemote] = u(c.ttwu_wake_remote[l]);
        dom.v[ss::kTtwuMoveAffine] = u(c.ttwu_move_affine[l]);
      }
      out.domains.push_back(std::move(dom));
    }
    s.cpus.push_back(std::move(out));
  }
  return s;
}

std::string schedstat_file(const RunResult& r) {
  return report::schedstat::to_text(schedstat_snapshot(r, false)) + report::schedstat::to_text(schedstat_snapshot(r, true));
}

report::schedstat::Snapshot schedstat_recording(const std::vector<RunResult>& runs) {
  namespace ss = report::schedstat;
  ss::Snapshot total;
  for (size_t i = 0; i < runs.size(); ++i) {
    ss::Snapshot rec = ss::recording("run", schedstat_snapshot(runs[i], false), schedstat_snapshot(runs[i], true));
    total = i == 0 ? rec : ss::add(total, rec);
  }
  return total;
}

}  // namespace schedlab::experiment
