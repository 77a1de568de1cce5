// host probe: parsing captured and hand-made sysfs trees (tests/host/fixtures/sysfs-*).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "../common/fake_sysfs.hpp"
#include "host/probe.hpp"

namespace fs = std::filesystem;
using namespace schedlab;
using host::probe_sysfs;

namespace {

const std::string kFixtures = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/";
const std::string kCpu = "sys/devices/system/cpu/";

// A writable copy of a fixture tree, removed at the end of the test.
class TreeCopy {
 public:
  explicit TreeCopy(const std::string& fixture) {
    dir_ = fs::temp_directory_path() / ("schedlab-probe-" + std::to_string(getpid()) + "-" + fixture + "-" +
                                        std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::copy(kFixtures + fixture, dir_, fs::copy_options::recursive);
  }
  ~TreeCopy() { fs::remove_all(dir_); }
  std::string root() const { return dir_.string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text << "\n";
  }
  void remove(const std::string& rel) const { fs::remove_all(dir_ / rel); }

 private:
  fs::path dir_;
  static inline int counter_ = 0;
};

bool has_warning(const host::ProbeResult& r, const std::string& needle) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

}  // namespace

TEST(CpuList, ParsesKernelForms) {
  EXPECT_EQ(host::parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(host::parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_EQ(host::parse_cpu_list(""), (std::vector<int>{}));
  EXPECT_EQ(host::parse_cpu_list("3,1-2,1"), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(host::parse_cpu_list("a-b"));
  EXPECT_FALSE(host::parse_cpu_list("3-1"));
  EXPECT_FALSE(host::parse_cpu_list("1,,2"));
  EXPECT_EQ(host::format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(host::format_cpu_list({}), "");
}

TEST(IdlePolling, ClassifiesByDriverAndDesc) {
  EXPECT_TRUE(host::idle_state_polls("x86_64", "intel_idle", "POLL", "CPUIDLE CORE POLL IDLE"));
  EXPECT_TRUE(host::idle_state_polls("x86_64", "intel_idle", "C6", "MWAIT 0x20"));
  EXPECT_TRUE(host::idle_state_polls("x86_64", "acpi_idle", "C1", "ACPI FFH MWAIT 0x0"));
  EXPECT_FALSE(host::idle_state_polls("x86_64", "acpi_idle", "C2", "ACPI IOPORT 0x814"));
  EXPECT_FALSE(host::idle_state_polls("x86_64", "acpi_idle", "C1", "ACPI HLT"));
  EXPECT_FALSE(host::idle_state_polls("x86_64", "haltpoll", "haltpoll idle", "default architecture idle"));
  EXPECT_TRUE(host::idle_state_polls("x86_64", "haltpoll", "POLL", "CPUIDLE CORE POLL IDLE"));
  EXPECT_FALSE(host::idle_state_polls("arm64", "psci_idle", "WFI", "ARM WFI"));
  EXPECT_FALSE(host::idle_state_polls("arm64", "psci_idle", "cpu-sleep", "cpu-sleep"));
  bool known = true;
  EXPECT_FALSE(host::idle_state_polls("x86_64", "acpi_idle", "C3", "mystery", &known));
  EXPECT_FALSE(known);
}

// (a) This VM as captured: 2 CPUs, no cache directory, cpuidle driver "none", no per-CPU states.
TEST(Probe, ThisMachineFixture) {
  auto r = probe_sysfs(kFixtures + "sysfs-this");
  const auto& m = r.machine;
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_EQ(m.topo.sockets, 1);
  EXPECT_EQ(m.topo.cores_per_socket, 2);
  EXPECT_EQ(m.topo.threads_per_core, 1);
  EXPECT_EQ(m.topo.cores_per_llc, 2);  // no cache info: one LLC per package
  EXPECT_TRUE(r.uniform);
  EXPECT_TRUE(r.numbering_matches);
  EXPECT_EQ(r.model_to_real, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.cpuidle_driver, "none");
  EXPECT_EQ(m.governor, "menu");
  ASSERT_EQ(m.idle_states.size(), 1u);  // synthesized default idle
  EXPECT_EQ(m.idle_states[0].name, "HLT");
  EXPECT_FALSE(m.idle_states[0].polling);
  EXPECT_TRUE(has_warning(r, "no last-level cache information"));
  EXPECT_TRUE(has_warning(r, "no cpuidle states"));
  EXPECT_FALSE(r.hz_from_config);  // the fixture holds no kernel config
}

// (b) 2 sockets x 4 cores x 2 threads, 2 LLCs per socket, intel_idle; cpu13 lacks cache/index3.
TEST(Probe, TwoSocketSmtFixture) {
  auto r = probe_sysfs(kFixtures + "sysfs-2s-smt");
  const auto& m = r.machine;
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_EQ(m.topo.sockets, 2);
  EXPECT_EQ(m.topo.cores_per_socket, 4);
  EXPECT_EQ(m.topo.threads_per_core, 2);
  EXPECT_EQ(m.topo.cores_per_llc, 2);
  EXPECT_EQ(m.topo.nr_cpus(), 16);
  EXPECT_TRUE(r.uniform);
  EXPECT_TRUE(r.numbering_matches);
  EXPECT_TRUE(has_warning(r, "CPUs 13 report no level-3 cache"));
  // The model's distances agree with the real caches.
  EXPECT_EQ(m.topo.distance(0, 8), machine::Distance::Smt);
  EXPECT_EQ(m.topo.distance(0, 9), machine::Distance::Llc);
  EXPECT_EQ(m.topo.distance(0, 2), machine::Distance::OtherLlc);
  EXPECT_EQ(m.topo.distance(0, 4), machine::Distance::OtherSocket);
  EXPECT_EQ(m.topo.distance(5, 13), machine::Distance::Smt);
  EXPECT_EQ(m.topo.distance(12, 13), machine::Distance::Llc);
  EXPECT_EQ(m.cpuidle_driver, "intel_idle");
  EXPECT_EQ(m.governor, "menu");
  ASSERT_EQ(m.idle_states.size(), 4u);
  EXPECT_EQ(m.idle_states[0].name, "POLL");
  EXPECT_TRUE(m.idle_states[0].polling);
  EXPECT_EQ(m.idle_states[0].exit_latency_ns, 0);
  EXPECT_EQ(m.idle_states[2].name, "C1E");
  EXPECT_EQ(m.idle_states[2].desc, "MWAIT 0x01");
  EXPECT_EQ(m.idle_states[2].exit_latency_ns, 10000);
  EXPECT_EQ(m.idle_states[2].target_residency_ns, 20000);
  EXPECT_TRUE(m.idle_states[2].polling);
  EXPECT_FALSE(m.idle_states[2].disabled);
  EXPECT_EQ(m.idle_states[3].name, "C6");
  EXPECT_TRUE(m.idle_states[3].disabled);
  EXPECT_TRUE(m.idle_states[3].polling);
  EXPECT_EQ(m.idle_states[3].exit_latency_ns, 133000);
  // nodes = sockets here: no NUMA warning
  EXPECT_FALSE(has_warning(r, "NUMA"));
}

// (c) arm64, 8 cores, one LLC, psci_idle without POLL; physical_package_id is -1.
TEST(Probe, Arm64Fixture) {
  auto r = probe_sysfs(kFixtures + "sysfs-arm64");
  const auto& m = r.machine;
  EXPECT_EQ(m.arch, "arm64");
  EXPECT_EQ(m.topo.sockets, 1);
  EXPECT_EQ(m.topo.cores_per_socket, 8);
  EXPECT_EQ(m.topo.threads_per_core, 1);
  EXPECT_EQ(m.topo.cores_per_llc, 8);
  EXPECT_TRUE(r.uniform);
  EXPECT_TRUE(r.numbering_matches);
  EXPECT_EQ(m.cpuidle_driver, "psci_idle");
  EXPECT_EQ(m.governor, "menu");  // from current_governor_ro
  ASSERT_EQ(m.idle_states.size(), 2u);
  EXPECT_EQ(m.idle_states[0].name, "WFI");
  EXPECT_EQ(m.idle_states[1].name, "cpu-sleep");
  EXPECT_EQ(m.idle_states[1].exit_latency_ns, 150000);
  EXPECT_EQ(m.idle_states[1].target_residency_ns, 2000000);
  for (auto& s : m.idle_states) EXPECT_FALSE(s.polling) << s.name;
  // A topology-only tree: the one warning says there is no kernel to read (no [kernel]).
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("no kernel release or config"), std::string::npos) << r.warnings[0];
  EXPECT_FALSE(m.kernel.present);
}

TEST(Probe, NoCpuidleDirectory) {
  TreeCopy t("sysfs-2s-smt");
  t.remove(kCpu + "cpuidle");
  for (int c = 0; c < 16; ++c) t.remove(kCpu + "cpu" + std::to_string(c) + "/cpuidle");
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.machine.topo.nr_cpus(), 16);
  ASSERT_EQ(r.machine.idle_states.size(), 1u);
  EXPECT_EQ(r.machine.idle_states[0].name, "HLT");
  EXPECT_TRUE(has_warning(r, "cpuidle"));
}

TEST(Probe, OfflineCpuWithoutTopology) {
  // arm64 with cpu7 offline: sysfs drops the topology of offline CPUs.
  TreeCopy t("sysfs-arm64");
  t.write(kCpu + "online", "0-6");
  t.write(kCpu + "offline", "7");
  t.write(kCpu + "cpu7/online", "0");
  t.remove(kCpu + "cpu7/topology");
  t.remove(kCpu + "cpu7/cache");
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.online, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.machine.topo.nr_cpus(), 7);
  EXPECT_EQ(r.machine.topo.cores_per_llc, 7);
  EXPECT_TRUE(r.uniform);
  EXPECT_TRUE(has_warning(r, "CPUs 7 are offline"));
}

TEST(Probe, OfflineSmtSiblingMakesItNonUniform) {
  TreeCopy t("sysfs-2s-smt");
  t.write(kCpu + "online", "0-14");
  t.write(kCpu + "cpu15/online", "0");
  t.remove(kCpu + "cpu15/topology");
  auto r = probe_sysfs(t.root());
  EXPECT_FALSE(r.uniform);
  EXPECT_EQ(r.machine.topo.nr_cpus(), 16);  // closest uniform model keeps 2x4x2
  ASSERT_EQ(r.model_to_real.size(), 16u);
  EXPECT_EQ(r.model_to_real[15], -1);
  EXPECT_EQ(r.model_to_real[7], 7);
  EXPECT_TRUE(has_warning(r, "not uniform"));
}

TEST(Probe, NoOnlineFileUsesPerCpuOnline) {
  TreeCopy t("sysfs-arm64");
  t.remove(kCpu + "online");
  t.write(kCpu + "cpu3/online", "0");
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.online, (std::vector<int>{0, 1, 2, 4, 5, 6, 7}));
}

TEST(Probe, AdjacentSiblingNumberingIsMapped) {
  // AMD/arm style numbering: SMT siblings are adjacent (0,1), (2,3), ... one socket, one LLC.
  TreeCopy t("sysfs-arm64");
  for (int c = 0; c < 8; ++c) {
    std::string sib = std::to_string(c & ~1) + "-" + std::to_string((c & ~1) + 1);
    t.write(kCpu + "cpu" + std::to_string(c) + "/topology/core_cpus_list", sib);
    t.write(kCpu + "cpu" + std::to_string(c) + "/topology/thread_siblings_list", sib);
  }
  t.write("proc/sys/kernel/arch", "x86_64");
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.machine.topo.cores_per_socket, 4);
  EXPECT_EQ(r.machine.topo.threads_per_core, 2);
  EXPECT_TRUE(r.uniform);
  EXPECT_FALSE(r.numbering_matches);
  EXPECT_EQ(r.model_to_real, (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_TRUE(has_warning(r, "numbering differs"));
  auto h = host::probe_header(r, "tiny-4");
  bool has_map = std::any_of(h.begin(), h.end(), [](auto& l) { return l.find("0:0 1:2 2:4") != std::string::npos; });
  EXPECT_TRUE(has_map);
}

TEST(Probe, GarbageFilesDoNotCrash) {
  TreeCopy t("sysfs-2s-smt");
  t.write(kCpu + "online", "garbage");
  t.write(kCpu + "cpu3/topology/core_cpus_list", "x-y");
  t.write(kCpu + "cpu3/topology/thread_siblings_list", "");
  t.write(kCpu + "cpu0/cpuidle/state2/latency", "lots");
  t.remove(kCpu + "cpu0/cpuidle/state1/name");
  t.write(kCpu + "cpu4/cache/index3/shared_cpu_list", "?");
  auto r = probe_sysfs(t.root());
  EXPECT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.machine.idle_states.size(), 3u);  // state1 skipped
  EXPECT_GT(r.machine.topo.nr_cpus(), 0);
}

TEST(Probe, MissingRootThrows) {
  EXPECT_THROW(probe_sysfs("/nonexistent-schedlab-root"), host::HostError);
}

TEST(Probe, ApplyBaseCopiesCostsAndKeepsProbedFields) {
  auto r = probe_sysfs(kFixtures + "sysfs-2s-smt");
  machine::Machine base;
  base.costs.context_switch_ns = 1234;
  base.tunables.hz = 1000;
  base.idle_states.push_back({"C1E", "", 1, 1, 777, true, false});
  host::apply_base(r.machine, base, 250);
  EXPECT_EQ(r.machine.costs.context_switch_ns, 1234);
  EXPECT_EQ(r.machine.tunables.hz, 250);
  EXPECT_EQ(r.machine.idle_state("C1E")->wake_cost_ns, 777);
  EXPECT_EQ(r.machine.idle_state("C1E")->exit_latency_ns, 10000);  // the probed value stays
  EXPECT_EQ(r.machine.idle_state("C6")->wake_cost_ns, 0);
  EXPECT_EQ(r.machine.topo.nr_cpus(), 16);
}

TEST(Probe, RealSysfsDoesNotCrash) {
  auto r = probe_sysfs("/");
  EXPECT_GT(r.machine.topo.nr_cpus(), 0);
  EXPECT_FALSE(r.machine.idle_states.empty());
}

// A repeated state name (sysfs does not forbid it) would make an invalid profile, reported
// against a file never written: the probe keeps both, renames the second and says where.
TEST(Probe, DuplicateIdleStateNameIsRenamedWithAWarning) {
  TreeCopy t("sysfs-2s-smt");
  t.write(kCpu + "cpu0/cpuidle/state2/name", "C1");
  auto r = probe_sysfs(t.root());
  ASSERT_EQ(r.machine.idle_states.size(), 4u);
  EXPECT_EQ(r.machine.idle_states[1].name, "C1");
  EXPECT_EQ(r.machine.idle_states[2].name, "C1-state2");
  EXPECT_TRUE(has_warning(r, "cpu0/cpuidle/state2 is named 'C1' like an earlier state; calling it 'C1-state2'"));
  host::apply_base(r.machine, machine::load_profile("tiny-4"));
  EXPECT_NO_THROW(machine::parse_profile(machine::to_toml(r.machine), "host.toml"));
}

TEST(Probe, NegativeLatencyIsReadAsZeroWithAWarning) {
  TreeCopy t("sysfs-2s-smt");
  t.write(kCpu + "cpu0/cpuidle/state1/latency", "-5");
  t.write(kCpu + "cpu0/cpuidle/state1/residency", "-7");
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.machine.idle_states[1].exit_latency_ns, 0);
  EXPECT_EQ(r.machine.idle_states[1].target_residency_ns, 0);
  EXPECT_TRUE(has_warning(r, "cpu0/cpuidle/state1/latency (C1) is negative (-5); using 0"));
  EXPECT_TRUE(has_warning(r, "cpu0/cpuidle/state1/residency (C1) is negative (-7); using 0"));
  auto ok = probe_sysfs(kFixtures + "sysfs-2s-smt");
  EXPECT_FALSE(has_warning(ok, "negative"));
}

