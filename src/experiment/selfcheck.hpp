// The self-check of a calibration (`schedlab host calibrate` ends with it, `schedlab host check`
// reprints it; docs/host.md "Self-check"): every microbenchmark of host/calibrate.cpp simulated
// on the profile written from it (workload `calib`, workload/calib.hpp), beside what it measured.
#pragma once
#include <map>
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
  std::string source;    // machines --check: the figure's source tag (docs/sources.md); empty in host check
  bool has_error() const { return model_ns >= 0 && measured_ns > 0; }
  double error_pct() const { return has_error() ? (model_ns - measured_ns) / measured_ns * 100 : 0; }
};

// One row per measurement of r (in r's order; membarrier_noipi_* folded into membarrier_ipi_*),
// each simulated on m with seed 1 and without m's per-run cost factor (noise.run_sigma). Model
// CPUs: 0 and the first CPU at the key's distance class.
// wake_latency_<class> without a _gap suffix ran after `gap_us` (calibrate: 60, --quick 30).
// idle_exit_<STATE> (a published figure, machines --check) is direct: the state's wake_cost_ns.
// `shapes` (machines --check): a wake_* key's run of another length (`calib wake -n N`) or its
// mean instead of its median (the published figure's own statistic).
struct RunShape {
  long long iterations = 0;  // 0: calib wake's default (150)
  bool mean = false;
};
constexpr int kSelfCheckGapUs = 60;
// Whether `key` is one of the wake-up keys the calib wake run simulates (the keys a RunShape
// applies to).
bool is_wake_key(const std::string& key);
std::vector<CheckRow> self_check(const machine::Machine& m, const host::CalibrationResult& r,
                                 int gap_us = kSelfCheckGapUs, const std::map<std::string, RunShape>* shapes = nullptr);

// The table: a header line naming the profile (`title`, or the self-check's when empty), one line
// per row with whitespace-separated columns key, kind, model_ns, measured_ns, error_% ("-" where
// there is none), then how (and " [SOURCE]" where the row has one); and a summary line ("N of M
// within 10 %": `threshold_pct`, 10 for host check, 15 for machines --check).
std::string check_table(const std::vector<CheckRow>& rows, const std::string& profile, double threshold_pct = 10,
                        const std::string& title = "");
// The same as JSON: profile, rows (key, kind, model_ns, measured_ns, error_pct, how, and source
// where there is one), within_<T>pct and compared.
nlohmann::ordered_json check_json(const std::vector<CheckRow>& rows, const std::string& profile,
                                  double threshold_pct = 10);

// The measurements of a calibration as a calibrated profile's header lists them (a
// `calibrate --samples` file: host::read_samples_json). Throws std::runtime_error naming `where`.
host::CalibrationResult read_profile_measurements(const std::string& text, const std::string& where);

}  // namespace schedlab::experiment
