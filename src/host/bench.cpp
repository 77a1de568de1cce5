#include "host/bench.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "host/background.hpp"
#include "host/calib_stats.hpp"
#include "host/procfs.hpp"
#include "util/text.hpp"

extern char** environ;

namespace schedlab::host {
using util::trim;
namespace {

// Iterates over lines; returns the value of the last line for which f returns a value.
template <class F>
std::optional<double> last_match(std::string_view out, F f) {
  std::optional<double> result;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    std::string_view line = trim(out.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (auto v = f(line)) result = v;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return result;
}

// A non-negative finite decimal number at the start of s (after spaces); the rest is returned
// in *rest.
std::optional<double> leading_number(std::string_view s, std::string_view* rest = nullptr) {
  s = trim(s);
  size_t n = 0;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
  if (n == 0) return std::nullopt;
  std::string num(s.substr(0, n));
  char* end = nullptr;
  double v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  if (rest) *rest = trim(s.substr(n));
  return v;
}

std::string basename_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The first or last n non-empty lines of out, joined with " | ".
std::string some_lines(const std::string& out, int n, bool from_end) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  std::string_view s(out);
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    auto line = trim(s.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (!line.empty()) lines.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (lines.empty()) return "(no output)";
  size_t from = from_end && lines.size() > static_cast<size_t>(n) ? lines.size() - n : 0;
  size_t to = std::min(lines.size(), from + static_cast<size_t>(n));
  std::string r;
  for (size_t i = from; i < to; ++i) r += (r.empty() ? "" : " | ") + std::string(lines[i]);
  return r;
}

std::string find_result_line(std::string_view out, std::string_view needle) {
  std::string found;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    auto line = trim(out.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (line.find(needle) != std::string_view::npos) found = std::string(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return found;
}

}  // namespace

std::optional<double> parse_hackbench_time(std::string_view output) {
  return last_match(output, [](std::string_view line) -> std::optional<double> {
    if (line.substr(0, 5) != "Time:") return std::nullopt;
    std::string_view rest;
    auto v = leading_number(line.substr(5), &rest);
    if (!v || !rest.empty()) return std::nullopt;
    return v;
  });
}

std::optional<double> parse_perf_total_time(std::string_view output) {
  return last_match(output, [](std::string_view line) -> std::optional<double> {
    if (line.substr(0, 11) != "Total time:") return std::nullopt;
    std::string_view rest;
    auto v = leading_number(line.substr(11), &rest);
    if (!v || rest != "[sec]") return std::nullopt;
    return v;
  });
}

std::optional<double> parse_perf_pipe_usecs_per_op(std::string_view output) {
  return last_match(output, [](std::string_view line) -> std::optional<double> {
    std::string_view rest;
    auto v = leading_number(line, &rest);
    if (!v || rest != "usecs/op") return std::nullopt;
    return v;
  });
}

BenchSpec identify_benchmark(const std::vector<std::string>& argv_in) {
  if (argv_in.empty()) throw HostError("no benchmark command given (put it after `--`)");
  // Skip a `taskset` wrapper: taskset [-a] [-c] MASK|LIST COMMAND...
  size_t i = 0;
  if (basename_of(argv_in[0]) == "taskset") {
    i = 1;
    while (i < argv_in.size() && !argv_in[i].empty() && argv_in[i][0] == '-') ++i;
    ++i;  // the mask or CPU list
    if (i >= argv_in.size()) throw HostError("taskset wrapper without a command to run");
  }
  std::vector<std::string> argv(argv_in.begin() + static_cast<long>(i), argv_in.end());
  std::string prog = basename_of(argv[0]);
  if (prog == "hackbench")
    return {BenchTool::Hackbench, argv[0], "time_s", "s", "hackbench Time"};
  if (prog == "perf" || prog.rfind("perf_", 0) == 0) {
    // perf [perf options] bench [-f FMT] [-r N] sched pipe|messaging [options]
    size_t k = 1;
    while (k < argv.size() && argv[k] != "bench") ++k;
    if (k == argv.size()) throw HostError(fmt::format("`{}`: only `perf bench sched pipe|messaging` is supported", join_command(argv)));
    ++k;
    while (k < argv.size() && !argv[k].empty() && argv[k][0] == '-') {
      const std::string& o = argv[k];
      bool with_value = o == "-f" || o == "--format" || o == "-r" || o == "--repeat";
      std::string value = with_value && k + 1 < argv.size() ? argv[k + 1] : "";
      if (o.rfind("--format=", 0) == 0) value = o.substr(9);
      if (o.rfind("-f", 0) == 0 && o.size() > 2) value = o.substr(2);
      if ((o == "-f" || o == "--format" || o.rfind("--format=", 0) == 0 || (o.rfind("-f", 0) == 0 && o.size() > 2)) &&
          value == "simple")
        throw HostError("`perf bench -f simple` prints no result lines to parse; drop `-f simple`");
      k += with_value ? 2 : 1;
    }
    if (k + 1 < argv.size() && argv[k] == "sched" && argv[k + 1] == "pipe")
      return {BenchTool::PerfSchedPipe, argv[0], "usecs_per_op", "us", "perf bench sched pipe usecs/op"};
    if (k + 1 < argv.size() && argv[k] == "sched" && argv[k + 1] == "messaging")
      return {BenchTool::PerfSchedMessaging, argv[0], "time_s", "s", "perf bench sched messaging Total time"};
    throw HostError(fmt::format("`{}`: only `perf bench sched pipe` and `perf bench sched messaging` are supported",
                                join_command(argv)));
  }
  throw HostError(fmt::format("unknown benchmark `{}`: supported are hackbench (rt-tests), perf bench sched pipe "
                              "and perf bench sched messaging (linux-perf)",
                              argv[0]));
}

std::optional<double> parse_benchmark_output(const BenchSpec& spec, std::string_view output) {
  switch (spec.tool) {
    case BenchTool::Hackbench: return parse_hackbench_time(output);
    case BenchTool::PerfSchedPipe: return parse_perf_pipe_usecs_per_op(output);
    case BenchTool::PerfSchedMessaging: return parse_perf_total_time(output);
  }
  return std::nullopt;
}

std::vector<double> BenchResult::samples() const {
  std::vector<double> v;
  for (auto& r : runs) v.push_back(r.value);
  return v;
}

std::string find_in_path(const std::string& program) {
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (true) {
    size_t colon = p.find(':', pos);
    std::string dir = p.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (dir.empty()) dir.assign(1, '.');
    std::string cand = dir + "/" + program;
    std::error_code ec;
    if (access(cand.c_str(), X_OK) == 0 && !std::filesystem::is_directory(cand, ec)) return cand;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return "";
}

namespace {

// A software counter of the calling thread (pid 0, any CPU), kernel events included, counting
// from now; with `inherit` also every task it starts from now on.
int open_sw_counter(uint64_t config, bool inherit) {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = config;
  a.inherit = inherit ? 1 : 0;
  return static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

long long read_counter(int fd) {
  uint64_t v = 0;
  if (fd < 0 || read(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;
  return static_cast<long long>(v);
}

}  // namespace

TaskCounters::TaskCounters() {
  const uint64_t configs[4] = {PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_CPU_MIGRATIONS,
                               PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CONTEXT_SWITCHES};
  for (int i = 0; i < 4 && why_.empty(); ++i) {
    fd_[i] = open_sw_counter(configs[i], i % 2 == 0);
    if (fd_[i] < 0) {
      const int e = errno;
      why_ = fmt::format("perf_event_open: {}", std::strerror(e));
      if (e == EACCES || e == EPERM)
        if (auto p = read_file_trimmed("/proc/sys/kernel/perf_event_paranoid"))
          why_ += fmt::format(" (kernel.perf_event_paranoid = {})", *p);
    }
  }
}

TaskCounters::~TaskCounters() {
  for (int fd : fd_)
    if (fd >= 0) close(fd);
}

long long TaskCounters::children(int inherited, int self) const {
  if (!why_.empty()) return -1;
  const long long all = read_counter(fd_[inherited]), own = read_counter(fd_[self]);
  if (all < 0 || own < 0) return -1;
  return std::max(0LL, all - own);
}

long long TaskCounters::children_migrations() const { return children(0, 1); }
long long TaskCounters::children_context_switches() const { return children(2, 3); }

std::string describe_counters(const BenchRun& run) {
  auto v = [](long long x) { return x < 0 ? std::string("-") : std::to_string(x); };
  const std::string idle_ms = run.idle_time_us < 0 ? "-" : fmt::format("{:.1f}", static_cast<double>(run.idle_time_us) / 1e3);
  return fmt::format("nvcsw={} nivcsw={} migrations={} resched_ipis={} call_function_ipis={} idle_entries={} "
                     "idle_ms={} wakeups={} local_wakeups={}",
                     run.voluntary_switches, run.involuntary_switches, v(run.cpu_migrations), v(run.resched_ipis),
                     v(run.call_function_ipis), v(run.idle_entries), idle_ms, v(run.wakeups), v(run.local_wakeups));
}

IpiTotals ipi_totals(const std::string& proc_interrupts) {
  IpiTotals t;
  for (const IrqLine& l : parse_interrupts(proc_interrupts)) {
    long long* slot = l.desc == "Rescheduling interrupts" ? &t.reschedule
                      : l.desc == "Function call interrupts" ? &t.call_function
                                                             : nullptr;
    if (!slot) continue;
    long long sum = 0;
    for (long long v : l.per_cpu) sum += v;
    *slot = sum;
  }
  return t;
}

IdleTotals idle_totals(const std::string& root) {
  IdleTotals t;
  for (const auto& [n, cpu] : numbered_dirs(std::filesystem::path(root) / "sys/devices/system/cpu", "cpu"))
    for (const auto& [k, st] : numbered_dirs(cpu / "cpuidle", "state")) {
      auto usage = read_file_trimmed((st / "usage").string()), time = read_file_trimmed((st / "time").string());
      auto u = usage ? util::parse_whole_int(*usage) : std::nullopt;
      auto us = time ? util::parse_whole_int(*time) : std::nullopt;
      if (!u || !us) continue;
      t.entries = std::max(t.entries, 0LL) + *u;
      t.time_us = std::max(t.time_us, 0LL) + *us;
    }
  return t;
}

WakeupTotals wakeup_totals(const std::string& proc_schedstat) {
  WakeupTotals t;
  std::istringstream in(proc_schedstat);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || !std::isdigit(static_cast<unsigned char>(line[3])))
      continue;
    std::istringstream f(line);
    std::string name;
    long long v[6];
    f >> name;
    for (long long& x : v) f >> x;
    if (!f) continue;
    t.ttwu_count = std::max(t.ttwu_count, 0LL) + v[4];
    t.ttwu_local = std::max(t.ttwu_local, 0LL) + v[5];
  }
  return t;
}

namespace {

WakeupTotals wakeup_totals_now() {
  if (auto on = read_file_trimmed("/proc/sys/kernel/sched_schedstats"); on && *on == "0") return {};
  auto text = read_file_text("/proc/schedstat");
  return text ? wakeup_totals(*text) : WakeupTotals{};
}

IpiTotals ipi_totals_now() {
  auto text = read_file_text("/proc/interrupts");
  return text ? ipi_totals(*text) : IpiTotals{};
}

long long delta(long long before, long long after) { return before < 0 || after < 0 ? -1 : after - before; }

// Runs argv with stdout+stderr captured; returns the exit status word from wait4. Fills the
// run's wall time, CPU time, perf counters and the other processes' busy share meanwhile.
int run_capture(const std::vector<std::string>& argv, std::string* output, BenchRun* run) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw HostError(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const CpuSnapshot before = cpu_snapshot(false);
  const IpiTotals ipis_before = ipi_totals_now();
  const IdleTotals idle_before = idle_totals();
  const WakeupTotals wakeups_before = wakeup_totals_now();
  const TaskCounters counters;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw HostError(fmt::format("cannot run `{}`: {}", argv[0], std::strerror(rc)));
  }
  char buf[8192];
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) output->append(buf, static_cast<size_t>(n));
    else if (n == 0) break;
    else if (errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  CpuSnapshot after = cpu_snapshot(false);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  run->wall_s = after.wall_s - before.wall_s;
  run->cpu_s = sec(ru.ru_utime) + sec(ru.ru_stime);
  run->voluntary_switches = ru.ru_nvcsw;
  run->involuntary_switches = ru.ru_nivcsw;
  run->cpu_migrations = counters.children_migrations();
  run->perf_context_switches = counters.children_context_switches();
  run->counters_unavailable = counters.unavailable();
  const IpiTotals ipis_after = ipi_totals_now();
  run->resched_ipis = delta(ipis_before.reschedule, ipis_after.reschedule);
  run->call_function_ipis = delta(ipis_before.call_function, ipis_after.call_function);
  const IdleTotals idle_after = idle_totals();
  run->idle_entries = delta(idle_before.entries, idle_after.entries);
  run->idle_time_us = delta(idle_before.time_us, idle_after.time_us);
  const WakeupTotals wakeups_after = wakeup_totals_now();
  run->wakeups = delta(wakeups_before.ttwu_count, wakeups_after.ttwu_count);
  run->local_wakeups = delta(wakeups_before.ttwu_local, wakeups_after.ttwu_local);
  after.self_cpu_s = run->cpu_s;  // "own" time = the tool's
  run->other_busy_pct = other_busy_pct(before, after, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                                       sysconf(_SC_CLK_TCK));
  return status;
}

}  // namespace

BenchResult run_real_benchmark(const std::vector<std::string>& argv, int runs,
                               void (*on_run)(int, const BenchRun&, void*), void* ctx) {
  BenchResult res;
  res.spec = identify_benchmark(argv);
  res.argv = argv;
  if (runs < 1) throw HostError(fmt::format("--runs must be at least 1 (got {})", runs));
  auto package = [](const BenchSpec& s) {
    return s.tool == BenchTool::Hackbench ? "rt-tests" : "linux-perf";
  };
  if (find_in_path(argv[0]).empty())
    throw HostError(fmt::format("`{}` is not installed (not found in PATH){}", argv[0],
                                argv[0] == res.spec.program ? fmt::format("; Debian package {}", package(res.spec)) : ""));
  if (argv[0] != res.spec.program && find_in_path(res.spec.program).empty())
    throw HostError(fmt::format("`{}` is not installed (not found in PATH); Debian package {}", res.spec.program,
                                package(res.spec)));
  const std::string cmd = join_command(argv);
  for (int i = 0; i < runs; ++i) {
    BenchRun run;
    int status = run_capture(argv, &run.output, &run);
    if (WIFSIGNALED(status))
      throw HostError(fmt::format("`{}` (run {}) was killed by signal {}: {}", cmd, i + 1, WTERMSIG(status),
                                  some_lines(run.output, 3, true)));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw HostError(fmt::format("`{}` (run {}) exited with status {}{}: {}", cmd, i + 1, WEXITSTATUS(status),
                                  WEXITSTATUS(status) == 127 ? " (command not found?)" : "",
                                  some_lines(run.output, 2, false)));
    auto v = parse_benchmark_output(res.spec, run.output);
    if (!v)
      throw HostError(fmt::format("`{}` (run {}): no {} result line in its output; last lines: {}", cmd, i + 1,
                                  res.spec.description, some_lines(run.output, 3, true)));
    run.value = *v;
    run.result_line = find_result_line(run.output, res.spec.tool == BenchTool::Hackbench       ? "Time:"
                                                   : res.spec.tool == BenchTool::PerfSchedPipe ? "usecs/op"
                                                                                               : "Total time:");
    res.runs.push_back(std::move(run));
    if (on_run) on_run(i, res.runs.back(), ctx);
  }
  return res;
}

std::string format_samples_file(const BenchResult& r) {
  std::string out;
  out += fmt::format("# metric: {}\n", r.spec.metric);
  out += fmt::format("# unit: {}\n", r.spec.unit);
  out += "# better: lower\n";
  out += fmt::format("# source: {}, real runs on this host (schedlab host bench)\n", r.spec.description);
  out += fmt::format("# command: {}\n", join_command(r.argv));
  out += fmt::format("# runs: {}\n", r.runs.size());
  for (auto& run : r.runs) out += fmt::format("{}\n", run.value);
  return out;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                   "-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace schedlab::host
