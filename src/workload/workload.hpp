// Benchmarks as task programs, parsed from the real tools' command lines.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/api.hpp"

namespace schedlab::workload {

// A bad benchmark command line (unknown tool or flag, bad value): one line naming the flag.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bytes a heap allocation of `n` bytes takes with glibc's malloc: a chunk is the request plus its
// 8-byte size header, rounded up to MALLOC_ALIGNMENT (16), and at least MINSIZE (32).
inline int64_t heap_bytes(int64_t n) {
  constexpr int64_t kHeader = 8, kAlign = 16, kMinChunk = 32;
  int64_t chunk = (n + kHeader + kAlign - 1) / kAlign * kAlign;
  return chunk < kMinChunk ? kMinChunk : chunk;
}

// What a benchmark holds while it runs, for the estimate `schedlab run` makes before it starts
// (experiment::estimate_memory()): its largest number of tasks at once, and the bytes of its own
// state (the tasks' programs, channels, queues, pointers), each counted with sizeof.
struct Footprint {
  int64_t tasks = 0;
  int64_t bytes = 0;
};

struct Metric {
  std::string name;   // e.g. "time", "usecs_per_op", "throughput"
  std::string unit;   // e.g. "s", "us/op", "MB/s"
  double value = 0;
  bool higher_is_better = false;
};

// A file the real tool writes (rt-app's per-thread logs).
struct OutputFile {
  std::string path;
  std::string content;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Creates the tasks. The workload calls k.stop() when the benchmark is complete.
  virtual void setup(kernel::Api& k) = 0;
  virtual bool finished() const = 0;
  // The real tool's own result lines, exactly as it prints them.
  virtual std::string report() const = 0;
  virtual std::vector<Metric> metrics() const = 0;
  // Upper bound on simulated time; a run that has not finished by then is an error.
  virtual sim::Time time_limit() const { return sim::Time::sec(3600); }
  // The fraction of the benchmark's work done so far (0..1) for a progress line; -1 when the
  // benchmark cannot tell.
  virtual double progress() const { return -1; }
  // The files the tool writes, as it writes them; `schedlab run` writes them after the run
  // (each whole, never a partial file), `schedlab ab` does not (its runs would overwrite each
  // other).
  virtual std::vector<OutputFile> output_files() const { return {}; }
  // The paths of output_files() known before the run (rt-app's initial threads' logs), so that
  // `schedlab run` checks them with --json and --trace before the simulation starts.
  virtual std::vector<std::string> output_paths() const { return {}; }
  // Lines for stderr: input accepted without meaning in the model, what the run left undone.
  virtual std::vector<std::string> warnings() const { return {}; }
  // Its tasks and state (above); a benchmark that does not say counts as none.
  virtual Footprint footprint() const { return {}; }
  // CPUs the benchmark's tasks may run on (`taskset -c LIST <benchmark>`); empty = all.
  const std::vector<int>& affinity() const { return affinity_; }
  void set_affinity(std::vector<int> cpus) { affinity_ = std::move(cpus); }

 private:
  std::vector<int> affinity_;
};

struct WorkloadInfo {
  std::string name;
  std::string usage;
  std::string help;
};

const std::vector<WorkloadInfo>& list_workloads();
// Parses a benchmark command line (argv[0] is the tool: "hackbench", "perf", ...).
// Throws WorkloadError.
std::unique_ptr<Workload> parse_workload(const std::vector<std::string>& argv, int nr_cpus);

// The command line with its run length multiplied by `factor`: hackbench -l, perf bench sched
// pipe -l, tbench -t, netperf -l, schbench -r, ipistorm numipi= (the value scaled, or the flag
// added at factor x the tool's default when absent); taskset prefixes kept. nullopt for a tool
// without one length (rt-app) or a value that is not a positive integer.
std::optional<std::vector<std::string>> scale_length(const std::vector<std::string>& argv, int factor);

// --- helpers shared by the presets ---------------------------------------------------

// Parses a non-negative integer option value; throws WorkloadError naming the flag.
long long parse_count(const std::string& flag, const std::string& value, long long min,
                      long long max);
std::string join(const std::vector<std::string>& argv);

}  // namespace schedlab::workload
