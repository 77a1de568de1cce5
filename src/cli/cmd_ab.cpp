// schedlab ab [--machine P] --base "FEATURES" --test "FEATURES" [--runs N] [--jobs J]
//             [--format text|markdown|json|csv|mmtests|perf-sched-stats] [--mmtests-significance ci|ttest]
//             [--counters-cpu LIST] [--html FILE] -- <benchmark command line>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <thread>

#include "cli/ab_tables.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/ab.hpp"
#include "experiment/reports.hpp"
#include <nlohmann/json.hpp>
#include "workload/options.hpp"
#include "io/output.hpp"

namespace schedlab::cli {

namespace {
struct AbArgs {
  experiment::RunSpec spec;
  std::optional<std::string> idle_disable;
  std::string base, test;
  int runs = 10;
  int jobs = 0;
  OutputChoice out;  // -o FILE, --format
  std::string mmtests_significance = "ci";
  std::string seed = "1";
  std::vector<std::string> base_sets, test_sets;
  std::string counters_cpu;
  std::optional<std::string> html;
  std::vector<std::string> positional;
};
// Fixed decimals, never scientific: integers as integers, 1 decimal from 100 up, else 4
// significant digits (0.07018, 5.607), at most 9 decimals.
std::string num(double v) {
  if (std::isnan(v)) return "-";
  if (std::fabs(v) >= 100) return fmt::format("{:.1f}", v);
  if (v == std::floor(v)) return fmt::format("{}", static_cast<int64_t>(v));
  const int decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(v)))), 0, 9);
  return fmt::format("{:.{}f}", v, decimals);
}

// Key counters, one row each: AMean per side, the better direction, normalized, pct imp, KS p.
// A neutral counter (which path ran: csd_run_idle) has no pct imp, only its normalized change.
std::string counters_table(const std::vector<report::Metric>& ms, bool markdown,
                           const std::string& cpus) {
  std::string out;
  if (ms.empty()) return out;
  auto res0 = report::analyze(ms.front());
  const std::string& la = res0.sets[0].label;
  const std::string& lb = res0.sets[1].label;
  if (markdown) {
    out += fmt::format("| counter | {} AMean | {} AMean | better | normalized | pct imp | KS p |\n", la, lb);
    out += "|---|---:|---:|---|---:|---:|---:|\n";
  } else {
    const char* how = " (better: which way is better; a neutral counter's change is no verdict)";
    out += cpus.empty() ? fmt::format("Key counters per run{}:\n", how)
                        : fmt::format("Key counters per run of CPU {}{}:\n", cpus, how);
    out += fmt::format("{:<40} {:>14} {:>14} {:>7} {:>10} {:>9} {:>8}\n", "counter", la.substr(0, 14),
                       lb.substr(0, 14), "better", "normalized", "pct imp", "KS p");
  }
  for (const auto& m : ms) {
    auto res = report::analyze(m);
    const auto& a = res.sets[0];
    const auto& b = res.sets[1];
    std::string name = m.name + (m.unit.empty() ? "" : " (" + m.unit + ")");
    double p = b.ks ? b.ks->pvalue : 1.0;
    std::string sig = p < 0.05 ? "*" : " ";
    std::string ps = p < 0.0001 ? "<0.0001" : fmt::format("{:.4f}", p);
    const bool neutral = m.dir == report::Direction::Neutral;
    const char* better = neutral ? "neutral" : m.dir == report::Direction::HigherIsBetter ? "higher" : "lower";
    const std::string pct = neutral || std::isnan(b.pct_imp) ? "-" : fmt::format("{:.2f}%", b.pct_imp);
    if (markdown)
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {}{} |\n", name, num(a.summary.mean),
                         num(b.summary.mean), better, num(b.normalized), pct, ps, sig);
    else
      out += fmt::format("{:<40} {:>14} {:>14} {:>7} {:>10} {:>9} {:>8}{}\n", name, num(a.summary.mean),
                         num(b.summary.mean), better, num(b.normalized), pct, ps, sig);
  }
  if (!markdown) out += "(* = distributions differ at 5% by the two-sample KS test)\n";
  return out;
}

