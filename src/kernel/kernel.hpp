// The simulated system: the machine, its CPUs (execution engines, cpu.hpp), the scheduler's
// state (runqueues, sched domains, LLC-shared state; sched.hpp), cpuidle, the tick, the
// scheduler changes that are on (change.hpp), the event queue and the seeded random streams.
// Policy functions (sched.hpp) reach this state as kernel code reaches its globals and per-CPU variables.
// Workloads see none of it: they get the Api (api.hpp).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/api.hpp"
#include "kernel/change.hpp"
#include "kernel/counters.hpp"
#include "kernel/cpu.hpp"
#include "kernel/features.hpp"
#include "kernel/guest.hpp"
#include "kernel/sched.hpp"
#include "kernel/task.hpp"
#include "kernel/topology.hpp"
#include "machine/machine.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "trace/sink.hpp"

namespace schedlab::kernel {

struct KernelOptions {
  uint64_t seed = 1;
  trace::TraceSink* sink = nullptr;
  bool check = false;  // check invariants after every event (--check)
  bool cold = false;   // start as just booted (--cold), not as up and idle (warm.cpp)
};

// The sanity checker found the model in an impossible state (a bug in the model).
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Per-CPU state of cpuidle: the device (drivers/cpuidle) and the menu governor's history.
struct CpuidleDevice {
  int state = -1;               // cpuidle state index while in Mode::Idle
  Time entered;                 // when the state was entered
  bool poll_time_limit = false; // POLL hit its time limit in this idle period
  int64_t entry_extra_ns = 0;   // work do_idle() owes to the next idle entry step
  bool polls_with_irqs_on = false;  // in poll_idle() / cpu_idle_poll(): interrupts taken inside
};
struct MenuDevice {
  static constexpr int kIntervals = 8;  // menu.c INTERVALS
  int64_t intervals[kIntervals] = {};   // recent idle durations (ns), oldest first
  int nr = 0;
};

// Per-CPU state of the tick (struct tick_sched).
struct TickSched {
  bool tick_stopped = false;
};

// Per-CPU softirq state (kernel/softirq.c): the pending mask and ksoftirqd/N (created at its
// first wakeup).
struct SoftirqCpu {
  uint32_t pending = 0;
  Task* ksoftirqd = nullptr;
};

// A pooled one-shot event: IPI delivery, hrtimer expiry, csd unlock, a change's own (defer()).
struct DeferredEvent final : sim::Event {
  enum Kind : uint8_t { IpiArrival, HrtimerExpiry, CsdUnlocked, ChangeCall, HeldIrq };
  Kernel* k = nullptr;
  Kind kind = IpiArrival;
  IpiKind ipi = IpiKind::Reschedule;
  uint8_t change_kind = 0;  // ChangeCall: the change's kind
  int cpu = 0;
  Task* task = nullptr;
  int64_t arg = 0;  // HrtimerExpiry: expiry (ns); ChangeCall: the change's; IpiArrival: host woke it
  Change* change = nullptr;  // ChangeCall
  Irq irq;                   // HeldIrq: an interrupt a halted or stolen vCPU takes late
  void process() override;
};

class Checker;

// Scratch tables of fork balancing (sched_balance_find_dst_cpu()), reused without allocating.
struct ForkScratch {
  std::vector<int> cands, keys, count, sum;
};

class Kernel {
 public:
  Kernel(const machine::Machine& m, const Features& f, const KernelOptions& opts);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // --- running it (experiment layer, tests) ---
  Api& api() { return api_; }
  // Affinity given to every user task created without its own (`taskset`); empty = all CPUs.
  void set_default_affinity(std::vector<int> cpus) { default_affinity_ = std::move(cpus); }
  Task* create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o);
  // try_to_wake_up() from outside any CPU's program (e.g. the start of a benchmark).
  void wake_up(Task* p, int from_cpu);
  // Runs until stop() or until simulated time `limit`; then closes the books at now().
  void run(Time limit);
  void stop() { ev.stop(); }
  Time now() const { return ev.now(); }
  const machine::Machine& machine() const { return m; }
  const Features& features() const { return f; }
  int nr_cpus() const { return topo.nr_cpus(); }
  const Rq& rq(int cpu) const { return rqs[cpu]; }
  Rq& rq(int cpu) { return rqs[cpu]; }
  const std::vector<std::unique_ptr<Task>>& tasks() const { return tasks_; }
  // The changes that are on and override hook h, in name order.
  const std::vector<Change*>& hooks(Hook h) const { return hooks_[static_cast<int>(h)]; }
  // The instance of a change in this run (null if it is off).
  Change* change(const ChangeType& t) const { return change_by_index_[t.index]; }
  CpuCounters total() const;
  const SchedDomainShared& llc_shared(int llc) const { return llcs[llc]; }
  int nr_running(int cpu) const { return rqs[cpu].nr_running; }
  uint64_t events_run() const { return ev.events_run(); }
  Time end_time() const { return end_time_; }

