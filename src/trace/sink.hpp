// The interface through which the kernel model reports what happens. Writers for trace-cmd
// .dat, ftrace text and Perfetto JSON implement it (see docs/architecture.md), as do tests'
// recorders; the sanity checker (kernel/check.hpp) is not a sink: it reads the kernel's state
// after every event. Every call carries the simulated time and the CPU the event happens on.
#pragma once
#include <cstdint>
#include <string_view>

#include "machine/machine.hpp"
#include "sim/time.hpp"

namespace schedlab::trace {

using sim::Time;

// A task as tracepoints see it.
struct TaskInfo {
  int pid = 0;                // 0 = the idle task ("swapper/N")
  std::string_view comm;      // at most 15 characters are printed, as TASK_COMM_LEN
  int prio = 120;             // kernel prio: 120 = nice 0 fair task, 0..99 RT
};

// prev_state letters as sched_switch prints them: "R", "S", "D", "X" (dead), "R+" (preempted).
enum class PrevState : uint8_t { Running, Sleeping, Dead, Preempted };

// Named kernel paths (the slices a Perfetto track shows between tasks and idle).
enum class KernelPath : uint8_t {
  Schedule,        // __schedule() incl. pick_next_task and context switch
  ScheduleIdle,    // schedule_idle() from the idle loop
  Ttwu,            // try_to_wake_up() on the waker
  TtwuPending,     // sched_ttwu_pending(): wake list flush on the target
  NewidleBalance,  // newidle_balance()
  LoadBalance,     // periodic load balance
  IpiHandler,      // the IPI's own handler work
  CallFunction,    // running queued call-function(s)
  Tick,            // sched_tick()
  IdleEntry,       // governor select, nohz stop tick
  IdleExit,        // leaving an idle state (exit latency), tick restart
  Spin,            // IDLE_SPIN busy wait
  Irq,             // interrupt entry and irq_exit()
  Softirq,         // __do_softirq() (softirq handlers: SCHED_SOFTIRQ's balancing)
  NohzIdleBalance, // _nohz_idle_balance() from nohz_run_idle_balance() (blocked-load update)
  Steal,           // the host ran something else on this vCPU (steal time)
  Syscall,         // pipe/socket/futex syscall work inside a task
};
const char* kernel_path_name(KernelPath p);

// IPI reasons as the ipi_raise/ipi_entry tracepoints print them.
enum class IpiKind : uint8_t { Reschedule, CallFunctionSingle };
const char* ipi_reason(IpiKind k);

// The lock classes the model has (kernel/lock.hpp): rq->__lock, p->pi_lock.
enum class LockClass : uint8_t { Rq, Pi };
const char* lock_class_name(LockClass c);  // "rq", "pi"  // "Rescheduling interrupts", "Single function call interrupts"

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void begin(const machine::Machine& /*m*/) {}
  virtual void end(Time /*t*/) {}
  virtual void sched_switch(Time /*t*/, int /*cpu*/, const TaskInfo& /*prev*/,
                            PrevState /*prev_state*/, const TaskInfo& /*next*/) {}
  // Emitted on the waker's CPU when try_to_wake_up() starts.
  virtual void sched_waking(Time /*t*/, int /*cpu*/, const TaskInfo& /*p*/, int /*target_cpu*/) {}
  // Emitted on the CPU that enqueues the task (ttwu_do_activate).
  virtual void sched_wakeup(Time /*t*/, int /*cpu*/, const TaskInfo& /*p*/, int /*target_cpu*/) {}
  virtual void sched_migrate_task(Time /*t*/, int /*cpu*/, const TaskInfo& /*p*/,
                                  int /*orig_cpu*/, int /*dest_cpu*/) {}
  // state = cpuidle state index entered, or -1 on exit (printed as 4294967295).
  virtual void cpu_idle(Time /*t*/, int /*cpu*/, int /*state*/) {}
  virtual void ipi_raise(Time /*t*/, int /*cpu*/, int /*target_cpu*/, IpiKind /*kind*/) {}
  virtual void ipi_entry(Time /*t*/, int /*cpu*/, IpiKind /*kind*/) {}
  virtual void ipi_exit(Time /*t*/, int /*cpu*/, IpiKind /*kind*/) {}
  // sched_wake_idle_without_ipi: a polling idle CPU was woken by a flag store.
  virtual void wake_idle_without_ipi(Time /*t*/, int /*cpu*/, int /*target_cpu*/) {}
  // lock:contention_begin / contention_end: `cpu` spins from t_begin to t_end (interrupts off)
  // for a lock of class `cls`; `id` is the lock's CPU (rq) or task pid (pi), `holder` the CPU
  // it waits behind. Emitted once, when the wait is decided (t_begin may be ahead of now).
  virtual void lock_contended(Time /*t_begin*/, Time /*t_end*/, int /*cpu*/, LockClass /*cls*/,
                              int /*id*/, int /*holder*/) {}
  // A kernel path running on `cpu` from t_begin to t_end (for timeline views).
  virtual void kernel_slice(int /*cpu*/, Time /*t_begin*/, Time /*t_end*/,
                            KernelPath /*path*/) {}
};

}  // namespace schedlab::trace
