// SIS_SHORT: wake a task up on a busy LLC's target CPU when the one task running there is short
// (Chen Yu, "[RFC PATCH v2 1/2] sched/fair: Introduce short duration task check" and "[RFC PATCH
// v2 2/2] sched/fair: Choose the CPU where short task is running during wake up",
// <1a34e009de0dbe5900c7b2c6074c8e0c04e8596a.1666531576.git.yu.c.chen@intel.com>, Oct 2022; not
// merged). As posted in v2:
//  - each task keeps dur_avg, how long it runs from switching in to giving the CPU up
//    voluntarily (preemptions in between do not end a period). When it goes to sleep, the period
//    just ended updates dur_avg (update_avg(): 1/8 EWMA), but only when it differs from dur_avg
//    by at least sysctl_sched_min_granularity, and a period of 0 sets dur_avg to 0;
//  - is_short_task(p): dur_avg <= sysctl_sched_min_granularity (a task that never updated it,
//    dur_avg 0, is short);
//  - select_idle_cpu(), under SIS_UTIL with no idle core, when the scan depth nr_idle_scan + 1 is
//    more than 1 but under 60 % of the LLC (5 * nr < 3 * span weight): if the target runs exactly
//    one task and its current task is short, return the target without scanning;
//  - wake_affine_idle(), when neither CPU is idle: if this CPU runs exactly one task and its
//    current task is short, choose this CPU.
// sysctl_sched_min_granularity (v6.0) is the profile's sysctl_sched_base_slice, the name EEVDF
// gave it in v6.6 with the same default and scaling (tunables.base_slice_ns).
#include <cstdlib>
#include <vector>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class SisShort final : public Change {
 public:
  using Change::Change;
  enum Counter { kTarget, kAffine, kDurUpdates };

  static ChangeInfo info() {
    return {
        .name = "SIS_SHORT",
        .default_on = false,
        .help =
            "a busy LLC (SIS_UTIL depth < 60 % of it, no idle core) takes the target when its only "
            "task is short (average run between voluntary switches <= min granularity); "
            "wake_affine_idle() likewise (RFC v2, 2022)",
        .origin =
            "Chen Yu, [RFC PATCH v2 2/2] sched/fair: Choose the CPU where short task is running "
            "during wake up, <1a34e009de0dbe5900c7b2c6074c8e0c04e8596a.1666531576.git.yu.c.chen@"
            "intel.com> (LKML, Oct 2022; not merged)",
        .counters = {
            {"sis_short_target", "count",
             "select_idle_cpu() returned the target without scanning: its only task is short",
             true},
            {"sis_short_affine", "count",
             "wake_affine_idle() chose the waking CPU: its only task is short", true},
            {"sis_short_dur_updates", "count",
             "dur_avg updates at a voluntary switch-out (a change >= min granularity)", false}}};
  }

  // put_prev_task_fair() of a task going to sleep (it was dequeued: !prev->on_rq). __schedule()
  // has run update_curr(), so sum_exec_runtime includes this run.
  HookResult<bool> on_schedule(Rq& rq, SchedMode mode, Task* prev, KernelPath,
                               int64_t) override {
    if (mode != SchedMode::SM_NONE || prev == rq.idle || prev->is_rt() ||
        prev->state != TaskState::Interruptible)
      return {.value = false};
    State& s = state(prev);
    int64_t dur = prev->sum_exec_runtime - s.prev_sum_runtime_vol;
    s.prev_sum_runtime_vol = prev->sum_exec_runtime;
    if (std::llabs(dur - s.dur_avg) >= min_granularity()) {
      if (dur == 0)
        s.dur_avg = 0;
      else
        s.dur_avg += (dur - s.dur_avg) / 8;  // update_avg()
      counter(rq, kDurUpdates)++;
    }
    return {.value = false};
  }

  HookResult<int> on_select_idle_cpu_depth(Rq& this_rq, Task*, int target, int nr,
                                           int cpu) override {
    const int weight = static_cast<int>(k.llc_shared(k.topo.llc_of(target)).cpus.size());
    if (5 * nr >= 3 * weight) return {.value = cpu};
    const Rq& t = k.rq(target);
    // nr_running is read from the target's runqueue line (already read)
    if (t.nr_running != 1) return {.value = cpu};
    const int64_t cost = k.remote_read(this_rq.cpu, target);  // cpu_curr(target)'s se.dur_avg
    if (!is_short_task(t.curr)) return {.value = cpu, .cost_ns = cost};
    counter(this_rq, kTarget)++;
    return {.value = target, .cost_ns = cost};
  }

  HookResult<int> on_wake_affine_idle(int this_cpu, int, bool, int target) override {
    Rq& rq = k.rq(this_cpu);
    if (rq.nr_running == 1 && is_short_task(rq.curr)) {
      counter(rq, kAffine)++;
      return {.value = this_cpu};
    }
    return {.value = target};
  }

 private:
  struct State {
    int64_t prev_sum_runtime_vol = 0;  // sum_exec_runtime at the last voluntary switch-out
    int64_t dur_avg = 0;               // __sched_fork() starts both at 0
  };

  int64_t min_granularity() const { return k.m.tunables.base_slice_ns; }
  bool is_short_task(const Task* p) { return state(p).dur_avg <= min_granularity(); }
  State& state(const Task* p) {
    if (static_cast<size_t>(p->id) >= tasks_.size()) tasks_.resize(p->id + 1);
    return tasks_[p->id];
  }

  std::vector<State> tasks_;  // by Task::id
};
SCHEDLAB_REGISTER_CHANGE(SisShort);

}  // namespace
}  // namespace schedlab::kernel
