#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

struct TbenchOptions {
  int nprocs = 1;               // NPROCS (required)
  std::string server = "localhost";  // SERVER (the model is always loopback)
  int timelimit = 600;          // -t/--timelimit seconds (warm-up timelimit/5 comes first)
  std::string loadfile = "/usr/share/dbench/client.txt";  // -c (only the default is modeled)
  // Tests only (no flag): the loadfile's per-op line counts divided by this, each op kept at
  // least once, so that a short test passes the end of the file (and its Deltree line) many times.
  int loadfile_divisor = 1;
  int warmup() const { return timelimit / 5; }
};

TbenchOptions parse_tbench_options(const std::vector<std::string>& args);

class Tbench : public Workload {
 public:
  explicit Tbench(const TbenchOptions& o);
  ~Tbench() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  sim::Time time_limit() const override;
  double throughput_mbs() const;
  // Per client, in fork order: when the parent's wakeup released it from dbench 4.00's start
  // barrier, and its first step after (sim::Time() for one not released or not run yet).
  std::vector<std::pair<sim::Time, sim::Time>> client_starts() const;

 private:
  void schedule_status(kernel::Api& k);
  struct State;
  TbenchOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
