// `schedlab host probe|calibrate|bench`: the real machine (see docs/host.md). Parsing and printing
// only; the work is in src/host/.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/selfcheck.hpp"
#include "host/bench.hpp"
#include "host/calibrate.hpp"
#include "host/guest.hpp"
#include "host/host_profile.hpp"
#include "host/probe.hpp"
#include "io/output.hpp"
#include "machine/machine.hpp"

namespace schedlab::cli {
namespace {

struct HostArgs {
  OutputChoice out;  // -o FILE, --format
  std::string sysfs_root = "/";
  std::string base = "tiny-4";
  bool quick = false;
  bool dump_cpuid = false;
  bool allow_busy = false;
  bool remap = false;
  double budget_s = 0;
  std::optional<std::string> samples;
  std::optional<std::string> json;
  int runs = 5;
  std::vector<std::string> positional;
};

void warn_all(const std::vector<std::string>& warnings) {
  io::flush_stdout();
  for (auto& w : warnings) fmt::print(stderr, "schedlab: warning: {}\n", w);
}

std::string topo_summary(const machine::Machine& m) {
  return fmt::format("{} socket(s) x {} cores x {} thread(s), {} cores per LLC, {} idle state(s) ({})", m.topo.sockets,
                     m.topo.cores_per_socket, m.topo.threads_per_core, m.topo.cores_per_llc, m.idle_states.size(),
                     m.cpuidle_driver.empty() ? "no cpuidle driver" : m.cpuidle_driver);
}

// -o FILE / --format: a profile is TOML; host bench's samples file is text (what compare reads).
const OutputSpec kProfileOutput{{{{"toml"}, {".toml"}}}, "toml", true};
const OutputSpec kSamplesOutput{{{{"txt", "text"}, {".txt"}}}, "txt", true};
// host check: the table (text, the default, on stdout) or its JSON; --json FILE is -o FILE.json.
const OutputSpec kCheckOutput{{{{"txt", "text"}, {".txt"}}, {{"json"}, {".json"}}}, "txt", false};

// The profile to write: -o, else the default host profile, whose directory
// ($XDG_CONFIG_HOME/schedlab) is created if missing. Checked before anything is probed or measured.
ResolvedOutput profile_output(const HostArgs& a) {
  OutputChoice choice = a.out;
  if (!choice.path && !choice.format) {
    choice.path = host::default_host_profile_path();
    std::filesystem::path dir = std::filesystem::path(*choice.path).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) throw UsageError(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  }
  return resolve_output(choice, kProfileOutput);
}

// The profile text f() makes (checked to load back), or a HostError saying `path` was not written.
template <class F>
std::string profile_text(const std::string& path, F f) {
  try {
    return f();
  } catch (const machine::ProfileError& e) {
    throw host::HostError(fmt::format("{}; nothing written to {}", e.what(), path));
  }
}

void run_probe(const HostArgs& a) {
  if (a.dump_cpuid) {
    std::string dump = host::format_cpuid_dump(host::native_cpuid);
    if (dump.empty()) throw host::HostError("--dump-cpuid: this CPU has no CPUID instruction (not x86)");
    fmt::print("{}", dump);
    return;
  }
  const ResolvedOutput dest = profile_output(a);
  const std::string out = *dest.path;
  auto r = host::probe_with_base(a.sysfs_root, a.base);
  warn_all(r.warnings);
  write_output(dest, profile_text(out, [&] { return host::probed_profile_text(r, a.base); }));
  if (out != "-") fmt::print("wrote {}: {}; costs from '{}' (not measured: run `schedlab host calibrate`)\n", out,
                             topo_summary(r.machine), a.base);
}

void run_calibrate(const HostArgs& a) {
  require_finite("--budget", a.budget_s);
  if (a.budget_s < 0 || a.budget_s > 3600)
    throw UsageError(fmt::format("--budget {} is out of range (0 = default, at most 3600 s)", a.budget_s));
  const ResolvedOutput dest = profile_output(a);
  const std::string out = *dest.path;
  if (a.samples) io::check_output_path({"--samples", *a.samples, true});
  auto r = host::probe_with_base(a.sysfs_root, a.base);
  warn_all(r.warnings);
  host::CalibrateOptions opt;
  opt.quick = a.quick;
  opt.allow_busy = a.allow_busy;
  opt.budget_s = a.budget_s;
  opt.machine = r.machine;
  opt.model_to_real = r.model_to_real;
  FILE* progress = out == "-" ? stderr : stdout;
  opt.progress = [progress](const host::Measurement& m) {
    fmt::print(progress, "  {:<30} {:>10.1f} ns  spread {:5.1f}%  {} batches{}\n", m.key, m.value_ns, 100 * m.cov,
               m.batches, m.converged ? "" : " (not converged)");
    std::fflush(progress);
  };
  opt.on_round = [progress](int round, double busy) {
    fmt::print(progress, "  round {}: other processes {:.0f}% busy\n", round + 1, busy);
    std::fflush(progress);
  };
  fmt::print(progress, "calibrating on {} ({}){}\n", topo_summary(r.machine),
             r.machine.arch.empty() ? "unknown arch" : r.machine.arch, a.quick ? ", quick" : "");
  auto res = host::calibrate(opt);
  if (a.samples) io::write_file_atomic("--samples", *a.samples, host::samples_json(res));
  auto updates = host::apply_calibration(r.machine, res);
  warn_all(res.warnings);
  write_output(dest, profile_text(out, [&] { return host::calibrated_profile_text(r, a.base, res, updates); }));
  fmt::print(progress, "set {} cost(s) from measurements in {:.1f} s:\n", updates.size(), res.elapsed_s);
  for (auto& u : updates)
    fmt::print(progress, "  {} = {}{}\n", u.key,
               u.key.rfind("guest.", 0) == 0 ? fmt::format("{}", u.fvalue) : std::to_string(u.value),
               u.floored ? " (adjusted, see profile header)" : "");
  if (out != "-") fmt::print("wrote {}\n", out);
  // The self-check: every microbenchmark simulated on the profile just written.
  fmt::print(progress, "{}", experiment::check_table(experiment::self_check(r.machine, res, a.quick ? 30 : 60), out));
}

std::string read_text(const std::string& what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read {}", what, path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `host check [PROFILE] [--samples FILE] [-o FILE] [--format txt|json]`: the self-check of a
// calibrated profile, from the measurements in its header or in the samples file calibrate wrote.
// --json FILE (kept) also writes the JSON beside the table on stdout.
void run_check(const HostArgs& a) {
  if (a.positional.size() > 1) throw UsageError("host check: one profile at most");
  std::string path = a.positional.empty() ? host::default_host_profile_path() : a.positional[0];
  const ResolvedOutput dest = resolve_output(a.out, kCheckOutput);
  if (a.json && dest.path && dest.format == "json")
    throw UsageError("host check: --json FILE and -o FILE.json both name the JSON: give one");
  if (a.json) io::check_output_path({"--json", *a.json, true});
  machine::Machine m = machine::load_profile(path);
  host::CalibrationResult r;
  try {
    r = a.samples ? host::read_samples_json(read_text("--samples", *a.samples), *a.samples)
                  : experiment::read_profile_measurements(read_text("profile", path), path);
  } catch (const UsageError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  if (a.remap) host::apply_calibration(m, r);  // this binary's mapping, on the profile's other costs
  auto rows = experiment::self_check(m, r);
  const std::string json = experiment::check_json(rows, path).dump(1) + "\n";
  if (a.json) io::write_file_atomic("--json", *a.json, json);
  write_output(dest, dest.format == "json" ? json : experiment::check_table(rows, path));
}

void run_bench(const HostArgs& a) {
  if (a.runs < 1) throw UsageError(fmt::format("--runs must be at least 1 (got {})", a.runs));
  const std::vector<std::string> command = benchmark_command(a.positional);
  host::identify_benchmark(command);  // fail before running anything
  const ResolvedOutput dest = resolve_output(a.out, kSamplesOutput);
  // With `-o -` the samples file goes to stdout, so progress goes to stderr.
  struct Progress {
    FILE* to;
    int total;
  } progress{dest.path == "-" ? stderr : stdout, a.runs};
  auto r = host::run_real_benchmark(
      command, a.runs,
      [](int i, const host::BenchRun& run, void* ctx) {
        auto* p = static_cast<Progress*>(ctx);
        fmt::print(p->to, "run {}/{}: {}  ({})\n", i + 1, p->total, run.result_line, host::describe_counters(run));
        std::fflush(p->to);
      },
      &progress);
  auto s = r.samples();
  double sum = 0, lo = s.front(), hi = s.front();
  for (double x : s) sum += x, lo = std::min(lo, x), hi = std::max(hi, x);
  fmt::print(progress.to, "{}: {} = mean {:.6g} {} (min {:.6g}, max {:.6g}, n={})\n", r.spec.description,
             r.spec.metric, sum / static_cast<double>(s.size()), r.spec.unit, lo, hi, s.size());
  std::fflush(progress.to);
  if (dest.path) {
    write_output(dest, host::format_samples_file(r));
    if (*dest.path != "-") fmt::print("wrote {} ({} samples)\n", *dest.path, s.size());
  }
}

}  // namespace

void register_host(CLI::App& app) {
  auto args = std::make_shared<HostArgs>();
  CLI::App* host = app.add_subcommand("host", "The real machine: probe sysfs, calibrate costs, run real benchmarks");
  host->require_subcommand(1);

  CLI::App* probe = host->add_subcommand(
      "probe", "Read topology and cpuidle states from sysfs into a machine profile (costs from --base)");
  add_output_options(probe, args->out,
                     "Profile to write (.toml; '-' = stdout); default $XDG_CONFIG_HOME/schedlab/host.toml, else "
                     "~/.config/schedlab/host.toml",
                     "The profile's format: toml (the only one; for a FILE without .toml)");
  probe->add_option("--sysfs-root", args->sysfs_root, "Directory holding sys/devices/system/... (default /)");
  probe->add_option("--base", args->base, "Built-in profile (or .toml path) whose costs and tunables are copied")
      ->capture_default_str();
  probe->add_flag("--dump-cpuid", args->dump_cpuid,
                  "Print the CPUID leaves the probe reads (0, 1, 0x40000000, 0x40000001) in the format of a "
                  "fixture's `cpuid` file, and exit");
  probe->callback(deferred([args] { run_probe(*args); }));

  CLI::App* cal = host->add_subcommand(
      "calibrate", "Probe, then measure costs with pinned-thread microbenchmarks in interleaved rounds (about 20 s; "
                   "--quick: about 3 s); refuses on a busy machine");
  add_output_options(cal, args->out, "Profile to write (.toml; '-' = stdout); default as for `host probe`",
                     "The profile's format: toml (the only one; for a FILE without .toml)");
  cal->add_option("--base", args->base, "Profile whose costs are kept where nothing is measured")
      ->capture_default_str();
  cal->add_flag("--quick", args->quick, "Short runs (for tests; larger spread)");
  cal->add_flag("--allow-busy", args->allow_busy,
                "Calibrate even when other processes keep the machine busy (refused otherwise; the profile says so)");
  add_optional(cal, "--samples", args->samples,
               "Also write every batch value and event of every measurement to this JSON file");
  cal->add_option("--budget", args->budget_s, "Time for the measurement rounds in seconds (default 20, --quick 3)");
  cal->callback(deferred([args] { run_calibrate(*args); }));

  CLI::App* check = host->add_subcommand(
      "check", "Self-check of a calibrated profile: each calibration microbenchmark simulated on it beside its "
               "measurement (model, measured, error %)");
  check->add_option("profile", args->positional, "Profile (default: the host profile)");
  add_optional(check, "--samples", args->samples,
               "The measurements from this `calibrate --samples` file instead of the profile's header");
  add_output_options(check, args->out, "Where the table goes (.txt, or .json for its JSON; '-' = stdout, the default)",
                     "txt or json (for -o FILE without the extension, or on stdout)");
  add_optional(check, "--json", args->json, "Also write the table as JSON to this file (the table stays on stdout)");
  check->add_flag("--remap", args->remap,
                  "Derive the measured costs again from the measurements with this binary's mapping (the profile's "
                  "other costs kept) before simulating");
  check->callback(deferred([args] { run_check(*args); }));

  CLI::App* bench = host->add_subcommand(
      "bench", "Run a real benchmark N times and collect its result: schedlab host bench [--runs N] [--output FILE] "
               "-- hackbench ... | perf bench sched pipe|messaging ...");
  bench->add_option("--runs,-n", args->runs, "Number of runs")->type_name("N")->capture_default_str();
  add_output_options(bench, args->out,
                     "Samples file (.txt; '-' = stdout): '# metric: ...' header lines, then one number per line",
                     "The samples file's format: txt (the only one; for a FILE without .txt)");
  bench->add_option("command", args->positional, "The benchmark command line, after --");
  bench->callback(deferred([args] { run_bench(*args); }));
}

}  // namespace schedlab::cli
