// host probe, the kernel's side (host/kernel_probe.hpp): release, base slice, scheduler features,
// preemption model and autogroup from the dev VM's files (tests/host/fixtures/kernel-6.18) and
// from changed copies of them (garbled, unreadable, other versions).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "host/kernel_probe.hpp"

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

const std::string kKernelFixture = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/kernel-6.18";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A writable copy of the kernel-6.18 fixture, removed at the end of the test.
class KernelTree {
 public:
  KernelTree() {
    dir_ = fs::temp_directory_path() / ("schedlab-kprobe-" + std::to_string(getpid()) + "-" + std::to_string(n_++));
    fs::remove_all(dir_);
    fs::copy(kKernelFixture, dir_, fs::copy_options::recursive);
  }
  ~KernelTree() { fs::remove_all(dir_); }
  std::string root() const { return dir_.string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text << "\n";
  }
  void remove(const std::string& rel) const { fs::remove_all(dir_ / rel); }
  std::string config() const { return slurp(dir_ / "boot/config-6.18.44-fc-v1045"); }

 private:
  fs::path dir_;
  static inline int n_ = 0;
};

bool has(const std::vector<std::string>& w, const std::string& part) {
  return std::any_of(w.begin(), w.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

const std::string k618Defaults =
    "TTWU_QUEUE,TTWU_QUEUE_IDLE,SIS_UTIL,NO_SIS_PROP,WA_IDLE,WA_WEIGHT,WA_BIAS,WAKEUP_PREEMPTION,EEVDF,"
    "RUN_TO_PARITY,PREEMPT_SHORT,DELAY_DEQUEUE,DELAY_ZERO";

}  // namespace

// The dev VM as it is: base slice from sched/debug, features NOT readable (EPERM: absent in the
// fixture) so the 6.18 defaults, the bitmask recorded as printed, PREEMPT_NONE from the config
// (PREEMPT_DYNAMIC, no preempt=), autogroup on.
TEST(KernelProbe, DevVmFixture) {
  KernelTree t;
  std::vector<std::string> w;
  auto k = host::probe_kernel(t.root(), t.config(), 2, w);
  ASSERT_TRUE(k.present);
  EXPECT_EQ(k.release.value, "6.18.44-fc-v1045");
  EXPECT_EQ(k.base_slice_ns.value, 1400000);
  EXPECT_NE(k.base_slice_ns.source.find(".sysctl_sched_base_slice"), std::string::npos) << k.base_slice_ns.source;
  EXPECT_EQ(k.features.value, k618Defaults);
  EXPECT_NE(k.features.source.find("NOT READ"), std::string::npos);
  EXPECT_TRUE(has(w, "sched/features is not readable; assuming the defaults of Linux 6.18"));
  EXPECT_EQ(k.sched_features_mask.value, "99674079");
  EXPECT_NE(k.sched_features_mask.source.find("not decoded"), std::string::npos);
  EXPECT_EQ(k.preempt.value, "none");
  EXPECT_NE(k.preempt.source.find("CONFIG_PREEMPT_NONE=y"), std::string::npos);
  EXPECT_NE(k.preempt.source.find("PREEMPT_DYNAMIC"), std::string::npos);
  EXPECT_EQ(k.autogroup.value, 1);
  EXPECT_EQ(k.autogroup.source, "/proc/sys/kernel/sched_autogroup_enabled");
  // The vendor kernel's own scheduler setting, recorded and warned about; the mainline one not.
  EXPECT_EQ(k.other_sched_sysctls.value, "sched_vcpu_pack=15");
  EXPECT_TRUE(has(w, "/proc/sys/kernel has scheduler settings mainline Linux does not: sched_vcpu_pack=15"));
  EXPECT_EQ(w.size(), 2u);  // the features fallback and that
}

// Only sched_* names mainline has never had are listed, sorted; none: nothing recorded.
TEST(KernelProbe, OtherSchedSysctlsAreTheNonMainlineOnes) {
  KernelTree t;
  t.write("proc/sys/kernel/sched_zz_vendor", "1 2");
  t.write("proc/sys/kernel/sched_util_clamp_max", "1024");
  t.write("proc/sys/kernel/numa_balancing", "0");
  std::vector<std::string> w;
  auto k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.other_sched_sysctls.value, "sched_vcpu_pack=15,sched_zz_vendor=1 2");
  t.remove("proc/sys/kernel/sched_vcpu_pack");
  t.remove("proc/sys/kernel/sched_zz_vendor");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_FALSE(k.other_sched_sysctls.known());
  EXPECT_FALSE(has(w, "mainline Linux does not"));
}

