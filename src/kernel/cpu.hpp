// The CPU execution engine: how a modeled CPU executes. A CPU is always in one mode: running a
// task's compute segment, running a chain of kernel steps with interrupts off, busy-waiting in
// the kernel with interrupts on (a change's spin) or sitting in an idle state. Interrupts split
// a task segment (the remainder resumes after the handler) and wait while a kernel chain runs. Every CPU's time is in exactly
// one accounting bucket (busy, one kernel path, one idle state).
//
// A chain ends in a named resume point (Resume) with the arguments the resumed step takes (its
// payload: a Continuation), dispatched in one place (Cpu::resume()); a step's own effect at its
// end is a StepDone, whose arguments the step carries. The CPU's recurring events (step end, segment
// end, tick, POLL limit, polling wakeup) are objects it owns, re-armed in
// place; one-shot events that can overlap (IPIs in flight, hrtimer expiries, csd unlocks) come
// from a pool. Nothing here allocates per event once the vectors have grown.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kernel/sched.hpp"
#include "sim/event_queue.hpp"

namespace schedlab::kernel {

class Change;

// What a CPU is doing right now.
// Spin: busy in the kernel with interrupts on, outside any task segment or chain (a change
// that busy-waits, e.g. IDLE_SPIN; accounted to KernelPath::Spin).
enum class Mode : uint8_t { Task, Kernel, Idle, Spin };

struct Irq {
  // Background: an interrupt or softirq of [[background]] (handler `ns`); Steal: the host runs
  // something else on this busy vCPU for `ns`.
  enum Kind : uint8_t { Ipi, Timer, Tick, Background, Steal } kind = Ipi;
  IpiKind ipi = IpiKind::Reschedule;
  Task* timer_task = nullptr;  // for Timer
  Time arrived;                // when it was raised on this CPU (set by deliver_irq())
  int64_t ns = 0;              // for Background and Steal
  bool host_woken = false;     // guest: the host already woke the halted vCPU for it
  static Irq of_ipi(IpiKind k) { return {Ipi, k, nullptr, {}}; }
  static Irq of_timer(Task* p) { return {Timer, IpiKind::Reschedule, p, {}}; }
  static Irq of_tick() { return {Tick, IpiKind::Reschedule, nullptr, {}}; }
  static Irq of(Kind k, int64_t ns) { return {k, IpiKind::Reschedule, nullptr, {}, ns}; }
};

// Where a CPU continues when its kernel chain is done.
enum class Resume : uint8_t {
  None,
  ReturnToTask,        // back in task context: pending IRQs, preemption point, the task's work
  ProcessPendingIrqs,  // the next IRQ that arrived while IRQs were off, then `after_irqs`
  DoIdle,              // do_idle()
  DoIdlePolling,       // do_idle() after nohz_run_idle_balance(): set polling, tick_nohz_idle_enter()
  NohzRunIdleBalance,  // the next NOHZ idle CPU of nohz_run_idle_balance()'s pass
  IdleLoop,            // the next turn of do_idle()'s loop
  CallCpuidle,         // call_cpuidle() after the governor: clear polling and test need_resched
  EnterIdleState,      // the state's enter() with the state chosen by the governor
  CpuidleIrqsOn,       // after a state's exit: local_irq_enable() takes the pending interrupts
  CpuidleExitDone,     // cpuidle_enter_state()'s accounting, cpuidle_reflect()
  ExitIdle,            // cpuidle_idle_call()'s exit_idle: set polling, the loop's test
  PollContinue,        // poll_idle() after an interrupt taken while polling
  IdleFlush,           // leaving the loop: clear polling, flush_smp_call_function_queue()
  IrqsThenScheduleIdle,  // pending IRQs, then schedule_idle()
  IrqsThenScheduleIdleLoop,  // pending IRQs (the rq unlock), then `while (need_resched())`
  FinishTaskSwitch,    // after __schedule()'s steps
  Change,              // a scheduler change's continuation: change->resume(rq, point)
};

// The payloads of the resume points that take arguments.
struct SwitchArgs {  // FinishTaskSwitch: finish_task_switch(prev, next)
  Task* prev;
  Task* next;
};
struct IdleStateArgs {  // CallCpuidle, EnterIdleState: the state the governor chose
  int state;
  bool stop_tick;  // CallCpuidle: tick_nohz_idle_stop_tick() first
};
struct ChangeArgs {  // Change: which change resumes, at which of its points
  Change* change;
  uint8_t point;
};

// A resume point with its payload. Points without arguments convert from Resume; the others are
// made by their named constructor and read by their accessor (only the resumed step reads it).
// Passed by reference: a by-value copy of a temporary just built (a one-byte point, a 16-byte
// payload) reads it back in other widths than it was stored, a store-forwarding stall per call.
class Continuation {
 public:
  constexpr Continuation(Resume r = Resume::None) : at_(r) {}  // NOLINT: implicit on purpose
  static Continuation finish_task_switch(Task* prev, Task* next) {
    Continuation c(Resume::FinishTaskSwitch);
    c.p_.sw = {prev, next};
    return c;
  }
  static Continuation call_cpuidle(int state, bool stop_tick) {
    Continuation c(Resume::CallCpuidle);
    c.p_.idle = {state, stop_tick};
    return c;
  }
  static Continuation enter_idle_state(int state) {
    Continuation c(Resume::EnterIdleState);
    c.p_.idle = {state, false};
    return c;
  }
  static Continuation change(Change* ch, uint8_t point) {
    Continuation c(Resume::Change);
    c.p_.change = {ch, point};
    return c;
  }
  Resume at() const { return at_; }
  // Resume::None, the payload left as it was (nothing reads it then): one byte stored, where
  // assigning a fresh Continuation built it on the stack and read it back in other widths (a
  // store-forwarding stall on every chain's end).
  void clear() { at_ = Resume::None; }
  const SwitchArgs& switch_args() const { return p_.sw; }
  const IdleStateArgs& idle_state() const { return p_.idle; }
  const ChangeArgs& change_args() const { return p_.change; }

