// SM_IDLE: the idle re-entry fast path of __schedule() (Peter Zijlstra, "sched/core: Introduce
// SM_IDLE and an idle re-entry fast-path in __schedule()", 3dcac251b066, v6.12). When the idle
// loop calls schedule_idle() because need_resched was set (e.g. by a call-function kick to a
// polling CPU) and nothing is runnable, __schedule() skips pick_next_task() and with it newidle
// balance, and goes straight back to the idle loop. In the kernel it is unconditional since
// v6.12; here it is off by default (the modeled baseline predates it) and `--features SM_IDLE`
// turns it on.
#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class SmIdle final : public Change {
 public:
  using Change::Change;
  enum Counter { kFastpath };

  static ChangeInfo info() {
    return {.name = "SM_IDLE",
            .default_on = false,
            .help =
                "schedule_idle() with nothing to run skips pick_next_task() and returns to idle "
                "(3dcac251b066, v6.12)",
            .origin =
                "3dcac251b066 sched/core: Introduce SM_IDLE and an idle re-entry fast-path in "
                "__schedule() (v6.12)",
            .counters = {{"sm_idle_fastpath", "count",
                          "schedule_idle() calls that returned straight to idle", true}}};
  }

  HookResult<bool> on_schedule(Rq& rq, SchedMode mode, Task*, KernelPath path,
                               int64_t cost) override {
    if (mode != SchedMode::SM_IDLE || rq.nr_running != 0) return {.value = false};
    rq.need_resched = false;
    counter(rq, kFastpath)++;
    __schedule_idle_fastpath(k, rq, path, cost);
    return {.value = true};
  }
};
SCHEDLAB_REGISTER_CHANGE(SmIdle);

}  // namespace
}  // namespace schedlab::kernel
