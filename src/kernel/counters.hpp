// What a run counts, per CPU; totals are sums over CPUs.
//
// Every counter is defined once, in SCHEDLAB_CPU_COUNTERS below, and that one list is expanded
// into the CpuCounters fields, their summing, the --json keys, the `schedlab ab` key-counter
// table and the text summary line; the name is the same in all of them. A scheduler change's
// own counters are declared by the change (change.hpp) and kept in CpuCounters::change.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/sink.hpp"

namespace schedlab::kernel {

inline constexpr int kNumKernelPaths = static_cast<int>(trace::KernelPath::Syscall) + 1;
inline constexpr int kNumIpiKinds = 2;

// Storage of the array counters: one value per kernel path (trace::kernel_path_name()), per
// IPI kind (kIpiKindKeys), per cpuidle state (the machine's state names plus a last slot for
// default_idle: all states disabled, or idle=poll).
using PerPath = std::array<int64_t, kNumKernelPaths>;
using PerIpi = std::array<int64_t, kNumIpiKinds>;
using PerIdleState = std::vector<int64_t>;
inline constexpr const char* kIpiKindKeys[kNumIpiKinds] = {"reschedule", "call_function_single"};
// The shared cache lines' classes (cacheline.hpp: LineClass).
inline constexpr int kNumLineClasses = 3;
using PerLine = std::array<int64_t, kNumLineClasses>;
inline constexpr const char* kLineClassKeys[kNumLineClasses] = {"rq", "llc_shared", "idle_cpumask"};
// schedstat's per-domain counters (kernel/sched/stats.c, version 17): one value per domain level
// (SdLevel: SMT, MC, PKG, NUMA) or per level and idle type (enum cpu_idle_type: busy, idle,
// newly idle), at [level * kNumIdleTypes + type].
inline constexpr int kNumSdLevels = 4;
inline constexpr int kNumIdleTypes = 3;
using PerSd = std::array<int64_t, kNumSdLevels>;
using PerSdIdle = std::array<int64_t, kNumSdLevels * kNumIdleTypes>;
inline constexpr const char* kSdLevelKeys[kNumSdLevels] = {"SMT", "MC", "PKG", "NUMA"};
inline constexpr const char* kSdIdleKeys[kNumSdLevels * kNumIdleTypes] = {
    "SMT.busy", "SMT.idle", "SMT.newidle", "MC.busy",   "MC.idle",   "MC.newidle",
    "PKG.busy", "PKG.idle", "PKG.newidle", "NUMA.busy", "NUMA.idle", "NUMA.newidle"};

// Where a counter is shown besides being summed: in --json (kJson), as a row of the `ab`
// key-counter table (kAb), on the text summary line (kSummary); 0: only in --schedstat.
// A counter in `ab` also says which way is better: kLower (a cost: fewer IPIs, less time with
// interrupts off), kHigher (a saving: IPIs avoided), or neither (neutral: it shows which path
// ran, such as csd_run_idle replacing csd_run_ipi, and its change is no verdict).
// kMax: the total over CPUs is the largest value, not the sum (a maximum per CPU).
enum CounterShow : unsigned {
  kJson = 1,
  kAb = 2,
  kSummary = 4,
  kLower = 8,
  kHigher = 16,
  kMax = 32
};

// The counters, in --json order:
//   COUNTER(name, unit, show, meaning)           an int64 per CPU
//   ARRAY(name, storage, unit, show, meaning)    one int64 per path / IPI kind / idle state
//                                                (ab and the summary show one row per element,
//                                                named name.element)
//   DERIVED(name, unit, show, meaning, expr)     computed from the counters `c`, not stored
#define SCHEDLAB_CPU_COUNTERS(COUNTER, ARRAY, DERIVED)                                            \
  COUNTER(busy_ns, "ns", kJson, "time in task context")                                          \
  ARRAY(kernel_ns, PerPath, "ns", kJson, "time in each kernel path")                             \
  DERIVED(kernel_total_ns, "ns", kJson, "time in kernel paths", sum_of(c.kernel_ns))             \
  ARRAY(idle_ns, PerIdleState, "ns", kJson, "time in each cpuidle state")                        \
  DERIVED(idle_total_ns, "ns", kJson, "time in idle states", sum_of(c.idle_ns))                  \
  ARRAY(idle_usage, PerIdleState, "count", kJson, "entries per cpuidle state (stateN/usage)")    \
  DERIVED(idle_usage_total, "count", kAb, "idle state entries", sum_of(c.idle_usage))            \
  COUNTER(context_switches, "count", kJson | kAb | kSummary | kLower, "rq->nr_switches")                  \
  COUNTER(mm_switches, "count", kJson, "switch_mm() to another address space")                   \
  COUNTER(schedule_calls, "count", kJson, "__schedule() from schedule() or preemption")          \
  COUNTER(schedule_idle_calls, "count", kJson, "__schedule() from schedule_idle()")              \
  COUNTER(pick_next_task_calls, "count", kJson, "pick_next_task() calls")                        \
  COUNTER(pick_next_task_from_idle, "count", kJson | kAb, "pick_next_task() with prev == idle")  \
  COUNTER(ttwu_local, "count", kJson, "wakeups this CPU did onto itself")                        \
  COUNTER(ttwu_remote, "count", kJson, "wakeups this CPU did onto another CPU")                  \
  COUNTER(ttwu_wakelist, "count", kJson, "... queued on the target's wake list")                 \
  COUNTER(ttwu_enqueue_unseen, "count", kJson | kAb,                                              \
          "wakeups onto a CPU another waker had chosen but not yet enqueued on (it read idle)")   \
  COUNTER(sis_failed, "count", kJson | kAb,                                                        \
          "select_idle_sibling() found nothing idle: the wakee stacks on its busy target")        \
  COUNTER(sis_failed_waker, "count", kJson,                                                        \
          "... where that target is the waker's CPU and not the wakee's previous one")            \
  ARRAY(ipi_sent, PerIpi, "count", kJson | kAb | kSummary | kLower, "IPIs sent, by kind")                 \
  ARRAY(ipi_received, PerIpi, "count", kJson, "IPIs handled, by kind")                           \
  COUNTER(wake_polling_no_ipi, "count", kJson | kAb | kSummary | kHigher,                                 \
          "polling idle CPUs woken by a flag store instead of an IPI (sender)")                  \
  COUNTER(csd_run_ipi, "count", kJson | kAb, "call functions run by the call-function IPI handler") \
  COUNTER(csd_run_idle, "count", kJson | kAb,                                                    \
          "call functions run by do_idle()'s flush_smp_call_function_queue()")                   \
  COUNTER(irqs_off_ns, "ns", kJson | kAb | kLower, "kernel work with interrupts disabled")                \
  COUNTER(irq_pending_ns, "ns", kJson, "time interrupts waited for interrupts to be enabled")    \
  COUNTER(lock_rq_acquired, "count", kJson, "rq->__lock acquisitions (kernel/lock.hpp)")        \
  COUNTER(lock_rq_contended, "count", kJson | kAb | kLower, "... that waited behind another CPU") \
  COUNTER(lock_rq_wait_ns, "ns", kJson | kAb | kSummary | kLower,                                 \
          "time spinning for rq->__lock, interrupts off (handover included)")                    \
  COUNTER(lock_rq_wait_max_ns, "ns", kJson | kMax, "longest single wait for rq->__lock")        \
  COUNTER(lock_pi_acquired, "count", kJson, "p->pi_lock acquisitions (try_to_wake_up())")       \
  COUNTER(lock_pi_contended, "count", kJson | kAb | kLower, "... that waited behind another CPU") \
  COUNTER(lock_pi_wait_ns, "ns", kJson | kAb | kLower, "time spinning for p->pi_lock, interrupts off") \
  COUNTER(lock_pi_wait_max_ns, "ns", kJson | kMax, "longest single wait for p->pi_lock")         \
  COUNTER(cpuidle_rejected, "count", kJson,                                                      \
          "call_cpuidle() found need_resched after clearing polling (state not entered)")       \
  COUNTER(softirq_sched, "count", kJson, "SCHED_SOFTIRQ runs (sched_balance_softirq())")         \
  COUNTER(ksoftirqd_wakeups, "count", kJson,                                                     \
          "wakeup_softirqd(): a softirq raised outside interrupt context")                       \
  COUNTER(set_idle_cores, "count", kJson, "__update_idle_core() wrote has_idle_cores = 1")       \
  COUNTER(rd_overload_set, "count", kJson, "set_rd_overloaded(): a runqueue reached 2 tasks")    \
  COUNTER(select_idle_cpu_calls, "count", kJson, "select_idle_cpu() calls")                      \
  COUNTER(select_idle_cpu_scanned, "cpus", kJson | kSummary, "CPUs select_idle_cpu() visited")   \
  DERIVED(select_idle_cpu_scanned_per_call, "cpus", kAb | kLower, "CPUs visited per select_idle_cpu()",   \
          ratio(c.select_idle_cpu_scanned, c.select_idle_cpu_calls))                             \
  COUNTER(sis_util_depth_calls, "count", kJson,                                                  \
          "select_idle_cpu() calls whose depth SIS_UTIL's nr_idle_scan set")                     \
  COUNTER(sis_util_start_depth_calls, "count", kJson,                                            \
          "of those, calls before a busy CPU's LLC periodic balance refreshed nr_idle_scan") \
  COUNTER(select_idle_cpu_found, "count", kJson, "select_idle_cpu() scans that found an idle CPU") \
  COUNTER(select_idle_cpu_scan_ns, "ns", kJson, "time select_idle_cpu() spent scanning")         \
  DERIVED(avg_scan_cost_ns, "ns", kJson | kAb | kLower, "scan time per select_idle_cpu()",                \
          ratio(c.select_idle_cpu_scan_ns, c.select_idle_cpu_calls))                             \
  ARRAY(line_transfers, PerLine, "count", kJson | kAb | kLower,                                  \
        "shared cache lines this CPU read after another CPU wrote them (cacheline.hpp), by class") \
  ARRAY(line_transfer_ns, PerLine, "ns", kJson,                                                  \
        "... their time: the transfer for the writer's distance, waits included")                \
  ARRAY(line_waits, PerLine, "count", kJson,                                                     \
        "... that waited behind another transfer of the same line (concurrent readers)")         \
  ARRAY(line_wait_ns, PerLine, "ns", kJson, "... the time they waited")                          \
  COUNTER(smt_beside_poll_ns, "ns", kJson | kAb,                                                 \
          "task time beside a polling SMT sibling (POLL, idle=poll, IDLE_SPIN, csd_lock_wait)")   \
  COUNTER(newidle_balance_calls, "count", kJson | kSummary, "sched_balance_newidle() calls")      \
  COUNTER(newidle_balance_skipped, "count", kJson,                                               \
          "... gated out (a wakeup pending, no overload, avg_idle below the cost)")              \
  DERIVED(newidle_balance_ns, "ns", kJson | kAb | kLower, "time in newidle balance",                      \
          c.kernel_ns[static_cast<int>(trace::KernelPath::NewidleBalance)])                      \
  COUNTER(newidle_balance_pulled, "count", kJson | kSummary, "tasks newidle balance pulled")     \
  COUNTER(newidle_balance_walks, "count", kJson | kAb | kLower,                                           \
          "newidle balance past its gates: blocked-load update and the domain walk")             \
  COUNTER(newidle_balance_lb_count, "count", kJson,                                              \
          "sched_balance_rq(CPU_NEWLY_IDLE) per level (schedstat lb_count)")                     \
  COUNTER(nohz_newilb_kick, "count", kJson, "nohz_newidle_balance() set NOHZ_NEWILB_KICK")       \
  COUNTER(nohz_ilb_kick, "count", kJson, "kick_ilb() queued nohz_csd to an idle CPU")            \
  COUNTER(nohz_csd_run, "count", kJson, "nohz_csd_func() runs (idle-balance kicks received)")    \
  COUNTER(nohz_ilb_bail, "count", kJson,                                                         \
          "nohz_csd_func() raised no softirq (need_resched, or the CPU was not idle)")           \
  COUNTER(nohz_idle_balance, "count", kJson,                                                     \
          "_nohz_idle_balance() runs (idle balancer, or nohz_run_idle_balance())")               \
  COUNTER(nohz_idle_balance_abort, "count", kJson,                                               \
          "... that stopped early (the idle balancer CPU looked busy)")                          \
  COUNTER(load_balance_calls, "count", kJson, "periodic sched_balance_rq() at one level")        \
  COUNTER(load_balance_pulled, "count", kJson, "tasks periodic balancing pulled")                \
  COUNTER(migrations, "count", kJson | kAb | kSummary, "set_task_cpu() moving a task here")      \
  COUNTER(call_functions_run, "count", kJson, "call-functions executed")                         \
  COUNTER(ticks, "count", kJson, "sched_tick() calls")                                           \
  COUNTER(wasted_idle_ns, "ns", kJson,                                                           \
          "idle while a runnable task waited in the same LLC (--check)")                         \
  COUNTER(guest_ipi_exits, "count", kJson,                                                       \
          "IPIs whose send exited to the host (guest: PV send-IPI hypercall or ICR write)")      \
  COUNTER(guest_halted_wakes, "count", kJson,                                                    \
          "interrupts that found this vCPU halted: the host had to wake it")                     \
  COUNTER(guest_halted_wake_ns, "ns", kJson,                                                     \
          "... the time from each such interrupt to the vCPU running again")                     \
  COUNTER(background_events, "count", kJson,                                                     \
          "background activity on this CPU: interrupts, softirqs, task wake-ups, steal")         \
  COUNTER(background_irq_ns, "ns", kJson, "time in background interrupts and softirqs")          \
  COUNTER(background_overload, "count", kJson,                                                   \
          "background task wake-ups that made nr_running >= 2 (sets rd->overload)")              \
  COUNTER(steal_ns, "ns", kJson, "time the host ran something else on this busy vCPU")            \
  /* the CFS era (NO_EEVDF, fair.cpp); 0 under EEVDF */                                       \
  COUNTER(cfs_wakeup_preempt, "count", 0,                                                        \
          "check_preempt_wakeup(): curr ahead of the wakee by more than wakeup_gran (preempted)") \
  COUNTER(cfs_wakeup_within_gran, "count", 0,                                                    \
          "check_preempt_wakeup(): the wakee within wakeup_gran of curr (no preemption)")        \
  COUNTER(cfs_sleeper_capped, "count", 0,                                                        \
          "place_entity(): a waking task lifted to min_vruntime - sched_latency / 2")            \
  COUNTER(cfs_place_fork, "count", 0, "place_entity(): a new task at min_vruntime + vslice")     \
  COUNTER(cfs_tick_preempt_slice, "count", 0,                                                    \
          "check_preempt_tick(): curr ran past its sched_slice() since switch-in")               \
  COUNTER(cfs_tick_preempt_ahead, "count", 0,                                                    \
          "check_preempt_tick(): curr's vruntime ahead of the leftmost by more than its slice")   \
  COUNTER(cfs_pick_next_buddy, "count", 0, "pick_next_entity() took the next buddy")             \
  COUNTER(cfs_pick_last_buddy, "count", 0, "pick_next_entity() took the last buddy")             \
  /* EEVDF (fair.cpp): update_curr()'s own reschedule (v6.6 update_deadline(), v6.17 vprot) */ \
  COUNTER(eevdf_deadline_renewed, "count", 0,                                                    \
          "update_deadline(): curr reached its deadline, a new one a slice out")                 \
  COUNTER(eevdf_update_curr_resched, "count", 0,                                                 \
          "update_curr() rescheduled curr: a new deadline or past se->vprot, others queued")     \
  /* schedstat (kernel/sched/stats.c v17), counted where the kernel counts them; --schedstat */  \
  COUNTER(yld_count, "count", 0, "do_sched_yield() (rq->yld_count)")                             \
  COUNTER(sched_goidle, "count", 0, "set_next_task_idle(): schedule() left the CPU idle")        \
  COUNTER(ttwu_runnable, "count", 0, "try_to_wake_up() of a still-queued task (ttwu_runnable())") \
  COUNTER(ttwu_runnable_local, "count", 0, "... of a task queued on the waking CPU")            \
  COUNTER(delay_dequeue, "count", 0, "DELAY_DEQUEUE: a blocking fair task kept queued (sched_delayed)") \
  COUNTER(delay_dequeue_picked, "count", 0, "... dequeued when pick_next_entity() picked it")  \
  COUNTER(delay_requeue, "count", 0, "... woken while still queued (requeue_delayed_entity())") \
  COUNTER(delay_dequeue_woken, "count", 0, "... woken on a busy rq: dequeued, then the full wakeup") \
  COUNTER(rq_cpu_time, "ns", 0, "tasks' time on the CPU, switch-in to switch-out (sched_info)")  \
  COUNTER(run_delay, "ns", 0, "tasks' time runnable before switch-in (sched_info run_delay)")    \
  COUNTER(pcount, "count", 0, "tasks switched in (sched_info pcount)")                           \
  COUNTER(workload_nvcsw, "count", kJson,                                                            \
          "switches away from a benchmark task that blocked or exited (its nvcsw)")               \
  COUNTER(workload_nivcsw, "count", kJson,                                                           \
          "switches away from a benchmark task still runnable: preempted, yielded (its nivcsw)") \
  COUNTER(workload_migrations, "count", 0,                                                        \
          "set_task_cpu() moving a benchmark task (perf's cpu-migrations of its tasks)")          \
  COUNTER(nr_failed_migrations_hot, "count", 0,                                                 \
          "can_migrate_task() left a cache-hot task in place (tasks' nr_failed_migrations_hot)") \
  ARRAY(lb_count, PerSdIdle, "count", 0, "sched_balance_rq() calls")                             \
  ARRAY(lb_balanced, PerSdIdle, "count", 0, "... that found the domain balanced")                \
  ARRAY(lb_failed, PerSdIdle, "count", 0, "... that found an imbalance and moved nothing")       \
  ARRAY(lb_imbalance_load, PerSdIdle, "load", 0, "imbalance found, migrate_load")                \
  ARRAY(lb_imbalance_util, PerSdIdle, "util", 0, "imbalance found, migrate_util")                \
  ARRAY(lb_imbalance_task, PerSdIdle, "tasks", 0, "imbalance found, migrate_task")              \
  ARRAY(lb_imbalance_misfit, PerSdIdle, "count", 0, "imbalance found, migrate_misfit")          \
  ARRAY(lb_gained, PerSdIdle, "count", 0, "tasks pulled")                                        \
  ARRAY(lb_hot_gained, PerSdIdle, "count", 0, "... of them cache-hot")                           \
  ARRAY(lb_nobusyq, PerSdIdle, "count", 0, "no busiest runqueue in the busiest group")           \
  ARRAY(lb_nobusyg, PerSdIdle, "count", 0, "no busiest group")                                   \
  ARRAY(ttwu_wake_remote, PerSd, "count", 0, "wakeups onto another CPU of this lowest domain")   \
  ARRAY(ttwu_move_affine, PerSd, "count", 0, "wake_affine() chose the waking CPU")

struct CpuCounters {
#define SCHEDLAB_DECLARE_COUNTER(name, unit, show, meaning) int64_t name = 0;
#define SCHEDLAB_DECLARE_ARRAY(name, storage, unit, show, meaning) storage name{};
#define SCHEDLAB_DECLARE_DERIVED(name, unit, show, meaning, expr)
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_DECLARE_COUNTER, SCHEDLAB_DECLARE_ARRAY, SCHEDLAB_DECLARE_DERIVED)
#undef SCHEDLAB_DECLARE_COUNTER
#undef SCHEDLAB_DECLARE_ARRAY
#undef SCHEDLAB_DECLARE_DERIVED

