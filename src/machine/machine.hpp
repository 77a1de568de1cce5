// The modeled machine: topology, idle states, named costs and scheduler tunables.
// Every number the kernel model uses comes from here; profiles (profiles/*.toml) set them,
// each with its unit and source. See docs/model.md and profiles/README.md.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedlab::machine {

// How far two CPUs are from each other, as the cost model distinguishes them.
enum class Distance : uint8_t { Self = 0, Smt = 1, Llc = 2, OtherLlc = 3, OtherSocket = 4 };
const char* distance_name(Distance d);

// Sockets -> LLCs -> cores -> SMT threads, numbered as Linux numbers x86 servers:
// cpu = thread * total_cores + socket * cores_per_socket + core_in_socket,
// so SMT siblings are total_cores apart.
struct Topology {
  int sockets = 1;
  int cores_per_socket = 1;
  int threads_per_core = 1;
  int cores_per_llc = 1;  // cores sharing one last-level cache (must divide cores_per_socket)
  // Bytes of the L2 cache of one core (its SMT threads share it; sysfs cache/index*/size of
  // level 2). 0: not known, and the channel cache-footprint rule is off (optional key).
  int l2_bytes = 0;

  int nr_cpus() const { return sockets * cores_per_socket * threads_per_core; }
  int nr_cores() const { return sockets * cores_per_socket; }
  int nr_llcs() const { return nr_cores() / cores_per_llc; }
  int core_of(int cpu) const { return cpu % nr_cores(); }          // global core id
  int thread_of(int cpu) const { return cpu / nr_cores(); }
  int socket_of(int cpu) const { return core_of(cpu) / cores_per_socket; }
  int llc_of(int cpu) const { return core_of(cpu) / cores_per_llc; }  // global LLC id
  int llc_size() const { return cores_per_llc * threads_per_core; }  // CPUs per LLC
  std::vector<int> smt_siblings(int cpu) const;  // all threads of cpu's core, including cpu
  std::vector<int> llc_cpus(int llc) const;      // ascending
  std::vector<int> socket_cpus(int socket) const;
  Distance distance(int a, int b) const;
  bool operator==(const Topology&) const = default;
};

// CPUIDLE_STATE_MAX (include/linux/cpuidle.h): a cpuidle driver has at most this many states.
inline constexpr size_t kMaxIdleStates = 10;

// One cpuidle state, with the name the machine's cpuidle driver gives it.
inline constexpr const char* kPollStateName = "POLL";  // cpuidle's poll_idle state

struct IdleState {
  std::string name;             // "POLL", "C1", "C1E", "C6", "WFI", ...
  std::string desc;             // sysfs `desc`
  int64_t exit_latency_ns = 0;  // sysfs `latency` (what the governor believes)
  int64_t target_residency_ns = 0;  // sysfs `residency`
  int64_t wake_cost_ns = 0;     // real extra time to leave the state when woken (measured)
  bool polling = false;         // keeps TIF_POLLING_NRFLAG set while in the state (POLL, MWAIT)
  bool disabled = false;        // cpuidle/stateN/disable
  bool operator==(const IdleState&) const = default;
  // The polling state of drivers/cpuidle/poll_state.c (CPUIDLE_FLAG_POLLING; state 0, named
  // "POLL": the profile loader checks both).
  bool is_poll() const { return name == kPollStateName; }
};

// The settable parameters of a machine, defined once each, in the three tables below: one row
// per field of Costs, Tunables and Noise, expanded into the struct's field (with its default)
// here and into params() (machine/params.cpp), which drives the profile loader, `--set`,
// validate() and to_toml(). A new parameter is one row here and nothing else.
//   COST(name, type, default, unit, min, max, help)
//   TUNABLE(name, type, default, unit, min, max, choices, help)
//   NOISE(name, type, default, unit, min, max, optional, help)
// name is also the TOML key inside [costs], [tunables] or [noise]; min and max are validation
// bounds (the named constants are params.cpp's), not defaults; choices (kHzChoices) are the only
// accepted values, kAnyValue if any in range is; optional (kOptional) fields may be left out of
// a profile, and then their default applies.

