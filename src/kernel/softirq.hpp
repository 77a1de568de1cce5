// kernel/softirq.c's per-CPU state, reached through Kernel::softirq(cpu) (softirq.cpp).
#pragma once
#include <vector>

#include "kernel/base.hpp"

namespace schedlab::kernel {

// Per-CPU softirq state (kernel/softirq.c): the pending mask and ksoftirqd/N (created at its
// first wakeup).
struct SoftirqCpu {
  uint32_t pending = 0;
  Task* ksoftirqd = nullptr;
};

struct SoftirqState {
  std::vector<SoftirqCpu> cpus;
};

inline SoftirqCpu& Kernel::softirq(int cpu) { return softirq_->cpus[cpu]; }
inline const SoftirqCpu& Kernel::softirq(int cpu) const { return softirq_->cpus[cpu]; }

}  // namespace schedlab::kernel
