// [guest] and [[background]]: the sections `schedlab host` records about a real machine. Every
// value carries its unit (checked against the key's) and its source; bad ones give one error line
// with file:line.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "machine/machine.hpp"

using namespace schedlab::machine;
using namespace schedlab::machine::testing;

namespace {

const char* kGuest = R"(
[guest]
hypervisor = { value = "KVM", source = "CPUID 0x40000000 signature 'KVMKVMKVM'" }
kvm_features = { value = "steal_time,pv_send_ipi", source = "CPUID 0x40000001 EAX = 0x00000820" }
steal_pct = { value = 0.25, unit = "%", source = "/proc/stat" }
guest_halt_poll_ns = { value = 200000, unit = "ns", source = "/sys/module/haltpoll/parameters/guest_halt_poll_ns" }
guest_halt_poll_allow_shrink = { value = true, unit = "bool", source = "/sys/module/haltpoll/parameters/guest_halt_poll_allow_shrink" }
halted_wake_ns = { value = 27000, unit = "ns", source = "calibrate: wake_latency_llc" }
)";

const char* kBackground = R"(
[[background]]
name = "LOC"
kind = "irq"
scope = "per_cpu"
rate_hz = { value = 3.5, unit = "Hz", source = "/proc/interrupts delta over 20 s" }
duration_ns = { value = 2500, unit = "ns", source = "gap scan" }
duration_sigma = { value = 0.4, unit = "ln", source = "gap scan" }

[[background]]
name = "steal"
kind = "steal"
scope = "system"
rate_hz = { value = 0.5, unit = "Hz", source = "gap scan" }
duration_ns = { value = 3000000, unit = "ns", source = "gap scan" }
duration_sigma = { value = 0, unit = "ln", source = "gap scan" }
)";

std::string with(const std::string& extra) { return profile_text("tiny-4") + extra; }

void expect_error(const std::string& text, const std::string& line_needle, const std::string& what) {
  std::string msg = parse_error(text);
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  std::string prefix = "bad.toml:" + std::to_string(line_of(text, line_needle)) + ": ";
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "want prefix '" << prefix << "', got: " << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << "want '" << what << "', got: " << msg;
}

}  // namespace

TEST(HostSections, BuiltInProfilesHaveNeither) {
  for (const auto& name : list_profiles()) {
    Machine m = load_profile(name);
    EXPECT_FALSE(m.guest.present) << name;
    EXPECT_TRUE(m.background.empty()) << name;
  }
}

TEST(HostSections, GuestValuesCarryUnitAndSource) {
  Machine m = parse_profile(with(kGuest), "g.toml");
  ASSERT_TRUE(m.guest.present);
  EXPECT_EQ(m.guest.hypervisor.value, "KVM");
  EXPECT_EQ(m.guest.kvm_features.value, "steal_time,pv_send_ipi");
  EXPECT_DOUBLE_EQ(m.guest.steal_pct.value, 0.25);
  EXPECT_EQ(m.guest.steal_pct.source, "/proc/stat");
  EXPECT_DOUBLE_EQ(m.guest.guest_halt_poll_ns.value, 200000);
  EXPECT_DOUBLE_EQ(m.guest.guest_halt_poll_allow_shrink.value, 1);
  EXPECT_DOUBLE_EQ(m.guest.halted_wake_ns.value, 27000);
  EXPECT_FALSE(m.guest.guest_halt_poll_grow.known());  // not given: not recorded
}

TEST(HostSections, BackgroundActivities) {
  Machine m = parse_profile(with(kBackground), "b.toml");
  ASSERT_EQ(m.background.size(), 2u);
  EXPECT_EQ(m.background[0].name, "LOC");
  EXPECT_EQ(m.background[0].kind, "irq");
  EXPECT_EQ(m.background[0].scope, "per_cpu");
  EXPECT_DOUBLE_EQ(m.background[0].rate_hz.value, 3.5);
  EXPECT_DOUBLE_EQ(m.background[0].duration_ns.value, 2500);
  EXPECT_DOUBLE_EQ(m.background[0].duration_sigma.value, 0.4);
  EXPECT_EQ(m.background[1].scope, "system");
  EXPECT_DOUBLE_EQ(m.background[1].duration_ns.value, 3e6);
}

TEST(HostSections, RoundTripThroughToToml) {
  Machine m = parse_profile(with(std::string(kGuest) + kBackground), "rt.toml");
  std::string text = to_toml(m);
  EXPECT_NE(text.find("steal_pct = { value = 0.25, unit = \"%\", source = \"/proc/stat\" }"), std::string::npos)
      << text;
  EXPECT_NE(text.find("guest_halt_poll_allow_shrink = { value = true, unit = \"bool\""), std::string::npos);
  EXPECT_NE(text.find("guest_halt_poll_ns = { value = 200000, unit = \"ns\""), std::string::npos);
  Machine back = parse_profile(text, "rt.toml");
  EXPECT_EQ(back, m);
}