void warn_equal_sides(const std::vector<report::Metric>& metrics, const experiment::AbSpec& s,
                      const experiment::AbResult& r, const std::vector<machine::Machine>& side_machines) {
  // A side whose runs all gave the same benchmark result: the seeds changed nothing, so its
  // CoV is 0 and the tests compare constants. Said once per side, with the likely reason.
  const size_t nbench = r.base.front().metrics.size();
  for (int side = 0; side < 2; ++side) {
    std::string same;
    for (size_t k = 0; k < nbench && k < metrics.size(); ++k) {
      const auto& v = metrics[k].sets[side].values;
      if (v.size() > 1 && std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); }))
        same += (same.empty() ? "" : ", ") + metrics[k].name;
    }
    if (same.empty()) continue;
    const machine::Machine& sm = side_machines[side];
    const std::string why =
        sm.noise == machine::Noise{}
            ? fmt::format("machine {} has no noise (noise.jitter_cov, noise.run_sigma and noise.tick_phase "
                          "are 0), so the seeds change nothing; give a profile with noise or e.g. "
                          "--set noise.jitter_cov=0.02",
                          sm.name)
            : std::string("the seeds changed nothing in this benchmark on this machine");
    fmt::print(stderr, "schedlab: warning: ab: the {} side's {} runs gave identical {}: {}\n",
               side == 0 ? "base" : "test", s.runs, same, why);
  }
}

std::string sets_text(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& x : v) o += (o.empty() ? "" : " ") + x;
  return o;
}

// The setup that reruns an ab: in the JSON's "setup".
nlohmann::ordered_json ab_setup(const experiment::AbSpec& s, const std::string& machine_name) {
  nlohmann::ordered_json setup;
  setup["machine"] = machine_name;
  setup["command"] = s.base.command;
  setup["runs"] = s.runs;
  setup["first_seed"] = s.first_seed;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < s.runs; ++i) seeds.push_back(s.first_seed + static_cast<uint64_t>(i));
  setup["seeds"] = seeds;
  setup["idle_disable"] = s.base.idle_disable;
  setup["set"] = s.base.sets;
  setup["base"] = {{"features", s.base_features}, {"set", s.base_sets}};
  setup["test"] = {{"features", s.test_features}, {"set", s.test_sets}};
  return setup;
}

// ab's progress on stderr: one updating line on a terminal, else a line per 10 %.
std::function<void(int, int)> ab_progress(bool tty) {
  return [tty](int done, int total) {
    if (tty) {
      io::set_progress_line_open(true);
      fmt::print(stderr, "\rab: {}/{} runs done", done, total);
    } else if (done == total || done % std::max(1, total / 10) == 0) {
      fmt::print(stderr, "ab: {}/{} runs done\n", done, total);
    }
    if (tty && done == total) {
      fmt::print(stderr, "\n");
      io::set_progress_line_open(false);
    }
  };
}

// The JSON report: the comparison with each set's raw samples, and the setup that reruns it.
std::string ab_json(const std::vector<report::Metric>& metrics, const nlohmann::ordered_json& setup) {
  auto j = nlohmann::ordered_json::parse(report::render(metrics, report::Format::Json));
  for (size_t k = 0; k < metrics.size(); ++k)
    for (size_t i = 0; i < metrics[k].sets.size(); ++i)
      j["metrics"][k]["sets"][i]["samples"] = metrics[k].sets[i].values;
  nlohmann::ordered_json doc;
  doc["schema"] = j["schema"];
  doc["setup"] = setup;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "schema") doc[it.key()] = it.value();
  return doc.dump(2) + "\n";
}

