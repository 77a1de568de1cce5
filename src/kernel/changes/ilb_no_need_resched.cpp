// ILB_NO_NEED_RESCHED: "sched/core: Remove the unnecessary need_resched() check in
// nohz_csd_func()" and "sched/fair: Check idle_cpu() before need_resched() to detect ilb CPU
// turning busy" of the idle-load-balance series (K Prateek Nayak,
// <20240904111223.1035-1-kprateek.nayak@amd.com>, v3 <20241014090339.2478-1-kprateek.nayak@amd.com>,
// merged for v6.13 as ea9cffc0a154 and ff47a0acfcce). The ILB kick is a csd (nohz_csd_func()) to
// an idle CPU; with CSD_POLL_KICK a polling target was woken with TIF_NEED_RESCHED, so the
// need_resched() test in nohz_csd_func() dropped the kick, and the one in _nohz_idle_balance()
// stopped the balance, almost every time. The change drops the first and makes the second
// `!idle_cpu(this_cpu) && need_resched()`.
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class IlbNoNeedResched final : public Change {
 public:
  using Change::Change;
  enum Counter { kIgnored };

  static ChangeInfo info() {
    return {
        .name = "ILB_NO_NEED_RESCHED",
        .default_on = false,
        .help =
            "nohz_csd_func() raises SCHED_SOFTIRQ despite need_resched() and _nohz_idle_balance() "
            "tests idle_cpu() first (2024 series, v6.13)",
        .origin =
            "K Prateek Nayak, [RFC PATCH v2 0/5] Idle Load Balance fixes and softirq "
            "enhancements, <20240904111223.1035-1-kprateek.nayak@amd.com>; v3 "
            "<20241014090339.2478-1-kprateek.nayak@amd.com> (ea9cffc0a154, ff47a0acfcce, v6.13)",
        .counters = {{"ilb_need_resched_ignored", "count",
                      "ILB kicks and balance steps that went on although need_resched() was set",
                      true}}};
  }

  HookResult<bool> on_nohz_csd_func(Rq& rq, bool bail) override {
    if (!bail) return {.value = false};
    counter(rq, kIgnored)++;
    return {.value = false};
  }
  HookResult<bool> on_nohz_idle_balance_busy(Rq& this_rq, bool busy) override {
    if (!busy || !idle_cpu(k, this_rq.cpu)) return {.value = busy};
    counter(this_rq, kIgnored)++;
    return {.value = false};
  }
};
SCHEDLAB_REGISTER_CHANGE(IlbNoNeedResched);

}  // namespace
}  // namespace schedlab::kernel
