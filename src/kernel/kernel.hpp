// The scheduler model: per-CPU runqueues, sched domains, the wakeup path, __schedule(), the idle
// loop, IPIs and call-function queues, newidle and periodic balancing, the tick.
// Functions carry the names of the kernel functions they model; each states what it leaves out.
// Files: core.cpp (schedule, ttwu, resched), fair.cpp (EEVDF, select_task_rq_fair and the idle
// search), idle.cpp (do_idle, governor), smp.cpp (IPIs, call-function), balance.cpp (newidle,
// periodic, SIS_UTIL), tick.cpp, topology.cpp (sched domains), cpu.cpp (execution and accounting).
#pragma once
#include <deque>
#include <set>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/counters.hpp"
#include "kernel/features.hpp"
#include "kernel/task.hpp"
#include "machine/machine.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "trace/sink.hpp"

namespace schedlab::kernel {

using machine::Distance;
using trace::IpiKind;
using trace::KernelPath;

// One sched_domain level as seen from one CPU.
struct SchedDomain {
  std::string name;               // "SMT", "MC", "PKG", "NUMA"
  std::vector<int> span;          // ascending CPU ids
  int64_t min_interval_ms = 1;
  int64_t max_interval_ms = 2;
  int64_t balance_interval_ms = 1;
  int imbalance_pct = 117;
  Time last_balance;
  int64_t max_newidle_lb_cost = 0;  // ns
  Time last_decay_max_lb_cost;
  bool is_llc = false;
};

// sched_domain_shared: one per LLC.
struct LlcShared {
  std::vector<int> cpus;
  int nr_idle_scan = 0;       // SIS_UTIL
  bool has_idle_cores = false;
  std::vector<bool> idle_mask;  // IDLE_CPUMASK, indexed by CPU id
  int64_t avg_scan_cost = 0;  // sd->avg_scan_cost of the LLC domain (ns, 1/8 EWMA)
};

// What a CPU is doing right now.
enum class Mode : uint8_t { Task, Kernel, Idle, Spin };

// One piece of kernel work on a CPU: `ns` of `path`, then `done` (if any) takes effect.
struct KernelStep {
  KernelPath path;
  int64_t ns;
  std::function<void()> done = nullptr;
};

struct Irq {
  enum Kind : uint8_t { Ipi, Timer, Tick } kind;
  IpiKind ipi = IpiKind::Reschedule;
  Task* timer_task = nullptr;  // for Timer
};

struct Csd {
  int src_cpu;
  int64_t handler_ns;
  bool wait;
  Task* waiter;  // task spinning in csd_lock_wait(), if wait
  std::function<int64_t(int cpu)> func = nullptr;  // extra work the function does (returns ns)
};

struct Rq {
  int cpu = 0;
  Task* curr = nullptr;
  Task* idle = nullptr;
  std::vector<Task*> cfs;       // queued fair tasks other than curr
  std::vector<Task*> rt;        // queued RT tasks other than curr
  bool need_resched = false;    // TIF_NEED_RESCHED of curr
  bool polling = false;         // TIF_POLLING_NRFLAG of the idle task
  bool ttwu_pending = false;
  std::vector<Task*> wake_list; // TTWU entries on call_single_queue
  std::vector<Task*> ttwu_inflight;  // taken off the queue by a flush, not yet enqueued
  std::vector<Csd> call_queue;  // SYNC/ASYNC csds on call_single_queue
  int nr_running = 0;           // rq->nr_running (queued + curr if it is a runnable task)
  int active_mm = 0;            // the user mm loaded on this CPU (kept lazily across idle)
  bool spin_end_requested = false;
  bool no_spin_once = false;    // IDLE_SPIN: the spin just ended, block for real this time
  bool yield_to_tail = false;   // sched_yield() of an RT curr: pick_next_task() requeues it last
  bool poll_timed_out = false;  // POLL state hit its time limit in this idle period
  Time spin_hidden_since;       // a fair task waits behind a spinning RT task since
  bool spin_hidden = false;
  Time kstep_start;

  // Execution
  Mode mode = Mode::Kernel;
  std::deque<KernelStep> steps;             // kernel chain being executed
  std::function<void()> after_steps;        // what runs when the chain is done
  sim::EventId seg_end;                     // end of the current segment
  Time seg_start;
  double speed = 1.0;                       // SMT co-run throughput factor of the task segment
  std::vector<Irq> pending_irqs;            // arrived while IRQs were off
  int idle_state = -1;                      // cpuidle state index while in Mode::Idle
  Time idle_start;
  bool tick_stopped = false;
  sim::EventId tick_event;
  sim::EventId poll_limit_event;
  sim::EventId polling_wake_event;
  Task* spin_task = nullptr;                // IDLE_SPIN: the task we are spinning for
  sim::EventId spin_timeout;
  Time spin_start;