// Named costs, all in nanoseconds unless the unit says otherwise.
#define SCHEDLAB_COSTS(COST)                                                                                  \
  COST(context_switch_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "context_switch(): switch_to between tasks of one mm (threads)")                                       \
  COST(switch_mm_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                         \
       "switch_mm(): extra cost when the next task has another mm (CR3, TLB)")                                \
  COST(schedule_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "__schedule() fixed part: rq lock, clock update, bookkeeping")                                         \
  COST(pick_next_task_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "pick_next_task() incl. put_prev/set_next")                                                            \
  COST(enqueue_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                           \
       "activate_task(): enqueue + PELT update")                                                              \
  COST(dequeue_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                           \
       "deactivate_task()")                                                                                   \
  COST(ttwu_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                              \
       "try_to_wake_up() fixed waker-side cost (pi_lock, state change)")                                      \
  COST(remote_read_smt_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                   \
       "cache-line transfer to/from the SMT sibling")                                                         \
  COST(remote_read_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                   \
       "cache-line transfer within one LLC")                                                                  \
  COST(remote_read_other_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                             \
       "cache-line transfer to another LLC of the same socket")                                               \
  COST(remote_read_other_socket_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                          \
       "cache-line transfer to another socket")                                                               \
  COST(ipi_send_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "sender cost of one IPI (x2APIC ICR write / GIC SGI write)")                                           \
  COST(ipi_latency_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                   \
       "IPI send-to-handler latency, same LLC")                                                               \
  COST(ipi_latency_other_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                             \
       "IPI send-to-handler latency, other LLC, same socket")                                                 \
  COST(ipi_latency_other_socket_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                          \
       "IPI send-to-handler latency, other socket")                                                           \
  COST(ipi_entry_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                         \
       "interrupt entry on the target: irq_enter(), vector dispatch to the handler")                          \
  COST(irq_exit_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "irq_exit(): softirq pending check, tick_irq_exit(), return from the interrupt")                       \
  COST(polling_wake_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                      \
       "polling idle loop noticing TIF_NEED_RESCHED and leaving")                                             \
  COST(csd_func_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "running one queued call-function (empty handler)")                                                    \
  COST(csd_lock_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "smp_call_function_single() on the sender: get_cpu(), csd setup and lock")                             \
  COST(put_cpu_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                           \
       "smp_call_function_single() on the sender: put_cpu() after csd_lock_wait()")                           \
  COST(cond_resched_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                      \
       "cond_resched() with nothing to reschedule")                                                           \
  COST(softirq_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                           \
       "__do_softirq() fixed part: bh disable, pending mask, accounting")                                     \
  COST(tick_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                              \
       "sched_tick() handler")                                                                                \
  COST(nohz_stop_tick_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "tick_nohz_idle_stop_tick()")                                                                          \
  COST(nohz_restart_tick_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                 \
       "tick_nohz_idle_exit() tick restart")                                                                  \
  COST(tick_nohz_idle_enter_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                              \
       "tick_nohz_idle_enter() at the top of do_idle()")                                                      \
  COST(tick_nohz_idle_exit_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                               \
       "tick_nohz_idle_exit() with the tick running (idle time accounting)")                                  \
  COST(cpuidle_select_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "cpuidle governor select (menu_select(), next timer event)")                                           \
  COST(cpuidle_enter_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                     \
       "call_cpuidle() + cpuidle_enter_state() before the state (polling clear)")                             \
  COST(cpuidle_exit_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                      \
       "cpuidle_enter_state() after the state: residency, usage, cpuidle_reflect()")                          \
  COST(update_blocked_averages_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                           \
       "sched_balance_update_blocked_averages() of one CPU (PELT decay of blocked load)")                     \
  COST(balance_per_cpu_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                   \
       "load balance: cost per CPU visited in update_sd_lb_stats")                                            \
  COST(migrate_task_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                      \
       "detach + attach of one task by load balance")                                                         \
  COST(cache_cold_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "extra run time of a task migrated within an LLC")                                                     \
  COST(cache_cold_other_llc_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                              \
       "extra run time of a task migrated to another LLC, same socket")                                       \
  COST(cache_cold_other_socket_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                           \
       "extra run time of a task migrated to another socket")                                                 \
  COST(pipe_write_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                        \
       "write() on a pipe, fixed part")                                                                       \
  COST(pipe_read_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                         \
       "read() on a pipe, fixed part")                                                                        \
  COST(pipe_copy_ns_per_kb, int64_t, 0, "ns/KiB", 0, kMaxCostNs,                                              \
       "copy cost per KiB moved through a pipe")                                                              \
  COST(unix_send_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                         \
       "AF_UNIX stream send, fixed part (skb alloc)")                                                         \
  COST(unix_recv_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                         \
       "AF_UNIX stream recv, fixed part")                                                                     \
  COST(unix_copy_ns_per_kb, int64_t, 0, "ns/KiB", 0, kMaxCostNs,                                              \
       "copy cost per KiB through an AF_UNIX socket")                                                         \
  COST(tcp_send_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "loopback TCP send incl. softirq receive, fixed part")                                                 \
  COST(tcp_recv_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                          \
       "loopback TCP recv, fixed part")                                                                       \
  COST(tcp_copy_ns_per_kb, int64_t, 0, "ns/KiB", 0, kMaxCostNs,                                               \
       "copy cost per KiB through loopback TCP")                                                              \
  COST(futex_wake_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                        \
       "futex(FUTEX_WAKE) syscall, excluding ttwu")                                                           \
  COST(futex_wait_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                        \
       "futex(FUTEX_WAIT) syscall entry, excluding schedule")                                                 \
  COST(fork_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                              \
       "fork()/clone() of a worker")                                                                          \
  COST(exit_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                              \
       "do_exit() + reaping")                                                                                 \
  COST(smt_pair_throughput, double, 1.0, "ratio", kMinSmtThroughput, kMaxSmtThroughput,                       \
       "throughput of two busy SMT siblings relative to one busy core")

