// Scheduler changes as plug-ins. A change (a kernel patch, merged or proposed) is one class in
// one file: it derives from Change, says who it is in a static info() (name, default, one-line
// description, the commit or thread it comes from, its counters, its tunables), overrides the
// hooks it needs, and registers itself:
//
//   class SmIdle final : public Change {
//    public:
//     using Change::Change;
//     static ChangeInfo info() {
//       return {.name = "SM_IDLE", .default_on = false, .help = "...", .origin = "3dcac251b066",
//               .counters = {...}};
//     }
//     HookResult<bool> on_schedule(Rq& rq, SchedMode mode, Task* prev, KernelPath path,
//                                  int64_t cost) override;
//   };
//   SCHEDLAB_REGISTER_CHANGE(SmIdle);
//
// It is then a feature (`--features SM_IDLE`, `schedlab features --verbose`), its counters are in
// --json and, marked `key`, in `schedlab ab`'s table, and its tunables are set with
// `--set change.SM_IDLE.KEY=VALUE`. A Kernel builds one instance of every change that is on, so
// the instance keeps its per-run state (per-CPU vectors, its own events); a change that is off
// costs nothing. Only the hooks a class overrides are called (found at compile time), in the
// order of the changes' names. docs/changes.md is the guide.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernel/counters.hpp"
#include "kernel/hooks.hpp"
#include "kernel/sched.hpp"
#include "sim/event_queue.hpp"

namespace schedlab::kernel {

class Kernel;
class Cpu;
struct Irq;

// A counter of a change, per CPU, summed over CPUs like the core's (counters.hpp).
struct ChangeCounter {
  const char* name;  // unique among all counters, the core's and every change's
  const char* unit;  // "count", "ns", ...
  const char* help;
  bool key = false;  // a row of `schedlab ab`'s key counters when the change is on in a side
  // Computed from the counters instead of counted (e.g. the time in one kernel path).
  int64_t (*derive)(const CpuCounters&) = nullptr;
};

// A tunable of a change: `--set change.NAME.KEY=VALUE`, an integer in [min, max].
struct ChangeTunable {
  const char* key;
  const char* unit;
  int64_t value;  // default
  int64_t min;
  int64_t max;
  const char* help;
};

struct ChangeInfo {
  const char* name;    // the feature name: upper case, digits, '_' ("IDLE_SPIN")
  bool default_on;     // as in the modeled kernel (a merged change may default on)
  const char* help;    // one line for `schedlab features`
  const char* origin;  // the kernel commit or the LKML thread it models
  std::vector<ChangeCounter> counters = {};
  std::vector<ChangeTunable> tunables = {};
};


struct ChangeType;
struct ChangeEvent;

// What a hook returns: its decision (`value`; NoDecision for a hook that only adds work) and the
// kernel work the change adds (ns), which the caller charges where the hook says.
struct NoDecision {};
template <class T = NoDecision>
struct HookResult {
  T value{};
  int64_t cost_ns = 0;
};
// The decision of a hook at a point that charges no work (a change returning work there is a
// bug in the change: std::logic_error).
template <class T>
T decided(const HookResult<T>& r) {
  if (r.cost_ns != 0) throw std::logic_error("a hook that charges no work returned a cost");
  return r.value;
}
// Decisions of more than one value.
struct IdleFlush {  // do_idle_flush
  bool flush;            // flush_smp_call_function_queue() in do_idle()
  bool always_schedule;  // schedule_idle() even without need_resched() after the flush
};

class Change {
 public:
  Change(Kernel& k, const ChangeType& type) : k(k), type_(type) {}
  virtual ~Change() = default;
  Change(const Change&) = delete;
  Change& operator=(const Change&) = delete;
  const ChangeType& type() const { return type_; }

