// `schedlab host calibrate`: microbenchmarks with real threads pinned to CPUs (never hackbench or
// perf bench: those are for validation), and their mapping onto machine::Costs fields.
// docs/host.md describes every measurement, its mapping and its assumptions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/background.hpp"
#include "host/calib_stats.hpp"
#include "machine/machine.hpp"

namespace schedlab::host {

// One microbenchmark result. Values are nanoseconds per operation as named by `key`.
struct Measurement {
  std::string key;         // e.g. "futex_wake_nowaiter", "cacheline_llc", "wake_latency_llc"
  std::string what;        // one line: what was timed
  double value_ns = 0;     // the estimate: the low quantile (p25) of the batch values
  double median_ns = 0;    // median of the batch values
  double cov = 0;          // robust coefficient of variation of the batch values (the spread)
  double min_ns = 0;       // smallest and largest batch value
  double max_ns = 0;
  int batches = 0;         // batch values used (one per round)
  int loaded_batches = 0;  // batches left out: other processes were busy in their round
  bool used_loaded = false;  // too few quiet rounds: the loaded ones were used too
  bool converged = false;  // cov < target_cov
  std::vector<int> cpus;   // real CPUs used (one pair for distance-class results; the value
                           // is then the median over pairs listed in `pairs`)
  int pairs = 1;
  std::string idle_state;  // wake_latency_*: the wakee CPU's most used cpuidle state, if known
  // Latency tests: every event of the usable batches (ns), in order; wake_latency_X and
  // wake_syscall_X hold the same events pairwise. Their distribution is in `dist`.
  std::vector<double> events;
  Distribution dist;
  // Every batch value in round order, and whether its round was loaded (all of them, including
  // those left out of the estimate).
  std::vector<double> batch_values;
  std::vector<bool> batch_loaded;
};


struct CalibrateOptions {
  bool quick = false;        // short runs (tests): fewer, smaller batches, one pair per class
  double target_cov = 0.05;  // stop when the spread of every measurement's batch values is below this
  int min_batches = 0;       // rounds at least: 0 = 3 (quick) / 8
  int max_batches = 0;       // rounds at most: 0 = 6 (quick) / 30
  double budget_s = 0;       // total time for the rounds: 0 = 3 s (quick) / 20 s
  // Load check (docs/host.md): before starting, the machine is sampled for a second; other
  // processes above limits.refuse_pct (or a load average above the CPU count) make calibrate
  // throw HostError unless allow_busy; above limits.warn_pct it warns. Rounds in which other
  // processes kept more than round_busy_pct busy are left out of the estimates.
  bool allow_busy = false;
  LoadLimits limits;
  double round_busy_pct = 10;
  std::optional<LoadReading> load_reading;  // tests: use this instead of sampling the machine
  // Background activity (host/background.hpp), after the rounds: an idle phase of this many
  // seconds (0: 5 s, quick 0.5 s) and a gap scan on every usable CPU (0: 2 s, quick 0.2 s);
  // record_background = false skips both.
  bool record_background = true;
  double background_idle_s = 0;
  double background_scan_s = 0;
  // The machine as probed (for distance classes and idle states) and model CPU -> real CPU
  // (ProbeResult::model_to_real; empty = identity). CPUs outside this process's affinity mask
  // are not used.
  machine::Machine machine;
  std::vector<int> model_to_real;
  // Called after each measurement (progress output); may be empty.
  std::function<void(const Measurement&)> progress;
  // Called after each round with the other-busy share of that round (%); may be empty.
  std::function<void(int round, double other_busy_pct)> on_round;
};

struct CalibrationResult {
  std::vector<Measurement> measurements;
  std::vector<std::string> warnings;
  double elapsed_s = 0;
  LoadReading load_before;           // the load check
  LoadVerdict verdict = LoadVerdict::Quiet;
  std::vector<double> round_busy_pct;  // other processes' busy share in each round
  int rounds = 0;
  bool budget_exhausted = false;
  bool have_background = false;
  BackgroundResult background;
  // Between-round spread of the single-CPU loops (syscalls, futex calls without sleeping, pipe
  // and AF_UNIX send/receive): the median of their robust CoVs. What changes from one round to
  // the next but not within a batch: the per-run factor of docs/variance.md (S1).
  double round_spread = 0;
  const Measurement* find(const std::string& key) const;
};

// All samples of a calibration as JSON (`schedlab host calibrate --samples FILE`): per
// measurement its batch values, their loaded flags, the estimate and the events.
std::string samples_json(const CalibrationResult& r);
// Reads what samples_json wrote back (key, estimate, median, spread, what, cpus, idle state).
// Throws std::runtime_error naming `where`.
CalibrationResult read_samples_json(const std::string& text, const std::string& where);

// Reads the machine's load for `seconds` (other processes' busy share from /proc/stat, the load
// average); throws HostError if /proc/stat is unreadable.
LoadReading sample_load(double seconds);

// Runs every microbenchmark this machine allows. Throws HostError only if no CPU can be pinned.
CalibrationResult calibrate(const CalibrateOptions& opt);

// One cost field set from measurements.
struct CostUpdate {
  std::string key;       // TOML key, e.g. "costs.context_switch_ns", "guest.halted_wake_ns"
  int64_t value = 0;     // ns (rounded)
  double fvalue = 0;     // guest.* entries: the value as recorded (sigmas are not integers)
  std::string formula;   // how it was derived, e.g. "futex_pingpong_same_cpu/2 - ..."
  double cov = 0;        // spread of the main measurement it came from
  bool floored = false;  // derivation fell below its floor or was scaled (formula says which)
};

// Maps measurements onto m.costs, and on a guest (m.guest.present) onto the measured [guest]
// entries (m should already hold the base costs: derived fields subtract base costs of the parts
// the microbenchmark also exercised). Returns what it set, in order.
std::vector<CostUpdate> apply_calibration(machine::Machine& m, const CalibrationResult& r);

// Header comment lines for a calibrated profile: each measured value with its spread, which
// costs were measured, and which kept their base defaults. Lines are without "# ".
std::vector<std::string> calibration_header(const CalibrationResult& r, const std::vector<CostUpdate>& updates);

// The L2-cold channel read microbenchmark of calibrate (docs/host.md, "Cold channel reads"), on
// the calling thread's CPU: `chans` AF_UNIX socketpairs (else pipes) filled round-robin with
// `per_chan` 100-byte messages, then drained in the same order; the median of `chunks` fills and
// drains as (per-send, per-recv) ns, or nullopt when a channel could not be made or filled up.
std::optional<std::pair<double, double>> cold_fill_drain(bool unix_socket, int chans, int per_chan, int chunks);
// The (messages per channel, channels) calibrate uses for an L2 of `l2_bytes` (0: unknown):
// a footprint of four L2s, each channel under its buffer limit.
std::pair<int, int> cold_layout(bool unix_socket, int64_t l2_bytes);
// The share of that fill's sends the model finds a warm buffer for (docs/model.md, "Cold channel
// reads and sends"): the drain before it freed every message onto the core's stack, the last
// freed first, and a send takes the newest free while at most the L2 moved since it: the first
// l2 / footprint + 1 sends of chans x per, the rest write cold buffers.
double cold_fill_warm_share(bool unix_socket, int64_t l2_bytes);

}  // namespace schedlab::host
