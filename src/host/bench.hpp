// `schedlab host bench`: runs a real scheduler benchmark (hackbench, perf bench sched pipe|messaging)
// N times and collects its result metric, for comparison with the model (`schedlab compare`,
// `schedlab validate`). Parsers are separate so they can be tested on captured outputs.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/probe.hpp"  // HostError

namespace schedlab::host {

// rt-tests hackbench: the `Time: S.mmm` line, in seconds.
std::optional<double> parse_hackbench_time(std::string_view output);
// perf bench (any sched suite, default format): `Total time: S.mmm [sec]`, in seconds.
std::optional<double> parse_perf_total_time(std::string_view output);
// perf bench sched pipe: the `N.NNN usecs/op` line, in microseconds.
std::optional<double> parse_perf_pipe_usecs_per_op(std::string_view output);

enum class BenchTool { Hackbench, PerfSchedPipe, PerfSchedMessaging };

// What a command line runs and which of its numbers is the sample.
struct BenchSpec {
  BenchTool tool;
  std::string program;      // the executable to look up in PATH ("hackbench", "perf")
  std::string metric;       // "time_s" or "usecs_per_op"
  std::string unit;         // "s" or "us"
  std::string description;  // e.g. "hackbench Time" or "perf bench sched pipe usecs/op"
  // hackbench and messaging: Time / Total time (s); pipe: usecs/op. All lower-is-better.
};

// Identifies the benchmark in a command line (argv form; a leading `taskset [opts] MASK` or
// `taskset -c LIST` wrapper is allowed). Throws HostError for anything else, including
// `perf bench -f simple` (no result lines to parse).
BenchSpec identify_benchmark(const std::vector<std::string>& argv);

// Parses one run's output (stdout and stderr together) for spec's metric. nullopt if absent.
std::optional<double> parse_benchmark_output(const BenchSpec& spec, std::string_view output);

struct BenchRun {
  double value = 0;         // the metric
  std::string result_line;  // the tool's line it came from, trimmed
  std::string output;       // everything the tool printed
  double wall_s = 0;        // from start to exit
  double cpu_s = 0;         // the tool's own CPU time (wait4 rusage, user + system)
  double other_busy_pct = 0;  // other processes' busy share of all CPUs meanwhile (/proc/stat)
  // Context switches of the tool's processes and threads, those it waited for included (wait4
  // rusage ru_nvcsw / ru_nivcsw: what /proc/PID/status calls voluntary_ctxt_switches and
  // nonvoluntary_ctxt_switches, summed at exit).
  long long voluntary_switches = 0;
  long long involuntary_switches = 0;
  // perf's software counters of the same tasks: what `perf stat -e cpu-migrations,context-switches
  // -- CMD` counts (perf_event_open() on schedlab's own thread with `inherit`, so every process
  // and thread the tool starts is counted, minus the same counters without `inherit`: schedlab's
  // own share). -1 where perf events cannot be opened here (perf_event_paranoid, a kernel
  // without CONFIG_PERF_EVENTS): see TaskCounters::unavailable().
  long long cpu_migrations = -1;
  long long perf_context_switches = -1;
  std::string counters_unavailable{};  // why they are -1 (TaskCounters::unavailable())
  // Interrupts of the whole machine during the run (/proc/interrupts before and after, all
  // CPUs): rescheduling IPIs (x86 RES, arm64 IPI0) and function-call IPIs (CAL, IPI1: the wake
  // list's and smp_call_function's). Everything else running counts too. -1: not readable.
  long long resched_ipis = -1;
  long long call_function_ipis = -1;
  // Idle of the whole machine during the run: cpuidle state entries and time (sysfs stateN/usage
  // and stateN/time before and after, all CPUs and states). -1: no cpuidle in sysfs.
  long long idle_entries = -1;
  long long idle_time_us = -1;
  // Wake-ups of the whole machine during the run, from /proc/schedstat's CPU lines before and
  // after (ttwu_count, and ttwu_local: the waker's own CPU). -1 without CONFIG_SCHEDSTATS or
  // with kernel.sched_schedstats = 0 (the counters then stand still).
  long long wakeups = -1;
  long long local_wakeups = -1;
};

// The wake-up totals of a /proc/schedstat text (versions 15-17: `cpuN yld_count 0 sched_count
// sched_goidle ttwu_count ttwu_local ...`), summed over CPUs; -1 for both without CPU lines.
struct WakeupTotals {
  long long ttwu_count = -1;
  long long ttwu_local = -1;
};
WakeupTotals wakeup_totals(const std::string& proc_schedstat);

// The cpuidle totals of a sysfs tree (`root` is "/" or a fixture laid out like it): stateN/usage
// and stateN/time summed over every cpuN/cpuidle/stateN. -1 for both when no state has them.
struct IdleTotals {
  long long entries = -1;
  long long time_us = -1;
};
IdleTotals idle_totals(const std::string& root = "/");

// The IPI totals of a /proc/interrupts text: the lines described as "Rescheduling interrupts"
// and "Function call interrupts", summed over CPUs (-1 for a line that is missing).
struct IpiTotals {
  long long reschedule = -1;
  long long call_function = -1;
};
IpiTotals ipi_totals(const std::string& proc_interrupts);

// What a run did besides its result, as `key=value` pairs for the progress line of `host bench`:
// nvcsw, nivcsw, migrations, resched_ipis, call_function_ipis, idle_entries, idle_ms, wakeups,
// local_wakeups (`-` for a count that could not be read).
std::string describe_counters(const BenchRun& run);

// The counters BenchRun's perf fields come from, opened on the calling thread before the tool
// starts and read after it was reaped (a child's counts are folded into these when it exits).
class TaskCounters {
 public:
  TaskCounters();
  ~TaskCounters();
  TaskCounters(const TaskCounters&) = delete;
  TaskCounters& operator=(const TaskCounters&) = delete;
  // Why the counters could not be opened ("" when they were): the errno text and, for EACCES,
  // the perf_event_paranoid setting.
  const std::string& unavailable() const { return why_; }
  // Counts of the calling thread's children (and theirs) since construction; -1 if unavailable.
  long long children_migrations() const;
  long long children_context_switches() const;

 private:
  long long children(int inherited, int self) const;
  int fd_[4] = {-1, -1, -1, -1};  // migrations inherit / self, context switches inherit / self
  std::string why_;
};

struct BenchResult {
  BenchSpec spec;
  std::vector<std::string> argv;
  std::vector<BenchRun> runs;
  std::vector<double> samples() const;
};

// Looks `program` up in PATH like execvp does; empty if not found.
std::string find_in_path(const std::string& program);

// Runs the real tool `runs` times, sequentially, capturing stdout+stderr. Throws HostError if
// the tool is unknown or not installed, exits non-zero, or prints no parseable result line
// (the message includes the last lines it printed). `on_run` (optional) is called after each run.
BenchResult run_real_benchmark(const std::vector<std::string>& argv, int runs,
                               void (*on_run)(int index, const BenchRun&, void*) = nullptr,
                               void* ctx = nullptr);

// The samples file `schedlab compare` reads: `#` header lines (metric, unit, better, command,
// runs) then one number per line.
std::string format_samples_file(const BenchResult& r);

// Shell-style quoting of an argv for display and headers.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace schedlab::host