  // Accounting: the bucket the CPU's time currently goes to.
  int bucket = 0;  // 0 busy; 1..P kernel path+1; P+1+s idle state s
  Time bucket_start;

  // Load tracking and balancing state
  double util_avg = 0;  // 0..1024, PELT-like
  Time util_last;
  bool util_busy = false;
  Time idle_stamp;
  bool idle_stamp_valid = false;
  int64_t avg_idle = 0;
  int64_t max_idle_balance_cost = 0;
  Time next_balance;
  int64_t wake_avg_idle = 0;   // SIS_PROP
  Time wake_stamp;
  std::vector<int64_t> idle_history;  // menu governor: recent idle durations (ns)
  std::multiset<int64_t> timers;      // expiry times (ns) of hrtimers armed on this CPU
  bool last_idle_state = true;        // IDLE_CPUMASK: last value written to the mask
  int64_t idle_entry_extra_ns = 0;    // work owed by do_idle() to the next idle entry step

  std::vector<SchedDomain> sd;  // bottom-up
  int llc = 0;
  CpuCounters c;
};

struct KernelOptions {
  uint64_t seed = 1;
  trace::TraceSink* sink = nullptr;
  bool check = false;  // check invariants after every event (--check)
};

// The sanity checker found the model in an impossible state (a bug in the model).
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TaskOptions {
  Policy policy = Policy::Normal;
  int rt_prio = 0;
  std::vector<int> cpus;  // allowed CPUs (empty = all)
  int fork_cpu = 0;       // the parent's CPU (fork balancing starts here)
  int pin_cpu = -1;       // place exactly here (kthread bound to a CPU)
  bool start_blocked = false;  // created asleep (waits for its first wakeup)
  int mm = -1;            // address space: -1 = a new process (its own), 0 = kernel thread,
                          // else share that mm (threads: pass the first thread's Task::mm)
};

class Kernel {
 public:
  Kernel(const machine::Machine& m, const Features& f, const KernelOptions& opts);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // --- API for workloads ---
  // Affinity given to every user task created without its own (`taskset`); empty = all CPUs.
  void set_default_affinity(std::vector<int> cpus) { default_affinity_ = std::move(cpus); }
  Task* create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o);
  // try_to_wake_up() from outside any CPU's program (e.g. the start of a benchmark).
  void wake_up(Task* p, int from_cpu);
  // Runs until stop() or until simulated time `limit`; then closes the books at now().
  void run(Time limit);
  void stop() { ev_.stop(); }
  Time now() const { return ev_.now(); }
  sim::EventQueue& events() { return ev_; }
  sim::Rng& rng() { return rng_; }
  const machine::Machine& machine() const { return m_; }
  const Features& features() const { return f_; }
  int nr_cpus() const { return static_cast<int>(rqs_.size()); }
  const Rq& rq(int cpu) const { return rqs_[cpu]; }
  const std::vector<std::unique_ptr<Task>>& tasks() const { return tasks_; }
  CpuCounters total() const;
  const LlcShared& llc_shared(int llc) const { return llcs_[llc]; }
  // Draws a cost from the profile value (with the profile's seeded jitter).
  int64_t cost(int64_t ns);

  // --- introspection used by tests and the checker ---
  bool idle_cpu(int cpu) const;            // idle_cpu()
  int nr_running(int cpu) const;
  uint64_t events_run() const { return ev_.events_run(); }
  Time end_time() const { return end_time_; }

 private:
  friend class KernelTestPeer;
  // cpu.cpp: execution and accounting
  void account(Rq& rq, int bucket);
  void set_mode(Rq& rq, Mode m);
  void step_next(Rq& rq);
  int bucket_for_path(KernelPath p) const { return 1 + static_cast<int>(p); }
  int bucket_for_idle(int state) const { return 1 + kNumKernelPaths + state; }
  void run_steps(Rq& rq, std::vector<KernelStep> steps, std::function<void()> then);
  void step_done(int cpu);
  void start_task_segment(Rq& rq);
  void task_segment_done(int cpu);
  void pause_task_segment(Rq& rq);
  double smt_speed(int cpu) const;
  void refresh_sibling_speed(int cpu);
  bool cpu_busy_for_smt(int cpu) const;
  void continue_task(Rq& rq);         // ask curr's program for its next step
  void return_to_task(Rq& rq);        // after an interrupt or kernel chain in task context
  void deliver_irq(int cpu, Irq irq);
  void handle_irq(Rq& rq, Irq irq, std::function<void()> then);
  void after_irq(Rq& rq);
  void process_pending_irqs(Rq& rq, std::function<void()> then);