// Scheduler tunables (sysctl / debugfs / Kconfig values) of the modeled kernel.
#define SCHEDLAB_TUNABLES(TUNABLE)                                                                            \
  TUNABLE(hz, int64_t, 250, "Hz", 100, 1000, kHzChoices,                                                      \
       "CONFIG_HZ: one of 100, 250, 300, 1000")                                                               \
  TUNABLE(base_slice_ns, int64_t, 3000000, "ns", kMinSliceNs, kMaxTunableNs, kAnyValue,                       \
       "sysctl_sched_base_slice as the kernel uses it (already scaled)")                                      \
  TUNABLE(migration_cost_ns, int64_t, 500000, "ns", 0, kMaxTunableNs, kAnyValue,                              \
       "sysctl_sched_migration_cost")                                                                         \
  TUNABLE(nr_migrate, int64_t, 32, "tasks", 1, kMaxCount, kAnyValue,                                          \
       "sysctl_sched_nr_migrate: tasks moved per load-balance pass")                                          \
  TUNABLE(pipe_capacity_bytes, int64_t, 65536, "bytes", kMinPipeBytes, kMaxPipeBytes, kAnyValue,              \
       "pipe buffer size (default 16 pages)")                                                                 \
  TUNABLE(pipe_page_bytes, int64_t, 4096, "bytes", kMinPageBytes, kMaxPageBytes, kAnyValue,                   \
       "PAGE_SIZE: a pipe is pipe_capacity_bytes / pipe_page_bytes slots of one page each")                   \
  TUNABLE(unix_sndbuf_bytes, int64_t, 212992, "bytes", 1, kMaxPipeBytes, kAnyValue,                           \
       "AF_UNIX sk_sndbuf (net.core.wmem_default): a send waits while its skbs' truesize reaches it")         \
  TUNABLE(unix_skb_truesize_bytes, int64_t, 896, "bytes", 1, kMaxPipeBytes, kAnyValue,                        \
       "skb truesize charged to the send buffer for one small AF_UNIX message")                               \
  TUNABLE(idle_poll, bool, false, "bool", 0, 1, kAnyValue,                                                    \
       "idle=poll boot option: idle CPUs spin in cpu_idle_poll(), no cpuidle states")

