// CSD_POLL_KICK: a call-function for a polling idle CPU sets TIF_NEED_RESCHED instead of sending
// the IPI (Peter Zijlstra, "smp: Optimize send_call_function_single_ipi()", b2a02fc43a1f, v5.8).
// call_function_single_prep_ipi() tries set_nr_if_polling() on the target's idle task (a read of
// its flags, then a cmpxchg: two line transfers); when it succeeds no IPI is sent, the polling
// loop sees the flag, and do_idle() runs flush_smp_call_function_queue() before schedule_idle().
// On by default, as in every kernel since v5.8; NO_CSD_POLL_KICK is the "revert" of
// <20240119084548.2788-1-kprateek.nayak@amd.com> and <20240220171457.703-1-kprateek.nayak@amd.com>:
// every csd comes with an IPI whose handler runs the queue, and do_idle() does not flush.
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class CsdPollKick final : public Change {
 public:
  using Change::Change;
  enum Counter { kTries };

  static ChangeInfo info() {
    return {
        .name = "CSD_POLL_KICK",
        .default_on = true,
        .help =
            "a csd for a polling idle CPU sets TIF_NEED_RESCHED instead of an IPI and do_idle() "
            "flushes the call queue (b2a02fc43a1f, v5.8); NO_CSD_POLL_KICK reverts it",
        .origin = "b2a02fc43a1f smp: Optimize send_call_function_single_ipi() (v5.8)",
        .counters = {
            {"csd_poll_kick_tries", "count",
             "call_function_single_prep_ipi() calls that tried set_nr_if_polling() (sender)"}}};
  }

  HookResult<bool> on_call_function_single_prep_ipi(int from, int, bool) override {
    counter(k.rq(from), kTries)++;
    return {.value = true};
  }
  HookResult<IdleFlush> on_do_idle_flush(Rq&, IdleFlush what) override {
    what.flush = true;
    return {.value = what};
  }
};
SCHEDLAB_REGISTER_CHANGE(CsdPollKick);

}  // namespace
}  // namespace schedlab::kernel