 private:
  Resume at_;
  union Payload {
    SwitchArgs sw;
    IdleStateArgs idle;
    ChangeArgs change;
  } p_{};
};

// What a step does when it ends.
enum class StepDone : uint8_t {
  None,
  CsdUnlock,   // csd_unlock(): the waiting sender sees its call-function done
  TtwuPending, // sched_ttwu_pending(): enqueue the first `count` tasks taken off the wake list
  IpiExit,     // the ipi_exit tracepoint
  SoftirqEnd,  // __do_softirq() done: restart if softirqs were raised meanwhile
  // smp_call_function_single() on the sender (the step carries the target and the csd):
  CsdQueue,    // llist_add() landed: the csd is on the target's queue
  CsdPrepIpi,  // set_nr_if_polling()'s read of the idle task's flags arrived
  CsdKick,     // its cmpxchg landed: TIF_NEED_RESCHED set (or polling was gone: IPI)
  CsdIpi,      // the ICR write: the IPI is on its way
};

// One piece of kernel work on a CPU: `ns` of `path`, then `done` takes effect with the step's
// own arguments. A step runs with interrupts disabled unless `irqs_on`: then an interrupt is
// taken at once and the rest of the step runs after its handler.
// (ns first and the one-byte fields together: 48 bytes, copied per pushed and per run step.)
struct KernelStep {
  int64_t ns = 0;
  KernelPath path{};
  StepDone done = StepDone::None;
  IpiKind ipi = IpiKind::Reschedule;  // IpiExit
  bool irqs_on = false;
  uint32_t count = 0;                 // TtwuPending
  int target = -1;                    // CsdQueue..CsdIpi: the target CPU
  Csd csd{};                          // CsdQueue: the csd being queued; CsdUnlock: its waiter
  KernelStep() = default;
  KernelStep(KernelPath p, int64_t n, StepDone d = StepDone::None) : ns(n), path(p), done(d) {}
  static KernelStep irqs_enabled(KernelPath p, int64_t ns) {
    KernelStep s{p, ns};
    s.irqs_on = true;
    return s;
  }
};

static_assert(sizeof(KernelStep) <= 48);

// A CPU's chain of kernel steps: a growable array whose append is inline (std::vector's
// emplace_back() stayed out of line, a call per pushed step). Appending may move the steps
// (as a vector's growth does); slots are reused after clear().
class StepChain {
 public:
  size_t size() const { return n_; }
  KernelStep& operator[](size_t i) { return data_[i]; }
  const KernelStep& operator[](size_t i) const { return data_[i]; }
  KernelStep* begin() { return data_.get(); }
  KernelStep* end() { return data_.get() + n_; }
  void clear() { n_ = 0; }
  // A new last slot, to be assigned whole.
  KernelStep& append() {
    if (n_ == cap_) [[unlikely]]
      grow();
    return data_[n_++];
  }