std::string ab_csv(const std::vector<report::Metric>& metrics, const experiment::AbSpec& s,
                   const std::string& machine_name, const std::string& command) {
  // The comparison's columns, then the side's setup and its samples (space-separated).
  const std::string csv = report::render(metrics, report::Format::Csv);
  auto q = [](const std::string& v) {
    std::string o = "\"";
    for (char c : v) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  };
  size_t pos = csv.find('\n');
  std::string out = csv.substr(0, pos) + ",machine,features,set,first_seed,runs,command,samples\n";
  for (const auto& m : metrics)
    for (size_t i = 0; i < m.sets.size(); ++i) {
      size_t next = csv.find('\n', pos + 1);
      std::string samples;
      for (double v : m.sets[i].values) samples += (samples.empty() ? "" : " ") + fmt::format("{}", v);
      std::vector<std::string> side_sets = s.base.sets;
      const auto& extra = i == 0 ? s.base_sets : s.test_sets;
      side_sets.insert(side_sets.end(), extra.begin(), extra.end());
      out += csv.substr(pos + 1, next - pos - 1) +
             fmt::format(",{},{},{},{},{},{},{}\n", q(machine_name), q(i == 0 ? s.base_features : s.test_features),
                         q(sets_text(side_sets)), s.first_seed, s.runs, q(command), samples);
      pos = next;
    }
  return out;
}
}  // namespace

std::string ab_tables(const std::vector<report::Metric>& metrics, size_t nbench, report::Format f,
                      const std::string& counters_cpu) {
  // The benchmark's own metrics as full tables, then the key counters as one compact table (a
  // row per counter).
  std::vector<report::Metric> bench(metrics.begin(), metrics.begin() + nbench);
  std::vector<report::Metric> counters(metrics.begin() + nbench, metrics.end());
  return fmt::format("{}\n", report::render(bench, f)) +
         counters_table(counters, f == report::Format::Markdown, counters_cpu);
}

namespace {

// The steps of `schedlab ab`: its options, then (in the callback) the checks of the input, the
// runs and the report.

void add_ab_options(CLI::App* cmd, AbArgs& a) {
  add_model_options(cmd, a.spec, a.idle_disable);
  cmd->add_option("--base", a.base, "features of the base side (e.g. \"\" or NO_SIS_UTIL; default \"\": the defaults)")
      ->type_name("FEATURES");
  cmd->add_option("--test", a.test, "features of the test side (e.g. SM_IDLE)")->type_name("FEATURES")->required();
  cmd->add_option("--runs", a.runs, "runs per side (run i of both sides uses seed i)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--jobs", a.jobs, "parallel simulations (0: one per CPU of this machine)")
      ->type_name("J")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  add_output_options(cmd, a.out,
                     "write the report to FILE (instead of stdout) in the format of its extension: .txt, .md "
                     "(markdown), .json, .csv, .html (as --html); '-': stdout",
                     "text, markdown, json, csv, mmtests (mmtests' compare table), perf-sched-stats "
                     "(`perf sched stats diff` of the two sides' schedstat) or html (-o FILE only); "
                     "default: -o's extension, else text")
      .second->default_str("text");
  cmd->add_option("--mmtests-significance", a.mmtests_significance,
                  "--format mmtests: the asterisk's rule, ci (mmtests now) or ttest (before 2024-11-28)")
      ->type_name("RULE")
      ->capture_default_str();
  cmd->add_option("--first-seed", a.seed, "seed of run 1 (run i has seed first-seed + i - 1)")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--base-set", a.base_sets,
                  "as --set, for the base side only (e.g. change.IDLE_SPIN.max_ns=0; repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--test-set", a.test_sets, "as --set, for the test side only (repeatable)")->type_name("KEY=VALUE");
  cmd->add_option("--counters-cpu", a.counters_cpu,
                  "key counters of these CPUs only, summed (a CPU list: 16, 0-3,8); default all")
      ->type_name("LIST");
  add_optional(cmd, "--html", a.html,
               "write a self-contained HTML report (runs per side, latency CDFs, key counters)")
      ->type_name("FILE");
  cmd->add_option("command", a.positional, "benchmark command line, after --");
}

