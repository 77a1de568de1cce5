#include "experiment/validate.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "experiment/run.hpp"
#include "host/bench.hpp"
#include "host/calibrate.hpp"
#include "host/host_profile.hpp"
#include "host/probe.hpp"
#include "io/output.hpp"
#include "trace/sink.hpp"
#include "workload/workload.hpp"
#include "util/text.hpp"

namespace schedlab::experiment {

namespace {

// Loop counts: a real run of the largest hackbench case (2 groups = 80 tasks) takes ~0.3-0.8 s on
// the 2-vCPU dev VM with -l 200; perf bench sched pipe -l 20000 ~0.2-0.7 s.
constexpr int kHackbenchLoops = 200, kHackbenchLoopsQuick = 10;
constexpr int kPipeLoops = 20000, kPipeLoopsQuick = 1000;

std::string read_proc_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string loadavg() {
  std::istringstream in(read_proc_text("/proc/loadavg"));
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
  std::string text = read_proc_text(path);
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
std::string fmt_cov(double c) { return std::isfinite(c) ? fmt::format("{:.1f}", 100 * c) : "nan"; }
std::string fmt_ratio(double x) { return std::isfinite(x) ? fmt::format("{:.2g}", x) : "nan"; }

std::string command_of(const ValidationCase& c) { return host::join_command(c.argv); }

std::vector<std::string> header_lines(const ValidationReport& r) {
  std::vector<std::string> h;
  h.push_back(fmt::format("host:     '{}', Linux {}, {} online CPU(s)", r.hostname, r.kernel, r.nr_online_cpus));
  h.push_back(fmt::format("model:    --machine {} = {} ({} CPUs)", r.machine, r.profile_path, r.model_cpus));
  h.push_back(fmt::format("profile:  {}", r.profile_kind));
  if (!r.model_kernel.empty()) h.push_back(fmt::format("kernel:   {}", r.model_kernel));
  if (!r.first_use.empty()) h.push_back(fmt::format("profile:  {}", r.first_use));
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
  {
    std::vector<double> busy;
    int reruns = 0, loaded = 0;
    for (const auto& c : r.cases) {
      busy.insert(busy.end(), c.real_other_busy_pct.begin(), c.real_other_busy_pct.end());
      reruns += c.reruns;
      loaded += c.loaded_runs;
    }
    if (!busy.empty())
      h.push_back(fmt::format("outside:  other processes kept {:.0f}% of the CPUs busy during the median real run "
                              "(max {:.0f}%; /proc/stat minus the benchmark's own CPU time); {} run(s) above {:.0f}% "
                              "repeated, {} kept although loaded",
                              stats::quantile(busy, 0.5), *std::max_element(busy.begin(), busy.end()), reruns,
                              r.max_busy_pct, loaded));
  }
  h.push_back(fmt::format("started:  {}; took {:.1f} s", r.started_utc, r.elapsed_s));
  h.push_back("error %:  (sim AMean - real AMean) / real AMean * 100; Std: population; CoV: Std / AMean; "
              "CoV x: sim CoV / real CoV; KS p: two-sample Kolmogorov-Smirnov, real vs sim (small p: the "
              "distributions differ)");
  if (!r.cases.empty()) {
    auto a = agreement(r.cases);
    h.push_back(fmt::format("agree:    {} of {} case(s) within 15% in AMean, {} within 2x in CoV, {} both",
                            a.within_error, a.cases, a.within_cov, a.within_both));
  }
  for (const auto& w : r.warnings) h.push_back("warning:  " + w);
  return h;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? std::nan("") : sum / static_cast<double>(v.size());
}

// A count in the mechanism tables: rounded, '-' where it was not measured (NaN).
std::string cell(double v) { return std::isfinite(v) ? fmt::format("{:.0f}", v) : std::string("-"); }

// IPIs and idle per run (mean), real (/proc/interrupts and cpuidle sysfs of the whole machine over
// the run) and model (ipi_sent, idle_usage, idle_ns): rescheduling and function-call interrupts,
// idle entries and idle time. Only for cases that recorded them.
std::string ipi_table(const ValidationReport& r, bool markdown) {
  std::string out;
  auto ms = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : std::string("-"); };
  for (const auto& c : r.cases) {
    if (c.real_resched_ipis.empty() && c.sim_resched_ipis.empty()) continue;
    const std::string v[8] = {cell(mean_of(c.real_resched_ipis)), cell(mean_of(c.sim_resched_ipis)),
                              cell(mean_of(c.real_call_ipis)),    cell(mean_of(c.sim_call_ipis)),
                              cell(mean_of(c.real_idle_entries)), cell(mean_of(c.sim_idle_entries)),
                              ms(mean_of(c.real_idle_ms)),        ms(mean_of(c.sim_idle_ms))};
    out += markdown ? fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", command_of(c.c), v[0], v[1], v[2],
                                  v[3], v[4], v[5], v[6], v[7])
                    : fmt::format("{:<32}  {:>11}  {:>11}  {:>11}  {:>11}  {:>10}  {:>10}  {:>10}  {:>10}\n",
                                  command_of(c.c), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  }
  if (out.empty()) return out;
  const char* what = "per run (mean; real: /proc/interrupts and cpuidle sysfs of the whole machine over the run, "
                     "model: ipi_sent, idle_usage, idle_ns)";
  return (markdown ? fmt::format("\nIPIs and idle {}:\n\n| case | real rescheduling | model reschedule | real function "
                                 "call | model call_function_single | real idle entries | model idle entries | real "
                                 "idle ms | model idle ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                                 what)
                   : fmt::format("\nIPIs and idle {}:\n{:<32}  {:>11}  {:>11}  {:>11}  {:>11}  {:>10}  {:>10}  {:>10}  "
                                 "{:>10}\n",
                                 what, "case", "real RES", "model resch", "real CAL", "model call", "real idle",
                                 "model idle", "real ms", "model ms")) +
         out;
}

// Wake-ups per run (mean), real (/proc/schedstat of the whole machine over the run) and model
// (ttwu_local + ttwu_remote), with the share that stayed on the waker's CPU. Only for cases that
// recorded them.
std::string wakeup_table(const ValidationReport& r, bool markdown) {
  std::string out;
  auto share = [](double local, double all) {
    return std::isfinite(local) && std::isfinite(all) && all > 0 ? fmt::format("{:.1f}", 100 * local / all)
                                                                 : std::string("-");
  };
  for (const auto& c : r.cases) {
    if (c.real_wakeups.empty() && c.sim_wakeups.empty()) continue;
    const double rw = mean_of(c.real_wakeups), sw = mean_of(c.sim_wakeups);
    const std::string v[4] = {cell(rw), cell(sw), share(mean_of(c.real_local_wakeups), rw),
                              share(mean_of(c.sim_local_wakeups), sw)};
    out += markdown ? fmt::format("| `{}` | {} | {} | {} | {} |\n", command_of(c.c), v[0], v[1], v[2], v[3])
                    : fmt::format("{:<32}  {:>12}  {:>12}  {:>12}  {:>12}\n", command_of(c.c), v[0], v[1], v[2], v[3]);
  }
  if (out.empty()) return out;
  const char* what = "per run (mean; real: /proc/schedstat ttwu_count / ttwu_local of the whole machine over the run, "
                     "'-' without schedstats; model: ttwu_local + ttwu_remote)";
  return (markdown ? fmt::format("\nWake-ups {}:\n\n| case | real wake-ups | model wake-ups | real on the waker's CPU % | "
                                 "model on the waker's CPU % |\n|---|---:|---:|---:|---:|\n",
                                 what)
                   : fmt::format("\nwake-ups {}:\n{:<32}  {:>12}  {:>12}  {:>12}  {:>12}\n", what, "case",
                                 "real wakeups", "model wakeups", "real local %", "model local %")) +
         out;
}

// The mechanism beside the time, per run (mean): context switches of the benchmark's processes,
// real (wait4 rusage) and model, voluntary and involuntary, and their CPU migrations (real: perf's
// cpu-migrations; model: workload_migrations). Only for cases that recorded them.
std::string switch_table(const ValidationReport& r, bool markdown) {
  std::string out;
  for (const auto& c : r.cases) {
    if (c.real_vcsw.empty() && c.sim_vcsw.empty()) continue;
    double rv = mean_of(c.real_vcsw), sv = mean_of(c.sim_vcsw), ri = mean_of(c.real_ivcsw), si = mean_of(c.sim_ivcsw);
    double rm = mean_of(c.real_migrations), sm = mean_of(c.sim_migrations);
    std::string ratio = std::isfinite(rv) && rv > 0 && std::isfinite(sv) ? fmt::format("{:.2f}", sv / rv) : "-";
    out += markdown ? fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", command_of(c.c), cell(rv), cell(sv),
                                  ratio, cell(ri), cell(si), cell(rm), cell(sm))
                    : fmt::format("{:<32}  {:>10}  {:>10}  {:>6}  {:>10}  {:>11}  {:>10}  {:>10}\n", command_of(c.c),
                                  cell(rv), cell(sv), ratio, cell(ri), cell(si), cell(rm), cell(sm));
  }
  if (out.empty()) return out;
  const char* what = "per run (mean; real: wait4 rusage and perf's cpu-migrations, model: workload_nvcsw / "
                     "workload_nivcsw / workload_migrations)";
  std::string head =
      markdown ? fmt::format("\nContext switches and CPU migrations of the benchmark's processes {}:\n\n| case | real "
                             "voluntary | model voluntary | model / real | real involuntary | model involuntary | "
                             "real migrations | model migrations |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
                             what)
               : fmt::format("\ncontext switches and CPU migrations of the benchmark's processes {}:\n{:<32}  {:>10}  "
                             "{:>10}  {:>6}  {:>10}  {:>11}  {:>10}  {:>10}\n",
                             what, "case", "real vol", "model vol", "x", "real invol", "model invol", "real migr",
                             "model migr");
  return head + out;
}

std::string render_text(const ValidationReport& r, bool markdown) {
  std::vector<std::string> head{"case",    "metric",       "real AMean", "real CoV %", "sim AMean",
                                "sim CoV %", "error %",   "CoV x",      "KS p"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.cases)
    rows.push_back({command_of(c.c), c.c.unit, fmt_value(c.real_s.mean, c.c.unit), fmt_cov(c.real_s.cov),
                    fmt_value(c.sim_s.mean, c.c.unit), fmt_cov(c.sim_s.cov), fmt_pct(c.error_pct),
                    fmt_ratio(c.cov_ratio), fmt_p(c.ks.pvalue)});
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
    return out + switch_table(r, true) + ipi_table(r, true) + wakeup_table(r, true);
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
  return out + switch_table(r, false) + ipi_table(r, false) + wakeup_table(r, false);
}

std::string render_csv(const ValidationReport& r) {
  std::string out =
      "case,command,metric,unit,n,real_mean,real_std,real_cov,sim_mean,sim_std,sim_cov,error_pct,cov_ratio,ks_d,ks_p\n";
  for (const auto& c : r.cases)
    out += fmt::format("{},{},{},{},{},{:.9g},{:.9g},{:.6g},{:.9g},{:.9g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n",
                       util::csv_field(c.c.name), util::csv_field(command_of(c.c)), c.c.sim_metric, c.c.unit,
                       c.real.size(), c.real_s.mean, c.real_s.stddev, c.real_s.cov, c.sim_s.mean, c.sim_s.stddev,
                       c.sim_s.cov, c.error_pct, c.cov_ratio, c.ks.statistic, c.ks.pvalue);
  return out;
}

std::string render_json(const ValidationReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schedlab_version"] = schedlab_version();
  j["hostname"] = r.hostname;
  j["kernel"] = r.kernel;
  j["online_cpus"] = r.nr_online_cpus;
  j["machine"] = r.machine;
  j["profile_path"] = r.profile_path;
  j["profile_kind"] = r.profile_kind;
  j["model_kernel"] = r.model_kernel;
  j["model_cpus"] = r.model_cpus;
  j["sets"] = r.sets;
  j["runs"] = r.runs;
  j["quick"] = r.quick;
  j["started_utc"] = r.started_utc;
  j["elapsed_s"] = r.elapsed_s;
  j["loadavg_before"] = r.loadavg_before;
  j["loadavg_after"] = r.loadavg_after;
  j["warnings"] = r.warnings;
  j["first_use"] = r.first_use;
  {
    auto a = agreement(r.cases);
    j["agreement"] = {{"cases", a.cases}, {"within_15pct", a.within_error}, {"within_2x_cov", a.within_cov},
                      {"within_both", a.within_both}};
  }
  ordered_json cases = ordered_json::array();
  auto num = [](double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); };
  auto nums = [&](const std::vector<double>& v) {
    ordered_json a = ordered_json::array();
    for (double x : v) a.push_back(num(x));
    return a;
  };
  for (const auto& c : r.cases) {
    ordered_json k;
    k["case"] = c.c.name;
    k["command"] = command_of(c.c);
    k["metric"] = c.c.sim_metric;
    k["unit"] = c.c.unit;
    k["real"] = {{"mean", num(c.real_s.mean)}, {"std", num(c.real_s.stddev)}, {"cov", num(c.real_s.cov)},
                 {"samples", c.real}, {"other_busy_pct", c.real_other_busy_pct}, {"reruns", c.reruns},
                 {"loaded_runs", c.loaded_runs}, {"voluntary_switches", c.real_vcsw},
                 {"involuntary_switches", c.real_ivcsw}, {"cpu_migrations", nums(c.real_migrations)},
                 {"perf_context_switches", nums(c.real_perf_switches)},
                 {"resched_ipis", nums(c.real_resched_ipis)}, {"call_function_ipis", nums(c.real_call_ipis)},
                 {"idle_entries", nums(c.real_idle_entries)}, {"idle_ms", nums(c.real_idle_ms)},
                 {"wakeups", nums(c.real_wakeups)}, {"local_wakeups", nums(c.real_local_wakeups)}};
    k["sim"] = {{"mean", num(c.sim_s.mean)}, {"std", num(c.sim_s.stddev)}, {"cov", num(c.sim_s.cov)},
                {"samples", c.sim}, {"voluntary_switches", c.sim_vcsw}, {"involuntary_switches", c.sim_ivcsw},
                {"cpu_migrations", c.sim_migrations}, {"resched_ipis", c.sim_resched_ipis},
                {"call_function_ipis", c.sim_call_ipis}, {"idle_entries", c.sim_idle_entries},
                {"idle_ms", c.sim_idle_ms}, {"wakeups", c.sim_wakeups}, {"local_wakeups", c.sim_local_wakeups}};
    k["error_pct"] = num(c.error_pct);
    k["cov_ratio"] = num(c.cov_ratio);
    k["ks"] = {{"statistic", c.ks.statistic}, {"pvalue", c.ks.pvalue}};
    cases.push_back(k);
  }
  j["cases"] = cases;
  return j.dump(2) + "\n";
}

}  // namespace

