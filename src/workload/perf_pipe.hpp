#pragma once
#include <memory>

#include "workload/workload.hpp"

namespace schedlab::workload {

struct PerfPipeOptions {
  long long loops = 1000000;  // -l/--loop
  bool threaded = false;      // -T/--threaded
  bool simple = false;        // perf bench -f simple
  // Not perf's options (the calibration's pipe ping-pong, `calib pipe`, host/calibrate.cpp
  // pipe_pingpong): the bytes of one token, and each task pinned to one CPU (-1: placed by the
  // scheduler, as perf's tasks are). The parent writes first (calibrate's measuring thread).
  int64_t token_bytes = 4;    // sizeof(int)
  int pin_parent = -1, pin_child = -1;
};

// `perf bench sched pipe`: two tasks ping-pong a 4-byte token over two pipes.
class PerfPipe : public Workload {
 public:
  explicit PerfPipe(const PerfPipeOptions& o);
  ~PerfPipe() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  sim::Time time_limit() const override;
  double progress() const override;

 private:
  struct State;
  PerfPipeOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
