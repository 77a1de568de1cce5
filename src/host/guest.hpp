// `schedlab host probe`, virtual machines: recognises a guest (CPUID hypervisor bit and
// signature, KVM feature bits), and reads what decides its idle and wakeup paths: the haltpoll
// governor's module parameters and the steal time. Fills machine::Guest; docs/host.md lists
// every file and leaf read.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::host {

struct CpuidLeaf {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};
// Returns one CPUID leaf (subleaf 0), or nullopt if it cannot be read.
using CpuidFn = std::function<std::optional<CpuidLeaf>(uint32_t leaf)>;

// The CPUID instruction of this CPU (x86 only; elsewhere always nullopt).
std::optional<CpuidLeaf> native_cpuid(uint32_t leaf);

// Leaves captured in a text file, one per line: `0x40000000 eax=0x40000001 ebx=0x4b4d564b
// ecx=0x564b4d56 edx=0x0000004d` (what `schedlab host probe --dump-cpuid` prints and
// scripts/capture-sysfs.sh stores as DEST/cpuid). Lines that do not parse are ignored.
std::vector<std::pair<uint32_t, CpuidLeaf>> parse_cpuid_dump(const std::string& text);
std::string format_cpuid_dump(const CpuidFn& cpuid);

// The hypervisor named by the 12-byte signature of leaf 0x40000000 (ebx, ecx, edx):
// "KVMKVMKVM" -> "KVM", "Microsoft Hv" -> "Microsoft Hv", "VMwareVMware" -> "VMware",
// "XenVMMXenVMM" -> "Xen", "TCGTCGTCGTCG" -> "TCG", "bhyve bhyve " -> "bhyve", ...; the raw
// signature if unknown.
std::string hypervisor_name(const std::string& signature);
// KVM_FEATURE_* bit names of CPUID 0x40000001 EAX (lowercase, without the prefix), in bit order.
std::vector<std::string> kvm_feature_names(uint32_t eax);

// Probes `root` (a sysfs/procfs tree, "/" for this machine) with `cpuid` for the CPUID leaves.
// When `cpuid` is empty the hypervisor bit is taken from proc/cpuinfo's `hypervisor` flag and the
// signature is unknown. Returns a Guest with present = false on bare metal. Appends fallbacks to
// `warnings`.
machine::Guest probe_guest(const std::string& root, const CpuidFn& cpuid, std::vector<std::string>& warnings);

// The CPUID source probe_sysfs uses for `root`: the instruction for "/", else root/cpuid if it
// exists, else none.
CpuidFn cpuid_for_root(const std::string& root);

// Steal time from a /proc/stat text: steal share of all CPU time on the `cpu` line, in percent,
// and the jiffies it is made of (for the source note). nullopt without a steal column.
struct StealShare {
  double pct = 0;
  long long steal = 0, total = 0;
};
std::optional<StealShare> steal_from_proc_stat(const std::string& text);

}  // namespace schedlab::host
