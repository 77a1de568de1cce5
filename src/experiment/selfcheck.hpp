// The self-check of a calibration (`schedlab host calibrate` ends with it, `schedlab host check`
// reprints it; docs/host.md "Self-check"): every microbenchmark of host/calibrate.cpp simulated
// on the profile written from it (workload `calib`, workload/calib.hpp), beside what it measured.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/calibrate.hpp"
#include "machine/machine.hpp"

namespace schedlab::experiment {

struct CheckRow {
  std::string key;       // the calibration key (membarrier_ipi_<class>: the IPI round trip)
  std::string kind;      // "simulated", "direct" (the cost is the measurement), "not modeled"
  double model_ns = -1;  // < 0: none (not modeled, or the model made no such event)
  double measured_ns = 0;
  std::string how;       // the model run (`calib ...`) or the cost the key maps to
  bool has_error() const { return model_ns >= 0 && measured_ns > 0; }
  double error_pct() const { return has_error() ? (model_ns - measured_ns) / measured_ns * 100 : 0; }
};

// One row per measurement of r (in r's order; membarrier_noipi_* folded into membarrier_ipi_*),
// each simulated on m with seed 1. Model CPUs: 0 and the first CPU at the key's distance class.
// wake_latency_<class> without a _gap suffix ran after `gap_us` (calibrate: 60, --quick 30).
std::vector<CheckRow> self_check(const machine::Machine& m, const host::CalibrationResult& r, int gap_us = 60);

// The table: a header line naming the profile, one line per row with whitespace-separated
// columns key, kind, model_ns, measured_ns, error_% ("-" where there is none), then how; and a
// summary line ("N of M within 10 %").
std::string check_table(const std::vector<CheckRow>& rows, const std::string& profile);
nlohmann::ordered_json check_json(const std::vector<CheckRow>& rows, const std::string& profile);

// The measurements of a calibration as `calibrate --samples` wrote them (host::samples_json),
// or as a calibrated profile's header lists them. Throws std::runtime_error naming `where`.
host::CalibrationResult read_samples_json(const std::string& text, const std::string& where);
host::CalibrationResult read_profile_measurements(const std::string& text, const std::string& where);

}  // namespace schedlab::experiment