// Each base slice source in turn, garbled values skipped with a warning, and the version's
// default (said so) when none is readable.
TEST(KernelProbe, BaseSliceSourcesAndFallback) {
  KernelTree t;
  t.write("sys/kernel/debug/sched/base_slice_ns", "2800000");
  std::vector<std::string> w;
  auto k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.base_slice_ns.value, 2800000);
  EXPECT_EQ(k.base_slice_ns.source, "/sys/kernel/debug/sched/base_slice_ns");

  t.write("sys/kernel/debug/sched/base_slice_ns", "fast");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.base_slice_ns.value, 1400000);  // sched/debug
  EXPECT_TRUE(has(w, "/sys/kernel/debug/sched/base_slice_ns: cannot parse the base slice 'fast'"));

  t.remove("sys/kernel/debug/sched");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.base_slice_ns.value, 1400000);  // se.slice
  EXPECT_NE(k.base_slice_ns.source.find("/proc/self/sched: se.slice"), std::string::npos);
  EXPECT_FALSE(k.sched_features_mask.known());

  t.write("proc/self/sched", "se.slice : 0");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_TRUE(has(w, "base slice 0 ns is outside"));
  EXPECT_EQ(k.base_slice_ns.value, 1400000);  // 6.18 default, 0.70 ms x 2
  EXPECT_NE(k.base_slice_ns.source.find("NOT READ: default of Linux 6.18 on 2 CPUs"), std::string::npos);
  EXPECT_TRUE(has(w, "the base slice is not readable; using the default of Linux 6.18 on 2 CPUs, 1400000 ns"));
  t.remove("proc/self");
  w.clear();
  EXPECT_EQ(host::probe_kernel(t.root(), t.config(), 16, w).base_slice_ns.value, 2800000);  // factor 1 + ilog2(8)
  t.write("proc/sys/kernel/osrelease", "6.8.0-45-generic");
  w.clear();
  EXPECT_EQ(host::probe_kernel(t.root(), t.config(), 1, w).base_slice_ns.value, 750000);
  t.write("proc/sys/kernel/osrelease", "6.15.2");
  w.clear();
  EXPECT_EQ(host::probe_kernel(t.root(), t.config(), 4, w).base_slice_ns.value, 2100000);  // 0.70 ms x 3
  t.write("proc/sys/kernel/osrelease", "weird");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_FALSE(k.base_slice_ns.known());
  EXPECT_FALSE(k.features.known());
  EXPECT_TRUE(has(w, "kernel release 'weird' does not start with MAJOR.MINOR"));
  EXPECT_TRUE(has(w, "tunables.base_slice_ns keeps the base profile's value"));
}

// sched/features by name where readable (no bit order needed); a modeled feature the kernel
// does not list takes the version's setting; a garbled file is ignored for the defaults.
TEST(KernelProbe, FeaturesFileByName) {
  KernelTree t;
  t.remove("proc/sys/kernel/sched_vcpu_pack");  // (its own warning: OtherSchedSysctlsAreTheNonMainlineOnes)
  t.write("sys/kernel/debug/sched/features",
          "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT NO_NEXT_BUDDY "
          "PICK_BUDDY CACHE_HOT_BUDDY NO_DELAY_DEQUEUE DELAY_ZERO WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL "
          "NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN "
          "ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT NO_WA_BIAS UTIL_EST NO_LATENCY_WARN HZ_BW");
  std::vector<std::string> w;
  auto k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.features.value,
            "TTWU_QUEUE,TTWU_QUEUE_IDLE,SIS_UTIL,NO_SIS_PROP,WA_IDLE,WA_WEIGHT,NO_WA_BIAS,WAKEUP_PREEMPTION,EEVDF,"
            "RUN_TO_PARITY,PREEMPT_SHORT,NO_DELAY_DEQUEUE,DELAY_ZERO");
  EXPECT_NE(k.features.source.find("/sys/kernel/debug/sched/features"), std::string::npos);
  EXPECT_TRUE(w.empty()) << w.front();

  t.write("sys/kernel/debug/sched/features", "TTWU_QUEUE sis_util?");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_TRUE(has(w, "'sis_util?' is not a feature name; file ignored"));
  EXPECT_EQ(k.features.value, k618Defaults);

  // A 5.15 kernel's file: no EEVDF, DELAY_DEQUEUE, PREEMPT_SHORT or RUN_TO_PARITY names.
  t.write("proc/sys/kernel/osrelease", "5.15.0-91-generic");
  t.write("sys/kernel/debug/sched/features", "GENTLE_FAIR_SLEEPERS START_DEBIT TTWU_QUEUE SIS_PROP NO_SIS_UTIL WA_IDLE WA_WEIGHT WA_BIAS WAKEUP_PREEMPTION");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.features.value,
            "TTWU_QUEUE,NO_TTWU_QUEUE_IDLE,NO_SIS_UTIL,SIS_PROP,WA_IDLE,WA_WEIGHT,WA_BIAS,WAKEUP_PREEMPTION,NO_EEVDF,"
            "NO_RUN_TO_PARITY,NO_PREEMPT_SHORT,NO_DELAY_DEQUEUE,NO_DELAY_ZERO");
}

