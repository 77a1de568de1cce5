#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

struct NetperfOptions {
  std::string test = "TCP_RR";  // -t (only TCP_RR is modeled)
  int seconds = 10;             // -l (positive: seconds)
  std::string host = "localhost";  // -H (the model is always loopback)
  int instances = 1;            // --instances=N (schedlab extension): N concurrent netperf runs
  int64_t req = 1, resp = 1;    // -- -r REQ,RESP
  int lcpu = -1, rcpu = -1;     // -T lcpu,rcpu
  bool banner = true;           // -P 0 suppresses the banner and the table headers
};

NetperfOptions parse_netperf_options(const std::vector<std::string>& args, int nr_cpus);

class Netperf : public Workload {
 public:
  explicit Netperf(const NetperfOptions& o);
  ~Netperf() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  sim::Time time_limit() const override;
  // Transactions per second of each instance.
  std::vector<double> rates() const;
  // Per instance, in launch order: when the shell forked it and when its test began (after
  // netserver's child answered its control request); sim::Time() for not yet.
  std::vector<std::pair<sim::Time, sim::Time>> starts() const;

 private:
  struct State;
  NetperfOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