  // --- hooks (the defaults change nothing; override the ones the change needs) ---
  // One convention (HookResult above): a hook that decides something gets the caller's current
  // decision as its last argument and returns the decision (that argument, unless the change
  // decides otherwise) with the kernel work it adds (cost_ns). A hook that only adds work
  // returns HookResult<> (cost_ns). A hook that only observes returns void. "offset" is how far
  // into the caller's current work the hook runs (where a remote effect it schedules starts, as
  // in sched.hpp). Where each hook's cost_ns is charged is said at the hook; "no work" hooks
  // decide between steps and must return cost_ns 0 (decided() checks it).

  // __schedule() (core.cpp), after update_curr(), before prev leaves the runqueue and
  // pick_next_task() runs; `cost` is the work so far, not yet pushed. Return true to take the
  // CPU over: the change then pushes `cost` as a step of `path` and starts the chain
  // (run_steps() below, or a kernel call such as __schedule_idle_fastpath()). cost_ns: added to
  // __schedule()'s work when the change does not take the CPU.
  virtual HookResult<bool> on_schedule(Rq& /*rq*/, SchedMode /*mode*/, Task* /*prev*/,
                                       KernelPath /*path*/, int64_t /*cost*/) {
    return {.value = false};
  }
  // activate_task(): p was enqueued on rq and counted in nr_running.
  virtual void on_activate_task(Rq& /*rq*/, Task* /*p*/) {}
  // ttwu_runnable(): p was woken while still on its runqueue (now TASK_RUNNING); `cost` is the
  // waker's work so far.
  virtual void on_ttwu_runnable(int /*this_cpu*/, Task* /*p*/, int64_t /*cost*/) {}
  // wakeup_preempt(): p was enqueued on rq; a value decides whether it preempts rq->curr,
  // instead of the class rules (nullopt: the class decides). cost_ns: the waker's work.
  virtual HookResult<std::optional<bool>> on_wakeup_preempt(Rq& /*rq*/, Task* /*p*/,
                                                           std::optional<bool> decided) {
    return {.value = decided};
  }
  // wake_affine_idle() (WA_IDLE) found neither CPU idle and no sync wakeup onto a CPU running
  // only the waker: the change may return this_cpu or prev_cpu as the target (-1 for none, then
  // WA_WEIGHT decides). cost_ns: the waker's work.
  virtual HookResult<int> on_wake_affine_idle(int /*this_cpu*/, int /*prev_cpu*/, bool /*sync*/,
                                              int target) {
    return {.value = target};
  }
  // select_idle_cpu() once SIS_UTIL has bounded the scan to `nr` (nr_idle_scan + 1 > 1; only
  // while the LLC has no idle core), before the scan: a CPU (not -1) is returned at once.
  // cost_ns: the scan's work (charged whether or not a CPU is returned).
  virtual HookResult<int> on_select_idle_cpu_depth(Rq& /*this_rq*/, Task* /*p*/, int /*target*/,
                                                   int /*nr*/, int cpu) {
    return {.value = cpu};
  }
  // select_idle_cpu()'s candidate set: false leaves `cpu` out of the scan (before it counts
  // against the scan depth). cost_ns: added to the scan's cost (a read of the change's state).
  virtual HookResult<bool> on_select_idle_cpu_candidate(Rq& /*this_rq*/, int /*cpu*/,
                                                        bool candidate) {
    return {.value = candidate};
  }
  // select_idle_cpu() / select_idle_core() looked at `cpu` (idle or not).
  virtual void on_select_idle_cpu_visit(Rq& /*this_rq*/, int /*cpu*/, bool /*idle*/) {}
  // select_idle_sibling() after select_idle_cpu(): `found` is the idle CPU it returned or -1;
  // the change may search further (e.g. beyond the LLC) and return another. cost_ns: the
  // waker's work.
  virtual HookResult<int> on_select_idle_cpu_done(int /*this_cpu*/, Task* /*p*/, int /*target*/,
                                                  int found) {
    return {.value = found};
  }
  // do_idle() found nothing to run and is about to choose an idle state for the first time.
  // cost_ns: charged to the idle entry step.
  virtual HookResult<> on_do_idle(Rq& /*rq*/) { return {}; }
  // sched_balance_newidle(): the built-in gates (overload, avg_idle vs the lowest domain's
  // cost) said `balance`; the change may veto or force it. No work.
  virtual HookResult<bool> on_newidle_balance(Rq& /*rq*/, bool balance) {
    return {.value = balance};
  }
  // sched_tick(). cost_ns: charged to the tick's work.
  virtual HookResult<> on_sched_tick(Rq& /*rq*/) { return {}; }
  // send_call_function_single_ipi() -> call_function_single_prep_ipi(), the csd queued first on
  // `to`: whether to try set_nr_if_polling() on its idle task before sending the IPI (default
  // false: the IPI is sent; CSD_POLL_KICK says true). No work.
  virtual HookResult<bool> on_call_function_single_prep_ipi(int /*from*/, int /*to*/,
                                                            bool try_polling) {
    return {.value = try_polling};
  }
  // set_nr_if_polling(): the target's idle task polls and has no flag set yet; true if the
  // change set a flag of its own instead of TIF_NEED_RESCHED (and woke the CPU with
  // wake_polling_idle()). No work (the sender's line transfers are the caller's).
  virtual HookResult<bool> on_set_nr_if_polling(int /*from*/, Rq& /*target*/, int64_t /*offset*/,
                                                bool handled) {
    return {.value = handled};
  }
  // do_idle() left its loop (polling cleared, the tick restarted): whether to run
  // flush_smp_call_function_queue() here (`flush`, default false: every csd then came with an
  // IPI whose handler ran it) and whether schedule_idle() follows in any case (`always_schedule`,
  // default true) or only if need_resched() is set after the flush. No work.
  virtual HookResult<IdleFlush> on_do_idle_flush(Rq& /*rq*/, IdleFlush flush) {
    return {.value = flush};
  }
  // pick_next_task_fair() found nothing to run: whether to run sched_balance_newidle()
  // (default NEWIDLE_BALANCE); prev is the task that called __schedule(). No work.
  virtual HookResult<bool> on_pick_next_task_newidle(Rq& /*rq*/, Task* /*prev*/, bool balance) {
    return {.value = balance};
  }
  // update_newidle_cost() after newidle balance of `sd`: `cost` is the level's walk plus
  // `blocked_ns` of update_blocked_averages() (charged to the first level, as since v5.17). A
  // value says the change updated sd.max_newidle_lb_cost itself and is the level's cost that
  // counts against avg_idle for the next levels (nullopt: the kernel's update_newidle_cost()).
  // No work (the walk's steps are pushed already).
  virtual HookResult<std::optional<int64_t>> on_update_newidle_cost(
      Rq& /*rq*/, SchedDomain& /*sd*/, int64_t /*blocked_ns*/, int64_t /*cost*/,
      std::optional<int64_t> counted) {
    return {.value = counted};
  }
  // nohz_csd_func() on an idle CPU: `bail` is need_resched() (the kick is dropped); the change
  // may clear it. No work.
  virtual HookResult<bool> on_nohz_csd_func(Rq& /*rq*/, bool bail) { return {.value = bail}; }
  // _nohz_idle_balance()'s per-CPU test whether the balancing CPU turned busy: `busy` is
  // need_resched(); the change may decide otherwise. cost_ns: the balance's work.
  virtual HookResult<bool> on_nohz_idle_balance_busy(Rq& /*this_rq*/, bool busy) {
    return {.value = busy};
  }
  // raise_softirq_irqoff() outside interrupt context: whether to wake ksoftirqd (default true
  // as on !PREEMPT_RT). cost_ns: the raiser's work.
  virtual HookResult<bool> on_raise_softirq(Rq& /*rq*/, int /*nr*/, bool wake_ksoftirqd) {
    return {.value = wake_ksoftirqd};
  }
  // Cpu::return_to_task() after pending interrupts: true if the change took the CPU (it set
  // the mode and what runs next). No work.
  virtual HookResult<bool> on_return_to_task(Rq& /*rq*/) { return {.value = false}; }

