// ftrace text: the lines `cat /sys/kernel/tracing/trace` prints for the nop tracer with the
// sched, power/cpu_idle and ipi events enabled (trace_print_context() + each event's
// TP_printk), with the same header. kernel_slice has no tracepoint and is not written.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io/output.hpp"
#include "trace/spill.hpp"
#include "trace/writer_common.hpp"

namespace schedlab::trace {
namespace {

using detail::EventContext;

const char* prev_state_str(PrevState s) {
  switch (s) {
    case PrevState::Running: return "R";
    case PrevState::Sleeping: return "S";
    case PrevState::Dead: return "X";
    case PrevState::Preempted: return "R+";
  }
  return "R";
}

class TextWriter : public TraceSink {
 public:
  TextWriter(std::string path, std::optional<TraceWindow> window)
      : path_(std::move(path)), window_(window) {
    detail::check_writable(path_);
  }

  void begin(const machine::Machine& m) override {
    tracker_.begin(m);
    nr_cpus_ = m.topo.nr_cpus();
  }

  void end(Time) override {
    if (done_) return;
    done_ = true;
    std::string out;
    out += "# tracer: nop\n#\n";
    out += fmt::format("# entries-in-buffer/entries-written: {}/{}   #P:{}\n", entries_,
                       entries_, std::max(nr_cpus_, tracker_.nr_cpus()));
    out +=
        "#\n"
        "#                                _-----=> irqs-off/BH-disabled\n"
        "#                               / _----=> need-resched\n"
        "#                              | / _---=> hardirq/softirq\n"
        "#                              || / _--=> preempt-depth\n"
        "#                              ||| / _-=> migrate-disable\n"
        "#                              |||| /     delay\n"
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
        "#              | |         |   |||||     |         |\n";
    // Merge the CPUs by timestamp as reading the trace file does: on equal timestamps the
    // lower CPU first; one CPU's events in the order they were recorded (the sorter is stable).
    io::AtomicFile f("--trace", path_);
    f.write(out);
    lines_.finish();
    std::string chunk;
    for (; lines_.valid(); lines_.next()) {
      chunk.append(lines_.payload());
      if (chunk.size() >= kChunk) {
        f.write(chunk);
        chunk.clear();
      }
    }
    f.write(chunk);
    f.commit();
  }

  void sched_switch(Time t, int cpu, const TaskInfo& prev, PrevState st,
                    const TaskInfo& next) override {
    EventContext c = tracker_.on_switch(cpu, prev, next);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "sched_switch",
         "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} "
         "next_prio={}",
         detail::switch_comm(prev, cpu), prev.pid, prev.prio, prev_state_str(st),
         detail::switch_comm(next, cpu), next.pid, next.prio);
  }

  void sched_waking(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    EventContext c = tracker_.on_waking(cpu, p);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "sched_waking", "comm={} pid={} prio={} target_cpu={:03}",
         detail::clip_comm(p.comm), p.pid, p.prio, target_cpu);
  }

  void sched_wakeup(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    EventContext c = tracker_.on_wakeup(cpu, p);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "sched_wakeup", "comm={} pid={} prio={} target_cpu={:03}",
         detail::clip_comm(p.comm), p.pid, p.prio, target_cpu);
  }

  void sched_migrate_task(Time t, int cpu, const TaskInfo& p, int orig, int dest) override {
    EventContext c = tracker_.on_migrate(cpu, p);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "sched_migrate_task", "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
         detail::switch_comm(p, orig), p.pid, p.prio, orig, dest);
  }

  void cpu_idle(Time t, int cpu, int state) override {
    EventContext c = tracker_.on_cpu_idle(cpu);
    if (!detail::in_window(window_, t)) return;
    // (unsigned long)(u32)state: PWR_EVENT_EXIT (-1) prints as 4294967295.
    line(t, cpu, c, "cpu_idle", "state={} cpu_id={}", static_cast<uint32_t>(state), cpu);
  }

  void ipi_raise(Time t, int cpu, int target_cpu, IpiKind kind) override {
    EventContext c = tracker_.on_ipi_raise(cpu);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "ipi_raise", "target_mask={} ({})", cpumask_str(target_cpu),
         ipi_reason(kind));
  }

  void ipi_entry(Time t, int cpu, IpiKind kind) override {
    EventContext c = tracker_.on_ipi_entry(cpu);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "ipi_entry", "({})", ipi_reason(kind));
  }

  void ipi_exit(Time t, int cpu, IpiKind kind) override {
    EventContext c = tracker_.on_ipi_exit(cpu);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "ipi_exit", "({})", ipi_reason(kind));
  }

  // lock:contention_begin / contention_end; the model has no lock addresses: the lock is named
  // by class and CPU (rq) or pid (pi), with the CPU it waits behind.
  void lock_contended(Time b, Time e, int cpu, LockClass cls, int id, int holder) override {
    EventContext c = tracker_.on_lock_contended(cpu);
    if (detail::in_window(window_, b))
      line(b, cpu, c, "contention_begin", "lock={}:{} holder={} (flags=SPIN)", lock_class_name(cls),
           id, holder);
    if (detail::in_window(window_, e))
      line(e, cpu, c, "contention_end", "lock={}:{} (ret=0)", lock_class_name(cls), id);
  }

  void wake_idle_without_ipi(Time t, int cpu, int target_cpu) override {
    EventContext c = tracker_.on_wake_idle_without_ipi(cpu);
    if (!detail::in_window(window_, t)) return;
    line(t, cpu, c, "sched_wake_idle_without_ipi", "cpu={}", target_cpu);
  }

 private:
  // The kernel stores the mask in unsigned longs (nr_cpumask_bits rounded up) and prints it
  // with %*pb: 32-bit hex words, most significant first, separated by commas.
  std::string cpumask_str(int target_cpu) const {
    int bits = std::max({nr_cpus_, tracker_.nr_cpus(), target_cpu + 1, 1});
    int words = (bits + 63) / 64 * 2;  // 32-bit words in whole longs
    std::string s;
    for (int w = words - 1; w >= 0; --w) {
      uint32_t v = (target_cpu / 32 == w) ? (1u << (target_cpu % 32)) : 0;
      s += fmt::format("{:08x}", v);
      if (w) s += ',';
    }
    return s;
  }

  template <class... Args>
  void line(Time t, int cpu, const EventContext& c, const char* event,
            fmt::format_string<Args...> fields, Args&&... args) {
    line_.clear();
    auto out = std::back_inserter(line_);
    fmt::format_to(out, "{:>16}-{:<7} [{:03}] {} {}: {}: ", c.comm, c.pid, cpu,
                   detail::lat_fmt(c.flags, c.preempt_count), detail::ftrace_timestamp(t), event);
    fmt::format_to(out, fields, std::forward<Args>(args)...);
    line_ += '\n';
    lines_.add({t.count(), cpu, 0, 0}, line_);
    ++entries_;
  }

  static constexpr size_t kChunk = size_t{1} << 20;  // bytes per write of the body

  std::string path_;
  std::optional<TraceWindow> window_;
  detail::CpuContextTracker tracker_;
  int nr_cpus_ = 0;
  std::string line_;
  detail::SpillSorter lines_;  // the lines, by (timestamp, CPU); on disk beyond its limit
  int64_t entries_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<TraceSink> make_text_writer(const std::string& path,
                                            std::optional<TraceWindow> window) {
  return std::make_unique<TextWriter>(path, window);
}

}  // namespace schedlab::trace
