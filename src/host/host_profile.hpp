// The host profile `schedlab host probe|calibrate` write (and `schedlab validate` on first use):
// probe + base costs, optionally calibration, as profile text with its header. docs/host.md.
#pragma once
#include <string>
#include <vector>

#include "host/calibrate.hpp"
#include "host/probe.hpp"

namespace schedlab::host {

// probe_sysfs(root) with costs, tunables and noise from the base profile (a built-in name or a
// .toml path). Throws HostError / machine::ProfileError.
ProbeResult probe_with_base(const std::string& sysfs_root, const std::string& base);

// The profile text of a probed machine: header (what was read, warnings, when and where) and TOML.
// Checked to load back (throws machine::ProfileError if not).
std::string probed_profile_text(const ProbeResult& r, const std::string& base);

// The same for a calibrated machine: r.machine already holds the applied calibration; the header
// adds the measurements, the costs set and the warnings.
std::string calibrated_profile_text(const ProbeResult& r, const std::string& base, const CalibrationResult& cal,
                                    const std::vector<CostUpdate>& updates);

}  // namespace schedlab::host