// The machines of the two sides (base, test), each with its --base-set / --test-set applied.
std::vector<machine::Machine> ab_side_machines(const AbArgs& a) {
  std::vector<machine::Machine> side_machines;
  for (const auto& [flag, sets] : {std::pair{"--base-set", a.base_sets}, std::pair{"--test-set", a.test_sets}}) {
    experiment::RunSpec side = a.spec;
    side.sets.insert(side.sets.end(), sets.begin(), sets.end());
    try {
      side_machines.push_back(finish_model_options(side, a.idle_disable));
    } catch (const std::invalid_argument& e) {  // SpecError
      throw UsageError(fmt::format("{}: {}", flag, e.what()));
    } catch (const std::runtime_error& e) {  // machine::ProfileError
      throw UsageError(fmt::format("{}: {}", flag, e.what()));
    }
  }
  return side_machines;
}

// Bad input is an error before any run, checked against the machine the runs use (a cpulist
// names its CPUs); the benchmark's warnings, and the --set's that no side's change reads, are
// printed once, here.
void ab_check_workload(const AbArgs& a, int nr_cpus) {
  auto w = workload::parse_workload(a.spec.command, nr_cpus);
  for (const auto& line : w->warnings()) fmt::print(stderr, "schedlab: warning: {}\n", line);
  const kernel::Features fb = experiment::parse_features(a.base), ft = experiment::parse_features(a.test);
  std::vector<std::string> unused = experiment::unused_change_sets(a.spec.sets, {fb, ft}, "--set");
  for (auto& u : experiment::unused_change_sets(a.base_sets, {fb}, "--base-set")) unused.push_back(u);
  for (auto& u : experiment::unused_change_sets(a.test_sets, {ft}, "--test-set")) unused.push_back(u);
  for (const auto& line : unused) fmt::print(stderr, "schedlab: warning: {}\n", line);
}

experiment::AbSpec ab_spec(const AbArgs& a, bool schedstat, uint64_t first_seed, std::vector<int> counter_cpus) {
  experiment::AbSpec s;
  s.base = a.spec;
  s.base.schedstat = schedstat;
  s.base_features = a.base;
  s.test_features = a.test;
  s.base_sets = a.base_sets;
  s.test_sets = a.test_sets;
  s.counter_cpus = std::move(counter_cpus);
  s.runs = a.runs;
  s.first_seed = first_seed;
  s.jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return s;
}

// Text / markdown: the header, with everything needed to rerun it, then ab_tables() (shared
// with `schedlab sweep merge`).
std::string ab_text(const AbArgs& a, const experiment::AbSpec& s, const experiment::AbResult& r,
                    const std::vector<report::Metric>& metrics, report::Format f) {
  std::string sets;
  if (!s.base.sets.empty()) sets += fmt::format(" set=\"{}\"", sets_text(s.base.sets));
  if (!s.base_sets.empty()) sets += fmt::format(" base_set=\"{}\"", sets_text(s.base_sets));
  if (!s.test_sets.empty()) sets += fmt::format(" test_set=\"{}\"", sets_text(s.test_sets));
  return fmt::format("# schedlab ab: machine={}{} runs={} first_seed={} base=\"{}\" test=\"{}\"{} -- {}\n\n",
                     r.base.front().machine, a.idle_disable ? " idle_disable=" + *a.idle_disable : "", s.runs,
                     s.first_seed, s.base_features, s.test_features, sets, workload::join(s.base.command)) +
         ab_tables(metrics, r.base.front().metrics.size(), f, a.counters_cpu);
}