 private:
  void grow();
  std::unique_ptr<KernelStep[]> data_;
  size_t n_ = 0;
  size_t cap_ = 0;
};

// An event a CPU (or its tick, cpuidle device) owns.
class Cpu;
struct CpuEvent final : sim::Event {
  enum Kind : uint8_t { StepEnd, SegmentEnd, Tick, PollLimit, PollingWake };
  Kernel* k = nullptr;
  Cpu* owner = nullptr;
  int cpu = 0;
  Kind kind = StepEnd;
  void process() override;
};

class Cpu {
 public:
  void init(Kernel& k, int cpu);
  int id() const { return cpu_; }

  // --- the kernel chain ---
  // Appends a step to the chain being built (run_steps() starts it).
  void push_step(KernelPath path, int64_t ns) { steps_.append() = KernelStep(path, ns); }
  void push_step(const KernelStep& s) { steps_.append() = s; }
  // Switches to kernel mode (IRQs off) and runs the pushed steps, then resumes at `then`.
  // (Inline: the caller's Continuation, often built for the call, is then stored field by
  // field into after_steps_, not built on the stack and copied in other widths.)
  [[gnu::always_inline]] void run_steps(const Continuation& then) {
    set_mode(Mode::Kernel);
    after_steps_ = then;
    step_next();
  }
  bool in_chain() const { return head_ < steps_.size(); }
  // ns from now until the steps pushed so far are done (the rest of the running step
  // included); while an interrupt's or a step effect's steps are being pushed to run first
  // (insert_pushed_steps()), only those. Where a lock taken by the next pushed work starts.
  inline int64_t queued_ns() const;

  // --- modes, segments, interrupts ---
  Mode mode() const { return mode_; }
  // (Inline: most calls change neither the core's busy count nor its polling count, e.g. a
  // busy CPU starting a kernel chain; only those that may go out of line.)
  void set_mode(Mode m) {
    mode_ = m;
    if (active_ && !polls_ && (m == Mode::Kernel || (m == Mode::Task && !rq_->curr->waiting_csd)))
      return;
    set_mode_counts(m);
  }
  void account(int bucket);           // closes the current bucket at now(), opens `bucket`
  int bucket() const { return bucket_; }
  Time bucket_start() const { return bucket_start_; }
  void start_task_segment();
  void pause_task_segment();
  bool segment_running() const { return segment_end_.scheduled(); }
  void continue_task();               // ask curr's program for its next step
  void return_to_task();              // after an interrupt or kernel chain in task context
  // Kernel code busy-waits on this CPU with interrupts on, for the task that is still curr (a
  // change's spin, e.g. IDLE_SPIN): Mode::Spin, the time accounted to `path`. An interrupt is
  // handled and comes back through return_to_task() (and its hook), which decides what next.
  void spin_wait(KernelPath path);
  // The busy-wait is over and the task it held runs on: its time is the task's again, then
  // return_to_task().
  void spin_wait_done();
  bool spin_waiting() const { return mode_ == Mode::Spin; }
  // Busy-waiting without work of its own: the POLL state or idle=poll, a change's spin
  // (Mode::Spin), csd_lock_wait(). Such a thread keeps its share of the core's partitioned
  // resources, as a busy one does; only a halted one (HLT, MWAIT, WFI) gives it back.
  bool polling_wait() const { return polls_; }
  bool in_kernel() const { return mode_ == Mode::Kernel; }  // in a kernel chain or an interrupt
  void deliver_irq(const Irq& irq);
  void process_pending_irqs(const Continuation& then);
  bool irqs_pending() const { return !pending_irqs_.empty(); }
  const Irq* first_pending_irq() const { return pending_irqs_.empty() ? nullptr : &pending_irqs_.front(); }
  bool tick_pending() const;           // a pending interrupt is the tick
  // Pushes an interrupt's steps: entry, handler, irq_exit(), then pending softirqs.
  void push_irq_steps(const Irq& irq);
  // Inserts the steps pushed since `mark` (= steps count then) before the rest of the chain.
  void insert_pushed_steps(size_t mark);
  size_t steps_mark() const { return steps_.size(); }
  // in_interrupt(): decisions taken while building a handler's or a softirq's steps.
  bool in_interrupt() const { return irq_ctx_ > 0; }
  void enter_irq_ctx() { ++irq_ctx_; }
  void exit_irq_ctx() { --irq_ctx_; }
  bool softirq_running = false;        // __do_softirq() steps are queued or running
  bool softirq_after_flush = false;    // do_idle()'s flush will run do_softirq() (ILB_NO_KSOFTIRQD)
  void resume(const Continuation& r);
  void step_done();                   // the current step's event
  void task_segment_done();           // the current segment's event


