#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

// schbench's latency histogram (fio's log-linear plat histogram: 8 mantissa bits, 19 groups).
class SchbenchHist {
 public:
  static constexpr int kPlatBits = 8;
  static constexpr int kPlatVal = 1 << kPlatBits;
  static constexpr int kPlatGroups = 19;
  static constexpr int kPlatNr = kPlatGroups * kPlatVal;
  static unsigned val_to_idx(uint64_t val);
  static unsigned idx_to_val(unsigned idx);
  void add(uint64_t v);
  void reset() { *this = SchbenchHist(); }
  uint64_t samples() const { return nr_; }
  // add_lat()'s min: "if (min == 0 || v < min) min = v" (so a 0 sample is forgotten by the
  // next one).
  uint64_t min() const { return min_; }
  uint64_t max() const { return max_; }
  // calc_percentiles(): for each p (ascending), the bucket value where the cumulative count
  // first reaches p/100*N, and the number of samples since the previous percentile of the list.
  // With no samples every value and count is 0.
  std::vector<std::pair<unsigned, uint64_t>> percentiles(const std::vector<double>& plist) const;

 private:
  std::array<uint64_t, kPlatNr> plat_{};
  uint64_t nr_ = 0, min_ = 0, max_ = 0;
};

struct SchbenchOptions {
  int message_threads = 1;   // -m
  int threads = 0;           // -t workers per message thread (default ceil(ncpus / m))
  bool threads_auto = false; // -t not given (schbench prints "setting worker threads to N")
  int runtime = 30;          // -r seconds
  int sleep_usec = 100;      // -s
  int operations = 5;        // -n matrix multiplies per request
  int footprint_kb = 256;    // -F
  bool no_locking = false;   // -L
  bool calibrate = false;    // -C
  int rps = 0;               // -R requests per second in total (0: saturate)
  int warmuptime = 0;        // -w (forced to 0 when runtime < 30)
  int intervaltime = 10;     // -i
  int zerotime = 0;          // -z (0: never)
  // -M / -W: pthread_setaffinity_np() of the message threads (message thread i on the
  // (i mod n)-th CPU of the list) and of the workers (the whole list); empty: no pinning.
  // "auto" (either flag): message thread i on CPU i, workers on every CPU (see parse).
  std::vector<int> message_cpus, worker_cpus;
  bool auto_pin = false;
  // -A PCT (--auto-rps): grow (or shrink) the RPS each second until the system's CPU
  // utilization (/proc/stat's "cpu" line) reaches PCT; 0: off. It sets -w 0 unless -w is given,
  // and -R 10 if no -R came before it.
  int auto_rps = 0;
};

SchbenchOptions parse_schbench_options(const std::vector<std::string>& args, int nr_cpus);

class Schbench : public Workload {
 public:
  explicit Schbench(const SchbenchOptions& o);
  ~Schbench() override;
  void setup(kernel::Api& k) override;
  bool finished() const override;
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  sim::Time time_limit() const override;
  Footprint footprint() const override;
  const SchbenchOptions& options() const { return o_; }
  // Simulated time of one request's matrix work (all -n operations), in ns.
  static int64_t math_ns(int footprint_kb, int operations);
  // Requests completed over the whole run / runtime (schbench's "average rps").
  double average_rps() const;

 private:
  void main_tick(kernel::Api& k, int s);
  float read_busy(kernel::Api& k);
  void auto_scale_rps(kernel::Api& k);
  struct State;
  SchbenchOptions o_;
  std::unique_ptr<State> st_;
};

}  // namespace schedlab::workload