void summarize_case(CaseResult& c) {
  c.real_s = stats::summarize(c.real);
  c.sim_s = stats::summarize(c.sim);
  c.error_pct = c.real_s.mean != 0 ? (c.sim_s.mean - c.real_s.mean) / c.real_s.mean * 100 : NAN;
  c.cov_ratio = c.real_s.cov > 0 ? c.sim_s.cov / c.real_s.cov : NAN;
  c.ks = stats::ks_2samp(c.real, c.sim);
}

Agreement agreement(const std::vector<CaseResult>& cases, double error_limit_pct, double cov_factor) {
  Agreement a;
  for (const auto& c : cases) {
    ++a.cases;
    bool e = std::isfinite(c.error_pct) && std::fabs(c.error_pct) <= error_limit_pct;
    bool v = std::isfinite(c.cov_ratio) && c.cov_ratio >= 1 / cov_factor && c.cov_ratio <= cov_factor;
    a.within_error += e;
    a.within_cov += v;
    a.within_both += e && v;
  }
  return a;
}

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

namespace {

// The steps of validate(): the cases asked for, first use of `--machine host`, the report's
// header, then each case's real and simulated runs.

std::vector<ValidationCase> selected_cases(const ValidateOptions& opt) {
  std::vector<ValidationCase> cases;
  for (auto& c : validation_cases(opt.quick))
    if (opt.only.empty() || c.name.find(opt.only) != std::string::npos || command_of(c).find(opt.only) != std::string::npos)
      cases.push_back(c);
  if (cases.empty()) throw SpecError(fmt::format("no validation case matches '{}'", opt.only));
  for (const auto& c : cases) {  // a missing tool fails before anything runs, calibration included
    auto bs = host::identify_benchmark(c.argv);
    if (host::find_in_path(bs.program).empty())
      throw host::HostError(fmt::format("'{}' is not installed (not found in PATH); validate needs hackbench "
                                        "(rt-tests) and perf (linux-perf)",
                                        bs.program));
  }
  return cases;
}

// First use: `--machine host` and no host profile yet. Probes and calibrates this machine, as
// `schedlab host probe && schedlab host calibrate` would, and returns what to say about it
// (empty when there was nothing to do).
std::string probe_and_calibrate_on_first_use(const ValidateOptions& opt) {
  if (opt.machine != kHostMachine) return "";
  const std::string path = host::default_host_profile_path();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return "";
  const std::string base = "tiny-4";
  if (opt.on_first_use)
    opt.on_first_use(fmt::format("no host profile at {}: probing and calibrating this machine first (`schedlab "
                                 "host probe && schedlab host calibrate{}`)",
                                 path, opt.quick ? " --quick" : ""));
  auto pr = host::probe_with_base("/", base);
  host::CalibrateOptions co;
  co.quick = opt.quick;
  co.allow_busy = opt.allow_busy;
  co.machine = pr.machine;
  co.model_to_real = pr.model_to_real;
  auto cal = host::calibrate(co);
  auto updates = host::apply_calibration(pr.machine, cal);
  if (auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir, ec);
    if (ec) throw host::HostError(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  }
  io::write_file_atomic("host profile", path, host::calibrated_profile_text(pr, base, cal, updates));
  return fmt::format("probed and calibrated by this run ({:.1f} s, {} cost(s) measured, {} warning(s) in "
                     "the profile header)",
                     cal.elapsed_s, updates.size(), cal.warnings.size() + pr.warnings.size());
}

// One case: the real runs first (nothing else of ours runs meanwhile), then the model's.
CaseResult run_case(const ValidateOptions& opt, const ValidationCase& c, const machine::Machine& m,
                    const RunSpec& spec) {
  CaseResult cr;
  cr.c = c;
  for (int k = 0; k < opt.runs; ++k) {
    host::BenchRun run;
    for (int attempt = 0;; ++attempt) {
      run = host::run_real_benchmark(c.argv, 1).runs.front();
      if (run.other_busy_pct <= opt.max_busy_pct || attempt >= opt.max_reruns) break;
      ++cr.reruns;
    }
    cr.loaded_runs += run.other_busy_pct > opt.max_busy_pct;
    cr.real.push_back(run.value);
    cr.real_other_busy_pct.push_back(run.other_busy_pct);
    cr.real_vcsw.push_back(static_cast<double>(run.voluntary_switches));
    cr.real_ivcsw.push_back(static_cast<double>(run.involuntary_switches));
    auto counted = [](long long v) { return v < 0 ? std::nan("") : static_cast<double>(v); };
    cr.real_migrations.push_back(counted(run.cpu_migrations));
    cr.real_perf_switches.push_back(counted(run.perf_context_switches));
    if (!run.counters_unavailable.empty()) cr.counters_unavailable = run.counters_unavailable;
    cr.real_resched_ipis.push_back(counted(run.resched_ipis));
    cr.real_call_ipis.push_back(counted(run.call_function_ipis));
    cr.real_idle_entries.push_back(counted(run.idle_entries));
    cr.real_wakeups.push_back(counted(run.wakeups));
    cr.real_local_wakeups.push_back(counted(run.local_wakeups));
    cr.real_idle_ms.push_back(run.idle_time_us < 0 ? std::nan("") : static_cast<double>(run.idle_time_us) / 1e3);
  }
  RunSpec s = spec;
  s.command = c.argv;
  for (int k = 0; k < opt.runs; ++k) {
    s.seed = static_cast<uint64_t>(k + 1);
    RunResult rr = run_one(m, s);
    cr.sim.push_back(metric_value(rr, c.sim_metric));
    cr.sim_vcsw.push_back(static_cast<double>(rr.total.workload_nvcsw));
    cr.sim_ivcsw.push_back(static_cast<double>(rr.total.workload_nivcsw));
    cr.sim_migrations.push_back(static_cast<double>(rr.total.workload_migrations));
    cr.sim_resched_ipis.push_back(static_cast<double>(rr.total.ipi_sent[static_cast<int>(trace::IpiKind::Reschedule)]));
    cr.sim_call_ipis.push_back(static_cast<double>(rr.total.ipi_sent[static_cast<int>(trace::IpiKind::CallFunctionSingle)]));
    cr.sim_idle_entries.push_back(static_cast<double>(kernel::derived::idle_usage_total(rr.total)));
    cr.sim_idle_ms.push_back(static_cast<double>(kernel::derived::idle_total_ns(rr.total)) / 1e6);
    cr.sim_wakeups.push_back(static_cast<double>(rr.total.ttwu_local + rr.total.ttwu_remote));
    cr.sim_local_wakeups.push_back(static_cast<double>(rr.total.ttwu_local));
  }
  summarize_case(cr);
  return cr;
}

// Where perf's counters could not be opened the real migrations are missing: say why, once.
void warn_no_counters(ValidationReport& r) {
  for (const auto& c : r.cases)
    if (!c.counters_unavailable.empty()) {
      r.warnings.push_back(fmt::format("no CPU migrations of the real runs: perf's software counters could not be "
                                       "opened ({}); the table shows '-' for them",
                                       c.counters_unavailable));
      return;
    }
}

void warn_other_work(ValidationReport& r) {
  std::vector<double> busy;
  for (const auto& c : r.cases) busy.insert(busy.end(), c.real_other_busy_pct.begin(), c.real_other_busy_pct.end());
  double med = busy.empty() ? 0 : stats::quantile(busy, 0.5);
  if (med > 10)
    r.warnings.push_back(fmt::format("OTHER WORK RAN DURING THE REAL RUNS: other processes kept {:.0f}% of the CPUs "
                                     "busy in the median run; the real side measures that load as well (on the dev "
                                     "VM it doubles hackbench times and changes where perf bench sched pipe's tasks "
                                     "run, docs/variance.md)",
                                     med));
}

}  // namespace