  // --- continuations the change arranged ---
  // A chain started with run_steps(cpu, point) is done.
  virtual void resume(Rq& /*rq*/, uint8_t /*point*/) {}
  // A pooled one-shot event from defer() is due.
  virtual void deferred(int /*cpu*/, Task* /*p*/, int64_t /*arg*/, uint8_t /*kind*/) {}
  // An event the change owns (ChangeEvent) is due.
  virtual void event(int /*cpu*/, uint8_t /*kind*/) {}

 protected:
  // The change's counter i (its index in info().counters) on rq.
  int64_t& counter(Rq& rq, int i);
  // The change's tunable i (its index in info().tunables) for this run.
  int64_t tunable(int i) const;
  // Runs the steps pushed on cpu, then resume(rq, point).
  void run_steps(Cpu& cpu, uint8_t point);
  // A pooled one-shot event at absolute time t: deferred(cpu, p, arg, kind).
  void defer(Time t, int cpu, Task* p, int64_t arg, uint8_t kind);
  // Arms (re-arms) an event the change owns at absolute time t; disarm() cancels it.
  void arm(ChangeEvent& e, Time t);
  void disarm(ChangeEvent& e);

  Kernel& k;

 private:
  const ChangeType& type_;
};

// An event a change owns (per CPU, say), re-armed without allocating: event(cpu, kind).
struct ChangeEvent final : sim::Event {
  Change* owner = nullptr;
  int cpu = 0;
  uint8_t kind = 0;
  void process() override { owner->event(cpu, kind); }
};

// --- the registry -----------------------------------------------------------------------------

struct ChangeType {
  ChangeInfo info;
  uint64_t hooks = 0;  // bit h: the class overrides hook h
  std::unique_ptr<Change> (*make)(Kernel& k, const ChangeType& t) = nullptr;
  int index = -1;        // in change_types()
  int counter_base = 0;  // its first counter's slot in CpuCounters::change
  bool uses(Hook h) const { return hooks >> static_cast<int>(h) & 1; }
};

// Every registered change, by name. The first call closes the registry (checks the names;
// throws std::logic_error naming a bad registration).
const std::vector<const ChangeType*>& change_types();
const ChangeType* find_change(std::string_view name);  // null if none
int nr_change_counters();
// A change's counter by name (its derive() for a derived one); throws std::out_of_range.
int64_t change_counter(const CpuCounters& c, std::string_view name);
void register_change(ChangeType t);  // SCHEDLAB_REGISTER_CHANGE does this

template <class T>
constexpr uint64_t change_hooks() {
  uint64_t m = 0;
#define SCHEDLAB_HOOK_BIT(name)                                                                  \
  if constexpr (!std::is_same_v<decltype(&T::on_##name), decltype(&Change::on_##name)>)          \
    m |= uint64_t{1} << static_cast<int>(Hook::name);
  SCHEDLAB_CHANGE_HOOKS(SCHEDLAB_HOOK_BIT)
#undef SCHEDLAB_HOOK_BIT
  return m;
}

template <class T>
struct ChangeRegistrar {
  static_assert(std::is_base_of_v<Change, T>, "a change derives from kernel::Change");
  ChangeRegistrar() {
    ChangeType t;
    t.info = T::info();
    t.hooks = change_hooks<T>();
    t.make = [](Kernel& k, const ChangeType& type) -> std::unique_ptr<Change> {
      return std::make_unique<T>(k, type);
    };
    register_change(std::move(t));
  }
};

inline Change* Kernel::change(const ChangeType& t) const { return change_by_index_[t.index]; }

}  // namespace schedlab::kernel

// Registers a change class (at namespace scope, in its own file).
#define SCHEDLAB_REGISTER_CHANGE(Class) \
  static const ::schedlab::kernel::ChangeRegistrar<Class> schedlab_change_registrar_##Class
