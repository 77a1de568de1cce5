// TIF_NOTIFY_IPI: "[RFC PATCH 00/14] Introducing TIF_NOTIFY_IPI flag" (Gautham R. Shenoy,
// K Prateek Nayak; <20240220171457.703-1-kprateek.nayak@amd.com>, v2
// <20240613181613.4329-1-kprateek.nayak@amd.com>; not merged). call_function_single_prep_ipi()
// kicks a polling idle CPU with a new thread flag, TIF_NOTIFY_IPI, instead of TIF_NEED_RESCHED.
// The polling loops end on either flag (need_resched_or_ipi()); do_idle() clears it, flushes the
// call queue and calls schedule_idle() only if need_resched() is set afterwards (a csd that
// really woke a task, sched_ttwu_pending()). An IPI-only wakeup goes straight back into the idle
// loop with interrupts on, and a need_resched() test inside a call function (nohz_csd_func()) is
// no longer fooled. Needs CSD_POLL_KICK (it changes that kick).
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class TifNotifyIpi final : public Change {
 public:
  using Change::Change;
  enum Counter { kKicks };

  static ChangeInfo info() {
    return {
        .name = "TIF_NOTIFY_IPI",
        .default_on = false,
        .help =
            "a polling idle CPU is kicked for a csd with TIF_NOTIFY_IPI instead of "
            "TIF_NEED_RESCHED; do_idle() flushes and calls schedule_idle() only if need_resched() "
            "(2024 RFC, not merged)",
        .origin =
            "Gautham R. Shenoy, K Prateek Nayak, [RFC PATCH 00/14] Introducing TIF_NOTIFY_IPI "
            "flag, <20240220171457.703-1-kprateek.nayak@amd.com>; v2 "
            "<20240613181613.4329-1-kprateek.nayak@amd.com> (not merged)",
        .counters = {{"notify_ipi_kicks", "count",
                      "polling idle CPUs kicked with TIF_NOTIFY_IPI (sender)", true}}};
  }

  HookResult<bool> on_set_nr_if_polling(int from, Rq& target, int64_t offset, bool) override {
    target.notify_ipi = true;
    counter(k.rq(from), kKicks)++;
    wake_polling_idle(k, from, target, offset);
    return {.value = true};
  }
  HookResult<IdleFlush> on_do_idle_flush(Rq&, IdleFlush what) override {
    what.always_schedule = false;
    return {.value = what};
  }
};
SCHEDLAB_REGISTER_CHANGE(TifNotifyIpi);

}  // namespace
}  // namespace schedlab::kernel