TEST(KernelProbe, VersionDefaults) {
  EXPECT_EQ(host::default_features_for({6, 18}), k618Defaults);
  EXPECT_EQ(host::default_features_for({6, 12}), k618Defaults);
  EXPECT_EQ(host::default_features_for({6, 8}),
            "TTWU_QUEUE,TTWU_QUEUE_IDLE,SIS_UTIL,NO_SIS_PROP,WA_IDLE,WA_WEIGHT,WA_BIAS,WAKEUP_PREEMPTION,EEVDF,"
            "RUN_TO_PARITY,NO_PREEMPT_SHORT,NO_DELAY_DEQUEUE,NO_DELAY_ZERO");
  auto v = host::parse_kernel_version("6.18.44-fc-v1045");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 6);
  EXPECT_EQ(v->minor, 18);
  EXPECT_FALSE(host::parse_kernel_version("linux"));
  EXPECT_FALSE(host::parse_kernel_version("6"));
}

// Preemption model: debugfs sched/preempt, else preempt= (PREEMPT_DYNAMIC), else the config.
TEST(KernelProbe, PreemptAndAutogroup) {
  KernelTree t;
  t.write("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy");
  std::vector<std::string> w;
  auto k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.preempt.value, "full");
  EXPECT_EQ(k.preempt.source, "/sys/kernel/debug/sched/preempt");
  t.write("sys/kernel/debug/sched/preempt", "none voluntary full lazy");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_TRUE(has(w, "cannot tell the model from 'none voluntary full lazy'"));
  EXPECT_EQ(k.preempt.value, "none");  // the config
  t.remove("sys/kernel/debug/sched/preempt");
  t.write("proc/cmdline", "quiet preempt=lazy noautogroup");
  t.remove("proc/sys/kernel/sched_autogroup_enabled");
  w.clear();
  k = host::probe_kernel(t.root(), t.config(), 2, w);
  EXPECT_EQ(k.preempt.value, "lazy");
  EXPECT_EQ(k.autogroup.value, 0);
  EXPECT_EQ(k.autogroup.source, "noautogroup on /proc/cmdline");
  t.write("proc/sys/kernel/sched_autogroup_enabled", "maybe");
  w.clear();
  k = host::probe_kernel(t.root(), "", 2, w);  // no config
  EXPECT_TRUE(has(w, "sched_autogroup_enabled: 'maybe' is not 0 or 1"));
  EXPECT_FALSE(k.autogroup.known());
  EXPECT_FALSE(k.preempt.known());
  EXPECT_TRUE(has(w, "preemption model unknown"));
}

// A tree with nothing of the kernel (a topology-only sysfs fixture): no [kernel], one warning.
TEST(KernelProbe, NothingToRead) {
  fs::path empty = fs::temp_directory_path() / ("schedlab-kprobe-empty-" + std::to_string(getpid()));
  fs::create_directories(empty);
  std::vector<std::string> w;
  auto k = host::probe_kernel(empty.string(), "", 2, w);
  fs::remove_all(empty);
  EXPECT_FALSE(k.present);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("no kernel release or config"), std::string::npos);
}
