// kernel/smp.c's scratch: the entries one call-queue flush takes off the queue, reused without
// allocating (smp.cpp), reached through Kernel::smp().
#pragma once
#include <vector>

#include "kernel/base.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

struct SmpScratch {
  std::vector<Task*> ttwu_batch;
  std::vector<Csd> csd_batch;
};

inline SmpScratch& Kernel::smp() { return *smp_; }

}  // namespace schedlab::kernel
