#include "experiment/validate.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "experiment/run.hpp"
#include "host/bench.hpp"
#include "host/probe.hpp"
#include "workload/workload.hpp"
#include "util/text.hpp"

namespace schedlab::experiment {

namespace {

// Loop counts: a real run of the largest hackbench case (2 groups = 80 tasks) takes ~0.3-0.8 s on
// the 2-vCPU dev VM with -l 200; perf bench sched pipe -l 20000 ~0.2-0.7 s.
constexpr int kHackbenchLoops = 200, kHackbenchLoopsQuick = 10;
constexpr int kPipeLoops = 20000, kPipeLoopsQuick = 1000;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string loadavg() {
  std::istringstream in(read_text("/proc/loadavg"));
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "?";
  return a + " " + b + " " + c;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

// What kind of profile the file is, from the header `schedlab host` writes.
std::string profile_kind(const std::string& requested, const std::string& path) {
  std::string text = read_text(path);
  if (text.find("written by `schedlab host calibrate`") != std::string::npos)
    return "calibrated: measured costs from `schedlab host calibrate`, others base defaults";
  if (text.find("schedlab host probe") != std::string::npos)
    return "probed only: costs are base-profile defaults, NOT measured (run `schedlab host calibrate`)";
  if (requested != kHostMachine && requested.find('/') == std::string::npos &&
      requested.find(".toml") == std::string::npos)
    return "built-in profile, not a profile of this machine";
  return "not written by `schedlab host`";
}

double metric_value(const RunResult& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name) return m.value;
  throw std::runtime_error(fmt::format("'{}' reported no metric '{}'", r.command, name));
}

std::string fmt_value(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "nan";
  return unit == "s" ? fmt::format("{:.4f}", v) : fmt::format("{:.3f}", v);
}

std::string fmt_pct(double v) { return std::isfinite(v) ? fmt::format("{:+.1f}", v) : "nan"; }
std::string fmt_p(double p) { return fmt::format("{:.3g}", p); }

std::string command_of(const ValidationCase& c) { return host::join_command(c.argv); }

std::vector<std::string> header_lines(const ValidationReport& r) {
  std::vector<std::string> h;
  h.push_back(fmt::format("host:     '{}', Linux {}, {} online CPU(s)", r.hostname, r.kernel, r.nr_online_cpus));
  h.push_back(fmt::format("model:    --machine {} = {} ({} CPUs)", r.machine, r.profile_path, r.model_cpus));
  h.push_back(fmt::format("profile:  {}", r.profile_kind));
  if (!r.sets.empty()) {
    std::string s;
    for (const auto& x : r.sets) s += (s.empty() ? "" : " ") + ("--set " + x);
    h.push_back(fmt::format("model:    {} (applied to the simulated runs only)", s));
  }
  h.push_back(fmt::format("runs:     {} real runs per case, one after another; {} simulated (seeds 1..{}){}", r.runs,
                          r.runs, r.runs, r.quick ? "; --quick loop counts" : ""));
  h.push_back(fmt::format("load:     {} before, {} after (1/5/15 min; 'after' includes the benchmarks' own "
                          "tasks; other processes on the machine disturb the real runs)",
                          r.loadavg_before, r.loadavg_after));
  h.push_back(fmt::format("started:  {}; took {:.1f} s", r.started_utc, r.elapsed_s));
  h.push_back("error %:  (sim AMean - real AMean) / real AMean * 100; Std: population; KS p: two-sample "
              "Kolmogorov-Smirnov, real vs sim (small p: the distributions differ)");
  for (const auto& w : r.warnings) h.push_back("warning:  " + w);
  return h;
}

std::string render_text(const ValidationReport& r, bool markdown) {
  std::vector<std::string> head{"case", "metric", "real AMean", "real Std", "sim AMean", "sim Std", "error %", "KS p"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.cases)
    rows.push_back({command_of(c.c), c.c.unit, fmt_value(c.real_s.mean, c.c.unit), fmt_value(c.real_s.stddev, c.c.unit),
                    fmt_value(c.sim_s.mean, c.c.unit), fmt_value(c.sim_s.stddev, c.c.unit), fmt_pct(c.error_pct),
                    fmt_p(c.ks.pvalue)});
  std::string out;
  if (markdown) {
    out += "Validation: the model vs the real kernel on this machine (`schedlab validate`)\n\n";
    for (const auto& l : header_lines(r)) out += "    " + l + "\n";
    out += "\n|";
    for (const auto& x : head) out += " " + x + " |";
    out += "\n|";
    for (size_t i = 0; i < head.size(); ++i) out += i < 2 ? "---|" : "---:|";
    out += "\n";
    for (const auto& row : rows) {
      out += "|";
      for (size_t i = 0; i < row.size(); ++i) out += i == 0 ? " `" + row[i] + "` |" : " " + row[i] + " |";
      out += "\n";
    }
    return out;
  }
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    w[i] = head[i].size();
    for (const auto& row : rows) w[i] = std::max(w[i], row[i].size());
  }
  out += "schedlab validate: the model vs the real kernel on this machine\n";
  for (const auto& l : header_lines(r)) out += l + "\n";
  out += "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) l += "  ";
      l += i < 2 ? fmt::format("{:<{}}", cells[i], w[i]) : fmt::format("{:>{}}", cells[i], w[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
  return out;
}

std::string render_csv(const ValidationReport& r) {
  std::string out = "case,command,metric,unit,n,real_mean,real_std,sim_mean,sim_std,error_pct,ks_d,ks_p\n";
  for (const auto& c : r.cases)
    out += fmt::format("{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{:.6g},{:.6g}\n", util::csv_field(c.c.name),
                       util::csv_field(command_of(c.c)), c.c.sim_metric, c.c.unit, c.real.size(), c.real_s.mean,
                       c.real_s.stddev, c.sim_s.mean, c.sim_s.stddev, c.error_pct, c.ks.statistic, c.ks.pvalue);
  return out;
}

std::string render_json(const ValidationReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schedlab_version"] = "0.1.0";
  j["hostname"] = r.hostname;
  j["kernel"] = r.kernel;
  j["online_cpus"] = r.nr_online_cpus;
  j["machine"] = r.machine;
  j["profile_path"] = r.profile_path;
  j["profile_kind"] = r.profile_kind;
  j["model_cpus"] = r.model_cpus;
  j["sets"] = r.sets;
  j["runs"] = r.runs;
  j["quick"] = r.quick;
  j["started_utc"] = r.started_utc;
  j["elapsed_s"] = r.elapsed_s;
  j["loadavg_before"] = r.loadavg_before;
  j["loadavg_after"] = r.loadavg_after;
  j["warnings"] = r.warnings;
  ordered_json cases = ordered_json::array();
  auto num = [](double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); };
  for (const auto& c : r.cases) {
    ordered_json k;
    k["case"] = c.c.name;
    k["command"] = command_of(c.c);
    k["metric"] = c.c.sim_metric;
    k["unit"] = c.c.unit;
    k["real"] = {{"mean", num(c.real_s.mean)}, {"std", num(c.real_s.stddev)}, {"samples", c.real}};
    k["sim"] = {{"mean", num(c.sim_s.mean)}, {"std", num(c.sim_s.stddev)}, {"samples", c.sim}};
    k["error_pct"] = num(c.error_pct);
    k["ks"] = {{"statistic", c.ks.statistic}, {"pvalue", c.ks.pvalue}};
    cases.push_back(k);
  }
  j["cases"] = cases;
  return j.dump(2) + "\n";
}

}  // namespace

std::vector<ValidationCase> validation_cases(bool quick) {
  std::vector<ValidationCase> cs;
  const std::string hl = std::to_string(quick ? kHackbenchLoopsQuick : kHackbenchLoops);
  for (bool pipe : {false, true})
    for (bool threads : {false, true})
      for (int groups : {1, 2}) {
        ValidationCase c;
        c.name = fmt::format("hackbench {} {} {}g", pipe ? "pipe" : "socket", threads ? "thread" : "process", groups);
        c.argv = {"hackbench"};
        if (pipe) c.argv.push_back("-p");
        if (threads) c.argv.push_back("-T");
        for (auto a : {std::string("-g"), std::to_string(groups), std::string("-l"), hl}) c.argv.push_back(a);
        c.sim_metric = "time";
        c.unit = "s";
        cs.push_back(c);
      }
  const std::string pl = std::to_string(quick ? kPipeLoopsQuick : kPipeLoops);
  for (bool threads : {false, true}) {
    ValidationCase c;
    c.name = fmt::format("perf pipe {}", threads ? "thread" : "process");
    c.argv = {"perf", "bench", "sched", "pipe", "-l", pl};
    if (threads) c.argv.push_back("-T");
    c.sim_metric = "usecs_per_op";
    c.unit = "us/op";
    cs.push_back(c);
  }
  return cs;
}

ValidationReport validate(const ValidateOptions& opt) {
  if (opt.runs < 1) throw SpecError(fmt::format("--runs must be at least 1 (got {})", opt.runs));
  std::vector<ValidationCase> cases;
  for (auto& c : validation_cases(opt.quick))
    if (opt.only.empty() || c.name.find(opt.only) != std::string::npos || command_of(c).find(opt.only) != std::string::npos)
      cases.push_back(c);
  if (cases.empty()) throw SpecError(fmt::format("no validation case matches '{}'", opt.only));
  // Fail on input errors (no host profile, bad --set, tool not installed) before running anything.
  RunSpec spec;
  spec.machine = opt.machine;
  spec.sets = opt.sets;
  const machine::Machine m = load_machine(spec);
  for (const auto& c : cases) {
    auto bs = host::identify_benchmark(c.argv);
    if (host::find_in_path(bs.program).empty())
      throw host::HostError(fmt::format("'{}' is not installed (not found in PATH); validate needs hackbench "
                                        "(rt-tests) and perf (linux-perf)",
                                        bs.program));
  }

  ValidationReport r;
  r.machine = opt.machine;
  r.profile_path = m.source_path;
  r.profile_kind = profile_kind(opt.machine, m.source_path);
  utsname u{};
  if (uname(&u) == 0) r.kernel = u.release;
  char hn[256] = "?";
  gethostname(hn, sizeof hn - 1);
  r.hostname = hn;
  r.nr_online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  r.model_cpus = m.topo.nr_cpus();
  r.runs = opt.runs;
  r.quick = opt.quick;
  r.sets = opt.sets;
  r.started_utc = utc_now();
  r.loadavg_before = loadavg();
  if (double la = std::atof(r.loadavg_before.c_str()); la > 0.5 * r.nr_online_cpus)
    r.warnings.push_back(fmt::format("the machine is busy (load average {:.2f} on {} CPUs): the real runs share the "
                                     "CPUs with other work, the model does not; validate on an otherwise idle machine",
                                     la, r.nr_online_cpus));
  if (r.profile_kind.rfind("calibrated", 0) != 0)
    r.warnings.push_back("the profile's costs were not measured on this machine (" + r.profile_kind + ")");
  const auto t0 = std::chrono::steady_clock::now();

  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (opt.progress) opt.progress(static_cast<int>(i), static_cast<int>(cases.size()), c, nullptr);
    CaseResult cr;
    cr.c = c;
    // Real runs first (nothing else of ours runs meanwhile), then the model.
    cr.real = host::run_real_benchmark(c.argv, opt.runs).samples();
    RunSpec s = spec;
    s.command = c.argv;
    for (int k = 0; k < opt.runs; ++k) {
      s.seed = static_cast<uint64_t>(k + 1);
      cr.sim.push_back(metric_value(run_one(m, s), c.sim_metric));
    }
    cr.real_s = stats::summarize(cr.real);
    cr.sim_s = stats::summarize(cr.sim);
    cr.error_pct = cr.real_s.mean != 0 ? (cr.sim_s.mean - cr.real_s.mean) / cr.real_s.mean * 100 : NAN;
    cr.ks = stats::ks_2samp(cr.real, cr.sim);
    r.cases.push_back(std::move(cr));
    if (opt.progress) opt.progress(static_cast<int>(i), static_cast<int>(cases.size()), c, &r.cases.back());
  }
  r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.loadavg_after = loadavg();
  return r;
}

std::string render_validation(const ValidationReport& r, report::Format f) {
  switch (f) {
    case report::Format::Text: return render_text(r, false);
    case report::Format::Markdown: return render_text(r, true);
    case report::Format::Json: return render_json(r);
    case report::Format::Csv: return render_csv(r);
  }
  return {};
}

}  // namespace schedlab::experiment
