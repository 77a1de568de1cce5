// kernel/sched/sched.h: the scheduler's state (runqueues, sched domains, the LLC's shared
// state, call-function entries), the sched_class ops table, and the policy functions of each
// kernel file. Policy functions are free functions carrying the name of the kernel function
// they model, defined in the file named after the kernel file (core.cpp: core.c, ...). They
// take the Kernel (the system's global and per-CPU state, kernel.hpp) and the runqueue or task
// they work on. Kernel work they do is charged as steps on the CPU's chain (cpu.hpp); remote
// effects (IPIs, polling kicks) are scheduled `offset` ns into the caller's current work.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/base.hpp"
#include "kernel/cacheline.hpp"
#include "kernel/counters.hpp"
#include "kernel/lock.hpp"
#include "kernel/task.hpp"
#include "kernel/topology.hpp"
#include "sim/time.hpp"
#include "trace/sink.hpp"

namespace schedlab::kernel {

class Kernel;
struct Irq;
using trace::IpiKind;
using trace::KernelPath;

// __schedule()'s mode argument.
enum class SchedMode : uint8_t {
  SM_NONE,     // schedule(): prev may block
  SM_PREEMPT,  // preemption: prev stays runnable
  SM_IDLE,     // schedule_idle() from the idle loop
};

enum class SdLevel : uint8_t { SMT, MC, PKG, NUMA };
// sd_init() (kernel/sched/topology.c): a domain's imbalance_pct, 110 at the SMT level.
inline constexpr int kSdImbalancePct = 117;
inline constexpr int kSdImbalancePctSmt = 110;
const char* sd_level_name(SdLevel l);

// One sched_domain level as seen from one CPU; the span is shared with every CPU it covers.
struct SchedDomain {
  SdLevel level = SdLevel::MC;
  CpuSpan span;
  int64_t min_interval_ms = 1;
  int64_t max_interval_ms = 2;
  int64_t balance_interval_ms = 1;
  int imbalance_pct = kSdImbalancePct;
  Time last_balance;
  int64_t max_newidle_lb_cost = 0;  // ns
  Time last_decay_max_lb_cost;
  bool is_llc = false;
  int cache_nice_tries = 0;   // sd_init(): 0 at SMT, 2 at NUMA, 1 otherwise
  int nr_balance_failed = 0;  // periodic balances in a row that found an imbalance, moved nothing
  const char* name() const { return sd_level_name(level); }
};

// sched_domain_shared: one per LLC.
struct SchedDomainShared {
  CpuSpan cpus;
  int nr_idle_scan = 0;       // SIS_UTIL
  // Whether a busy CPU's periodic balance of the LLC level has recomputed nr_idle_scan during
  // this run. Until then the value is the start state's (the boot zero, the warm start's idle-LLC
  // value) or one an idle CPU computed; under load only busy CPUs balance periodically, at
  // balance_interval x busy_factor, so this is when SIS_UTIL starts to track the load.
  bool nr_idle_scan_busy_refreshed = false;
  int nr_busy_cpus = 0;       // CPUs not in NOHZ idle (dec at nohz idle entry, inc at the busy tick)
  bool has_idle_cores = false;
  int64_t avg_scan_cost = 0;  // sd->avg_scan_cost of the LLC domain (ns, 1/8 EWMA)
  CacheLine line;             // the struct's line (has_idle_cores, nr_idle_scan, nr_busy_cpus)
};

// What a queued call-function runs besides its handler.
enum class CsdFunc : uint8_t {
  None,
  NohzIdleBalance,  // nohz_csd_func(): the kicked idle CPU balances its domains
};

// rq->nohz_flags (kernel/sched/sched.h).
enum NohzFlags : uint8_t {
  NOHZ_BALANCE_KICK = 1,  // run sched_balance_domains() on behalf of the NOHZ idle CPUs
  NOHZ_STATS_KICK = 2,    // update their blocked load
  NOHZ_NEXT_KICK = 4,     // update nohz.next_balance
  NOHZ_NEWILB_KICK = 8,   // nohz_newidle_balance(): update blocked load at the next do_idle()
};
inline constexpr uint8_t NOHZ_KICK_MASK = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;

// The global NOHZ state (the `nohz` struct of fair.c).
struct NohzState {
  std::vector<uint64_t> idle_cpus_mask;  // CPUs that stopped their tick, cleared at a busy tick
  int nr_cpus = 0;
  bool has_blocked = false;   // some NOHZ idle CPU may still have blocked load to decay
  bool needs_update = false;  // nohz.next_balance is stale
  int64_t next_balance = 0;   // jiffies
  int64_t next_blocked = 0;   // jiffies
  bool test(int cpu) const { return idle_cpus_mask[cpu >> 6] >> (cpu & 63) & 1; }
};

// Softirqs the model raises (include/linux/interrupt.h numbers).
enum SoftirqNr : uint8_t { SCHED_SOFTIRQ = 7 };

struct Csd {  // (the small fields first: 24 bytes, inside each KernelStep)
  int src_cpu = 0;
  bool wait = false;
  CsdFunc func = CsdFunc::None;
  int64_t handler_ns = 0;
  Task* waiter = nullptr;  // task spinning in csd_lock_wait(), if wait
};

// struct rq: the scheduler's per-CPU state. How the CPU executes (its mode, its chain of kernel
// steps, interrupts) is the Cpu's (cpu.hpp); cpuidle and the governor keep their own.
// (Aligned to a pair of cache lines, with what the wakeup scan's line_read() and idle_cpu()
// touch in them: select_idle_cpu() visits one rq per CPU it scans.)
// A _nohz_idle_balance() pass's running results (balance.cpp).
struct NohzPass {
  uint8_t flags = 0;
  bool has_blocked = false;
  bool update_next = false;
  bool aborted = false;
  Time next_balance = Time::max();
  int64_t start_jiffies = 0;
};

struct alignas(128) Rq {
  CacheLine line;               // the line idle_cpu() reads: curr, nr_running, ttwu_pending
  int cpu = 0;
  int nr_running = 0;           // rq->nr_running (queued + curr if it is a runnable task)
  Task* curr = nullptr;
  Task* idle = nullptr;
  bool need_resched = false;    // TIF_NEED_RESCHED of curr
  // update_curr() (EEVDF) asked to reschedule curr (resched_curr_lazy()) and the request has
  // not been delivered yet: the tick and wakeup_preempt() deliver it (resched_curr(), an IPI to
  // a remote CPU), __schedule() drops it with need_resched.
  bool fair_resched = false;
  bool polling = false;         // TIF_POLLING_NRFLAG of the idle task
  bool notify_ipi = false;      // TIF_NOTIFY_IPI of the idle task (the 2024 RFC)
  bool ttwu_pending = false;
  SpinLock lock;                // rq->__lock (lock.hpp)
  std::vector<Task*> cfs;       // queued fair tasks other than curr
  // CFS (NO_EEVDF): cfs_rq->min_vruntime and the buddies (cfs_rq->next, ->last, ->skip).
  int64_t min_vruntime = 0;
  Task* cfs_next = nullptr;
  Task* cfs_last = nullptr;
  Task* cfs_skip = nullptr;
  std::vector<Task*> rt;        // queued RT tasks other than curr
  std::vector<Task*> wake_list; // TTWU entries on call_single_queue
  std::vector<Task*> ttwu_inflight;  // taken off the queue by a flush, not yet enqueued
  // Direct enqueues (ttwu_queue() under this rq's lock) whose wakers decided on this CPU but have
  // not yet reached activate_task(): when each does (ns), ascending. Until then idle_cpu() reads
  // the rq as before the enqueue, as the kernel's readers do.
  std::vector<int64_t> enqueue_pending;
  std::vector<Csd> call_queue;  // SYNC/ASYNC csds on call_single_queue
  int active_mm = 0;            // the user mm loaded on this CPU (kept lazily across idle)
  bool yield_to_tail = false;   // sched_yield() of an RT curr: put_prev_task() requeues it last
  std::vector<int64_t> timers;  // expiry times (ns) of hrtimers armed on this CPU, ascending

