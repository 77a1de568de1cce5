// The table of settable machine parameters: TOML key, unit, validation bounds and meaning.
// One row per field of Costs, Tunables and Noise; the loader, `--set`, validate() and
// to_toml() are all driven by this table, so a new field needs one row here and nothing else.
#include "machine/params_table.hpp"

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
constexpr double kMaxJitterCov = 0.5;
constexpr double kMinSmtThroughput = 1.0;
constexpr double kMaxSmtThroughput = 2.0;

}  // namespace

#define SL_COST(f, unit, help) \
  Field{"costs", #f, [](Machine& m) -> FieldRef { return &m.costs.f; }, unit, 0, kMaxCostNs, help, {}}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      SL_COST(context_switch_ns, "ns", "context_switch(): switch_to between tasks of one mm (threads)"),
      SL_COST(switch_mm_ns, "ns", "switch_mm(): extra cost when the next task has another mm (CR3, TLB)"),
      SL_COST(schedule_ns, "ns", "__schedule() fixed part: rq lock, clock update, bookkeeping"),
      SL_COST(pick_next_task_ns, "ns", "pick_next_task() incl. put_prev/set_next"),
      SL_COST(enqueue_ns, "ns", "activate_task(): enqueue + PELT update"),
      SL_COST(dequeue_ns, "ns", "deactivate_task()"),
      SL_COST(ttwu_ns, "ns", "try_to_wake_up() fixed waker-side cost (pi_lock, state change)"),
      SL_COST(remote_read_smt_ns, "ns", "cache-line transfer to/from the SMT sibling"),
      SL_COST(remote_read_llc_ns, "ns", "cache-line transfer within one LLC"),
      SL_COST(remote_read_other_llc_ns, "ns", "cache-line transfer to another LLC of the same socket"),
      SL_COST(remote_read_other_socket_ns, "ns", "cache-line transfer to another socket"),
      SL_COST(ipi_send_ns, "ns", "sender cost of one IPI (x2APIC ICR write / GIC SGI write)"),
      SL_COST(ipi_latency_llc_ns, "ns", "IPI send-to-handler latency, same LLC"),
      SL_COST(ipi_latency_other_llc_ns, "ns", "IPI send-to-handler latency, other LLC, same socket"),
      SL_COST(ipi_latency_other_socket_ns, "ns", "IPI send-to-handler latency, other socket"),
      SL_COST(ipi_entry_ns, "ns", "interrupt entry on the target: irq_enter(), vector dispatch to the handler"),
      SL_COST(irq_exit_ns, "ns", "irq_exit(): softirq pending check, tick_irq_exit(), return from the interrupt"),
      SL_COST(polling_wake_ns, "ns", "polling idle loop noticing TIF_NEED_RESCHED and leaving"),
      SL_COST(csd_func_ns, "ns", "running one queued call-function (empty handler)"),
      SL_COST(csd_lock_ns, "ns", "smp_call_function_single() on the sender: get_cpu(), csd setup and lock"),
      SL_COST(put_cpu_ns, "ns", "smp_call_function_single() on the sender: put_cpu() after csd_lock_wait()"),
      SL_COST(cond_resched_ns, "ns", "cond_resched() with nothing to reschedule"),
      SL_COST(softirq_ns, "ns", "__do_softirq() fixed part: bh disable, pending mask, accounting"),
      SL_COST(tick_ns, "ns", "sched_tick() handler"),
      SL_COST(nohz_stop_tick_ns, "ns", "tick_nohz_idle_stop_tick()"),
      SL_COST(nohz_restart_tick_ns, "ns", "tick_nohz_idle_exit() tick restart"),
      SL_COST(tick_nohz_idle_enter_ns, "ns", "tick_nohz_idle_enter() at the top of do_idle()"),
      SL_COST(tick_nohz_idle_exit_ns, "ns", "tick_nohz_idle_exit() with the tick running (idle time accounting)"),
      SL_COST(cpuidle_select_ns, "ns", "cpuidle governor select (menu_select(), next timer event)"),
      SL_COST(cpuidle_enter_ns, "ns", "call_cpuidle() + cpuidle_enter_state() before the state (polling clear)"),
      SL_COST(cpuidle_exit_ns, "ns", "cpuidle_enter_state() after the state: residency, usage, cpuidle_reflect()"),
      SL_COST(update_blocked_averages_ns, "ns", "sched_balance_update_blocked_averages() of one CPU (PELT decay of blocked load)"),
      SL_COST(balance_per_cpu_ns, "ns", "load balance: cost per CPU visited in update_sd_lb_stats"),
      SL_COST(migrate_task_ns, "ns", "detach + attach of one task by load balance"),
      SL_COST(cache_cold_llc_ns, "ns", "extra run time of a task migrated within an LLC"),
      SL_COST(cache_cold_other_llc_ns, "ns", "extra run time of a task migrated to another LLC, same socket"),
      SL_COST(cache_cold_other_socket_ns, "ns", "extra run time of a task migrated to another socket"),
      SL_COST(pipe_write_ns, "ns", "write() on a pipe, fixed part"),
      SL_COST(pipe_read_ns, "ns", "read() on a pipe, fixed part"),
      SL_COST(pipe_copy_ns_per_kb, "ns/KiB", "copy cost per KiB moved through a pipe"),
      SL_COST(unix_send_ns, "ns", "AF_UNIX stream send, fixed part (skb alloc)"),
      SL_COST(unix_recv_ns, "ns", "AF_UNIX stream recv, fixed part"),
      SL_COST(unix_copy_ns_per_kb, "ns/KiB", "copy cost per KiB through an AF_UNIX socket"),
      SL_COST(tcp_send_ns, "ns", "loopback TCP send incl. softirq receive, fixed part"),
      SL_COST(tcp_recv_ns, "ns", "loopback TCP recv, fixed part"),
      SL_COST(tcp_copy_ns_per_kb, "ns/KiB", "copy cost per KiB through loopback TCP"),
      SL_COST(futex_wake_ns, "ns", "futex(FUTEX_WAKE) syscall, excluding ttwu"),
      SL_COST(futex_wait_ns, "ns", "futex(FUTEX_WAIT) syscall entry, excluding schedule"),
      SL_COST(fork_ns, "ns", "fork()/clone() of a worker"),
      SL_COST(exit_ns, "ns", "do_exit() + reaping"),
      Field{"costs", "smt_pair_throughput",
            [](Machine& m) -> FieldRef { return &m.costs.smt_pair_throughput; }, "ratio",
            kMinSmtThroughput, kMaxSmtThroughput,
            "throughput of two busy SMT siblings relative to one busy core", {}},

      Field{"tunables", "hz", [](Machine& m) -> FieldRef { return &m.tunables.hz; }, "Hz",
            100, 1000, "CONFIG_HZ: one of 100, 250, 300, 1000", {100, 250, 300, 1000}},
      Field{"tunables", "base_slice_ns", [](Machine& m) -> FieldRef { return &m.tunables.base_slice_ns; },
            "ns", kMinSliceNs, kMaxTunableNs, "sysctl_sched_base_slice as the kernel uses it (already scaled)", {}},
      Field{"tunables", "migration_cost_ns",
            [](Machine& m) -> FieldRef { return &m.tunables.migration_cost_ns; }, "ns", 0, kMaxTunableNs,
            "sysctl_sched_migration_cost", {}},
      Field{"tunables", "nr_migrate", [](Machine& m) -> FieldRef { return &m.tunables.nr_migrate; },
            "tasks", 1, kMaxCount, "sysctl_sched_nr_migrate: tasks moved per load-balance pass", {}},
      Field{"tunables", "pipe_capacity_bytes",
            [](Machine& m) -> FieldRef { return &m.tunables.pipe_capacity_bytes; }, "bytes", kMinPipeBytes,
            kMaxPipeBytes, "pipe buffer size (default 16 pages)", {}},
      Field{"tunables", "unix_capacity_msgs",
            [](Machine& m) -> FieldRef { return &m.tunables.unix_capacity_msgs; }, "messages", 1, kMaxCount,
            "AF_UNIX send buffer, in small messages", {}},
      Field{"tunables", "idle_poll", [](Machine& m) -> FieldRef { return &m.tunables.idle_poll; }, "bool",
            0, 1, "idle=poll boot option: idle CPUs spin in cpu_idle_poll(), no cpuidle states", {}},

      Field{"noise", "jitter_cov", [](Machine& m) -> FieldRef { return &m.noise.jitter_cov; }, "ratio",
            0, kMaxJitterCov, "coefficient of variation of each cost draw (0 = exact costs)", {}},
      Field{"noise", "run_sigma", [](Machine& m) -> FieldRef { return &m.noise.run_sigma; }, "ln", 0, 1,
            "shape of the per-run cost factor lognormal(0, run_sigma), drawn once per run (0 = none; optional)", {},
            true},
      Field{"noise", "tick_phase", [](Machine& m) -> FieldRef { return &m.noise.tick_phase; }, "bool", 0, 1,
            "every CPU's tick starts at one phase drawn per run instead of at t = 0 (optional)", {}, true},
  };
  return table;
}

#undef SL_COST

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

}  // namespace schedlab::machine
