#include "host/guest.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "host/procfs.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace schedlab::host {
namespace fs = std::filesystem;
using machine::Guest;
using machine::Recorded;
using machine::RecordedText;

namespace {

std::optional<std::string> read_file(const fs::path& p) { return read_file_trimmed(p.string()); }

std::optional<double> to_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::string signature_of(const CpuidLeaf& l) {
  char s[13];
  std::memcpy(s, &l.ebx, 4);
  std::memcpy(s + 4, &l.ecx, 4);
  std::memcpy(s + 8, &l.edx, 4);
  s[12] = 0;
  std::string out(s);  // stops at the first NUL
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

std::string hex32(uint32_t v) { return fmt::format("{:#010x}", v); }

}  // namespace

std::optional<CpuidLeaf> native_cpuid(uint32_t leaf) {
#if defined(__x86_64__) || defined(__i386__)
  CpuidLeaf l;
  __cpuid_count(leaf, 0, l.eax, l.ebx, l.ecx, l.edx);
  return l;
#else
  (void)leaf;
  return std::nullopt;
#endif
}

std::vector<std::pair<uint32_t, CpuidLeaf>> parse_cpuid_dump(const std::string& text) {
  std::vector<std::pair<uint32_t, CpuidLeaf>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    unsigned leaf = 0, a = 0, b = 0, c = 0, d = 0;
    if (std::sscanf(line.c_str(), " %x eax=%x ebx=%x ecx=%x edx=%x", &leaf, &a, &b, &c, &d) == 5)
      out.push_back({leaf, CpuidLeaf{a, b, c, d}});
  }
  return out;
}

std::string format_cpuid_dump(const CpuidFn& cpuid) {
  std::string out;
  for (uint32_t leaf : {0x00000000u, 0x00000001u, 0x40000000u, 0x40000001u})
    if (auto l = cpuid(leaf))
      out += fmt::format("{:#010x} eax={:#010x} ebx={:#010x} ecx={:#010x} edx={:#010x}\n", leaf, l->eax, l->ebx,
                         l->ecx, l->edx);
  return out;
}

std::string hypervisor_name(const std::string& sig) {
  static const std::pair<const char*, const char*> known[] = {
      {"KVMKVMKVM", "KVM"},         {"Linux KVM Hv", "KVM (Hyper-V enlightenments)"},
      {"Microsoft Hv", "Microsoft Hv"}, {"VMwareVMware", "VMware"},
      {"XenVMMXenVMM", "Xen"},      {"TCGTCGTCGTCG", "TCG"},
      {"bhyve bhyve ", "bhyve"},    {"ACRNACRNACRN", "ACRN"},
      {" lrpepyh  vr", "Parallels"}, {"QNXQVMBSQG", "QNX"},
      {"VBoxVBoxVBox", "VirtualBox"}, {"EVMMEVMMEVMM", "EVMM"},
  };
  for (auto [s, name] : known)
    if (sig == s) return name;
  return sig.empty() ? "unknown" : sig;
}

std::vector<std::string> kvm_feature_names(uint32_t eax) {
  // arch/x86/include/uapi/asm/kvm_para.h, KVM_FEATURE_* bit numbers.
  static const std::pair<int, const char*> bits[] = {
      {0, "clocksource"},     {1, "nop_io_delay"},     {2, "mmu_op"},           {3, "clocksource2"},
      {4, "async_pf"},        {5, "steal_time"},       {6, "pv_eoi"},           {7, "pv_unhalt"},
      {9, "pv_tlb_flush"},    {10, "async_pf_vmexit"}, {11, "pv_send_ipi"},     {12, "poll_control"},
      {13, "pv_sched_yield"}, {14, "async_pf_int"},    {15, "msi_ext_dest_id"}, {16, "hc_map_gpa_range"},
      {17, "migration_control"}, {24, "clocksource_stable_bit"},
  };
  std::vector<std::string> out;
  uint32_t named = 0;
  for (auto [b, name] : bits)
    if (eax & (1u << b)) {
      out.push_back(name);
      named |= 1u << b;
    }
  for (int b = 0; b < 32; ++b)
    if ((eax & ~named) & (1u << b)) out.push_back(fmt::format("bit{}", b));
  return out;
}

std::optional<StealShare> steal_from_proc_stat(const std::string& text) {
  std::istringstream in(text);
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  long long v[8];
  for (auto& x : v)
    if (!(in >> x)) return std::nullopt;  // steal is the 8th column (Linux >= 2.6.11)
  StealShare s;
  s.steal = v[7];
  for (auto x : v) s.total += x;  // guest time is already included in user
  s.pct = s.total > 0 ? 100.0 * static_cast<double>(s.steal) / static_cast<double>(s.total) : 0;
  return s;
}

