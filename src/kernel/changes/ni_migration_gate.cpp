// NI_MIGRATION_GATE: newidle balance as before "[PATCH v3 0/5] Improve newidle lb cost tracking
// and early abort" (Vincent Guittot, <20211019123537.17146-1-vincent.guittot@linaro.org>, merged
// for v5.17). The feature is the old behaviour (a catalogue case's base side turns it on):
// newidle balance is skipped while this_rq->avg_idle < sysctl_sched_migration_cost (instead of
// the first domain's max_newidle_lb_cost); update_blocked_averages() is not counted in the first
// level's cost; a level's max_newidle_lb_cost is only raised here, and the periodic balance
// decays it once a second whatever the raises (no last_decay_max_lb_cost reset).
#include "kernel/change.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class NiMigrationGate final : public Change {
 public:
  using Change::Change;
  enum Counter { kGated };

  static ChangeInfo info() {
    return {
        .name = "NI_MIGRATION_GATE",
        .default_on = false,
        .help =
            "newidle balance before v5.17: skipped while avg_idle < sysctl_sched_migration_cost, "
            "the blocked-load update outside the learned cost, max_newidle_lb_cost decayed once "
            "a second at every periodic balance",
        .origin =
            "the kernel before Vincent Guittot, [PATCH v3 0/5] Improve newidle lb cost tracking "
            "and early abort, <20211019123537.17146-1-vincent.guittot@linaro.org> (v5.17)",
        .counters = {{"newidle_migration_gated", "count",
                      "newidle balances skipped because avg_idle < sysctl_sched_migration_cost",
                      true}}};
  }

  HookResult<bool> on_newidle_balance(Rq& rq, bool) override {
    const bool short_idle = rq.avg_idle < k.m.tunables.migration_cost_ns;
    if (short_idle && k.rd().overload) counter(rq, kGated)++;
    return {.value = k.rd().overload && !short_idle};
  }
  HookResult<std::optional<int64_t>> on_update_newidle_cost(Rq&, SchedDomain& sd,
                                                            int64_t blocked_ns, int64_t cost,
                                                            std::optional<int64_t>) override {
    cost -= blocked_ns;
    if (cost > sd.max_newidle_lb_cost) sd.max_newidle_lb_cost = cost;
    return {.value = cost};
  }
};
SCHEDLAB_REGISTER_CHANGE(NiMigrationGate);

}  // namespace
}  // namespace schedlab::kernel
