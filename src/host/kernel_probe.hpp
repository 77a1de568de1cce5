// `schedlab host probe`, the running kernel's side: the scheduler settings the kernel exposes
// (release, base slice, scheduler features, preemption model, autogroup), each with the file it
// was read from, or the version's default when it cannot be read, said so. docs/host.md.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::host {

// A kernel release's major.minor ("6.18.44-fc-v1045" -> {6, 18}); nullopt if it does not start so.
struct KernelVersion {
  int major = 0, minor = 0;
  bool at_least(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};
std::optional<KernelVersion> parse_kernel_version(const std::string& release);

// The kernel's scheduler features the model also has, by the kernel's name (features.h); the
// model's own switches without a kernel feature (EEVDF, TTWU_QUEUE_IDLE) come from the version.
const std::vector<std::string>& modeled_kernel_features();

// The model features a kernel of version v has by default (every modeled one named, NAME or
// NO_NAME), from the commits that added them (docs/host.md lists them).
std::string default_features_for(const KernelVersion& v);

// The features as /sys/kernel/debug/sched/features lists them ("PLACE_LAG NO_NEXT_BUDDY ..."),
// reduced to modeled_kernel_features() plus the version's model-only switches. nullopt (and a
// warning) if a word is not a feature name.
std::optional<std::string> features_from_debugfs(const std::string& text, const std::optional<KernelVersion>& v,
                                                 std::vector<std::string>& warnings);

// The kernel's default base slice: sysctl_sched_base_slice normalized (0.75 ms from v6.6, as
// sysctl_sched_min_granularity before it, through v6.14; 0.70 ms from v6.15) times 1 + ilog2(min(cpus, 8)), the
// default logarithmic tunable scaling (kernel/sched/fair.c get_update_sysctl_factor()).
int64_t default_base_slice_ns(const KernelVersion& v, int nr_cpus);

// Reads the running kernel's settings under `root` ("/" for this machine; tests pass fixture
// trees): release, base slice, features, preemption model, autogroup. `config` is the kernel
// config text if one was found (boot/config-REL or proc/config.gz), else "". Never throws: what
// cannot be read or parsed falls back (or stays unknown) with a warning.
machine::KernelInfo probe_kernel(const std::string& root, const std::string& config, int nr_cpus,
                                 std::vector<std::string>& warnings);

}  // namespace schedlab::host