TEST(Probe, AtMostTenIdleStates) {
  TreeCopy t("sysfs-2s-smt");
  for (int n = 4; n < 12; ++n) {  // states 4..11: twelve in all
    std::string d = kCpu + "cpu0/cpuidle/state" + std::to_string(n) + "/";
    std::string name = "X";  // (not "X" + to_string(n): a GCC 12 -Wrestrict false positive)
    name += std::to_string(n);
    t.write(d + "name", name);
    t.write(d + "desc", "MWAIT 0x60");
    t.write(d + "latency", "200");
    t.write(d + "residency", "600");
  }
  auto r = probe_sysfs(t.root());
  EXPECT_EQ(r.machine.idle_states.size(), machine::kMaxIdleStates);
  EXPECT_EQ(r.machine.idle_states.back().name, "X9");
  EXPECT_TRUE(has_warning(r, "more than 10 states (CPUIDLE_STATE_MAX); state10 (X10) and later are ignored"));
}

// 8 sockets x 256 cores x SMT2, 16 cores per LLC (4096 CPUs, numbered as x86 servers are): the
// probe's grouping is linear in the CPU count (it was CPUs x LLC members x CPUs; timing is in
// `make bench`, BM_HostProbe).
TEST(Probe, LargeMachine4096Cpus) {
  const int sockets = 8, cores = 256, threads = 2, per_llc = 16;
  fs::path root = fixture::make_uniform_sysfs("probe4096", sockets, cores, threads, per_llc);
  auto r = probe_sysfs(root.string());
  fs::remove_all(root);
  const auto& t = r.machine.topo;
  EXPECT_EQ(t.sockets, sockets);
  EXPECT_EQ(t.cores_per_socket, cores);
  EXPECT_EQ(t.threads_per_core, threads);
  EXPECT_EQ(t.cores_per_llc, per_llc);
  EXPECT_EQ(t.nr_cpus(), 4096);
  EXPECT_TRUE(r.uniform);
  EXPECT_TRUE(r.numbering_matches);
  ASSERT_EQ(r.warnings.size(), 1u);  // no kernel under a made-up sysfs tree
  EXPECT_NE(r.warnings[0].find("no kernel release or config"), std::string::npos) << r.warnings[0];
}

// topology.l2_bytes: the size of the level-2 data or unified cache (cache/index*/size, "2048K"),
// the one most online CPUs report; 0 where no CPU gives one.
TEST(Probe, L2SizeFromTheCacheIndex) {
  EXPECT_EQ(probe_sysfs(kFixtures + "sysfs-2s-smt").machine.topo.l2_bytes, 2 << 20);
  EXPECT_EQ(probe_sysfs(kFixtures + "sysfs-kvm-haltpoll").machine.topo.l2_bytes, 1 << 20);
  EXPECT_EQ(probe_sysfs(kFixtures + "sysfs-arm64").machine.topo.l2_bytes, 0);  // index2 has no size file
  TreeCopy t("sysfs-2s-smt");
  for (int c = 0; c < 16; ++c) t.write(kCpu + "cpu" + std::to_string(c) + "/cache/index2/size", c < 9 ? "1M" : "512K");
  EXPECT_EQ(probe_sysfs(t.root()).machine.topo.l2_bytes, 1 << 20);
}
