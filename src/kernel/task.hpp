// Tasks and the programs they run.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace schedlab::kernel {

using sim::Time;
class Kernel;
struct Task;

// What a task does next. Workloads build programs from these steps.
struct Action {
  enum Kind : uint8_t {
    Compute,   // run on the CPU for `ns` (user work or syscall work done in task context)
    Wake,      // try_to_wake_up(target) from this task (WF_SYNC if sync)
    Block,     // set TASK_INTERRUPTIBLE and schedule(); next() is called again once woken
    Sleep,     // hrtimer sleep for `ns`, then runnable again
    CallFunc,  // smp_call_function_single(cpu, handler of `ns`, wait)
    Exit,      // do_exit()
    Yield,     // sched_yield(): the class's yield_task(), then schedule() (task stays runnable)
  };
  Kind kind = Compute;
  int64_t ns = 0;
  Task* target = nullptr;
  int cpu = -1;
  bool sync = false;
  bool wait = false;

  static Action compute(int64_t ns) { return {Compute, ns}; }
  static Action wake(Task* t, bool sync) {
    Action a{Wake};
    a.target = t;
    a.sync = sync;
    return a;
  }
  static Action block() { return {Block}; }
  static Action sleep(int64_t ns) { return {Sleep, ns}; }
  static Action call_func(int cpu, int64_t handler_ns, bool wait) {
    Action a{CallFunc, handler_ns};
    a.cpu = cpu;
    a.wait = wait;
    return a;
  }
  static Action exit() { return {Exit}; }
  static Action yield() { return {Yield}; }
};

// A task's program: a state machine asked for its next step whenever the previous one is done.
class Behavior {
 public:
  virtual ~Behavior() = default;
  virtual Action next(Kernel& k, Task& self) = 0;
};

enum class TaskState : uint8_t { Running, Interruptible, Dead };
enum class Policy : uint8_t { Normal, Fifo };

struct Task {
  int pid = 0;
  std::string comm;
  Policy policy = Policy::Normal;
  int rt_prio = 0;           // 1..99 for SCHED_FIFO
  int64_t weight = 1024;     // NICE_0_LOAD
  int mm = 0;                // address space id (0 = kernel thread: no mm of its own)
  std::vector<bool> allowed; // cpus_ptr (empty = all)
  std::unique_ptr<Behavior> behavior;

  TaskState state = TaskState::Running;
  bool on_rq = false;
  int cpu = 0;               // task_cpu()
  int recent_used_cpu = -1;

  // EEVDF entity
  int64_t vruntime = 0;
  int64_t deadline = 0;
  int64_t vlag = 0;
  int64_t slice = 0;
  Time exec_start;
  bool new_task = true;

  // wake_wide() bookkeeping
  int64_t wakee_flips = 0;
  Time wakee_flip_decay_ts;
  Task* last_wakee = nullptr;

  // Execution state
  int64_t work_left = 0;     // ns of Compute left (at full speed) when interrupted
  bool in_compute = false;
  int64_t cold_penalty = 0;  // extra run time owed after a migration
  bool waiting_csd = false;  // spinning in csd_lock_wait()

  // Sanity checker bookkeeping
  uint64_t check_gen = 0;
  int check_cpu = -1;
  bool check_queued = false;     // seen queued (not running) since its last placement
  int64_t check_vruntime = 0;    // vruntime when first seen queued

  // Statistics
  Time runnable_since;       // for run-delay accounting
  int64_t run_delay_ns = 0;
  int64_t nr_switches_in = 0;
  int64_t nr_migrations = 0;
  Time exit_time;

  bool is_rt() const { return policy == Policy::Fifo; }
  int prio() const { return is_rt() ? 99 - rt_prio : 120; }
  bool allowed_on(int c) const { return allowed.empty() || allowed[c]; }
};

}  // namespace schedlab::kernel
