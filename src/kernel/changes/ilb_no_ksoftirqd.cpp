// ILB_NO_KSOFTIRQD: "softirq: Unify should_wakeup_ksoftirqd()" / "softirq: Avoid unnecessary
// wakeup of ksoftirqd when a call to do_softirq() is pending" of the idle-load-balance series
// (K Prateek Nayak, <20240904111223.1035-1-kprateek.nayak@amd.com>, v3
// <20241014090339.2478-1-kprateek.nayak@amd.com>; reported by Julia Lawall). The call-function
// flush of do_idle() runs in the idle task's context, not in an interrupt, so SCHED_SOFTIRQ
// raised there by nohz_csd_func() woke ksoftirqd, which made the idle balancer look busy and
// cost a context switch. The change marks that do_softirq_post_smp_call_flush() is about to run
// the softirqs, and raising one in the flush wakes no ksoftirqd.
#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class IlbNoKsoftirqd final : public Change {
 public:
  using Change::Change;
  enum Counter { kAvoided };

  static ChangeInfo info() {
    return {.name = "ILB_NO_KSOFTIRQD",
            .default_on = false,
            .help =
                "a softirq raised by a call function in do_idle()'s flush runs at the flush's "
                "do_softirq() without waking ksoftirqd (2024 series)",
            .origin =
                "K Prateek Nayak, [RFC PATCH v2 0/5] Idle Load Balance fixes and softirq "
                "enhancements, <20240904111223.1035-1-kprateek.nayak@amd.com>; v3 "
                "<20241014090339.2478-1-kprateek.nayak@amd.com>",
            .counters = {{"ksoftirqd_wakeups_avoided", "count",
                          "softirqs raised in do_idle()'s flush that woke no ksoftirqd", true}}};
  }

  HookResult<bool> on_raise_softirq(Rq& rq, int, bool wake_ksoftirqd) override {
    if (!wake_ksoftirqd || !k.cpu(rq.cpu).softirq_after_flush) return {.value = wake_ksoftirqd};
    counter(rq, kAvoided)++;
    return {.value = false};
  }
};
SCHEDLAB_REGISTER_CHANGE(IlbNoKsoftirqd);

}  // namespace
}  // namespace schedlab::kernel
