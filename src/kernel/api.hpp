// The workload API: all a benchmark sees of the simulated kernel. A workload creates tasks,
// each running a Behavior that is asked for its next Action (compute, wake, block, sleep,
// call-function, exit); it reads the clock, the machine's costs and a few per-task facts, and
// sets harness timers (a benchmark's own status line or end, charged to no CPU). Workloads
// include this header only: the scheduler's state and its event queue stay inside the kernel.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "machine/machine.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace schedlab::kernel {

using sim::Time;
class Api;
class Kernel;
struct Task;  // opaque to workloads: a handle

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
    SetAffinity,  // sched_setaffinity(0, mask) on itself: `cpu` is the mask's Api::cpumask() id
  };
  int64_t ns = 0;
  Task* target = nullptr;
  int cpu = -1;
  Kind kind = Compute;
  bool sync = false;
  bool wait = false;

  static Action of(Kind k, int64_t ns = 0) {
    Action a;
    a.kind = k;
    a.ns = ns;
    return a;
  }
  static Action compute(int64_t ns) { return of(Compute, ns); }
  static Action wake(Task* t, bool sync) {
    Action a = of(Wake);
    a.target = t;
    a.sync = sync;
    return a;
  }
  static Action block() { return of(Block); }
  static Action sleep(int64_t ns) { return of(Sleep, ns); }
  static Action call_func(int cpu, int64_t handler_ns, bool wait) {
    Action a = of(CallFunc, handler_ns);
    a.cpu = cpu;
    a.wait = wait;
    return a;
  }
  static Action exit() { return of(Exit); }
  static Action yield() { return of(Yield); }
  static Action set_affinity(int mask_id) {
    Action a = of(SetAffinity);
    a.cpu = mask_id;
    return a;
  }
};

// A task's program: a state machine asked for its next step whenever the previous one is done.
class Behavior {
 public:
  virtual ~Behavior() = default;
  virtual Action next(Api& api, Task& self) = 0;
};

enum class Policy : uint8_t { Normal, Fifo };

struct TaskOptions {
  Policy policy = Policy::Normal;
  int rt_prio = 0;
  std::vector<int> cpus;  // allowed CPUs (empty = all)
  int fork_cpu = 0;       // the parent's CPU (fork balancing starts here)
  int pin_cpu = -1;       // place exactly here (kthread bound to a CPU)
  bool start_blocked = false;  // created asleep (waits for its first wakeup)
  int mm = -1;            // address space: -1 = a new process (its own), 0 = kernel thread,
                          // else share that mm (threads: pass the first thread's task_mm())
  int64_t weight = 0;     // load weight of a fair task (nice); 0 = NICE_0_LOAD
  int64_t slice_ns = 0;   // sched_attr.sched_runtime (custom slice); 0 = the base slice
};

// /proc/<pid>/schedstat and friends: what a benchmark may read about one of its tasks.
struct TaskStat {
  int pid = 0;
  int cpu = 0;                 // task_cpu(): where it runs or last ran
  int mm = 0;
  int64_t run_delay_ns = 0;    // time spent runnable, waiting for a CPU
  int64_t nr_switches_in = 0;  // times it was switched in (timeslices)
  bool exited = false;
  Time exit_time;
};

class Api {
 public:
  explicit Api(Kernel& k) : k_(k) {}
  Time now() const;
  const machine::Machine& machine() const;
  int nr_cpus() const;
  // An independent random stream for the workload, derived from the run's seed and `name`.
  sim::Rng rng(std::string_view name) const;

  // fork()/clone(): a new task placed by fork balancing (or pinned); woken unless
  // o.start_blocked.
  Task* create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o);
  // try_to_wake_up() from outside any task (the benchmark harness); its cost is not charged.
  void wake_up(Task* p, int from_cpu);
  int task_cpu(const Task& t) const;
  // During Behavior::next(): task_cpu() of the task whose program is asked (inline: a task
  // program asks it on every step, and Task is opaque here).
  int asking_task_cpu() const { return asking_cpu_; }
  int task_mm(const Task& t) const;
  TaskStat stat(const Task& t) const;
  // /proc/stat's idle time of `cpu` up to now, in ns: the time it spent in idle states (a
  // cpuidle state, the idle loop's polling), the interval it is in now included. The rest of
  // now() is busy: task context, kernel paths, interrupts (schbench -A reads this).
  int64_t cpu_idle_ns(int cpu) const;
  // A CPU mask for Action::set_affinity(): its id (the same list, the same id). The list is
  // ascending CPUs below nr_cpus() and not empty.
  int cpumask(const std::vector<int>& cpus);

  // A harness timer: fn runs at simulated time t (>= now()), charged to no CPU.
  void at(Time t, std::function<void()> fn);
  void after(Time d, std::function<void()> fn) { at(now() + d, std::move(fn)); }
  // Ends the run (the benchmark is complete).
  void stop();

 private:
  friend class Cpu;  // sets asking_cpu_ before it asks a program
  Kernel& k_;
  int asking_cpu_ = -1;
};

}  // namespace schedlab::kernel