  // Load tracking and balancing
  double util_avg = 0;  // 0..1024, PELT-like
  Time util_last;
  bool util_busy = false;
  // cfs_rq->avg.load_avg (pelt.cpp): the attached fair tasks' loads, blocked ones included, as
  // of load_last; load_weight is cfs_rq->load.weight, the weight of the queued fair tasks.
  double load_avg = 0;
  int64_t load_weight = 0;
  Time load_last;
  Time idle_stamp;
  bool idle_stamp_valid = false;
  int64_t avg_idle = 0;
  int64_t max_idle_balance_cost = 0;
  Time next_balance;
  int64_t wake_avg_idle = 0;   // SIS_PROP
  Time wake_stamp;
  // NOHZ idle balancing
  uint8_t nohz_flags = 0;         // NohzFlags kicked at this CPU
  uint8_t nohz_idle_balance = 0;  // the flags nohz_csd_func() handed to SCHED_SOFTIRQ
  // nohz_run_idle_balance()'s pass in progress, one NOHZ idle CPU a step (so a wake-up that
  // lands during it is seen at the next CPU's need_resched() test, as in the kernel's loop):
  // the next position in the wrap from cpu + 1 (-1: no pass) and the pass's running results.
  int nohz_run_pos = -1;
  NohzPass nohz_run;
  bool idle_balance = false;      // rq->idle_balance: idle at the tick / at the ILB kick
  bool nohz_tick_stopped = false; // in nohz.idle_cpus_mask
  bool sd_nohz_idle = false;      // counted out of the LLC's nr_busy_cpus
  bool has_blocked_load = false;
  int64_t last_blocked_load_update_tick = -1;  // jiffies