  // --- helpers policy code uses ---
  // Draws a cost from the profile value (with the profile's seeded jitter).
  int64_t cost(int64_t ns);
  // A cache-line transfer between two CPUs (remote_read_*_ns by distance).
  int64_t remote_read(int from, int to) const { return remote_read_ns_[dist(from, to)]; }
  int64_t remote_read(Distance d) const { return remote_read_ns_[static_cast<int>(d)]; }
  int dist(int a, int b) const { return static_cast<int>(topo.distance(a, b)); }
  int64_t tick_period_ns() const { return tick_period_ns_; }
  // Ticks so far: the tick fires at tick_phase_ns() + n periods (noise.tick_phase; else 0).
  int64_t jiffies() const {
    return (now().count() + (tick_period_ns_ - tick_phase_ns_) % tick_period_ns_) / tick_period_ns_;
  }
  // A kernel thread of the kernel itself (ksoftirqd/N), bound to `cpu`, created asleep.
  Task* create_kthread(std::string comm, std::unique_ptr<Behavior> b, int cpu);
  int next_kthread_pid() { return next_kthread_pid_++; }  // a low pid for a kernel-side task
  trace::TaskInfo info(const Task* t) const { return {t->pid, t->comm, t->prio()}; }
  // One-shot events from the pool.
  DeferredEvent& deferred(DeferredEvent::Kind kind, int cpu, Task* task = nullptr,
                          int64_t arg = 0);
  void recycle(DeferredEvent& e) { free_deferred_.push_back(&e); }
  bool checking() const { return checker_ != nullptr; }
  void check_placed(const Task* p);  // activate_task() re-placed p (the checker resets it)
  int bucket_for_path(KernelPath p) const { return 1 + static_cast<int>(p); }
  int bucket_for_idle(int state) const { return 1 + kNumKernelPaths + state; }

  // --- the system's state ---
  const machine::Machine m;
  const Features f;
  const CpuTopology topo;
  trace::TraceSink* const sink;
  sim::EventQueue ev;
  sim::Rng rng;
  sim::Rng cost_rng;
  std::vector<Rq> rqs;
  std::unique_ptr<Cpu[]> cpus;
  std::vector<SchedDomainShared> llcs;
  RootDomain rd;
  std::vector<CpuidleDevice> cpuidle;
  std::vector<MenuDevice> menu;
  std::vector<TickSched> tick_sched;
  std::vector<int> core_busy;   // threads of each core not in an idle state (SMT co-run speed)
  NohzState nohz;
  std::vector<SoftirqCpu> softirq;
  std::vector<int> nr_assigned;             // live user tasks whose task_cpu() is this CPU
  // Scratch tables reused by select_idle_cpu() and fork balancing (no allocation per call).
  std::vector<uint32_t> core_seen;
  uint32_t core_seen_gen = 0;
  ForkScratch fork_scratch;
  std::vector<Task*> ttwu_batch;
  std::vector<Csd> csd_batch;
  GuestModel guest;  // [guest]: the VM exits of a KVM guest (guest.hpp)
  // The per-run cost factor (noise.run_sigma; 1 without it).
  double cost_factor() const { return run_factor_; }
  // The tick's phase in this run (noise.tick_phase; 0 without it).
  int64_t tick_phase_ns() const { return tick_phase_ns_; }
  // An interned mask by its Api::cpumask() id (Action::SetAffinity).
  const std::vector<bool>* cpumask_of(int id) const { return cpumasks_.at(static_cast<size_t>(id)).get(); }

 private:
  friend class Api;
  const std::vector<bool>* intern_cpumask(const std::vector<int>& cpus);
  int cpumask_id(const std::vector<int>& cpus);

  Api api_{*this};
  std::vector<std::unique_ptr<Change>> changes_;
  std::vector<Change*> change_by_index_;
  std::array<std::vector<Change*>, kNumHooks> hooks_;
  std::unique_ptr<Checker> checker_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<std::unique_ptr<std::vector<bool>>> cpumasks_;
  std::vector<std::unique_ptr<DeferredEvent>> deferred_pool_;
  std::vector<DeferredEvent*> free_deferred_;
  int64_t remote_read_ns_[5] = {};
  int64_t tick_period_ns_ = 0;
  double run_factor_ = 1.0;
  int64_t tick_phase_ns_ = 0;
  std::vector<std::unique_ptr<BackgroundSource>> background_;
  int next_pid_ = 1000;
  int next_kthread_pid_ = 2;  // the kernel's own threads (kthreadd is 2) keep low pids
  std::vector<int> default_affinity_;
  Time end_time_;
};

}  // namespace schedlab::kernel
