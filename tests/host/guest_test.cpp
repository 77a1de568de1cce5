// host probe, virtual machines: CPUID signature and KVM features, haltpoll parameters and steal
// time, on a tree captured from the 2-vCPU KVM dev VM (tests/host/fixtures/sysfs-kvm-haltpoll) and
// on small hand-made trees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/guest.hpp"
#include "host/probe.hpp"
#include "machine/machine.hpp"

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

const std::string kKvm = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/sysfs-kvm-haltpoll";

// A temporary tree holding only the files a test writes.
class Tree {
 public:
  Tree() {
    dir_ = fs::temp_directory_path() / ("schedlab-guest-" + std::to_string(getpid()) + "-" + std::to_string(n_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Tree() { fs::remove_all(dir_); }
  std::string root() const { return dir_.string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text << "\n";
  }

 private:
  fs::path dir_;
  static inline int n_ = 0;
};

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST(Guest, KvmFixtureIsRecognised) {
  auto r = host::probe_sysfs(kKvm);
  const auto& g = r.machine.guest;
  ASSERT_TRUE(g.present);
  EXPECT_EQ(g.hypervisor.value, "KVM");
  EXPECT_TRUE(contains(g.hypervisor.source, "'KVMKVMKVM'")) << g.hypervisor.source;
  EXPECT_TRUE(contains(g.hypervisor.source, "CPUID.1:ECX = 0xfffa3203 bit 31")) << g.hypervisor.source;
  // EAX 0x01007efb: bits 0,1,3-7,9-14,24.
  EXPECT_EQ(g.kvm_features.value,
            "clocksource,nop_io_delay,clocksource2,async_pf,steal_time,pv_eoi,pv_unhalt,pv_tlb_flush,"
            "async_pf_vmexit,pv_send_ipi,poll_control,pv_sched_yield,async_pf_int,clocksource_stable_bit");
  EXPECT_EQ(g.kvm_features.source, "CPUID 0x40000001 EAX = 0x01007efb");
  EXPECT_TRUE(g.hint_realtime.known());
  EXPECT_EQ(g.hint_realtime.value, 0);
  // The fixture's /proc/stat 'cpu' line: steal 238 of 93749+39858+11192+37377+337+0+41+238 ticks.
  EXPECT_NEAR(g.steal_pct.value, 100.0 * 238 / 182792, 1e-4);
  EXPECT_TRUE(contains(g.steal_pct.source, "steal 238 of 182792")) << g.steal_pct.source;
  // Booted with haltpoll.guest_halt_poll_ns=0: the governor never polls.
  EXPECT_EQ(g.guest_halt_poll_ns.value, 0);
  EXPECT_EQ(g.guest_halt_poll_ns.source, "/sys/module/haltpoll/parameters/guest_halt_poll_ns = 0");
  EXPECT_EQ(g.guest_halt_poll_grow.value, 2);
  EXPECT_EQ(g.guest_halt_poll_grow_start.value, 50000);
  EXPECT_EQ(g.guest_halt_poll_shrink.value, 2);
  EXPECT_EQ(g.guest_halt_poll_allow_shrink.value, 1);
  EXPECT_FALSE(g.halted_wake_ns.known());  // measured by calibrate, not by the probe
  // The cpuidle side of the same guest.
  EXPECT_EQ(r.machine.cpuidle_driver, "haltpoll");
  EXPECT_EQ(r.machine.governor, "haltpoll");
  ASSERT_EQ(r.machine.idle_states.size(), 2u);
  EXPECT_EQ(r.machine.idle_states[0].name, "POLL");
  EXPECT_TRUE(r.machine.idle_states[0].polling);
  EXPECT_EQ(r.machine.idle_states[1].name, "haltpoll idle");
  EXPECT_FALSE(r.machine.idle_states[1].polling);  // HLT
  EXPECT_TRUE(contains(r.machine.description, "KVM guest")) << r.machine.description;
}

TEST(Guest, ProbedGuestProfileRoundTrips) {
  auto r = host::probe_sysfs(kKvm);
  host::apply_base(r.machine, machine::load_profile("tiny-4"), r.hz_from_config);
  std::string text = machine::to_toml(r.machine, "probe");
  EXPECT_TRUE(contains(text, "\n[guest]\n")) << text;
  machine::Machine back = machine::parse_profile(text, "host.toml");
  EXPECT_EQ(back.guest, r.machine.guest);
  bool said = false;
  for (auto& l : host::probe_header(r, "tiny-4")) said |= contains(l, "Virtual machine: KVM");
  EXPECT_TRUE(said);
}

TEST(Guest, BareMetalHasNoGuestSection) {
  Tree t;
  t.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr pae\n");
  std::vector<std::string> w;
  auto g = host::probe_guest(t.root(), {}, w);
  EXPECT_FALSE(g.present);
  EXPECT_TRUE(w.empty());
  // CPUID wins over /proc/cpuinfo when both are there.
  auto bare = [](uint32_t leaf) -> std::optional<host::CpuidLeaf> {
    if (leaf == 1) return host::CpuidLeaf{0, 0, 0x7ffa3203, 0};
    return std::nullopt;
  };
  EXPECT_FALSE(host::probe_guest(t.root(), bare, w).present);
}

TEST(Guest, CpuinfoFlagWithoutCpuid) {
  Tree t;
  t.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor lahf_lm\n");
  std::vector<std::string> w;
  auto g = host::probe_guest(t.root(), {}, w);
  ASSERT_TRUE(g.present);
  EXPECT_EQ(g.hypervisor.value, "unknown");
  EXPECT_TRUE(contains(g.hypervisor.source, "/proc/cpuinfo flags")) << g.hypervisor.source;
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(contains(w[0], "hypervisor signature (CPUID 0x40000000) could not be read")) << w[0];
  EXPECT_FALSE(g.kvm_features.known());
}

TEST(Guest, NothingToTellFromIsNotAGuest) {
  Tree t;  // no CPUID, no /proc/cpuinfo (arm64 has no `flags` line either)
  t.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd evtstrm\n");
  std::vector<std::string> w;
  EXPECT_FALSE(host::probe_guest(t.root(), {}, w).present);
  EXPECT_TRUE(w.empty());
}

TEST(Guest, OtherHypervisorsHaveNoKvmFeatures) {
  Tree t;
  auto hv = [](uint32_t leaf) -> std::optional<host::CpuidLeaf> {
    if (leaf == 1) return host::CpuidLeaf{0, 0, 0x80000000u, 0};
    if (leaf == 0x40000000) return host::CpuidLeaf{0x40000006, 0x7263694d, 0x666f736f, 0x76482074};  // "Microsoft Hv"
    if (leaf == 0x40000001) return host::CpuidLeaf{0xffffffffu, 0, 0, 0};
    return std::nullopt;
  };
  std::vector<std::string> w;
  auto g = host::probe_guest(t.root(), hv, w);
  ASSERT_TRUE(g.present);
  EXPECT_EQ(g.hypervisor.value, "Microsoft Hv");
  EXPECT_FALSE(g.kvm_features.known());
  EXPECT_FALSE(g.guest_halt_poll_ns.known());  // no haltpoll module in this tree
}

TEST(Guest, BadHaltpollParameterIsIgnoredWithAWarning) {
  Tree t;
  t.write("proc/cpuinfo", "flags\t\t: hypervisor\n");
  t.write("sys/module/haltpoll/parameters/guest_halt_poll_ns", "lots");
  t.write("sys/module/haltpoll/parameters/guest_halt_poll_allow_shrink", "N");
  std::vector<std::string> w;
  auto g = host::probe_guest(t.root(), {}, w);
  EXPECT_FALSE(g.guest_halt_poll_ns.known());
  EXPECT_EQ(g.guest_halt_poll_allow_shrink.value, 0);
  bool warned = false;
  for (auto& x : w) warned |= contains(x, "guest_halt_poll_ns = 'lots' is not understood");
  EXPECT_TRUE(warned);
}

TEST(Guest, HypervisorNames) {
  EXPECT_EQ(host::hypervisor_name("KVMKVMKVM"), "KVM");
  EXPECT_EQ(host::hypervisor_name("VMwareVMware"), "VMware");
  EXPECT_EQ(host::hypervisor_name("XenVMMXenVMM"), "Xen");
  EXPECT_EQ(host::hypervisor_name("TCGTCGTCGTCG"), "TCG");
  EXPECT_EQ(host::hypervisor_name("NewHypervisr"), "NewHypervisr");
  EXPECT_EQ(host::hypervisor_name(""), "unknown");
}

TEST(Guest, KvmFeatureBits) {
  EXPECT_EQ(host::kvm_feature_names(0), std::vector<std::string>{});
  EXPECT_EQ(host::kvm_feature_names((1u << 5) | (1u << 11)), (std::vector<std::string>{"steal_time", "pv_send_ipi"}));
  EXPECT_EQ(host::kvm_feature_names(1u << 20), std::vector<std::string>{"bit20"});  // not in kvm_para.h
}

TEST(Guest, CpuidDumpRoundTrip) {
  auto leaves = host::parse_cpuid_dump(
      "0x40000000 eax=0x40000001 ebx=0x4b4d564b ecx=0x564b4d56 edx=0x0000004d\nnot a leaf\n"
      "0x00000001 eax=0x1 ebx=0x2 ecx=0x80000000 edx=0x4\n");
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].first, 0x40000000u);
  EXPECT_EQ(leaves[0].second.ebx, 0x4b4d564bu);
  EXPECT_EQ(leaves[1].second.ecx, 0x80000000u);
  auto fn = [&](uint32_t leaf) -> std::optional<host::CpuidLeaf> {
    for (auto& [k, v] : leaves)
      if (k == leaf) return v;
    return std::nullopt;
  };
  EXPECT_EQ(host::format_cpuid_dump(fn),
            "0x00000001 eax=0x00000001 ebx=0x00000002 ecx=0x80000000 edx=0x00000004\n"
            "0x40000000 eax=0x40000001 ebx=0x4b4d564b ecx=0x564b4d56 edx=0x0000004d\n");
}

TEST(Guest, StealFromProcStat) {
  auto s = host::steal_from_proc_stat("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->steal, 40);
  EXPECT_EQ(s->total, 1000);
  EXPECT_DOUBLE_EQ(s->pct, 4.0);
  EXPECT_FALSE(host::steal_from_proc_stat("cpu  100 0 50 800\n"));  // kernels before 2.6.11
  EXPECT_FALSE(host::steal_from_proc_stat("intr 5\n"));
}