  std::vector<SchedDomain> sd;  // bottom-up
  int llc = 0;
  CpuCounters c;
};

// The root domain's overload state.
struct RootDomain {
  int nr_overloaded = 0;  // runqueues with nr_running >= 2 right now
  bool overload = false;  // rd->overload: set on enqueue, refreshed by root-level balancing
};

// The scheduler's state (core.cpp, fair.cpp, rt.cpp, balance.cpp): the runqueues, the LLCs'
// sched_domain_shared, the root domain, and how many live user tasks each CPU holds.
struct SchedState {
  std::vector<Rq> rqs;
  std::vector<SchedDomainShared> llcs;
  RootDomain rd;
  std::vector<int> nr_assigned;  // live user tasks whose task_cpu() is this CPU
};

// Scratch tables of fair.cpp, reused without allocating: select_idle_cpu()'s cores seen (by
// generation), fork balancing's (sched_balance_find_dst_cpu()) candidates and per-core sums.
struct ForkScratch {
  std::vector<int> cands, keys, count, sum;
};
struct FairScratch {
  std::vector<uint32_t> core_seen;
  uint32_t core_seen_gen = 0;
  ForkScratch fork;
};

// struct sched_class: what each scheduling class does. Classes in priority order: rt > fair >
// idle (stop, deadline and sched_ext are not modeled).
struct SchedClass {
  const char* name;
  int rank;  // higher runs first (sched_class_above())
  void (*enqueue_task)(Kernel& k, Rq& rq, Task* p);
  void (*dequeue_task)(Kernel& k, Rq& rq, Task* p);  // p blocks (it is rq->curr)
  void (*put_prev_task)(Kernel& k, Rq& rq, Task* prev);  // prev stays runnable: requeue it
  Task* (*pick_task)(Kernel& k, Rq& rq);  // the next task of the class, taken off the queue
  // p becomes rq->curr; returns extra kernel work (ns) the switch does for the class.
  int64_t (*set_next_task)(Kernel& k, Rq& rq, Task* p);
  // A task of the same class as curr was enqueued: should it preempt curr?
  bool (*wakeup_preempt)(Kernel& k, Rq& rq, Task* p);
  int (*select_task_rq)(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost);
  void (*task_tick)(Kernel& k, Rq& rq, Task* curr);
  void (*yield_task)(Kernel& k, Rq& rq);  // sched_yield() of rq->curr
};
extern const SchedClass rt_sched_class;
extern const SchedClass fair_sched_class;
extern const SchedClass idle_sched_class;

// --- core.cpp (kernel/sched/core.c) -------------------------------------------------------
void __schedule(Kernel& k, Rq& rq, SchedMode mode);
// __schedule(SM_IDLE)'s idle re-entry fast path (SM_IDLE): `cost` of `path` so far, the rq
// unlock (the interrupts that arrived meanwhile), then schedule_idle()'s need_resched test.
void __schedule_idle_fastpath(Kernel& k, Rq& rq, KernelPath path, int64_t cost);
void finish_task_switch(Kernel& k, Rq& rq, Task* prev, Task* next);
Task* pick_next_task(Kernel& k, Rq& rq);
void activate_task(Kernel& k, Rq& rq, Task* p);
void deactivate_task(Kernel& k, Rq& rq, Task* p);
void add_nr_running(Kernel& k, Rq& rq, int count);
void sub_nr_running(Kernel& k, Rq& rq, int count);
void set_task_cpu(Kernel& k, Task* p, int cpu);
// `offset`: how far into the reader's work the read is (ns): a direct enqueue decided earlier
// (Rq::enqueue_pending) counts once it lands by then.
bool idle_cpu(const Kernel& k, int cpu, int64_t offset = 0);
inline bool available_idle_cpu(const Kernel& k, int cpu, int64_t offset = 0) {
  return idle_cpu(k, cpu, offset);
}
int select_fallback_rq(const Kernel& k, int cpu, const Task* p);
int select_task_rq(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost);
int64_t try_to_wake_up(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync);
int64_t try_to_wake_up_locked(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync,
                              int64_t at, int64_t c);
int64_t ttwu_runnable(Kernel& k, int this_cpu, Task* p, int64_t c);
bool ttwu_queue_cond(const Kernel& k, int this_cpu, int cpu);
int64_t ttwu_queue(Kernel& k, int this_cpu, Task* p, int cpu, int64_t offset, int64_t at);
int64_t ttwu_do_activate(Kernel& k, int this_cpu, Rq& rq, Task* p, int64_t offset);
int64_t wakeup_preempt(Kernel& k, int this_cpu, Rq& rq, Task* p, int64_t offset);
int64_t resched_curr(Kernel& k, int this_cpu, Rq& target, int64_t offset);
void sched_tick(Kernel& k, Rq& rq);
void do_sched_yield(Kernel& k, Rq& rq);
bool set_cpus_allowed_ptr(Kernel& k, Rq& rq, Task* p, const std::vector<bool>* mask);
void do_exit(Kernel& k, Rq& rq, Task* p);

// --- fair.cpp (kernel/sched/fair.c: EEVDF and wakeup placement) ----------------------------
int64_t avg_vruntime(const Rq& rq);
void update_curr(Kernel& k, Rq& rq);
void place_entity(Rq& rq, Task* p);
// protect: the slice protection of a running curr (se->vprot), as __pick_eevdf()'s `protect`
// argument. The schedule() path picks with curr already put back, so it never applies there (the
// kernel picks with curr still current: the one case that differs is a protected task that
// yields, which the kernel picks again).
Task* pick_eevdf(Rq& rq, bool protect = false);
// detach_task() of a queued fair task from `rq` (load balance): EEVDF keeps its lag; CFS drops it
// from rq's buddies (its vruntime is renormalized when it is enqueued on the new rq).
void detach_task_fair(Kernel& k, Rq& rq, Task* p);
// DELAY_DEQUEUE: dequeue_entity() of a blocking curr that is not eligible keeps it queued
// (sched_delayed); returns whether it did (then the caller does not deactivate it).
bool delay_dequeue_fair(Kernel& k, Rq& rq, Task* p);
// requeue_delayed_entity(): a wakeup of a delayed task (ttwu_runnable()): it stays where it is
// queued; with DELAY_ZERO a positive lag is dropped (re-placed at the average).
void requeue_delayed_fair(Kernel& k, Rq& rq, Task* p);
// DEQUEUE_DELAYED: a delayed task leaves its queue for good (picked, or woken onto a busy rq).
void finish_delayed_dequeue_fair(Kernel& k, Rq& rq, Task* p);
// CFS (NO_EEVDF): the sysctls as the kernel scales them (derived from base_slice_ns), ns.
struct CfsTunables {
  int64_t latency_ns = 0;             // sysctl_sched_latency
  int64_t min_granularity_ns = 0;     // sysctl_sched_min_granularity (= base_slice_ns)
  int64_t wakeup_granularity_ns = 0;  // sysctl_sched_wakeup_granularity
  int64_t nr_latency = 0;             // sched_nr_latency (tasks)
};
CfsTunables cfs_tunables(const Kernel& k);
void update_min_vruntime_cfs(Rq& rq, const Task* leaving);
int64_t sched_slice_cfs(const Kernel& k, const Rq& rq, const Task* p);
int select_task_rq_fair(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost);
int wake_affine(Kernel& k, int this_cpu, int prev_cpu, bool sync, Task* waker, Task* p,
                int64_t& cost);
bool wake_wide(const Kernel& k, const Task* waker, const Task* p);
void record_wakee(Kernel& k, Task* waker, Task* p);
int select_idle_sibling(Kernel& k, int this_cpu, Task* p, int prev, int target, int64_t& cost);
int select_idle_cpu(Kernel& k, int this_cpu, Task* p, int target, bool has_idle_core,
                    int64_t& cost);
int select_idle_smt(Kernel& k, int this_cpu, Task* p, int target, int64_t& cost);
int64_t __update_idle_core(Kernel& k, Rq& rq);  // returns the cost (sibling reads, the write)
int sched_balance_find_dst_cpu(Kernel& k, const Task* p, int start_cpu);  // find_idlest_cpu()

// --- idle.cpp (kernel/sched/idle.c, drivers/cpuidle/cpuidle.c) -----------------------------
void do_idle(Kernel& k, Rq& rq);
void do_idle_polling(Kernel& k, Rq& rq);  // __current_set_polling(), tick_nohz_idle_enter()
void do_idle_loop(Kernel& k, Rq& rq);   // the next turn of do_idle()'s loop
void do_idle_exit(Kernel& k, Rq& rq);   // need_resched: leave the loop (tick_nohz_idle_exit())
void do_idle_flush(Kernel& k, Rq& rq);  // polling cleared, flush_smp_call_function_queue()
void schedule_idle_loop(Kernel& k, Rq& rq);  // schedule_idle()'s `while (need_resched())`
void cpuidle_idle_call(Kernel& k, Rq& rq);
void call_cpuidle(Kernel& k, Rq& rq, int state, bool stop_tick);
void cpuidle_enter_state(Kernel& k, Rq& rq, int state);
// Leaving an idle state: by an interrupt (now pending on the CPU) or a polling kick; `slept`
// is false when the state returned at once (no exit latency).
void cpuidle_exit_state(Kernel& k, Rq& rq, bool slept);
void cpuidle_exit_done(Kernel& k, Rq& rq);  // after the state's exit and its interrupts
void exit_idle(Kernel& k, Rq& rq);          // cpuidle_idle_call()'s exit_idle label
void poll_idle_continue(Kernel& k, Rq& rq); // poll_idle() after an interrupt taken in it
void poll_idle_time_limit(Kernel& k, Rq& rq);
bool need_resched_or_ipi(const Kernel& k, const Rq& rq);
int64_t set_next_task_idle(Kernel& k, Rq& rq, Task* idle);

// --- menu.cpp (drivers/cpuidle/governors/menu.c) ------------------------------------------
int menu_select(Kernel& k, Rq& rq, bool& stop_tick);
void menu_update(Kernel& k, int cpu, int64_t measured_ns);

// --- smp.cpp (kernel/smp.c and the IPI side of core.c) ------------------------------------
int64_t send_ipi(Kernel& k, int from, int to, IpiKind kind, int64_t offset);
void ipi_raised(Kernel& k, int from, int to, IpiKind kind, Time t);
int64_t send_call_function_single_ipi(Kernel& k, int from, int to, int64_t offset);
bool set_nr_if_polling(Kernel& k, int from, Rq& target, int64_t offset);
void wake_polling_idle(Kernel& k, int from, Rq& target, int64_t offset);
// From kernel code (the ILB kick in the tick): decisions now, remote effects at offsets.
int64_t smp_call_function_single(Kernel& k, Rq& src, int target, Csd csd);
// From a task (ipistorm): the sender's steps, each decision taken when its step lands.
void smp_call_function_single_from_task(Kernel& k, Rq& src, int target, const Csd& csd);
struct KernelStep;
void smp_call_function_single_step(Kernel& k, int cpu, const KernelStep& step);
// Runs the queue: from the call-function IPI handler (from_ipi) or do_idle()'s flush.
void __flush_smp_call_function_queue(Kernel& k, Rq& rq, bool from_ipi);
void flush_smp_call_function_queue(Kernel& k, Rq& rq);  // do_idle(): flush + pending softirqs
void sched_ttwu_pending(Kernel& k, Rq& rq, uint32_t count);
void csd_unlock(Kernel& k, Task* waiter, int from_cpu);
void smp_ipi_handler(Kernel& k, Rq& rq, IpiKind kind);

// --- balance.cpp (kernel/sched/fair.c: load balancing; PELT) --------------------------------
int sched_balance_newidle(Kernel& k, Rq& rq);  // newidle_balance(); returns tasks pulled
// load_balance() of `rq` at one level, run by CPU `this_cpu` (rq's own, or the ILB's).
int sched_balance_rq(Kernel& k, int this_cpu, Rq& rq, SchedDomain& sd, bool newly_idle,
                     int64_t& cost);
// rebalance_domains() of `rq`, run by `this_cpu`.
void sched_balance_domains(Kernel& k, int this_cpu, Rq& rq, int64_t& cost);
int64_t sched_balance_update_blocked_averages(Kernel& k, int this_cpu, Rq& rq);
int64_t sched_balance_softirq(Kernel& k, Rq& rq);  // SCHED_SOFTIRQ
void update_idle_cpu_scan(Kernel& k, int llc);
void update_rq_util(Kernel& k, Rq& rq);
// --- pelt.cpp (kernel/sched/pelt.c, fair.c: the load signal of tasks and runqueues) ----------
double pelt_decay(int64_t ns);                     // y^(ns / 1024 us), y^32 = 1/2
void update_load_avg(Kernel& k, Rq& rq, Task* p);  // brings rq's (and p's, if p) load to date
void pelt_enqueue(Kernel& k, Rq& rq, Task* p);     // p becomes runnable on rq (attached there)
void pelt_dequeue(Kernel& k, Rq& rq, Task* p);     // p stops being runnable on rq
void pelt_detach(Kernel& k, Task* p);              // p's load leaves its rq (migration, exit)
int64_t cpu_load(const Rq& rq);                    // cpu_load(): cfs_rq->avg.load_avg
int64_t task_h_load(const Task* p);                // task_h_load() without group scheduling
void update_avg_idle_on_wakeup(Kernel& k, Rq& rq);
bool task_hot(const Kernel& k, const SchedDomain& sd, const Task* p);
void sched_balance_trigger(Kernel& k, Rq& rq, int64_t& cost);
void nohz_balancer_kick(Kernel& k, Rq& rq, int64_t& cost);
void nohz_balance_enter_idle(Kernel& k, Rq& rq);
void nohz_balance_exit_idle(Kernel& k, Rq& rq);
void nohz_newidle_balance(Kernel& k, Rq& rq);
// At the top of do_idle(): true when a pass starts; nohz_run_idle_balance_next() runs it, one
// NOHZ idle CPU a step, and goes on to do_idle_polling() when it ends or aborts.
bool nohz_run_idle_balance(Kernel& k, Rq& rq);
void nohz_run_idle_balance_next(Kernel& k, Rq& rq);
int64_t _nohz_idle_balance(Kernel& k, Rq& this_rq, uint8_t flags);
int64_t nohz_csd_func(Kernel& k, int cpu);

// --- softirq.cpp (kernel/softirq.c) --------------------------------------------------------
// Returns the cost on the raising CPU (a ksoftirqd wakeup when not in interrupt context).
int64_t raise_softirq_irqoff(Kernel& k, int cpu, SoftirqNr nr);
bool local_softirq_pending(const Kernel& k, int cpu);
// __do_softirq(): runs the pending softirqs as a step with interrupts enabled.
void do_softirq(Kernel& k, Rq& rq);

// --- tick.cpp (kernel/time/tick-sched.c) ---------------------------------------------------
void tick_sched_timer_start(Kernel& k, int cpu);
void tick_nohz_idle_stop_tick(Kernel& k, int cpu);
void tick_nohz_idle_restart_tick(Kernel& k, int cpu);
void tick_sched_timer(Kernel& k, int cpu);
// hrtimer_nanosleep()'s timer for `p`, armed on `cpu` to expire at `expiry_ns` (absolute): it is
// listed in the rq's timers (the governor's next event) and its interrupt wakes `p` (cpu.cpp).
void hrtimer_start_sleep(Kernel& k, int cpu, Task* p, int64_t expiry_ns);

// --- topology.cpp (kernel/sched/topology.c) ------------------------------------------------
void build_sched_domains(Kernel& k);

// --- warm.cpp (the state an idle machine's mechanisms leave; docs/model.md "Warm start") -----
// Puts every CPU in its idle loop at time 0 as on a machine that has been up and idle.
void warm_start(Kernel& k);
int64_t warm_idle_wake_ns();  // how long ago, at most, each CPU was last awake

// --- the state's accessors (cpu_rq(), this_rq() and the nohz struct of the kernel) -----------
inline SchedState& Kernel::sched() { return *sched_; }
inline const SchedState& Kernel::sched() const { return *sched_; }
inline Rq& Kernel::rq(int cpu) { return sched_->rqs[cpu]; }
inline const Rq& Kernel::rq(int cpu) const { return sched_->rqs[cpu]; }
inline int Kernel::nr_running(int cpu) const { return sched_->rqs[cpu].nr_running; }
inline SchedDomainShared& Kernel::llc_shared(int llc) { return sched_->llcs[llc]; }
inline const SchedDomainShared& Kernel::llc_shared(int llc) const { return sched_->llcs[llc]; }
inline RootDomain& Kernel::rd() { return sched_->rd; }
inline int& Kernel::nr_assigned(int cpu) { return sched_->nr_assigned[cpu]; }
inline NohzState& Kernel::nohz() { return *nohz_; }
inline const NohzState& Kernel::nohz() const { return *nohz_; }
inline FairScratch& Kernel::fair_scratch() { return *fair_scratch_; }

}  // namespace schedlab::kernel
