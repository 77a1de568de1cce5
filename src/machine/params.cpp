// The table of settable machine parameters: TOML key, unit, validation bounds and meaning.
// One row per field of Costs, Tunables and Noise, expanded from machine.hpp's tables (a new
// field is one row there and nothing else); the loader, `--set`, validate() and to_toml() are
// all driven by this table.
#include "machine/params_table.hpp"
#include "machine/param_api.hpp"

#include <array>
#include <cmath>
#include <type_traits>
#include <variant>

namespace schedlab::machine::detail {

namespace {

// Validation bounds (not defaults): anything outside is a typo or a unit mistake.
// 100 ms: no single kernel operation the costs describe comes near it (the largest in the
// shipped profiles, fork_ns and exit_ns, are 20-51 us); more is a unit mistake. A benchmark
// whose operations are that slow can still exceed the simulated-time limit of a run, which
// then says so (experiment::DidNotFinish).
constexpr double kMaxCostNs = 1e8;
constexpr double kMaxIdleLatencyNs = 1e9;   // 1 s: exit latency / wake cost above this is absurd
constexpr double kMaxResidencyNs = 1e10;    // 10 s
constexpr double kMinSliceNs = 1e3;         // 1 us
constexpr double kMaxTunableNs = 1e10;      // 10 s
constexpr double kMaxCount = 1048576;       // 2^20
constexpr double kMinPipeBytes = 4096;      // one page (F_SETPIPE_SZ minimum)
constexpr double kMaxPipeBytes = 1073741824;  // 1 GiB
constexpr double kMinPageBytes = 4096;        // PAGE_SIZE: 4 KiB ..
constexpr double kMaxPageBytes = 65536;       // .. 64 KiB (arm64's largest)
constexpr double kMaxJitterCov = 0.5;
constexpr double kMinSmtThroughput = 1.0;
constexpr double kMaxSmtThroughput = 2.0;
// The choices and optional columns of the tunable and noise rows.
constexpr std::array<int64_t, 4> kHzChoices = {100, 250, 300, 1000};  // CONFIG_HZ
constexpr std::array<int64_t, 0> kAnyValue = {};
constexpr bool kRequired = false;
constexpr bool kOptional = true;

}  // namespace

// The SCHEDLAB_COSTS, SCHEDLAB_TUNABLES and SCHEDLAB_NOISE rows (machine.hpp), in that order.
const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
#define SCHEDLAB_COST_ROW(f, type, value, unit, min, max, help) \
  Field{"costs", #f, [](Machine& m) -> FieldRef { return &m.costs.f; }, unit, min, max, help, {}},
#define SCHEDLAB_OPTIONAL_COST_ROW(f, type, value, unit, min, max, help) \
  Field{"costs", #f, [](Machine& m) -> FieldRef { return &m.costs.f; }, unit, min, max, help, {}, kOptional},
#define SCHEDLAB_TUNABLE_ROW(f, type, value, unit, min, max, choices, help) \
  Field{"tunables", #f, [](Machine& m) -> FieldRef { return &m.tunables.f; }, unit, min, max, help, \
        std::vector<int64_t>(choices.begin(), choices.end())},
#define SCHEDLAB_NOISE_ROW(f, type, value, unit, min, max, optional, help) \
  Field{"noise", #f, [](Machine& m) -> FieldRef { return &m.noise.f; }, unit, min, max, help, {}, optional},
      SCHEDLAB_COSTS(SCHEDLAB_COST_ROW)
      SCHEDLAB_OPTIONAL_COSTS(SCHEDLAB_OPTIONAL_COST_ROW)
      SCHEDLAB_TUNABLES(SCHEDLAB_TUNABLE_ROW)
      SCHEDLAB_NOISE(SCHEDLAB_NOISE_ROW)
#undef SCHEDLAB_COST_ROW
#undef SCHEDLAB_OPTIONAL_COST_ROW
#undef SCHEDLAB_TUNABLE_ROW
#undef SCHEDLAB_NOISE_ROW
  };
  return table;
}

const std::vector<IdleField>& idle_fields() {
  static const std::vector<IdleField> table = {
      {"exit_latency_ns", [](IdleState& s) -> FieldRef { return &s.exit_latency_ns; }, "ns", 0,
       kMaxIdleLatencyNs, "sysfs `latency`: exit latency the governor believes"},
      {"target_residency_ns", [](IdleState& s) -> FieldRef { return &s.target_residency_ns; }, "ns", 0,
       kMaxResidencyNs, "sysfs `residency`: minimum stay for the state to pay off"},
      {"wake_cost_ns", [](IdleState& s) -> FieldRef { return &s.wake_cost_ns; }, "ns", 0, kMaxIdleLatencyNs,
       "real extra time to leave the state when woken (measured, not the table value)"},
      {"polling", [](IdleState& s) -> FieldRef { return &s.polling; }, "bool", 0, 1,
       "state keeps TIF_POLLING_NRFLAG set (POLL, MWAIT): remote wakeups need no IPI"},
      {"disabled", [](IdleState& s) -> FieldRef { return &s.disabled; }, "bool", 0, 1,
       "cpuidle/stateN/disable"},
  };
  return table;
}

const std::vector<GuestField>& guest_fields() {
  constexpr double kMaxUint = 4294967295.0;  // module parameters are unsigned int
  static const std::vector<GuestField> table = {
      {"hint_realtime", &Guest::hint_realtime, "bool", 0, 1,
       "KVM_HINTS_REALTIME (CPUID 0x40000001 EDX bit 0): vCPUs on dedicated host CPUs"},
      {"steal_pct", &Guest::steal_pct, "%", 0, 100, "share of CPU time stolen by the host since boot"},
      {"guest_halt_poll_ns", &Guest::guest_halt_poll_ns, "ns", 0, kMaxUint,
       "haltpoll governor: largest per-CPU poll window (0: never polls)"},
      {"guest_halt_poll_grow", &Guest::guest_halt_poll_grow, "factor", 0, kMaxUint,
       "haltpoll governor: the window is multiplied by this when a wakeup came just after halting"},
      {"guest_halt_poll_grow_start", &Guest::guest_halt_poll_grow_start, "ns", 0, kMaxUint,
       "haltpoll governor: first non-zero window"},
      {"guest_halt_poll_shrink", &Guest::guest_halt_poll_shrink, "divisor", 0, kMaxUint,
       "haltpoll governor: the window is divided by this after a halt longer than guest_halt_poll_ns (0: reset)"},
      {"guest_halt_poll_allow_shrink", &Guest::guest_halt_poll_allow_shrink, "bool", 0, 1,
       "haltpoll governor: whether the window shrinks at all"},
      {"ipi_send_ns", &Guest::ipi_send_ns, "ns", 0, kMaxCostNs,
       "waker side of a wakeup IPI to a halted vCPU (VM exit for the PV send-IPI hypercall or ICR write), median"},
      {"ipi_send_sigma", &Guest::ipi_send_sigma, "ln", 0, 10, "lognormal shape of ipi_send_ns"},
      {"halted_wake_ns", &Guest::halted_wake_ns, "ns", 0, kMaxCostNs,
       "IPI sent -> its handler running on a halted vCPU (host wakes the vCPU thread, VM entry), median"},
      {"halted_wake_sigma", &Guest::halted_wake_sigma, "ln", 0, 10, "lognormal shape of halted_wake_ns"},
      {"ipi_send_gap5us_ns", &Guest::ipi_send_gap5us_ns, "ns", 0, kMaxCostNs,
       "ipi_send_ns after a 5 us idle gap (calibrate's wake_syscall_<class>_gap5us); optional"},
      {"ipi_send_gap500us_ns", &Guest::ipi_send_gap500us_ns, "ns", 0, kMaxCostNs,
       "ipi_send_ns after a 500 us idle gap (wake_syscall_<class>_gap500us); optional"},
      {"halted_wake_gap5us_ns", &Guest::halted_wake_gap5us_ns, "ns", 0, kMaxCostNs,
       "halted_wake_ns after a 5 us idle gap (wake_latency_<class>_gap5us); between the gaps the model "
       "interpolates in ln(time halted); optional"},
      {"halted_wake_gap500us_ns", &Guest::halted_wake_gap500us_ns, "ns", 0, kMaxCostNs,
       "halted_wake_ns after a 500 us idle gap (wake_latency_<class>_gap500us); optional"},
      {"running_ipi_ns", &Guest::running_ipi_ns, "ns", 0, kMaxCostNs,
       "IPI round trip to a running vCPU (send exit + delivery + handler + reply), median"},
      {"running_ipi_sigma", &Guest::running_ipi_sigma, "ln", 0, 10, "lognormal shape of running_ipi_ns"},
      {"ipi_virtualization", &Guest::ipi_virtualization, "bool", 0, 1,
       "the host virtualises IPIs (IPIv, AVIC): an IPI to a running vCPU does not exit (set by hand)"},
  };
  return table;
}

const std::vector<GuestTextField>& guest_text_fields() {
  static const std::vector<GuestTextField> table = {
      {"hypervisor", &Guest::hypervisor, "hypervisor named by the CPUID 0x40000000 signature"},
      {"kvm_features", &Guest::kvm_features, "KVM_FEATURE_* bits of CPUID 0x40000001 EAX"},
  };
  return table;
}

const std::vector<KernelField>& kernel_fields() {
  static const std::vector<KernelField> table = {
      {"autogroup", &KernelInfo::autogroup, "bool", 0, 1,
       "sched_autogroup_enabled: each session's tasks form one task group (recorded, not modeled)"},
      {"base_slice_ns", &KernelInfo::base_slice_ns, "ns", kMinSliceNs, kMaxTunableNs,
       "the running kernel's base slice, as read (tunables.base_slice_ns is set from it)"},
  };
  return table;
}

const std::vector<KernelTextField>& kernel_text_fields() {
  static const std::vector<KernelTextField> table = {
      {"release", &KernelInfo::release, "the running kernel's release (uname -r)"},
      {"features", &KernelInfo::features,
       "the running kernel's setting of each scheduler feature the model has (NAME / NO_NAME); applied before --features"},
      {"sched_features_mask", &KernelInfo::sched_features_mask,
       "sysctl_sched_features as the kernel printed it (a bitmask in features.h order; not decoded)"},
      {"preempt", &KernelInfo::preempt, "preemption model: none, voluntary, full, lazy or rt (recorded, not modeled)"},
      {"other_sched_sysctls", &KernelInfo::other_sched_sysctls,
       "/proc/sys/kernel/sched_* settings mainline Linux does not have, NAME=VALUE comma-separated (a vendor "
       "kernel's own scheduler code: recorded, not modeled)"},
  };
  return table;
}

const std::vector<BackgroundField>& background_fields() {
  static const std::vector<BackgroundField> table = {
      {"rate_hz", &BackgroundActivity::rate_hz, "Hz", 0, 1e6,
       "events per second (per CPU for scope per_cpu, for the whole machine for scope system)"},
      {"duration_ns", &BackgroundActivity::duration_ns, "ns", 0, kMaxCostNs,
       "median time one event takes its CPU away from the running task"},
      {"duration_sigma", &BackgroundActivity::duration_sigma, "ln", 0, 10,
       "lognormal shape of the duration: sigma of ln(duration)"},
      {"duration_max_ns", &BackgroundActivity::duration_max_ns, "ns", 0, kMaxCostNs,
       "the longest event of the sample the distribution was fitted to: draws are cut there (optional)", true},
  };
  return table;
}

const std::vector<std::string> kBackgroundKinds = {"irq", "softirq", "kthread", "steal", "task"};
const std::vector<std::string> kBackgroundScopes = {"per_cpu", "system"};

const std::vector<TopoField>& topo_fields() {
  static const std::vector<TopoField> table = {
      {"sockets", &Topology::sockets, 1, 64, "CPU packages"},
      {"cores_per_socket", &Topology::cores_per_socket, 1, kMaxCpus, "physical cores per socket"},
      {"threads_per_core", &Topology::threads_per_core, 1, 8, "SMT threads per core"},
      {"cores_per_llc", &Topology::cores_per_llc, 1, kMaxCpus,
       "cores sharing one last-level cache (divides cores_per_socket)"},
      {"l2_bytes", &Topology::l2_bytes, 0, 1 << 30,
       "bytes of one core's L2 cache (sysfs cache/index*/size, level 2; optional, 0 = not known)", true},
  };
  return table;
}

}  // namespace schedlab::machine::detail

namespace schedlab::machine {

std::vector<ParamInfo> params() {
  std::vector<ParamInfo> out;
  for (const auto& f : detail::fields())
    out.push_back({f.key(), f.unit, f.min, f.max, f.help});
  return out;
}

std::vector<ParamInfo> idle_state_params() {
  std::vector<ParamInfo> out;
  for (const auto& f : detail::idle_fields())
    out.push_back({std::string("idle_state.<NAME>.") + f.name, f.unit, f.min, f.max, f.help});
  return out;
}

namespace {
const detail::Field& field_of(const std::string& key) {
  for (const auto& f : detail::fields())
    if (f.key() == key) return f;
  throw ProfileError("unknown machine parameter '" + key + "' (`schedlab machines --params` lists them)");
}
}  // namespace

std::optional<ParamInfo> find_param(const std::string& key) {
  for (const auto& f : detail::fields())
    if (f.key() == key) return ParamInfo{f.key(), f.unit, f.min, f.max, f.help};
  return std::nullopt;
}

double param_value(const Machine& m, const std::string& key) {
  // The table's accessors take a Machine&; nothing is written through them here.
  detail::FieldRef ref = field_of(key).ref(const_cast<Machine&>(m));
  return std::visit([](auto* p) { return static_cast<double>(*p); }, ref);
}

void set_param(Machine& m, const std::string& key, double value) {
  const detail::Field& f = field_of(key);
  if (!(value >= f.min && value <= f.max))
    throw ProfileError(key + " = " + std::to_string(value) + " is outside [" + std::to_string(f.min) + ", " +
                       std::to_string(f.max) + "] " + f.unit);
  std::visit(
      [value](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, double>) *p = value;
        else if constexpr (std::is_same_v<T, bool>) *p = value != 0;
        else *p = static_cast<T>(std::llround(value));
      },
      f.ref(m));
}

std::vector<ParamInfo> background_params() {
  std::vector<ParamInfo> out;
  for (const auto& f : detail::background_fields())
    out.push_back({std::string("background.") + f.name, f.unit, f.min, f.max, f.help});
  return out;
}

Recorded& background_value(BackgroundActivity& a, const std::string& field) {
  for (const auto& f : detail::background_fields())
    if (field == f.name) return a.*f.member;
  throw ProfileError("unknown [[background]] key '" + field + "'");
}

}  // namespace schedlab::machine
