// One simulated run: machine + features + seed + benchmark command line -> metrics + counters.
#pragma once
#include <nlohmann/json.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/counters.hpp"
#include "kernel/features.hpp"
#include "machine/machine.hpp"
#include "trace/sink.hpp"
#include "workload/workload.hpp"

namespace schedlab::experiment {

// A run that cannot start as specified (a bad feature list, --trace-window without --trace):
// one line naming the flag; the CLI exits with status 2.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The benchmark had not completed when the simulated time reached its limit (an hour for the
// benchmarks that run to completion): the costs or the benchmark's own counts ask for more
// work than one run simulates. The message names the command and the --set overrides.
class DidNotFinish : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunSpec {
  std::string machine = "tiny-4";           // profile name or path
  std::string features;                     // "SM_IDLE,NO_SIS_UTIL"
  uint64_t seed = 1;
  std::vector<std::string> idle_disable;    // state names
  std::vector<std::string> sets;            // KEY=VALUE
  std::vector<std::string> command;         // benchmark argv
  trace::TraceSink* sink = nullptr;         // optional
  std::string trace_path;                   // --trace FILE (.dat, .txt, .json)
  std::string trace_window;                 // --trace-window START,END
  bool check = false;                       // --check: invariants after every event
  bool cold = false;                        // --cold: the machine as just booted, not up and idle
  int64_t max_simulated_ns = 0;             // > 0: stop there if the benchmark's own limit is later
                                            // (DidNotFinish; the fuzzers' short simulations)
  bool schedstat = false;                   // keep the sched domains for schedstat snapshots
  // > 0: estimate the run's memory before it starts (estimate_memory()) and refuse, with a
  // SpecError naming the estimate, a run that needs more; memory_limit_source says where the
  // limit comes from ("--max-memory", "MemAvailable in /proc/meminfo").
  int64_t memory_limit_bytes = 0;
  std::string memory_limit_source;
  // Called every 65536 events with the benchmark's fraction done (-1: unknown), the simulated
  // time and the events so far (a progress line; see RunProgress).
  std::function<void(double, sim::Time, uint64_t)> progress;
};

// What a run will hold in memory at once, estimated before it starts from the sizes of the
// objects it creates (sizeof, glibc's malloc chunks): per task the kernel's task_struct, its
// slot in the task table and on a runqueue, one pooled pending event (its wakeup IPI or timer),
// and the benchmark's own state per Workload::footprint(); per CPU the runqueue, the CPU's
// execution state, cpuidle/menu/tick/softirq state, the idle task and ksoftirqd.
struct MemoryEstimate {
  int64_t bytes = 0;
  int64_t tasks = 0;          // the benchmark's tasks (without idle tasks and kthreads)
  int64_t bytes_per_task = 0; // kernel + benchmark, averaged over the benchmark's tasks
};
MemoryEstimate estimate_memory(const machine::Machine& m, const workload::Workload& w);
// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read (no limit).
int64_t mem_available_bytes();
// "512 MiB", "8.0 GiB": a byte count as the memory messages print it.
std::string format_bytes(int64_t bytes);

// The progress line of `schedlab run` on stderr, as `ab` shows its runs: nothing for a run that
// ends within 3 s of wall time; then "\rrun: 42% done, ETA 1m05s" kept up to date on a
// terminal, or one line per 10 % done otherwise. SCHEDLAB_PROGRESS=1 shows it from the start
// and as lines (what the tests check). finish() ends an open line.
class RunProgress {
 public:
  RunProgress();
  ~RunProgress() { finish(); }
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  void operator()(double fraction, sim::Time simulated, uint64_t events);
  void finish();

 private:
  bool tty_, forced_;
  double start_;            // wall seconds (steady clock)
  double last_print_ = -1;  // wall seconds of the last terminal update
  int last_bucket_ = 0;     // tens of percent already printed as lines
  bool open_ = false;
};

// A CPU's sched domain as /proc/schedstat names it (RunSpec::schedstat).
struct SchedstatDomain {
  int level = 0;         // kernel::SdLevel
  std::string name;      // SMT, MC, PKG, NUMA
  std::string cpumask;   // %*pb
};

struct RunResult {
  std::string machine;
  std::string features;    // as given (normalised to the non-default set)
  uint64_t seed = 0;
  std::string command;
  std::string report;      // the tool's own result lines
  std::vector<workload::OutputFile> files;  // what the tool writes (rt-app's logs)
  std::vector<std::string> warnings;        // for stderr (Workload::warnings())
  std::vector<workload::Metric> metrics;
  kernel::CpuCounters total;
  std::vector<kernel::CpuCounters> per_cpu;
  std::vector<std::string> idle_state_names;  // + "default_idle" last
  int64_t simulated_ns = 0;
  uint64_t events = 0;
  int nr_cpus = 0;
  int64_t tick_period_ns = 0;                            // 1 s / CONFIG_HZ: jiffies
  std::vector<std::vector<SchedstatDomain>> sd;          // per CPU, lowest first (RunSpec::schedstat)
};

// The schedlab version, CMake's PROJECT_VERSION (CMakeLists.txt's project(), the one place it is
// defined): `schedlab --version`, every JSON report's schedlab_version, sweep cell ids.
const char* schedlab_version();

// `--machine host`: the profile `schedlab host probe|calibrate` wrote (host::default_host_profile_path()).
inline constexpr const char* kHostMachine = "host";
// The profile name or path to load for a --machine value: `host` becomes the host profile's path
// (ProfileError saying to run `schedlab host probe` if it does not exist); anything else as is.
std::string resolve_machine(const std::string& name);
// Loads the machine (a built-in name, a .toml path, or `host`), applies --set and --idle-disable; throws machine::ProfileError.
machine::Machine load_machine(const RunSpec& spec);
// kernel::Features::parse (NAME turns on, NO_NAME off, see `schedlab features`: each item once, no
// empty item), its FeatureError as a SpecError naming `flag` (--features, --base, --test).
kernel::Features parse_features(const std::string& list, const std::string& flag = "--features");
// The run's features: the machine's default features (`m`'s [kernel] features, if given), then
// spec.features over them, plus the change tunables among spec.sets (`change.NAME.KEY=VALUE`;
// the other sets are the machine's). Throws SpecError.
kernel::Features run_features(const RunSpec& spec, const machine::Machine* m = nullptr);
// A warning for each `--set change.X.KEY=V` among `sets` whose change X is off in every one of
// `sides` (its value would be silently unused), naming `flag` (--set, --base-set, ...).
std::vector<std::string> unused_change_sets(const std::vector<std::string>& sets,
                                            const std::vector<kernel::Features>& sides, const std::string& flag);
// Runs one simulation. Throws workload::WorkloadError / machine::ProfileError / SpecError /
// trace::TraceError / io::OutputError on bad input and DidNotFinish if the benchmark did not
// complete within its time limit.
RunResult run_one(const RunSpec& spec);
RunResult run_one(const machine::Machine& m, const RunSpec& spec);

nlohmann::ordered_json counters_json(const kernel::CpuCounters& c,
                                     const std::vector<std::string>& idle_names);
nlohmann::ordered_json to_json(const RunResult& r);
// The short human summary printed after the tool's lines.
std::string summary(const RunResult& r);

}  // namespace schedlab::experiment
