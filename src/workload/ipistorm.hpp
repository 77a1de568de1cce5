#pragma once
#include <memory>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

// The "modified" ipistorm module (fixed IPI count, elapsed time): module parameters.
struct IpistormOptions {
  long long numipi = 100000;   // numipi=: call-functions per sending thread
  bool single = true;          // single=: smp_call_function_single (single=0 is not modeled)
  int offset = 1;              // offset=: target = (cpu + offset) mod nr_cpus
  std::vector<int> cpulist{0}; // cpulist=: the sending CPUs (one kthread each)
  bool wait = true;            // wait=: spin in csd_lock_wait() until the handler has run
  long long delay_us = 0;      // delay=: usleep between calls (0: cond_resched only)
};

IpistormOptions parse_ipistorm_options(const std::vector<std::string>& args, int nr_cpus);

class Ipistorm : public Workload {
 public:
  explicit Ipistorm(const IpistormOptions& o);
  ~Ipistorm() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  double seconds() const;
  const IpistormOptions& options() const { return o_; }

 private:
  struct State;
  IpistormOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
