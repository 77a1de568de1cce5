// Internal helpers shared by the trace writers (not part of the sink contract).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/writers.hpp"

namespace schedlab::trace::detail {

// Fails early (io::OutputError naming --trace and the path) when the trace cannot be written
// there, so that a long run does not end in an unwritable trace. Leaves nothing behind.
void check_writable(const std::string& path);

inline bool in_window(const std::optional<TraceWindow>& w, Time t) {
  return !w || (t >= w->first && t < w->second);
}

// TASK_COMM_LEN - 1 characters, as the kernel stores comm.
inline std::string_view clip_comm(std::string_view c) { return c.substr(0, 15); }
// The comm sched_switch prints for a task: the idle task is "swapper/N".
std::string switch_comm(const TaskInfo& p, int cpu);

// ftrace's entry->flags bits (kernel/trace/trace.h, TRACE_FLAG_*).
inline constexpr uint8_t kFlagIrqsOff = 0x01;
inline constexpr uint8_t kFlagNeedResched = 0x04;
inline constexpr uint8_t kFlagHardirq = 0x08;

// What the ftrace common fields of one event are: the task current on the CPU, the irq flags
// and the preempt count (low nibble: preempt depth; high nibble: migrate-disable depth).
struct EventContext {
  int pid = 0;
  std::string_view comm;  // "<idle>" for pid 0, as trace_find_cmdline() reports it
  uint8_t flags = 0;
  uint8_t preempt_count = 0;
};

// "d..2." as trace_print_lat_fmt() prints flags and preempt count.
std::string lat_fmt(uint8_t flags, uint8_t preempt_count);

// Follows which task runs on each CPU and whether the CPU is in an IPI handler, so that every
// event gets the common fields the kernel would record. Updated for every event, written or
// not, so that the context at the start of a window is right.
class CpuContextTracker {
 public:
  void begin(const machine::Machine& m);
  int nr_cpus() const { return static_cast<int>(cpus_.size()); }
  void ensure_cpu(int cpu);

  // Each returns the context the event is recorded in, then applies the event's effect.
  EventContext on_switch(int cpu, const TaskInfo& prev, const TaskInfo& next);
  EventContext on_waking(int cpu, const TaskInfo& p);
  EventContext on_wakeup(int cpu, const TaskInfo& p);
  EventContext on_migrate(int cpu, const TaskInfo& p);
  EventContext on_cpu_idle(int cpu);
  EventContext on_ipi_raise(int cpu);
  EventContext on_ipi_entry(int cpu);
  EventContext on_ipi_exit(int cpu);
  EventContext on_wake_idle_without_ipi(int cpu);
  EventContext on_lock_contended(int cpu);  // spinning with interrupts off, preemption disabled

  // pid -> comm of every task seen (saved_cmdlines), pid 0 excluded.
  const std::map<int, std::string>& cmdlines() const { return cmdlines_; }

 private:
  struct Cpu {
    int pid = 0;
    std::string comm;
    int irq_depth = 0;
  };
  EventContext ctx(int cpu, uint8_t preempt, uint8_t preempt_in_irq) const;
  void remember(const TaskInfo& p);
  std::vector<Cpu> cpus_;
  std::map<int, std::string> cmdlines_;
};

// Nanoseconds as "secs.usecs" the way ftrace prints them (rounded to the microsecond).
std::string ftrace_timestamp(Time t);

}  // namespace schedlab::trace::detail
