// The Kernel object: the services every subsystem shares (the machine and its costs, the
// features, the topology, the clock and event queue, the seeded streams, the trace sink, the
// pooled one-shot events, the changes' hooks) and, privately, each subsystem's state. That state
// is declared here only by name: its type and the functions that reach it (k.rq(cpu),
// k.tick_sched(cpu), k.nohz(), ...) are in the header of the subsystem that owns it, as the
// kernel's per-CPU variables and cpu_rq() are:
//   sched.hpp    runqueues, sd_llc_shared, the root domain, NOHZ idle state, fair.cpp's scratch
//   cpu.hpp      the CPUs' execution engines, SMT co-run counts
//   cpuidle.hpp  cpuidle devices, the governor (its ops table) and menu's history
//   tick.hpp     tick_sched;  softirq.hpp  pending masks, ksoftirqd;  smp.hpp  IPI batches
//   guest.hpp    the platform ops and the KVM guest's VM exits
// Policy files include this and the state headers they use; kernel.hpp includes them all, for
// the engine and the experiment layer (docs/architecture.md, "Inside src/kernel").
#pragma once
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/api.hpp"
#include "kernel/counters.hpp"
#include "kernel/features.hpp"
#include "kernel/hooks.hpp"
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

// What a pooled one-shot event (DeferredEvent, deferred.hpp) does when it fires.
enum class DeferredKind : uint8_t { IpiArrival, HrtimerExpiry, CsdUnlocked, ChangeCall, HeldIrq };

class Checker;
class Change;
struct ChangeType;
struct DeferredEvent;
using trace::IpiKind;
using trace::KernelPath;
struct BackgroundSource;
// Each subsystem's state (defined in its header, listed above).
struct SchedState;
struct Rq;
struct SchedDomainShared;
struct RootDomain;
struct NohzState;
struct FairScratch;
class Cpu;
struct CpuState;
struct CpuidleState;
struct CpuidleDevice;
struct MenuDevice;
struct TickSched;
struct TickState;
struct SoftirqCpu;
struct SoftirqState;
struct SmpScratch;
struct GuestModel;

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
  const std::vector<std::unique_ptr<Task>>& tasks() const { return tasks_; }
  // The changes that are on and override hook h, in name order.
  const std::vector<Change*>& hooks(Hook h) const { return hooks_[static_cast<int>(h)]; }
  // The instance of a change in this run (null if it is off).
  Change* change(const ChangeType& t) const;
  CpuCounters total() const;
  uint64_t events_run() const { return ev.events_run(); }
  Time end_time() const { return end_time_; }

  // --- each subsystem's state, reached through its owner's header ---
  // sched.hpp
  SchedState& sched();
  const SchedState& sched() const;
  Rq& rq(int cpu);
  const Rq& rq(int cpu) const;
  int nr_running(int cpu) const;
  SchedDomainShared& llc_shared(int llc);
  const SchedDomainShared& llc_shared(int llc) const;
  RootDomain& rd();
  int& nr_assigned(int cpu);  // live user tasks whose task_cpu() is this CPU
  NohzState& nohz();
  const NohzState& nohz() const;
  FairScratch& fair_scratch();
  // cpu.hpp
  Cpu& cpu(int cpu);
  const Cpu& cpu(int cpu) const;
  int& core_busy(int core);  // threads of the core not halted in an idle state (SMT co-run speed)
  int& core_polls(int core);  // threads of the core in a polling wait (smt_beside_poll_ns)
  // cpuidle.hpp
  CpuidleState& cpuidle();
  CpuidleDevice& cpuidle(int cpu);
  const CpuidleDevice& cpuidle(int cpu) const;
  MenuDevice& menu(int cpu);
  const MenuDevice& menu(int cpu) const;
  // tick.hpp, softirq.hpp, smp.hpp, guest.hpp
  TickSched& tick_sched(int cpu);
  const TickSched& tick_sched(int cpu) const;
  SoftirqCpu& softirq(int cpu);
  const SoftirqCpu& softirq(int cpu) const;
  SmpScratch& smp();
  GuestModel& guest();
  const GuestModel& guest() const;

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
  // One-shot events from the pool (deferred.hpp).
  DeferredEvent& deferred(DeferredKind kind, int cpu, Task* task = nullptr, int64_t arg = 0);
  void recycle(DeferredEvent& e) { free_deferred_.push_back(&e); }
  bool checking() const { return checker_ != nullptr; }
  void check_placed(const Task* p);  // activate_task() re-placed p (the checker resets it)
  int bucket_for_path(KernelPath p) const { return 1 + static_cast<int>(p); }
  int bucket_for_idle(int state) const { return 1 + kNumKernelPaths + state; }
  // The per-run cost factor (noise.run_sigma; 1 without it).
  double cost_factor() const { return run_factor_; }
  // The tick's phase in this run (noise.tick_phase; 0 without it).
  int64_t tick_phase_ns() const { return tick_phase_ns_; }
  // An interned mask by its Api::cpumask() id (Action::SetAffinity).
  const std::vector<bool>* cpumask_of(int id) const { return cpumasks_.at(static_cast<size_t>(id)).get(); }

  // --- the services every subsystem shares ---
  const machine::Machine m;
  const Features f;
  const CpuTopology topo;
  trace::TraceSink* const sink;
  sim::EventQueue ev;
  sim::Rng rng;

 private:
  friend class Api;
  const std::vector<bool>* intern_cpumask(const std::vector<int>& cpus);
  int cpumask_id(const std::vector<int>& cpus);
  void boot_state();  // kernel.cpp: each subsystem's state, sized for the machine

  // Each subsystem's state (its header defines the type and the accessors above).
  std::unique_ptr<SchedState> sched_;
  std::unique_ptr<NohzState> nohz_;
  std::unique_ptr<FairScratch> fair_scratch_;
  std::unique_ptr<CpuState> cpus_;
  std::unique_ptr<CpuidleState> cpuidle_;
  std::unique_ptr<TickState> tick_;
  std::unique_ptr<SoftirqState> softirq_;
  std::unique_ptr<SmpScratch> smp_;
  std::unique_ptr<GuestModel> guest_;  // [guest]: the VM exits of a KVM guest

  sim::Rng cost_rng_;
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