  // The scheduler changes' own counters (change.hpp), in the order of change_types(); sized
  // when the Kernel is built.
  std::vector<int64_t> change;

  void add(const CpuCounters& o);
};

// The derived counters, as functions of the counters: derived::kernel_total_ns(c), ...
namespace derived {
template <class A>
int64_t sum_of(const A& a) {
  int64_t s = 0;
  for (auto v : a) s += v;
  return s;
}
inline double ratio(int64_t a, int64_t b) { return b ? static_cast<double>(a) / b : 0.0; }
#define SCHEDLAB_DEFINE_DERIVED(name, unit, show, meaning, expr) \
  inline auto name(const CpuCounters& c) { return expr; }
#define SCHEDLAB_IGNORE(...)
SCHEDLAB_CPU_COUNTERS(SCHEDLAB_IGNORE, SCHEDLAB_IGNORE, SCHEDLAB_DEFINE_DERIVED)
#undef SCHEDLAB_DEFINE_DERIVED
#undef SCHEDLAB_IGNORE
}  // namespace derived

// The element names of an array counter.
inline const char* array_key(const PerPath&, int i) {
  return trace::kernel_path_name(static_cast<trace::KernelPath>(i));
}
inline const char* array_key(const PerIpi&, int i) { return kIpiKindKeys[i]; }
inline const char* array_key(const PerSd&, int i) { return kSdLevelKeys[i]; }
inline const char* array_key(const PerSdIdle&, int i) { return kSdIdleKeys[i]; }
inline const char* array_key(const PerLine&, int i) { return kLineClassKeys[i]; }
static_assert(kNumKernelPaths != kNumIpiKinds && kNumKernelPaths != kNumSdLevels &&
                  kNumKernelPaths != kNumSdLevels * kNumIdleTypes && kNumIpiKinds != kNumSdLevels &&
                  kNumLineClasses != kNumKernelPaths && kNumLineClasses != kNumIpiKinds &&
                  kNumLineClasses != kNumSdLevels && kNumLineClasses != kNumSdLevels * kNumIdleTypes,
              "the array counters' storage types must differ (array_key overloads on them)");

}  // namespace schedlab::kernel
