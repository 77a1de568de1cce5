// `schedlab host probe`: reads the real machine's topology and cpuidle states from sysfs and
// builds a machine::Machine from them. See docs/host.md for every file read and every fallback.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::host {

// Bad input to a host command (unreadable sysfs root, unknown benchmark tool, unparseable tool
// output, unwritable output file). One line; the CLI prints it as `schedlab: error: ...`, exit 2.
class HostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a kernel CPU list ("0-3,8,10-11", as in */cpulist and *_list files; "" = empty).
// Returns nullopt on malformed text. The result is sorted and without duplicates.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);
// Formats a sorted CPU list back into the kernel's compact form ("0-3,8").
std::string format_cpu_list(const std::vector<int>& cpus);

// What sysfs says about one CPU (online CPUs only carry topology).
struct CpuInfo {
  int cpu = -1;
  bool online = true;
  int package = 0;             // topology/physical_package_id (-1 in sysfs is read as 0)
  int core_id = -1;            // topology/core_id (informative; cores are told apart by siblings)
  std::vector<int> siblings;   // topology/core_cpus_list (or thread_siblings_list), online only
  std::vector<int> llc;        // cache/index*/shared_cpu_list of the highest data/unified level
  int llc_level = 0;           // that level (0: no cache information; llc then = package)
  int64_t l2_bytes = 0;        // cache/index*/size of the level-2 data or unified cache (0: none read)
  int node = -1;               // NUMA node from node*/cpulist (-1: unknown)
};

struct ProbeResult {
  machine::Machine machine;            // topology, idle states, arch, driver, governor; costs
                                       // and tunables are left at their C++ defaults (see
                                       // apply_base()), except tunables.hz if the kernel
                                       // config was readable (hz_from_config)
  std::vector<CpuInfo> cpus;           // every cpuN directory, ascending
  std::vector<int> online;             // online CPUs, ascending
  // model_to_real[m] = the real CPU that model CPU m stands for (-1 if the real machine has no
  // CPU there because its layout is not uniform). Identity when numbering_matches.
  std::vector<int> model_to_real;
  bool uniform = true;             // real layout = sockets x cores x threads, equal LLCs
  bool numbering_matches = true;   // real CPU numbers follow the model's x86 convention
  std::optional<int64_t> hz_from_config;  // CONFIG_HZ if a kernel config was found
  std::vector<std::string> layout;     // human-readable lines describing the real layout
  std::vector<std::string> warnings;   // fallbacks taken; printed on stderr by the CLI
};

// Probes the sysfs tree under `root` ("/" for this machine; tests pass fixture trees that hold
// sys/devices/system/{cpu,node}/... and optionally proc/sys/kernel/arch). Never throws for missing
// or odd files (it falls back and adds a warning); throws HostError only if `root` has no
// sys/devices/system/cpu/cpuN directory at all.
ProbeResult probe_sysfs(const std::string& root = "/");

// Decides whether a cpuidle state keeps TIF_POLLING_NRFLAG set while idle: POLL, intel_idle
// (MWAIT) states and ACPI "FFH MWAIT" states do; HLT, IOPORT and non-x86 (WFI, PSCI) states don't.
// Sets *known=false (if given) when the rule is a guess.
bool idle_state_polls(const std::string& arch, const std::string& driver, const std::string& name,
                      const std::string& desc, bool* known = nullptr);

// Copies costs, tunables (except hz when the probe read CONFIG_HZ) and noise from `base` into
// `m`, and each idle state's wake_cost_ns from the base state of the same name (0 if none).
void apply_base(machine::Machine& m, const machine::Machine& base,
                std::optional<int64_t> hz_from_config = std::nullopt);

// The header comment for a probed profile: where it came from, the real layout, the
// model->real CPU map when numbering differs, warnings, and that costs are base defaults.
// `extra` lines are appended (calibrate adds its measurements). Lines are without "# ".
std::vector<std::string> probe_header(const ProbeResult& r, const std::string& base_name);

// Default place for the host profile: $XDG_CONFIG_HOME/schedlab/host.toml, else
// $HOME/.config/schedlab/host.toml, else ./host.toml.
std::string default_host_profile_path();

}  // namespace schedlab::host
