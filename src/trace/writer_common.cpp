#include "trace/writer_common.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "io/output.hpp"

namespace schedlab::trace::detail {

void check_writable(const std::string& path) { io::check_output_path({"--trace", path}); }

std::string switch_comm(const TaskInfo& p, int cpu) {
  if (p.pid == 0) return fmt::format("swapper/{}", cpu);
  return std::string(clip_comm(p.comm));
}

std::string lat_fmt(uint8_t flags, uint8_t pc) {
  std::string s(5, '.');
  if (flags & kFlagIrqsOff) s[0] = 'd';
  if (flags & kFlagNeedResched) s[1] = 'n';
  if (flags & kFlagHardirq) s[2] = 'h';
  if (pc & 0xf) s[3] = "0123456789abcdef"[pc & 0xf];
  if (pc & 0xf0) s[4] = "0123456789abcdef"[pc >> 4];
  return s;
}

void CpuContextTracker::begin(const machine::Machine& m) {
  if (static_cast<int>(cpus_.size()) < m.topo.nr_cpus()) cpus_.resize(m.topo.nr_cpus());
}

void CpuContextTracker::ensure_cpu(int cpu) {
  if (cpu < 0) throw std::invalid_argument(fmt::format("trace: negative cpu {}", cpu));
  if (cpu >= static_cast<int>(cpus_.size())) cpus_.resize(cpu + 1);
}

EventContext CpuContextTracker::ctx(int cpu, uint8_t preempt, uint8_t preempt_in_irq) const {
  const Cpu& c = cpus_[cpu];
  EventContext e;
  e.pid = c.pid;
  e.comm = c.pid == 0 ? std::string_view("<idle>") : std::string_view(c.comm);
  e.flags = kFlagIrqsOff;
  if (c.irq_depth > 0) {
    e.flags |= kFlagHardirq;
    e.preempt_count = preempt_in_irq;
  } else {
    e.preempt_count = preempt;
  }
  return e;
}

void CpuContextTracker::remember(const TaskInfo& p) {
  if (p.pid != 0) cmdlines_[p.pid] = std::string(clip_comm(p.comm));
}

// Preempt counts are those a PREEMPT_DYNAMIC 6.x kernel records: __schedule() holds the rq
// lock with preemption off (2), try_to_wake_up() holds p->pi_lock (2) and the rq lock when
// enqueueing (3), the idle loop runs with preemption off (1); inside an IPI handler the
// hardirq bit is set and the depth is what the interrupted context had.
EventContext CpuContextTracker::on_switch(int cpu, const TaskInfo& prev, const TaskInfo& next) {
  ensure_cpu(cpu);
  remember(prev);
  remember(next);
  // The event is recorded while prev is still current.
  Cpu& c = cpus_[cpu];
  if (c.pid != prev.pid) {  // trust the event over our state
    c.pid = prev.pid;
    c.comm = std::string(clip_comm(prev.comm));
  }
  EventContext e = ctx(cpu, 2, 2);
  // The returned comm must outlive the update below: point it at the cmdline table.
  if (e.pid != 0) e.comm = cmdlines_[e.pid];
  c.pid = next.pid;
  c.comm = std::string(clip_comm(next.comm));
  return e;
}

EventContext CpuContextTracker::on_waking(int cpu, const TaskInfo& p) {
  ensure_cpu(cpu);
  remember(p);
  return ctx(cpu, 2, 2);
}

EventContext CpuContextTracker::on_wakeup(int cpu, const TaskInfo& p) {
  ensure_cpu(cpu);
  remember(p);
  return ctx(cpu, 3, 2);
}

EventContext CpuContextTracker::on_migrate(int cpu, const TaskInfo& p) {
  ensure_cpu(cpu);
  remember(p);
  return ctx(cpu, 2, 2);
}

EventContext CpuContextTracker::on_cpu_idle(int cpu) {
  ensure_cpu(cpu);
  return ctx(cpu, 1, 1);
}

EventContext CpuContextTracker::on_ipi_raise(int cpu) {
  ensure_cpu(cpu);
  return ctx(cpu, 2, 2);
}

EventContext CpuContextTracker::on_ipi_entry(int cpu) {
  ensure_cpu(cpu);
  Cpu& c = cpus_[cpu];
  ++c.irq_depth;
  uint8_t pc = c.pid == 0 ? 1 : 0;  // the idle loop runs with preemption disabled
  return ctx(cpu, pc, pc);
}

EventContext CpuContextTracker::on_ipi_exit(int cpu) {
  ensure_cpu(cpu);
  Cpu& c = cpus_[cpu];
  uint8_t pc = c.pid == 0 ? 1 : 0;
  if (c.irq_depth == 0) ++c.irq_depth;  // an exit without entry (window start): still in irq
  EventContext e = ctx(cpu, pc, pc);
  --c.irq_depth;
  return e;
}

EventContext CpuContextTracker::on_lock_contended(int cpu) {
  ensure_cpu(cpu);
  return ctx(cpu, 1, 1);
}

EventContext CpuContextTracker::on_wake_idle_without_ipi(int cpu) {
  ensure_cpu(cpu);
  return ctx(cpu, 2, 2);
}

std::string ftrace_timestamp(Time t) {
  int64_t ns = t.count();
  if (ns < 0) ns = 0;
  int64_t us = (ns + 500) / 1000;  // ns2usecs()
  return fmt::format("{:5}.{:06}", us / 1000000, us % 1000000);
}

}  // namespace schedlab::trace::detail
