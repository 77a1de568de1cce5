// Trace writers behind `--trace FILE` (see docs/traces.md), the trace window, and small sinks
// that help tests and the CLI (counting, fan-out).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "trace/sink.hpp"

namespace schedlab::trace {

// A bad --trace FILE (unknown extension) or --trace-window: one line naming the flag. A trace
// that cannot be written throws io::OutputError instead.
class TraceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// [first, second): events with first <= t < second are written; kernel slices and the
// task/idle slices of the JSON view are clipped to it.
using TraceWindow = std::pair<Time, Time>;

// Opens a trace writer chosen by the file extension: ".dat" (trace-cmd trace.dat, v6),
// ".txt" (ftrace text as /sys/kernel/tracing/trace prints it), ".json" (Chrome/Perfetto
// trace-event JSON). The file appears whole at end() (written to a temporary file next to it
// and renamed), so a run that fails leaves no partial output; until then the events are kept in
// memory-bounded sorters that spill to an unlinked temporary file (trace/spill.hpp).
// Throws TraceError for an unknown extension, io::OutputError for a path that cannot be written.
std::unique_ptr<TraceSink> open_trace(const std::string& path,
                                      std::optional<TraceWindow> window = std::nullopt);

// Parses "START,END" (e.g. "0.5s,0.6s", "100ms,200ms", "1500us,2000us", "250000ns,1ms";
// a plain number is seconds). Throws TraceError with a one-line message naming the
// problem (missing comma, bad number, unknown unit, END not after START).
TraceWindow parse_trace_window(const std::string& text);

// The tracepoints (and the kernel_slice timeline call) a sink receives.
enum class EventType : uint8_t {
  SchedSwitch,
  SchedWaking,
  SchedWakeup,
  SchedMigrateTask,
  CpuIdle,
  IpiRaise,
  IpiEntry,
  IpiExit,
  WakeIdleWithoutIpi,
  KernelSlice,
};
inline constexpr int kNumEventTypes = 10;
// Tracepoint name ("sched_switch", "cpu_idle", "sched_wake_idle_without_ipi", ...);
// "kernel_slice" for the timeline call.
const char* event_type_name(EventType e);

struct EventCounts {
  std::array<int64_t, kNumEventTypes> n{};
  int64_t& operator[](EventType e) { return n[static_cast<int>(e)]; }
  int64_t operator[](EventType e) const { return n[static_cast<int>(e)]; }
  int64_t tracepoints() const;  // all but KernelSlice
  bool operator==(const EventCounts&) const = default;
};

// Counts the calls it receives, by type; with a window, only those a writer with the same
// window writes (kernel slices: those overlapping the window).
class CountingSink : public TraceSink {
 public:
  explicit CountingSink(std::optional<TraceWindow> window = std::nullopt) : window_(window) {}
  const EventCounts& counts() const { return counts_; }

  void sched_switch(Time t, int, const TaskInfo&, PrevState, const TaskInfo&) override {
    add(t, EventType::SchedSwitch);
  }
  void sched_waking(Time t, int, const TaskInfo&, int) override { add(t, EventType::SchedWaking); }
  void sched_wakeup(Time t, int, const TaskInfo&, int) override { add(t, EventType::SchedWakeup); }
  void sched_migrate_task(Time t, int, const TaskInfo&, int, int) override {
    add(t, EventType::SchedMigrateTask);
  }
  void cpu_idle(Time t, int, int) override { add(t, EventType::CpuIdle); }
  void ipi_raise(Time t, int, int, IpiKind) override { add(t, EventType::IpiRaise); }
  void ipi_entry(Time t, int, IpiKind) override { add(t, EventType::IpiEntry); }
  void ipi_exit(Time t, int, IpiKind) override { add(t, EventType::IpiExit); }
  void wake_idle_without_ipi(Time t, int, int) override { add(t, EventType::WakeIdleWithoutIpi); }
  void kernel_slice(int cpu, Time b, Time e, KernelPath) override;

 private:
  void add(Time t, EventType e);
  std::optional<TraceWindow> window_;
  EventCounts counts_;
};

// Forwards every call to each of its sinks, in order (e.g. a trace writer and the checker).
class TeeSink : public TraceSink {
 public:
  TeeSink() = default;
  explicit TeeSink(std::vector<TraceSink*> sinks) : sinks_(std::move(sinks)) {}
  void add(TraceSink* s) { sinks_.push_back(s); }

  void begin(const machine::Machine& m) override;
  void end(Time t) override;
  void sched_switch(Time t, int cpu, const TaskInfo& prev, PrevState st,
                    const TaskInfo& next) override;
  void sched_waking(Time t, int cpu, const TaskInfo& p, int target_cpu) override;
  void sched_wakeup(Time t, int cpu, const TaskInfo& p, int target_cpu) override;
  void sched_migrate_task(Time t, int cpu, const TaskInfo& p, int orig, int dest) override;
  void cpu_idle(Time t, int cpu, int state) override;
  void ipi_raise(Time t, int cpu, int target_cpu, IpiKind kind) override;
  void ipi_entry(Time t, int cpu, IpiKind kind) override;
  void ipi_exit(Time t, int cpu, IpiKind kind) override;
  void wake_idle_without_ipi(Time t, int cpu, int target_cpu) override;
  void lock_contended(Time b, Time e, int cpu, LockClass cls, int id, int holder) override;
  void kernel_slice(int cpu, Time b, Time e, KernelPath path) override;

 private:
  std::vector<TraceSink*> sinks_;
};

// The individual writers (open_trace picks one of these by extension).
std::unique_ptr<TraceSink> make_text_writer(const std::string& path,
                                            std::optional<TraceWindow> window);
std::unique_ptr<TraceSink> make_json_writer(const std::string& path,
                                            std::optional<TraceWindow> window);
std::unique_ptr<TraceSink> make_dat_writer(const std::string& path,
                                           std::optional<TraceWindow> window);

}  // namespace schedlab::trace
