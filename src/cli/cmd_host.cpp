// `schedlab host probe|calibrate|bench`: the real machine (see docs/host.md). Parsing and printing
// only; the work is in src/host/.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/util.hpp"
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
  double budget_s = 0;
  std::optional<std::string> samples;
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
        fmt::print(p->to, "run {}/{}: {}\n", i + 1, p->total, run.result_line);
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
