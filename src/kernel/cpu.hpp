// The CPU execution engine: how a modeled CPU executes. A CPU is always in one mode: running a
// task's compute segment, running a chain of kernel steps with interrupts off, busy-waiting in
// the kernel with interrupts on (a change's spin) or sitting in an idle state. Interrupts split
// a task segment (the remainder resumes after the handler) and wait while a kernel chain runs. Every CPU's time is in exactly
// one accounting bucket (busy, one kernel path, one idle state).
//
// A chain ends in a named resume point (Resume), dispatched in one place (Cpu::resume()); a
// step's own effect at its end is a StepDone. The CPU's recurring events (step end, segment
// end, tick, POLL limit, polling wakeup) are objects it owns, re-armed in
// place; one-shot events that can overlap (IPIs in flight, hrtimer expiries, csd unlocks) come
// from a pool. Nothing here allocates per event once the vectors have grown.
#pragma once
#include <cstdint>
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
  enum Kind : uint8_t { Ipi, Timer, Tick } kind = Ipi;
  IpiKind ipi = IpiKind::Reschedule;
  Task* timer_task = nullptr;  // for Timer
  static Irq of_ipi(IpiKind k) { return {Ipi, k, nullptr}; }
  static Irq of_timer(Task* p) { return {Timer, IpiKind::Reschedule, p}; }
  static Irq of_tick() { return {Tick, IpiKind::Reschedule, nullptr}; }
};

// Where a CPU continues when its kernel chain is done.
enum class Resume : uint8_t {
  None,
  ReturnToTask,        // back in task context: pending IRQs, preemption point, the task's work
  ProcessPendingIrqs,  // the next IRQ that arrived while IRQs were off, then `after_irqs`
  DoIdle,              // do_idle()
  IdleLoop,            // the next turn of do_idle()'s loop
  EnterIdleState,      // cpuidle_enter_state() with the state chosen before the entry step
  IdleWakeIrq,         // after an idle state's exit: the interrupt that woke the CPU
  DoIdleExit,          // after a polling wakeup's exit: leave the idle loop
  IrqsThenScheduleIdle,  // pending IRQs, then schedule_idle()
  ScheduleIdle,        // schedule_idle()
  FinishTaskSwitch,    // after __schedule()'s steps
  Change,              // a scheduler change's continuation: resume_change->resume(point)
};

// What a step does when it ends.
enum class StepDone : uint8_t {
  None,
  CsdUnlock,   // csd_unlock(): the waiting sender sees its call-function done
  TtwuPending, // sched_ttwu_pending(): enqueue the first `count` tasks taken off the wake list
  IpiExit,     // the ipi_exit tracepoint
};

// One piece of kernel work on a CPU: `ns` of `path`, then `done` takes effect.
struct KernelStep {
  KernelPath path;
  int64_t ns;
  StepDone done = StepDone::None;
  IpiKind ipi = IpiKind::Reschedule;  // IpiExit
  uint32_t count = 0;                 // TtwuPending
  Task* task = nullptr;               // CsdUnlock: the waiter
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
  void push_step(KernelPath path, int64_t ns) { steps_.push_back({path, ns}); }
  void push_step(const KernelStep& s) { steps_.push_back(s); }
  // Switches to kernel mode (IRQs off) and runs the pushed steps, then resumes at `then`.
  void run_steps(Resume then);
  bool in_chain() const { return head_ < steps_.size(); }

  // --- modes, segments, interrupts ---
  Mode mode() const { return mode_; }
  void set_mode(Mode m);
  void account(int bucket);           // closes the current bucket at now(), opens `bucket`
  int bucket() const { return bucket_; }
  Time bucket_start() const { return bucket_start_; }
  void start_task_segment();
  void pause_task_segment();
  bool segment_running() const { return segment_end_.scheduled(); }
  void continue_task();               // ask curr's program for its next step
  void return_to_task();              // after an interrupt or kernel chain in task context
  void deliver_irq(const Irq& irq);
  void process_pending_irqs(Resume then);
  bool irqs_pending() const { return !pending_irqs_.empty(); }
  void resume(Resume r);
  void step_done();                   // the current step's event
  void task_segment_done();           // the current segment's event


 private:
  void step_next();
  void step_effect(const KernelStep& s);
  void handle_irq(const Irq& irq, Resume then);
  double smt_speed() const;
  void refresh_sibling_speed();

  Kernel* k_ = nullptr;
  Rq* rq_ = nullptr;
  int cpu_ = 0;
  int core_ = 0;
  Mode mode_ = Mode::Kernel;
  Resume after_steps_ = Resume::None;
  Resume after_irqs_ = Resume::None;
  int bucket_ = 0;  // 0 busy; 1..P kernel path+1; P+1+s idle state s
  Time bucket_start_;
  Time seg_start_;
  double speed_ = 1.0;  // SMT co-run throughput factor of the task segment
  std::vector<KernelStep> steps_;  // the chain; [head_, end) still to run
  size_t head_ = 0;
  Time kstep_start_;
  CpuEvent segment_end_;
  CpuEvent step_end_;
  std::vector<Irq> pending_irqs_;  // arrived while IRQs were off

 public:  // (after the hot private fields, which share the first cache lines)
  // Continuation arguments (one chain at a time).
  Task* switch_prev = nullptr;
  Task* switch_next = nullptr;
  int enter_state = 0;
  bool enter_stop_tick = false;
  Irq wake_irq;
  Change* resume_change = nullptr;  // Resume::Change
  uint8_t resume_point = 0;

  // Recurring events owned by the CPU.
  CpuEvent tick;
  CpuEvent poll_limit;
  CpuEvent polling_wake;
};

}  // namespace schedlab::kernel