// Run-to-run variation: jitter_cov is each cost draw's spread; run_sigma is the shape of the
// per-run cost factor F ~ lognormal(0, run_sigma), drawn once per run and multiplying every cost
// of the run (docs/variance.md S1); tick_phase starts every CPU's tick at one phase drawn per run
// in [0, tick) instead of at t = 0 (a real benchmark starts at a random phase of the jiffy;
// docs/variance.md S4).
#define SCHEDLAB_NOISE(NOISE)                                                                                 \
  NOISE(jitter_cov, double, 0.0, "ratio", 0, kMaxJitterCov, kRequired,                                        \
       "coefficient of variation of each cost draw (0 = exact costs)")                                        \
  NOISE(run_sigma, double, 0.0, "ln", 0, 1, kOptional,                                                        \
       "shape of the per-run cost factor lognormal(0, run_sigma), drawn once per run (0 = none; optional)")   \
  NOISE(tick_phase, bool, false, "bool", 0, 1, kOptional,                                                     \
       "every CPU's tick starts at one phase drawn per run instead of at t = 0 (optional)")

// Costs a profile may leave out (0, the default, then: not modeled). A message that crosses CPUs
// through a pipe or an AF_UNIX socket: what the sending or reading side pays beyond the same-CPU
// cost because the channel's lines (queue, lock, wait queue, the skb or pipe page) were last
// written on the other CPU (docs/workloads.md, "Messages that cross CPUs").
#define SCHEDLAB_OPTIONAL_COSTS(COST)                                                                         \
  COST(pipe_write_remote_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                 \
       "extra for a pipe write when the pipe was last used on another CPU (optional; 0 = not modeled)")       \
  COST(pipe_read_remote_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                  \
       "extra for a pipe read of data written on another CPU (optional; 0 = not modeled)")                    \
  COST(unix_send_remote_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                  \
       "extra for an AF_UNIX send when the socket was last used on another CPU (optional; 0 = not modeled)")  \
  COST(unix_recv_remote_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                  \
       "extra for an AF_UNIX recv of a message sent from another CPU (optional; 0 = not modeled)")           \
  COST(unix_recv_cold_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "extra for an AF_UNIX recv on the sending core after more than its L2 moved through channels since "  \
       "the send (optional; 0 = not modeled)")                                                               \
  COST(pipe_read_cold_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "extra for a pipe read on the writing core after more than its L2 moved through channels since the "  \
       "write (optional; 0 = not modeled)")                                                                 \
  COST(unix_send_cold_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                    \
       "extra for an AF_UNIX send whose skb is not one freed on its core with at most its L2 moved through "  \
       "channels since (optional; 0 = not modeled)")                                                          \
  COST(pipe_write_cold_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                   \
       "extra for a pipe write whose buffer is not one freed on its core with at most its L2 moved through "  \
       "channels since (optional; 0 = not modeled)")                                                           \
  COST(pipe_write_newbuf_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                 \
       "extra for a pipe write that takes a new slot (an empty pipe, or a last page without room) instead of " \
       "merging into the last page (optional; 0 = not modeled)")                                             \
  COST(pipe_read_release_ns, int64_t, 0, "ns", 0, kMaxCostNs,                                                 \
       "extra for a pipe read that reads a page to its end and releases its slot (optional; 0 = not modeled)")

#define SCHEDLAB_PARAM_FIELD(name, type, value, ...) type name = value;

struct Costs {
  SCHEDLAB_COSTS(SCHEDLAB_PARAM_FIELD)
  SCHEDLAB_OPTIONAL_COSTS(SCHEDLAB_PARAM_FIELD)
  bool operator==(const Costs&) const = default;
};

struct Tunables {
  SCHEDLAB_TUNABLES(SCHEDLAB_PARAM_FIELD)
  bool operator==(const Tunables&) const = default;
};

struct Noise {
  SCHEDLAB_NOISE(SCHEDLAB_PARAM_FIELD)
  bool operator==(const Noise&) const = default;
};

#undef SCHEDLAB_PARAM_FIELD

// A value `schedlab host` recorded about a real machine, with its unit and where it came from (a
// sysfs or proc file, a CPUID leaf, a measurement). Written in a profile as the inline table
// `{ value = ..., unit = "...", source = "..." }`; the unit is fixed per key and checked on load.
// Booleans are 0/1 with unit "bool". An empty source means "not recorded" (the key is absent).
struct Recorded {
  double value = 0;
  std::string source;
  bool known() const { return !source.empty(); }
  bool operator==(const Recorded&) const = default;
};
struct RecordedText {
  std::string value;
  std::string source;
  bool known() const { return !source.empty(); }
  bool operator==(const RecordedText&) const = default;
};

