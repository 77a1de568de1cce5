// rt-app (github.com/scheduler-tools/rt-app): threads described by a JSON use case, run on the
// model. Each rt-app thread is a task whose program walks its phases' events; the futex-based
// pthread objects behind the events (mutexes, condition variables, rt-app's barrier,
// semaphores) are modeled with Block + Wake, timers with hrtimer sleeps. Produces rt-app's
// per-thread logs and latency/slack metrics per task. docs/workloads.md, rt-app.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "workload/rtapp_config.hpp"
#include "workload/workload.hpp"

namespace schedlab::workload {

// Parses a use case from its text; `file_name` is what errors and warnings name. Throws
// WorkloadError "FILE:LINE: KEY: what". Touches no file (the fuzzing entry point).
// duration_s > 0 replaces global.duration (`rt-app --duration`).
rtapp::Config parse_rtapp(const std::string& text, const std::string& file_name,
                          int nr_cpus = 4096, int64_t duration_s = 0);

// `rt-app [-l LEVEL] [--duration SECONDS] FILE.json`: reads the file, parses it, checks that
// logdir exists. --duration is schedlab's (rt-app has only global.duration): it replaces the
// use case's global.duration, so one that loops forever runs for that long.
std::unique_ptr<Workload> parse_rtapp_command(const std::vector<std::string>& args, int nr_cpus);

// What the model uses for rt-app's pLoad when the use case asks it to calibrate ("calibration":
// "CPU0"): a modeled CPU has no loop to time. It only sets the unit of the perf column and the
// rounding of run events to whole loops; give "calibration": N to choose it.
inline constexpr int64_t kRtappModelNsPerLoop = 100;

class Rtapp : public Workload {
 public:
  explicit Rtapp(rtapp::Config cfg);
  ~Rtapp() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  sim::Time time_limit() const override;
  std::vector<OutputFile> output_files() const override;
  std::vector<std::string> output_paths() const override;
  std::vector<std::string> warnings() const override;
  Footprint footprint() const override;
  const rtapp::Config& config() const { return cfg_; }

  // One log row (rt-app's timing_point_t), values as rt-app prints them (usec).
  struct Row {
    int ind = 0;
    uint64_t perf = 0, run = 0, period = 0;
    uint64_t start = 0, end = 0, rel_st = 0;
    int64_t slack = 0;
    uint64_t c_duration = 0, c_period = 0, wu_lat = 0;
    int missed = 0;  // timer activations of this row that found their time already past
  };
  struct ThreadLog {
    std::string name;  // "task-ind" or "task-ind-NNNN" for forks
    int task = 0;      // index in config().tasks
    std::vector<Row> rows;
  };
  // Every thread created (in creation order) and what it logged.
  std::vector<ThreadLog> thread_logs() const;
  // rt-app's log line for a row.
  static std::string format_row(const Row& r);
  static std::string log_header();

  struct State;

 private:
  rtapp::Config cfg_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