  // core.cpp
  void schedule(Rq& rq, int mode);    // __schedule(): 0 = SM_NONE, 1 = SM_PREEMPT, -1 = SM_IDLE
  void finish_switch(Rq& rq, Task* prev, Task* next);
  Task* pick_next_task(Rq& rq);
  void sched_yield(Rq& rq);           // fair.cpp: do_sched_yield() for rq.curr
  void activate_task(Rq& rq, Task* p, bool wakeup);
  void deactivate_task(Rq& rq, Task* p);
  void set_task_cpu(Task* p, int cpu);
  int64_t try_to_wake_up(int this_cpu, Task* waker, Task* p, bool sync);
  int64_t ttwu_queue(int this_cpu, Task* p, int target, int64_t offset);
  bool ttwu_queue_cond(int this_cpu, int cpu) const;
  int64_t ttwu_do_activate(int this_cpu, Rq& rq, Task* p, int64_t offset);
  int64_t wakeup_preempt(int this_cpu, Rq& rq, Task* p, int64_t offset);
  int64_t resched_curr(int this_cpu, Rq& target, int64_t offset);
  bool task_hot(const Task* p) const;
  void set_need_resched_local(Rq& rq);
  void start_idle_spin(Rq& rq, Task* prev);
  void end_idle_spin(Rq& rq, bool woken);
  void task_exit(Rq& rq, Task* p);

  // fair.cpp
  int64_t avg_vruntime(const Rq& rq) const;
  void update_curr(Rq& rq);
  void place_entity(Rq& rq, Task* p);
  Task* pick_eevdf(Rq& rq);
  int select_task_rq_fair(int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost);
  int wake_affine(int this_cpu, int prev_cpu, bool sync, Task* p, int64_t& cost);
  bool wake_wide(Task* waker, Task* p) const;
  void record_wakee(Task* waker, Task* p);
  int select_idle_sibling(int this_cpu, Task* p, int prev, int target, int64_t& cost);
  int select_idle_cpu(int this_cpu, Task* p, int target, bool has_idle_core, int64_t& cost);
  int select_idle_smt(int this_cpu, Task* p, int target, int64_t& cost);
  bool available_idle_cpu(int cpu) const { return idle_cpu(cpu); }
  int64_t probe_cost(int from, int to) const;
  void update_idle_core(Rq& rq);
  int find_idlest_cpu(const Task* p, int start_cpu) const;

  // idle.cpp
  void do_idle(Rq& rq);
  void cpuidle_enter(Rq& rq);
  int menu_select(Rq& rq, bool& stop_tick);
  void idle_wake(Rq& rq, Irq* irq);
  void poll_time_limit(int cpu);
  void exit_idle_loop(Rq& rq);
  void idle_loop_next(Rq& rq);
  void record_idle(Rq& rq, int64_t ns);
  int64_t update_idle_cpumask(Rq& rq, bool idle);

  // smp.cpp
  int64_t send_ipi(int from, int to, IpiKind kind, int64_t offset);
  int64_t send_call_function_single_ipi(int from, int to, int64_t offset);
  bool set_nr_if_polling(int from, Rq& target, int64_t offset);
  void polling_kick(int from, Rq& target, int64_t offset);
  int64_t smp_call_function_single(Rq& src, int target, Csd csd);
  std::vector<KernelStep> flush_smp_call_function_queue(Rq& rq);
  void csd_complete(Task* waiter, int from_cpu);
  int nr_overloaded_ = 0;  // runqueues with nr_running >= 2 right now
  bool rd_overload_ = false;  // rd->overload: set on enqueue, refreshed by root-level balancing
  void nr_running_add(Rq& rq, int delta);

  // balance.cpp
  std::vector<KernelStep> newidle_balance(Rq& rq, bool& pulled);
  int load_balance(Rq& rq, SchedDomain& sd, bool newly_idle, int64_t& cost);
  void rebalance_domains(Rq& rq, int64_t& cost);
  void update_idle_cpu_scan(int llc);
  void update_util(Rq& rq);
  bool root_domain_overloaded() const;
  void update_avg_idle_on_wakeup(Rq& rq);

  // tick.cpp
  void start_tick(Rq& rq);
  void stop_tick(Rq& rq);
  void tick(int cpu);
  void nohz_balancer_kick(Rq& rq, int64_t& cost);

  // topology.cpp
  void build_sched_domains();

  // check.cpp
  void check_invariants();
  [[noreturn]] void check_fail(int cpu, const Task* t, const std::string& what) const;
  Time last_check_;
  uint64_t check_gen_ = 0;
  std::vector<char> wasting_;

  const machine::Machine m_;
  Features f_;
  KernelOptions opts_;
  trace::TraceSink* sink_;
  sim::EventQueue ev_;
  sim::Rng rng_;
  sim::Rng cost_rng_;
  std::vector<Rq> rqs_;
  std::vector<LlcShared> llcs_;
  std::vector<std::unique_ptr<Task>> tasks_;
  int next_pid_ = 1000;
  std::vector<int> default_affinity_;
  Time end_time_;
  Time nohz_next_balance_;
  trace::TaskInfo info(const Task* t) const;
};

}  // namespace schedlab::kernel
