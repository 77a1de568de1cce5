// NI_SKIP_IDLE_PREV: "[PATCH] sched/fair: Skip newidle_balance() when an idle CPU is woken up to
// process an IPI" (K Prateek Nayak, <20240119084548.2788-1-kprateek.nayak@amd.com>, Jan 2024; not
// merged). A polling idle CPU kicked for a csd (CSD_POLL_KICK) has TIF_NEED_RESCHED set, so after
// the flush it enters schedule_idle() -> pick_next_task() with prev = the idle task and nothing
// queued, and pick_next_task_fair() runs newidle balance with interrupts off, delaying the next
// IPI. The patch returns before newidle_balance() when prev is the idle task; the pick still runs
// (unlike SM_IDLE, which skips it whole). The reviewers' concerns (a tick waking a tickful idle
// CPU no longer balances; the real problem is the spurious need_resched) hold in the model too.
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class NiSkipIdlePrev final : public Change {
 public:
  using Change::Change;
  enum Counter { kSkipped };

  static ChangeInfo info() {
    return {
        .name = "NI_SKIP_IDLE_PREV",
        .default_on = false,
        .help =
            "pick_next_task_fair() skips newidle balance when prev is the idle task, woken only "
            "for an IPI (2024 patch, not merged)",
        .origin =
            "K Prateek Nayak, [PATCH] sched/fair: Skip newidle_balance() when an idle CPU is "
            "woken up to process an IPI, <20240119084548.2788-1-kprateek.nayak@amd.com> (not "
            "merged)",
        .counters = {{"newidle_skipped_idle_prev", "count",
                      "picks from the idle task that skipped newidle balance", true}}};
  }

  HookResult<bool> on_pick_next_task_newidle(Rq& rq, Task* prev, bool balance) override {
    if (!balance || prev != rq.idle) return {.value = balance};
    counter(rq, kSkipped)++;
    return {.value = false};
  }
};
SCHEDLAB_REGISTER_CHANGE(NiSkipIdlePrev);

}  // namespace
}  // namespace schedlab::kernel
