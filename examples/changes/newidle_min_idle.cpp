// NEWIDLE_MIN_IDLE: a worked example of a scheduler change kept outside the tree
// (docs/changes.md). Build it in with
//   cmake -S . -B build -DSCHEDLAB_CHANGES_DIR=$PWD/examples/changes
// and try it with `schedlab ab --base "" --test NEWIDLE_MIN_IDLE -- hackbench -g 4 -l 1000`.
//
// The patch it models (not a kernel commit; an experiment a scheduler developer might try):
// sched_balance_newidle() also gives up when the runqueue's avg_idle is below a fixed
// threshold, the test nohz_newidle_balance() applies to its own work
// (`this_rq->avg_idle < sysctl_sched_migration_cost`), on top of the kernel's own gate
// (avg_idle below the lowest domain's max_newidle_lb_cost). The default threshold is
// sysctl_sched_migration_cost's default, 500 us (kernel/sched/fair.c).
#include "kernel/change.hpp"  // Change, its hooks; with sched.hpp (Rq) and base.hpp (Kernel)

namespace schedlab::kernel {
namespace {

class NewidleMinIdle final : public Change {
 public:
  using Change::Change;
  enum Counter { kVetoed };
  enum Tunable { kMinIdleNs };

  static ChangeInfo info() {
    return {.name = "NEWIDLE_MIN_IDLE",
            .default_on = false,
            .help = "newidle balance also needs avg_idle >= change.NEWIDLE_MIN_IDLE.min_idle_ns "
                    "(example change)",
            .origin = "examples/changes/newidle_min_idle.cpp (a worked example, not a kernel patch)",
            .counters = {{"newidle_min_idle_vetoed", "count",
                          "newidle balances the kernel's gates allowed and this change skipped",
                          true}},
            .tunables = {{"min_idle_ns", "ns", 500000, 0, 100000000,
                          "avg_idle below which newidle balance is skipped (default: "
                          "sysctl_sched_migration_cost)"}}};
  }

  // The hook gets the kernel's decision and returns the change's (with no extra work).
  HookResult<bool> on_newidle_balance(Rq& rq, bool balance) override {
    if (balance && rq.avg_idle < tunable(kMinIdleNs)) {
      counter(rq, kVetoed)++;
      return {.value = false};
    }
    return {.value = balance};
  }
};
SCHEDLAB_REGISTER_CHANGE(NewidleMinIdle);

}  // namespace
}  // namespace schedlab::kernel
