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

// Named costs, all in nanoseconds unless the name says otherwise. Each field is also a TOML
// key under [costs]; params() lists them with units, bounds and meaning.
struct Costs {
  int64_t context_switch_ns = 0;        // context_switch(): switch_to between tasks of one mm
  int64_t switch_mm_ns = 0;             // switch_mm(): extra when the next task has another mm
  int64_t schedule_ns = 0;              // __schedule() fixed part: rq lock, clock, bookkeeping
  int64_t pick_next_task_ns = 0;        // pick_next_task() incl. put_prev/set_next
  int64_t enqueue_ns = 0;               // activate_task(): enqueue + PELT update
  int64_t dequeue_ns = 0;               // deactivate_task()
  int64_t ttwu_ns = 0;                  // try_to_wake_up() fixed waker-side cost (pi_lock, state)
  int64_t remote_read_smt_ns = 0;       // cache-line transfer to/from the SMT sibling
  int64_t remote_read_llc_ns = 0;       // ... same LLC
  int64_t remote_read_other_llc_ns = 0; // ... other LLC, same socket
  int64_t remote_read_other_socket_ns = 0;  // ... other socket
  int64_t ipi_send_ns = 0;              // sender cost of one IPI (APIC ICR write / SGI)
  int64_t ipi_latency_llc_ns = 0;       // send-to-handler latency, same LLC
  int64_t ipi_latency_other_llc_ns = 0; // ... other LLC, same socket
  int64_t ipi_latency_other_socket_ns = 0;  // ... other socket
  int64_t ipi_entry_ns = 0;             // interrupt entry (irq_enter, vector dispatch) on the target
  int64_t irq_exit_ns = 0;              // irq_exit(): softirq check, tick_irq_exit, return
  int64_t polling_wake_ns = 0;          // polling idle loop noticing TIF_NEED_RESCHED and leaving
  int64_t csd_func_ns = 0;              // running one queued call-function (empty handler)
  int64_t csd_lock_ns = 0;              // smp_call_function_single(): get_cpu, csd setup and lock
  int64_t put_cpu_ns = 0;               // smp_call_function_single(): put_cpu() after the wait
  int64_t cond_resched_ns = 0;          // cond_resched() with nothing to do
  int64_t softirq_ns = 0;               // __do_softirq() fixed part (bh disable, pending, accounting)
  int64_t tick_ns = 0;                  // sched_tick() handler
  int64_t nohz_stop_tick_ns = 0;        // tick_nohz_idle_stop_tick()
  int64_t nohz_restart_tick_ns = 0;     // tick_nohz_idle_exit() tick restart
  int64_t tick_nohz_idle_enter_ns = 0;  // tick_nohz_idle_enter() at the top of do_idle()
  int64_t tick_nohz_idle_exit_ns = 0;   // tick_nohz_idle_exit() with the tick running
  int64_t cpuidle_select_ns = 0;        // cpuidle governor select (menu_select())
  int64_t cpuidle_enter_ns = 0;         // call_cpuidle() + cpuidle_enter_state() before the state
  int64_t cpuidle_exit_ns = 0;          // cpuidle_enter_state() after the state + cpuidle_reflect()
  int64_t update_blocked_averages_ns = 0;  // sched_balance_update_blocked_averages() of one CPU
  int64_t balance_per_cpu_ns = 0;       // load balance: per CPU visited in update_sd_lb_stats
  int64_t migrate_task_ns = 0;          // detach + attach of one task by load balance
  int64_t cache_cold_llc_ns = 0;        // extra run time of a task migrated within an LLC
  int64_t cache_cold_other_llc_ns = 0;  // ... to another LLC of the same socket
  int64_t cache_cold_other_socket_ns = 0;  // ... to another socket
  int64_t pipe_write_ns = 0;            // write() on a pipe, fixed part
  int64_t pipe_read_ns = 0;             // read() on a pipe, fixed part
  int64_t pipe_copy_ns_per_kb = 0;      // copy cost per KiB moved through a pipe
  int64_t unix_send_ns = 0;             // AF_UNIX stream send, fixed part (skb alloc)
  int64_t unix_recv_ns = 0;             // AF_UNIX stream recv, fixed part
  int64_t unix_copy_ns_per_kb = 0;      // copy per KiB through an AF_UNIX socket
  int64_t tcp_send_ns = 0;              // loopback TCP send incl. softirq receive, fixed part
  int64_t tcp_recv_ns = 0;              // TCP recv, fixed part
  int64_t tcp_copy_ns_per_kb = 0;       // loopback TCP per KiB
  int64_t futex_wake_ns = 0;            // futex(FUTEX_WAKE) syscall, excluding ttwu
  int64_t futex_wait_ns = 0;            // futex(FUTEX_WAIT) syscall entry, excluding schedule
  int64_t fork_ns = 0;                  // fork()/clone() of a worker
  int64_t exit_ns = 0;                  // do_exit() + reaping
  double smt_pair_throughput = 1.0;     // ratio: two busy siblings' throughput vs one (1.0..2.0)
  bool operator==(const Costs&) const = default;
};

// Scheduler tunables (sysctl / debugfs / Kconfig values) of the modeled kernel.
struct Tunables {
  int64_t hz = 250;                          // CONFIG_HZ
  int64_t base_slice_ns = 3000000;           // sysctl_sched_base_slice (scaled)
  int64_t migration_cost_ns = 500000;        // sysctl_sched_migration_cost
  int64_t nr_migrate = 32;                   // sysctl_sched_nr_migrate
  int64_t pipe_capacity_bytes = 65536;       // pipe buffer (16 pages)
  int64_t unix_capacity_msgs = 500;          // AF_UNIX send buffer, in small messages
  bool idle_poll = false;                    // idle=poll boot option
  bool operator==(const Tunables&) const = default;
};

struct Noise {
  double jitter_cov = 0.0;  // coefficient of variation of each cost draw (0 = exact costs)
  // ln: shape of the per-run cost factor F ~ lognormal(0, run_sigma), drawn once per run and
  // multiplying every cost of the run (docs/variance.md S1); 0 = no per-run factor.
  double run_sigma = 0.0;
  // Start every CPU's tick at one phase drawn per run in [0, tick) instead of at t = 0 (a real
  // benchmark starts at a random phase of the jiffy; docs/variance.md S4).
  bool tick_phase = false;
  bool operator==(const Noise&) const = default;
};

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
  Recorded running_ipi_ns;        // IPI round trip to a running vCPU (membarrier expedited)
  Recorded running_ipi_sigma;     // ln
  // bool: the host virtualises IPIs (Intel IPIv, AMD AVIC): sending to a running vCPU does not
  // exit; a halted one is still woken by the host. Not visible to the guest: set by hand.
  Recorded ipi_virtualization;
  bool operator==(const Guest&) const = default;
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