TEST(HostSections, WrongUnitIsAnError) {
  std::string t = with(R"(
[guest]
hypervisor = { value = "KVM", source = "cpuid" }
guest_halt_poll_ns = { value = 200, unit = "us", source = "sysfs" }
)");
  expect_error(t, "guest_halt_poll_ns", "guest.guest_halt_poll_ns is in ns, not 'us'");
}

TEST(HostSections, MissingSourceIsAnError) {
  std::string t = with(R"(
[guest]
hypervisor = { value = "KVM", source = "cpuid" }
steal_pct = { value = 1.0, unit = "%" }
)");
  expect_error(t, "steal_pct", "missing key 'source' in guest.steal_pct");
  std::string empty = with(R"(
[guest]
hypervisor = { value = "KVM", source = "" }
)");
  expect_error(empty, "hypervisor", "guest.hypervisor.source is empty");
}

TEST(HostSections, BareNumberIsAnError) {
  std::string t = with("\n[guest]\nhypervisor = { value = \"KVM\", source = \"cpuid\" }\nsteal_pct = 1.0\n");
  expect_error(t, "steal_pct", "guest.steal_pct must be { value = ..., unit = \"%\", source = \"...\" }");
}

TEST(HostSections, GuestNeedsHypervisor) {
  std::string t = with("\n[guest]\nsteal_pct = { value = 1.0, unit = \"%\", source = \"/proc/stat\" }\n");
  expect_error(t, "[guest]", "[guest] needs hypervisor");
}

TEST(HostSections, OutOfRangeValues) {
  std::string t = with(R"(
[guest]
hypervisor = { value = "KVM", source = "cpuid" }
steal_pct = { value = 150, unit = "%", source = "/proc/stat" }
)");
  expect_error(t, "steal_pct", "guest.steal_pct = 150 is absurd (maximum 100 %)");
  std::string neg = with(replace(kBackground, "value = 3.5", "value = -1"));
  expect_error(neg, "value = -1", "background.LOC.rate_hz = -1 is below the minimum 0 Hz");
}

TEST(HostSections, UnknownKeysKindsAndScopes) {
  expect_error(with("\n[guest]\nhypervisor = { value = \"KVM\", source = \"c\" }\nhalt_poll = 1\n"), "halt_poll",
               "unknown key 'halt_poll' in [guest]");
  expect_error(with(replace(kBackground, "kind = \"irq\"", "kind = \"nmi\"")), "kind = \"nmi\"",
               "background 'LOC': kind = 'nmi' is not one of irq, softirq, kthread, steal, task");
  expect_error(with(replace(kBackground, "scope = \"per_cpu\"", "scope = \"cpu0\"")), "scope = \"cpu0\"",
               "scope = 'cpu0' is not one of per_cpu, system");
  expect_error(with(replace(kBackground, "duration_sigma = { value = 0.4, unit = \"ln\", source = \"gap scan\" }\n", "")),
               "[[background]]", "missing key 'duration_sigma' in [[background]] #0");
}

TEST(HostSections, SetReplacesAGuestValueAndSaysSo) {
  Machine m = parse_profile(with(kGuest), "host.toml");
  apply_set(m, "guest.guest_halt_poll_ns=50000");
  EXPECT_EQ(m.guest.guest_halt_poll_ns.value, 50000);
  EXPECT_EQ(m.guest.guest_halt_poll_ns.source, "--set guest.guest_halt_poll_ns=50000");
  apply_set(m, "guest.ipi_virtualization=true");
  EXPECT_EQ(m.guest.ipi_virtualization.value, 1);
  auto err = [](Machine mm, const std::string& a) {
    try {
      apply_set(mm, a);
    } catch (const ProfileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(m, "guest.nope=1").find("unknown [guest] key 'nope'"), std::string::npos);
  EXPECT_NE(err(m, "guest.guest_halt_poll_ns=-5").find("below the minimum"), std::string::npos);
  EXPECT_NE(err(load_profile("tiny-4"), "guest.guest_halt_poll_ns=0").find("not a virtual machine"), std::string::npos);
}

TEST(HostSections, PerRunNoiseKeysAreOptional) {
  // A profile written before the keys existed (host profiles of earlier calibrations).
  std::string t = profile_text("tiny-4");
  for (const char* key : {"\nrun_sigma = ", "\ntick_phase = "}) {
    auto at = t.find(key);
    ASSERT_NE(at, std::string::npos);
    t.erase(at, t.find('\n', at + 1) - at);
  }
  Machine m = parse_profile(t, "old.toml");
  EXPECT_EQ(m.noise.run_sigma, 0);
  EXPECT_FALSE(m.noise.tick_phase);
  auto at = t.find("[noise]\n");
  ASSERT_NE(at, std::string::npos);
  t.insert(at + 8, "run_sigma = 0.02\ntick_phase = true\n");
  Machine n = parse_profile(t, "x.toml");
  EXPECT_EQ(n.noise.run_sigma, 0.02);
  EXPECT_TRUE(n.noise.tick_phase);
  EXPECT_EQ(parse_profile(to_toml(n), "y.toml").noise, n.noise);
}
