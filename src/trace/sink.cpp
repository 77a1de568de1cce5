#include "trace/sink.hpp"

namespace schedlab::trace {

const char* kernel_path_name(KernelPath p) {
  switch (p) {
    case KernelPath::Schedule: return "schedule";
    case KernelPath::ScheduleIdle: return "schedule_idle";
    case KernelPath::Ttwu: return "ttwu";
    case KernelPath::TtwuPending: return "sched_ttwu_pending";
    case KernelPath::NewidleBalance: return "newidle_balance";
    case KernelPath::LoadBalance: return "load_balance";
    case KernelPath::IpiHandler: return "ipi_handler";
    case KernelPath::CallFunction: return "call_function";
    case KernelPath::Tick: return "sched_tick";
    case KernelPath::IdleEntry: return "idle_entry";
    case KernelPath::IdleExit: return "idle_exit";
    case KernelPath::Spin: return "idle_spin";
    case KernelPath::Irq: return "irq";
    case KernelPath::Softirq: return "softirq";
    case KernelPath::NohzIdleBalance: return "nohz_idle_balance";
    case KernelPath::Steal: return "steal";
    case KernelPath::Syscall: return "syscall";
  }
  return "?";
}

const char* ipi_reason(IpiKind k) {
  switch (k) {
    case IpiKind::Reschedule: return "Rescheduling interrupts";
    case IpiKind::CallFunctionSingle: return "Single function call interrupts";
  }
  return "?";
}

const char* lock_class_name(LockClass c) {
  switch (c) {
    case LockClass::Rq: return "rq";
    case LockClass::Pi: return "pi";
  }
  return "?";
}

}  // namespace schedlab::trace