// -o FILE / --format: the report's format; html is --html's file (the text table still goes to stdout).
const OutputSpec kAbOutput{{{{"text", "txt"}, {".txt"}},
                            {{"markdown", "md"}, {".md"}},
                            {{"json"}, {".json"}},
                            {{"csv"}, {".csv"}},
                            {{"mmtests"}, {}},
                            {{"perf-sched-stats"}, {}},
                            {{"html"}, {".html"}, false}},
                           "text", false};

void run_ab_command(AbArgs& a) {
  a.spec.command = benchmark_command(a.positional);
  if (!a.spec.features.empty()) throw UsageError("--features: use --base and --test with `schedlab ab`");
  ResolvedOutput out = resolve_output(a.out, kAbOutput);
  route_alias(out, "html", "--html", a.html);
  if (out.format == "html") out.format = kAbOutput.default_format;  // the html went to --html; text on stdout
  if (a.html && !out.to_stdout()) io::check_output_paths({{"--html", *a.html, false}, {"-o", *out.path, false}});
  else if (a.html) io::check_output_paths({{"--html", *a.html, false}});
  const bool mmtests = out.format == "mmtests";
  const bool perf_stats = out.format == "perf-sched-stats";
  auto fmt_opt = mmtests || perf_stats ? std::optional(report::Format::Text) : report::parse_format(out.format);
  report::mmtests::Options mm_opts;
  try {
    mm_opts.significance = report::mmtests::parse_significance(a.mmtests_significance);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--mmtests-significance: {}", e.what()));
  }
  experiment::parse_features(a.base, "--base");
  experiment::parse_features(a.test, "--test");
  const uint64_t first_seed = parse_seed("--first-seed", a.seed);
  machine::Machine m = finish_model_options(a.spec, a.idle_disable);
  std::vector<machine::Machine> side_machines = ab_side_machines(a);
  const int nr_cpus = m.topo.nr_cpus();
  ab_check_workload(a, nr_cpus);
  std::vector<int> counter_cpus;
  if (!a.counters_cpu.empty())
    counter_cpus = workload::parse_cpulist("--counters-cpu", a.counters_cpu, nr_cpus);  // WorkloadError
  experiment::AbSpec s = ab_spec(a, perf_stats, first_seed, std::move(counter_cpus));
  experiment::AbResult r = experiment::run_ab(s, ab_progress(isatty(2) != 0));
  auto metrics = experiment::ab_metrics(s, r);
  warn_equal_sides(metrics, s, r, side_machines);
  // JSON ("setup", each set's raw "samples") and CSV (setup columns and the samples on every
  // row) hold everything needed to rerun it too.
  const std::string machine_name = r.base.front().machine;
  std::string text;
  if (mmtests) {
    text = experiment::ab_mmtests(s, r, mm_opts);
  } else if (perf_stats) {
    const auto base = experiment::schedstat_recording(r.base), test = experiment::schedstat_recording(r.test);
    text = report::schedstat::perf_sched_stats(base, &test);
  } else if (*fmt_opt == report::Format::Json) {
    text = ab_json(metrics, ab_setup(s, machine_name));
  } else if (*fmt_opt == report::Format::Csv) {
    text = ab_csv(metrics, s, machine_name, workload::join(s.base.command));
  } else {
    text = ab_text(a, s, r, metrics, *fmt_opt);
  }
  // The report is made before anything is printed (an error leaves stdout empty).
  std::string html;
  if (a.html) html = experiment::ab_html(s, r, ab_text(a, s, r, metrics, report::Format::Text));
  write_output(out, text);
  if (a.html) io::write_file_atomic("--html", *a.html, html);
}

}  // namespace

void register_ab(CLI::App& app) {
  auto a = std::make_shared<AbArgs>();
  auto* cmd = app.add_subcommand(
      "ab", "A/B: N seeded runs with the base and the test features, compared with statistics");
  add_ab_options(cmd, *a);
  cmd->callback(deferred([a] { run_ab_command(*a); }));
}

}  // namespace schedlab::cli
