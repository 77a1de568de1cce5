#pragma once
#include <memory>

#include "workload/workload.hpp"

namespace schedlab::workload {

struct HackbenchOptions {
  int groups = 10;        // -g
  int fds = 20;           // -f
  int loops = 100;        // -l
  int64_t datasize = 100; // -s
  bool pipe = false;      // -p
  bool threads = false;   // -T (else -P, processes)
};

class Hackbench : public Workload {
 public:
  explicit Hackbench(const HackbenchOptions& o);
  ~Hackbench() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  Footprint footprint() const override;
  double seconds() const;

 private:
  struct State;
  HackbenchOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