CpuidFn cpuid_for_root(const std::string& root) {
  std::error_code ec;
  if (fs::equivalent(root.empty() ? "/" : root, "/", ec)) return native_cpuid;
  fs::path dump = fs::path(root) / "cpuid";
  if (auto text = read_file(dump)) {
    auto leaves = parse_cpuid_dump(*text);
    return [leaves](uint32_t leaf) -> std::optional<CpuidLeaf> {
      for (auto& [k, v] : leaves)
        if (k == leaf) return v;
      return std::nullopt;
    };
  }
  return {};
}

Guest probe_guest(const std::string& root_str, const CpuidFn& cpuid, std::vector<std::string>& warnings) {
  Guest g;
  const fs::path root = root_str.empty() ? fs::path("/") : fs::path(root_str);

  // The hypervisor bit: CPUID.1:ECX[31] (Intel SDM: "reserved for use by hypervisors"), else the
  // kernel's own reading of it, the `hypervisor` flag in /proc/cpuinfo.
  std::optional<bool> bit;
  std::string bit_source;
  std::optional<CpuidLeaf> leaf1 = cpuid ? cpuid(1) : std::nullopt;
  if (leaf1) {
    bit = (leaf1->ecx >> 31) & 1;
    bit_source = fmt::format("CPUID.1:ECX = {} bit 31", hex32(leaf1->ecx));
  } else if (auto info = read_file(root / "proc/cpuinfo")) {
    std::istringstream in(*info);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("flags", 0) == 0) {
        std::istringstream fl(line.substr(line.find(':') + 1));
        bit = false;
        for (std::string f; fl >> f;)
          if (f == "hypervisor") bit = true;
        bit_source = "/proc/cpuinfo flags";
        break;
      }
  }
  // Nothing to tell from (arm64, or a fixture captured without these files): not recognised as a
  // guest. Not a warning: it changes nothing the model uses today.
  if (!bit || !*bit) return g;
  g.present = true;

  // Leaf 0x40000000: max hypervisor leaf in EAX, vendor signature in EBX ECX EDX.
  std::optional<CpuidLeaf> base = cpuid ? cpuid(0x40000000) : std::nullopt;
  if (base) {
    std::string sig = signature_of(*base);
    g.hypervisor = RecordedText{hypervisor_name(sig), fmt::format("CPUID 0x40000000 signature '{}'; hypervisor bit: {}",
                                                                  sig, bit_source)};
  } else {
    g.hypervisor = RecordedText{"unknown", bit_source + " has the hypervisor bit; no CPUID 0x40000000 signature"};
    warnings.push_back("virtual machine, but the hypervisor signature (CPUID 0x40000000) could not be read");
  }
  if (base && g.hypervisor.value.rfind("KVM", 0) == 0 && base->eax >= 0x40000001) {
    if (auto f = cpuid(0x40000001)) {
      auto names = kvm_feature_names(f->eax);
      g.kvm_features = RecordedText{fmt::format("{}", fmt::join(names, ",")),
                                    fmt::format("CPUID 0x40000001 EAX = {}", hex32(f->eax))};
      g.hint_realtime = Recorded{static_cast<double>(f->edx & 1),
                                 fmt::format("CPUID 0x40000001 EDX = {} (bit 0 KVM_HINTS_REALTIME)", hex32(f->edx))};
    }
  }

  // Steal time since boot.
  if (auto st = read_file(root / "proc/stat")) {
    if (auto s = steal_from_proc_stat(*st))
      g.steal_pct = Recorded{std::round(s->pct * 1e4) / 1e4, fmt::format("/proc/stat 'cpu' line at probe time: steal {} of {} USER_HZ ticks "
                                                 "since boot",
                                                 s->steal, s->total)};
  }

  // The haltpoll governor's module parameters (drivers/cpuidle/governors/haltpoll.c).
  const fs::path params = root / "sys/module/haltpoll/parameters";
  struct P {
    const char* file;
    Recorded Guest::*member;
    bool boolean;
  };
  const P ps[] = {{"guest_halt_poll_ns", &Guest::guest_halt_poll_ns, false},
                  {"guest_halt_poll_grow", &Guest::guest_halt_poll_grow, false},
                  {"guest_halt_poll_grow_start", &Guest::guest_halt_poll_grow_start, false},
                  {"guest_halt_poll_shrink", &Guest::guest_halt_poll_shrink, false},
                  {"guest_halt_poll_allow_shrink", &Guest::guest_halt_poll_allow_shrink, true}};
  std::error_code ec;
  if (fs::is_directory(params, ec)) {
    for (const auto& p : ps) {
      auto text = read_file(params / p.file);
      if (!text) continue;
      std::optional<double> v;
      if (p.boolean) {
        if (*text == "Y" || *text == "1") v = 1;
        else if (*text == "N" || *text == "0") v = 0;
      } else {
        v = to_number(*text);
      }
      if (!v) {
        warnings.push_back(fmt::format("/sys/module/haltpoll/parameters/{} = '{}' is not understood; ignored", p.file,
                                       *text));
        continue;
      }
      g.*p.member = Recorded{*v, fmt::format("/sys/module/haltpoll/parameters/{} = {}", p.file, *text)};
    }
  }
  return g;
}

}  // namespace schedlab::host
