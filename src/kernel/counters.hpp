// What a run counts, per CPU; totals are sums over CPUs.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/sink.hpp"

namespace schedlab::kernel {

inline constexpr int kNumKernelPaths = static_cast<int>(trace::KernelPath::Syscall) + 1;
inline constexpr int kNumIpiKinds = 2;

struct CpuCounters {
  // Time: busy (task context) + kernel paths + idle states = simulated time.
  int64_t busy_ns = 0;
  std::array<int64_t, kNumKernelPaths> kernel_ns{};
  std::vector<int64_t> idle_ns;          // per cpuidle state, plus a last slot for
                                         // default_idle (all states disabled / idle=poll)
  std::vector<int64_t> idle_usage;       // entries per state (cpuidle stateN/usage)

  int64_t context_switches = 0;          // rq->nr_switches
  int64_t mm_switches = 0;               // switch_mm() to another address space
  int64_t schedule_calls = 0;            // __schedule() from schedule()/preemption
  int64_t schedule_idle_calls = 0;       // __schedule() from schedule_idle()
  int64_t pick_next_task_calls = 0;
  int64_t pick_next_task_from_idle = 0;  // pick_next_task() with prev == idle
  int64_t sm_idle_fastpath = 0;          // SM_IDLE returns straight to idle
  int64_t ttwu_local = 0;                // wakeups this CPU did onto itself
  int64_t ttwu_remote = 0;               // ... onto another CPU
  int64_t ttwu_wakelist = 0;             // ... queued on the target's wake list
  std::array<int64_t, kNumIpiKinds> ipi_sent{};
  std::array<int64_t, kNumIpiKinds> ipi_received{};
  int64_t wake_polling_no_ipi = 0;       // polling idle CPUs kicked by a flag store (sender)
  int64_t sis_calls = 0;                 // select_idle_cpu() calls
  int64_t sis_scanned = 0;               // CPUs visited by select_idle_cpu()
  int64_t sis_scan_ns = 0;               // time spent scanning
  int64_t sis_found = 0;                 // scans that returned an idle CPU
  int64_t idle_cpumask_stale = 0;        // IDLE_CPUMASK: visited a set bit of a busy CPU
  int64_t newidle_calls = 0;
  int64_t newidle_skipped = 0;           // gated out (avg_idle < cost, not overloaded, ...)
  int64_t newidle_pulled = 0;            // tasks pulled
  int64_t lb_calls = 0;                  // periodic load_balance() at one level
  int64_t lb_pulled = 0;
  int64_t migrations = 0;                // set_task_cpu() moving a task to this CPU
  int64_t csd_run = 0;                   // call-functions executed
  int64_t ticks = 0;
  int64_t idle_spin = 0;                 // IDLE_SPIN spins started
  int64_t idle_spin_hit = 0;             // ... ended by the task's own wakeup (no switch)
  int64_t idle_spin_hidden_ns = 0;       // time a queued fair task waited behind a spinning RT task
  int64_t wasted_idle_ns = 0;            // idle while a runnable task waited in the same LLC

  void add(const CpuCounters& o);
  int64_t kernel_total_ns() const;
  int64_t idle_total_ns() const;
};

}  // namespace schedlab::kernel