// What the report says about this machine, the model's and the options, before any run.
ValidationReport report_header(const ValidateOptions& opt, const machine::Machine& m, const std::string& first_use) {
  ValidationReport r;
  r.first_use = first_use;
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
  r.max_busy_pct = opt.max_busy_pct;
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
  // The kernel settings the model runs: the profile's [kernel] features under the cases' own
  // (docs/host.md); without [kernel] the model's defaults, which are not this kernel's.
  const std::string feats = run_features(RunSpec{}, &m).describe();
  if (m.kernel.present) {
    r.model_kernel = fmt::format("model features {} (the profile's [kernel]: {}), base slice {} ns",
                                 feats.empty() ? "default" : feats,
                                 m.kernel.features.known() ? m.kernel.features.source : "no features recorded",
                                 m.tunables.base_slice_ns);
    if (m.kernel.release.known() && !r.kernel.empty() && m.kernel.release.value != r.kernel)
      r.warnings.push_back(fmt::format("the profile was probed on Linux {}, this machine runs {}: probe again",
                                       m.kernel.release.value, r.kernel));
    if (m.kernel.other_sched_sysctls.known())
      r.warnings.push_back(fmt::format("the real kernel has scheduler settings mainline Linux does not ({}): its "
                                       "runs include what they change, the model's do not",
                                       m.kernel.other_sched_sysctls.value));
  } else {
    r.model_kernel = fmt::format("model features {}, base slice {} ns (the profile has no [kernel] section: not "
                                 "this kernel's settings)",
                                 feats.empty() ? "default" : feats, m.tunables.base_slice_ns);
    if (r.profile_kind.rfind("calibrated", 0) == 0 || r.profile_kind.rfind("probed", 0) == 0)
      r.warnings.push_back("the profile has no [kernel] section (written before `host probe` read the kernel's "
                           "scheduler settings): the model runs its default features and the base profile's base "
                           "slice; run `schedlab host probe` (and calibrate) again");
  }
  return r;
}

ValidationReport validate(const ValidateOptions& opt) {
  if (opt.runs < 1) throw SpecError(fmt::format("--runs must be at least 1 (got {})", opt.runs));
  const std::vector<ValidationCase> cases = selected_cases(opt);
  const std::string first_use = probe_and_calibrate_on_first_use(opt);
  // Fail on the remaining input errors (bad --set) before running anything.
  RunSpec spec;
  spec.machine = opt.machine;
  spec.sets = opt.sets;
  const machine::Machine m = load_machine(spec);
  ValidationReport r = report_header(opt, m, first_use);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (opt.progress) opt.progress(static_cast<int>(i), static_cast<int>(cases.size()), c, nullptr);
    r.cases.push_back(run_case(opt, c, m, spec));
    if (opt.progress) opt.progress(static_cast<int>(i), static_cast<int>(cases.size()), c, &r.cases.back());
  }
  r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.loadavg_after = loadavg();
  warn_other_work(r);
  warn_no_counters(r);
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
