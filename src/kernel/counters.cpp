#include "kernel/counters.hpp"

namespace schedlab::kernel {

void CpuCounters::add(const CpuCounters& o) {
  busy_ns += o.busy_ns;
  for (int i = 0; i < kNumKernelPaths; ++i) kernel_ns[i] += o.kernel_ns[i];
  if (idle_ns.size() < o.idle_ns.size()) idle_ns.resize(o.idle_ns.size());
  if (idle_usage.size() < o.idle_usage.size()) idle_usage.resize(o.idle_usage.size());
  for (size_t i = 0; i < o.idle_ns.size(); ++i) idle_ns[i] += o.idle_ns[i];
  for (size_t i = 0; i < o.idle_usage.size(); ++i) idle_usage[i] += o.idle_usage[i];
  context_switches += o.context_switches;
  mm_switches += o.mm_switches;
  schedule_calls += o.schedule_calls;
  schedule_idle_calls += o.schedule_idle_calls;
  pick_next_task_calls += o.pick_next_task_calls;
  pick_next_task_from_idle += o.pick_next_task_from_idle;
  sm_idle_fastpath += o.sm_idle_fastpath;
  ttwu_local += o.ttwu_local;
  ttwu_remote += o.ttwu_remote;
  ttwu_wakelist += o.ttwu_wakelist;
  for (int i = 0; i < kNumIpiKinds; ++i) {
    ipi_sent[i] += o.ipi_sent[i];
    ipi_received[i] += o.ipi_received[i];
  }
  wake_polling_no_ipi += o.wake_polling_no_ipi;
  sis_calls += o.sis_calls;
  sis_scanned += o.sis_scanned;
  sis_scan_ns += o.sis_scan_ns;
  sis_found += o.sis_found;
  idle_cpumask_stale += o.idle_cpumask_stale;
  newidle_calls += o.newidle_calls;
  newidle_skipped += o.newidle_skipped;
  newidle_pulled += o.newidle_pulled;
  lb_calls += o.lb_calls;
  lb_pulled += o.lb_pulled;
  migrations += o.migrations;
  csd_run += o.csd_run;
  ticks += o.ticks;
  idle_spin += o.idle_spin;
  idle_spin_hit += o.idle_spin_hit;
  idle_spin_hidden_ns += o.idle_spin_hidden_ns;
  wasted_idle_ns += o.wasted_idle_ns;
}

int64_t CpuCounters::kernel_total_ns() const {
  int64_t s = 0;
  for (auto v : kernel_ns) s += v;
  return s;
}

int64_t CpuCounters::idle_total_ns() const {
  int64_t s = 0;
  for (auto v : idle_ns) s += v;
  return s;
}

}  // namespace schedlab::kernel
