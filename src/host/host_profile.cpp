#include "host/host_profile.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>

namespace schedlab::host {
namespace {

std::string when_and_where() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return fmt::format("Written {} on host '{}'.", buf, host);
}

// Serialises m with the header, checks that it loads back.
std::string profile_text(const machine::Machine& m, const std::vector<std::string>& header) {
  std::string h;
  for (auto& l : header) h += l + "\n";
  std::string text = machine::to_toml(m, h);
  machine::parse_profile(text, "(profile from sysfs)");  // throws if we produced something invalid
  return text;
}

}  // namespace

ProbeResult probe_with_base(const std::string& sysfs_root, const std::string& base) {
  ProbeResult r = probe_sysfs(sysfs_root);
  apply_base(r.machine, machine::load_profile(base), r.hz_from_config);
  return r;
}

std::string probed_profile_text(const ProbeResult& r, const std::string& base) {
  auto header = probe_header(r, base);
  header.insert(header.begin() + 1, when_and_where());
  return profile_text(r.machine, header);
}

std::string calibrated_profile_text(const ProbeResult& r, const std::string& base, const CalibrationResult& cal,
                                    const std::vector<CostUpdate>& updates) {
  auto header = probe_header(r, base);
  header.insert(header.begin() + 1, when_and_where());
  header[0] = "Machine profile of this host, written by `schedlab host calibrate` (see docs/host.md).";
  for (auto& l : header)
    if (l.rfind("Costs, tunables and noise:", 0) == 0)
      l = fmt::format("Costs: those listed under 'Costs MEASURED' below were measured; all others, and tunables and "
                      "noise, are defaults copied from base profile '{}'{}.",
                      base,
                      r.hz_from_config || r.machine.kernel.base_slice_ns.known()
                          ? fmt::format(" (except{}{}{})", r.hz_from_config ? " hz = CONFIG_HZ of the running kernel" : "",
                                        r.hz_from_config && r.machine.kernel.base_slice_ns.known() ? ";" : "",
                                        r.machine.kernel.base_slice_ns.known() ? " base_slice_ns from [kernel]" : "")
                          : std::string());
  auto c = calibration_header(cal, updates);
  header.insert(header.end(), c.begin(), c.end());
  return profile_text(r.machine, header);
}

}  // namespace schedlab::host
