// task_struct, as far as the model needs it: identity, scheduling class and entity, wakeup
// bookkeeping, the execution state of its program, and its schedstats.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/api.hpp"
#include "kernel/lock.hpp"
#include "sim/time.hpp"

namespace schedlab::kernel {

struct SchedClass;

enum class TaskState : uint8_t { Running, Interruptible, Dead };

// Fields are grouped by use: what every step touches comes first (one cache line).
struct Task {
  // Execution state of its program
  TaskState state = TaskState::Running;
  bool on_rq = false;
  bool in_compute = false;
  bool waiting_csd = false;  // spinning in csd_lock_wait()
  Policy policy = Policy::Normal;
  int cpu = 0;               // task_cpu()
  int64_t work_left = 0;     // ns of Compute left (at full speed) when interrupted
  int64_t cold_penalty = 0;  // extra run time owed after a migration
  Behavior* program = nullptr;  // == behavior.get()
  const SchedClass* sched_class = nullptr;
  const std::vector<bool>* allowed = nullptr;  // cpus_ptr (null = all), shared between tasks
  int mm = 0;                // address space id (0 = kernel thread: no mm of its own)
  int rt_prio = 0;           // 1..99 for SCHED_FIFO
  int nr_cpus_allowed = 0;   // p->nr_cpus_allowed
  bool kernel_thread = false;  // one of the kernel's own threads (ksoftirqd), not the workload's
  bool background = false;   // a [[background]] kernel thread or task, not the benchmark's
  SpinLock pi_lock;          // p->pi_lock (lock.hpp): try_to_wake_up() holds it (after the line)

  // EEVDF entity
  int64_t vruntime = 0;
  int64_t deadline = 0;
  int64_t vlag = 0;
  int64_t vprot = 0;         // se->vprot: RUN_TO_PARITY protects curr while vruntime < vprot
  bool sched_delayed = false;  // se->sched_delayed (DELAY_DEQUEUE): blocked but still queued
  bool rel_deadline = false;   // se->rel_deadline: `deadline` holds deadline - vruntime (a
                               // migration keeps what is left of the slice: PLACE_REL_DEADLINE)
  int64_t slice = 0;
  int64_t weight = 1024;     // NICE_0_LOAD
  // se->avg.load_avg (pelt.cpp): starts at the weight (init_entity_runnable_average()); load_cpu
  // is the rq it is attached to (-1: none yet, or detached), load_runnable whether it counts in
  // that rq's load_weight.
  double load_avg = 1024;
  Time load_last;
  int load_cpu = -1;
  bool load_runnable = false;
  Time exec_start;
  Time last_arrival;             // sched_info.last_arrival: last switch-in (schedstat rq_cpu_time)
  int64_t sum_exec_runtime = 0;  // se.sum_exec_runtime: ns on a CPU (update_curr())
  bool new_task = true;
  // CFS entity (NO_EEVDF, before v6.6): vruntime above is then absolute on the runqueue of
  // cfs_rq_cpu (the last one p was dequeued from or enqueued on; -1: never queued), and
  // cfs_sleeper says the last dequeue was a sleep (the next enqueue is a wakeup: place_entity()).
  int64_t prev_sum_exec_runtime = 0;  // se.prev_sum_exec_runtime: sum_exec_runtime at switch-in
  int cfs_rq_cpu = -1;
  bool cfs_sleeper = false;

  // wake_wide() / select_idle_sibling() bookkeeping
  int recent_used_cpu = -1;
  int64_t wakee_flips = 0;
  Time wakee_flip_decay_ts;
  Task* last_wakee = nullptr;

  // Statistics
  Time runnable_since;       // for run-delay accounting
  int64_t run_delay_ns = 0;
  int64_t nr_switches_in = 0;
  int64_t nr_migrations = 0;
  Time exit_time;

  // Identity
  int id = 0;                // index in Kernel::tasks (checker tables are indexed by it)
  int pid = 0;
  std::string comm;
  std::unique_ptr<Behavior> behavior;

  bool is_rt() const { return policy == Policy::Fifo; }
  // One of the benchmark's own tasks (what rusage and perf count for the real tool): not a kernel
  // thread and not a [[background]] task.
  bool workload() const { return !kernel_thread && !background; }
  int prio() const { return is_rt() ? 99 - rt_prio : 120; }
  bool allowed_on(int c) const { return !allowed || (*allowed)[c]; }
};

}  // namespace schedlab::kernel
