// The pooled one-shot events of the kernel (Kernel::deferred(), kernel.cpp runs them).
#pragma once
#include <vector>

#include "kernel/base.hpp"
#include "kernel/cpu.hpp"

namespace schedlab::kernel {

// A pooled one-shot event: IPI delivery, hrtimer expiry, csd unlock, a change's own (defer()).
struct DeferredEvent final : sim::Event {
  using Kind = DeferredKind;
  using enum DeferredKind;
  Kernel* k = nullptr;
  Kind kind = IpiArrival;
  IpiKind ipi = IpiKind::Reschedule;
  uint8_t change_kind = 0;  // ChangeCall: the change's kind
  int cpu = 0;
  Task* task = nullptr;
  int64_t arg = 0;  // HrtimerExpiry: expiry (ns); ChangeCall: the change's; IpiArrival: host woke it
  Change* change = nullptr;  // ChangeCall
  Irq irq;                   // HeldIrq: an interrupt a halted or stolen vCPU takes late
  void process() override;
};

}  // namespace schedlab::kernel