// [guest]: the machine is a virtual machine (CPUID.1:ECX bit 31, the hypervisor bit). What
// `schedlab host probe` recognised and `schedlab host calibrate` measured. docs/variance.md
// ("Guest model") specifies how the kernel model is to use it; profile_fields.cpp lists every key
// with its unit. Absent on bare-metal profiles.
struct Guest {
  bool present = false;
  RecordedText hypervisor;    // "KVM", "Microsoft Hv", "VMware", "Xen", "TCG", ... (CPUID 0x40000000)
  RecordedText kvm_features;  // KVM_FEATURE_* names from CPUID 0x40000001 EAX, comma-separated
  Recorded hint_realtime;     // bool: KVM_HINTS_REALTIME (vCPUs never preempted; haltpoll loads itself)
  Recorded steal_pct;         // % of all CPU time the host stole since boot (/proc/stat steal)
  // cpuidle-haltpoll governor (module `haltpoll`), used when cpuidle_driver = governor = haltpoll.
  Recorded guest_halt_poll_ns;            // ns: largest poll window (0: the governor never polls)
  Recorded guest_halt_poll_grow;          // factor the per-CPU window grows by
  Recorded guest_halt_poll_grow_start;    // ns: first non-zero window
  Recorded guest_halt_poll_shrink;        // divisor the window shrinks by (0: straight to 0)
  Recorded guest_halt_poll_allow_shrink;  // bool
  // Measured by `schedlab host calibrate` (docs/host.md), as distributions: median and the
  // lognormal shape sigma = (ln p90 - ln p10) / 2.563.
  Recorded ipi_send_ns;           // waker side: sending one wakeup IPI to a halted vCPU (VM exit)
  Recorded ipi_send_sigma;        // ln
  Recorded halted_wake_ns;        // IPI sent -> handler runs on a halted vCPU (host wakes it, VM entry)
  Recorded halted_wake_sigma;     // ln
  // The same two medians after idle gaps of 5 and 500 us (calibrate's _gap5us / _gap500us keys;
  // the two above are after 60 us): the model runs through the three by the time the vCPU has
  // been halted (kernel/guest.hpp LogNormal::median_after()). Optional.
  Recorded ipi_send_gap5us_ns, ipi_send_gap500us_ns;
  Recorded halted_wake_gap5us_ns, halted_wake_gap500us_ns;
  Recorded running_ipi_ns;        // IPI round trip to a running vCPU (membarrier expedited)
  Recorded running_ipi_sigma;     // ln
  // bool: the host virtualises IPIs (Intel IPIv, AMD AVIC): sending to a running vCPU does not
  // exit; a halted one is still woken by the host. Not visible to the guest: set by hand.
  Recorded ipi_virtualization;
  bool operator==(const Guest&) const = default;
};

// [kernel]: the running kernel's scheduler settings, as `schedlab host probe` read them
// (docs/host.md: each with the file it came from, or the version default it fell back to).
// `features` is the one the model uses: the profile's default feature list, applied before
// --features (which can override each item). The others are recorded: base_slice_ns is what
// tunables.base_slice_ns was set from; preempt and autogroup are not modeled. Absent on
// reference profiles.
struct KernelInfo {
  bool present = false;
  RecordedText release;             // uname -r (/proc/sys/kernel/osrelease)
  RecordedText features;            // NAME / NO_NAME list: the kernel's setting of each feature the model has
  RecordedText sched_features_mask; // sysctl_sched_features as the kernel printed it (not decoded)
  RecordedText preempt;             // none | voluntary | full | lazy | rt (not modeled)
  Recorded autogroup;               // bool: sched_autogroup_enabled (not modeled)
  Recorded base_slice_ns;           // ns: the base slice read from the kernel
  RecordedText other_sched_sysctls; // NAME=VALUE,...: /proc/sys/kernel/sched_* not in mainline (not modeled)
  bool operator==(const KernelInfo&) const = default;
};