 private:
  void step_next();
  [[gnu::noinline]] void step_effect(const KernelStep& s);  // (keeps step_next() small)
  void handle_irq(const Irq& irq, const Continuation& then);
  void interrupt_step(const Irq& irq);
  void set_mode_counts(Mode m);  // set_mode()'s core_busy / core_polls update
  double smt_speed() const;
  void refresh_sibling_speed();
  void refresh_speed();  // a sibling's refresh_sibling_speed(): its segment at the new speed
  void note_beside_poll();  // opens or closes this CPU's smt_beside_poll_ns interval

  Kernel* k_ = nullptr;
  Rq* rq_ = nullptr;
  Cpu* sibling_ = nullptr;  // the other thread of a 2-thread core; null otherwise
  int cpu_ = 0;
  int core_ = 0;
  Mode mode_ = Mode::Kernel;
  Continuation after_steps_;
  Continuation after_irqs_;
  int bucket_ = 0;  // 0 busy; 1..P kernel path+1; P+1+s idle state s
  Time bucket_start_;
  Time seg_start_;
  double speed_ = 1.0;  // SMT co-run throughput factor of the task segment
  bool active_ = true;  // counted in core_busy: not halted in an idle state (all boot in kernel)
  bool polls_ = false;  // polling_wait()
  bool beside_poll_ = false;  // a task segment runs beside a polling sibling, since beside_start_
  Time beside_start_;
  StepChain steps_;  // the chain; [head_, end) still to run
  size_t head_ = 0;
  size_t inserting_at_ = SIZE_MAX;  // the mark of steps being pushed to run before the rest
  Time kstep_start_;
  CpuEvent segment_end_;
  CpuEvent step_end_;
  std::vector<Irq> pending_irqs_;  // arrived while IRQs were off
  int irq_ctx_ = 0;

 public:  // (after the hot private fields, which share the first cache lines)
  // Recurring events owned by the CPU.
  CpuEvent tick;
  CpuEvent poll_limit;
  CpuEvent polling_wake;
};

// The CPUs' execution engines, and for each core how many of its threads are not halted in an
// idle state: busy, or polling (SMT co-run speed; cpu.cpp).
struct CpuState {
  std::unique_ptr<Cpu[]> cpus;
  std::vector<int> core_busy;
  std::vector<int> core_polls;  // threads of the core in a polling wait (Cpu::polling_wait())
};

// (Inline: once per task segment and kernel step.)
inline void Cpu::account(int bucket) {
  Time now = k_->now();
  int64_t d = (now - bucket_start_).count();
  if (d > 0) {
    CpuCounters& c = rq_->c;
    int b = bucket_;
    if (b == 0) {
      c.busy_ns += d;
    } else if (b <= kNumKernelPaths) {
      c.kernel_ns[b - 1] += d;
    } else {
      c.idle_ns[b - 1 - kNumKernelPaths] += d;
    }
  }
  bucket_ = bucket;
  bucket_start_ = now;
}

inline int64_t Cpu::queued_ns() const {
  int64_t ns = 0;
  size_t from = head_;
  if (inserting_at_ != SIZE_MAX) {
    from = inserting_at_;
  } else if (head_ < steps_.size() && step_end_.scheduled()) {
    ns = (step_end_.when() - k_->now()).count();  // the running step's rest
    ++from;
  }
  for (size_t i = from; i < steps_.size(); ++i) ns += steps_[i].ns;
  return ns;
}

inline Cpu& Kernel::cpu(int cpu) { return cpus_->cpus[cpu]; }
inline const Cpu& Kernel::cpu(int cpu) const { return cpus_->cpus[cpu]; }
inline int& Kernel::core_busy(int core) { return cpus_->core_busy[core]; }
inline int& Kernel::core_polls(int core) { return cpus_->core_polls[core]; }

}  // namespace schedlab::kernel