// One kind of background activity on an otherwise idle machine (interrupts, softirqs, kernel
// threads, the host stealing the vCPU, other processes): [[background]] tables, recorded by
// `schedlab host calibrate` (docs/variance.md, "Background activity"). Durations are lognormal.
struct BackgroundActivity {
  std::string name;   // "LOC", "RCU", "kworker/N:N", "steal", ...
  std::string kind;   // "irq", "softirq", "kthread", "steal", "task"
  std::string scope;  // "per_cpu": each CPU on its own at `rate`; "system": `rate` for the whole machine
  Recorded rate_hz;              // Hz: events per second (per CPU, or in all for "system")
  Recorded duration_ns;          // ns: median time one event takes the CPU away
  Recorded duration_sigma;       // ln: lognormal shape of the duration (0: always the median)
  Recorded duration_max_ns;      // ns: the longest event the fit saw; draws stop there (optional)
  bool operator==(const BackgroundActivity&) const = default;
};

struct Machine {
  std::string name;            // profile name (file stem)
  std::string description;
  std::string arch;            // "x86_64", "arm64"
  std::string cpuidle_driver;  // "intel_idle", "acpi_idle", "psci_idle", ...
  std::string governor;        // "menu", "teo", "haltpoll", "ladder"
  std::string source_path;     // file it was loaded from
  Topology topo;
  std::vector<IdleState> idle_states;  // index = cpuidle state number
  Costs costs;
  Tunables tunables;
  Noise noise;
  Guest guest;                                // [guest], present only for virtual machines
  KernelInfo kernel;                          // [kernel], present only in probed host profiles
  std::vector<BackgroundActivity> background; // [[background]], empty unless recorded

  // The tick period (1 s / CONFIG_HZ); costs.tick_ns is the work of one tick, not its period.
  int64_t tick_period_ns() const { return 1000000000 / tunables.hz; }
  int64_t remote_read_ns(Distance d) const;
  int64_t ipi_latency_ns(Distance d) const;
  int64_t cache_cold_ns(Distance d) const;
  const IdleState* idle_state(const std::string& name) const;
  bool operator==(const Machine&) const = default;  // all fields, incl. name and source_path
};

// Bad input (malformed file, impossible topology, unknown key, absurd value). The message is one
// line naming the file and line, or the flag, that is wrong.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A --machine name that is neither a built-in profile nor a path (the message lists the names).
class UnknownMachine : public ProfileError {
 public:
  using ProfileError::ProfileError;
};

// Describes one settable parameter: its TOML key (e.g. "costs.context_switch_ns"), unit,
// accepted range and meaning. Used by the loader, `--set` and `schedlab machines --params`.
struct ParamInfo {
  std::string key;
  std::string unit;
  double min;
  double max;
  std::string help;
};
std::vector<ParamInfo> params();
// The per-idle-state keys accepted by `--set idle_state.<NAME>.<field>=VALUE` and in
// [[idle_state]] tables; `key` is written as "idle_state.<NAME>.<field>".
std::vector<ParamInfo> idle_state_params();

// Directory holding the built-in profiles (env SCHEDLAB_PROFILES overrides).
std::string profile_dir();
// Built-in profile names, sorted.
std::vector<std::string> list_profiles();
// Loads a profile by built-in name or by path to a .toml file. Throws ProfileError (UnknownMachine
// for a name that is no built-in profile).
Machine load_profile(const std::string& name_or_path);
Machine parse_profile(const std::string& toml_text, const std::string& source_name);
// Applies `--set KEY=VALUE` (KEY is a TOML key from params(), or
// idle_state.<NAME>.<field>). Throws ProfileError naming the flag.
void apply_set(Machine& m, const std::string& assignment);
// Disables idle states by name, as writing 1 to cpuidle/stateN/disable. Throws on unknown names.
void disable_idle_states(Machine& m, const std::vector<std::string>& names);
// Checks consistency (topology divides, non-negative costs, ranges). Throws ProfileError.
void validate(const Machine& m);
// Serialises a machine back to profile TOML (used by `schedlab host probe`).
std::string to_toml(const Machine& m, const std::string& header_comment = "");

}  // namespace schedlab::machine
