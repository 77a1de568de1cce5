// The hook points of scheduler changes (change.hpp), by name: the Kernel keeps, for each, the
// changes that are on and override it (base.hpp), without needing the Change class.
#pragma once

namespace schedlab::kernel {

// The hook points: where kernel patches change behaviour. Each is a virtual method of Change
// named on_<hook>, documented there; adding one = a line here, a virtual, and its call site.
// Only hooks a change uses are here (a hook no change overrides is a call site that does
// nothing): add one with the change that needs it.
#define SCHEDLAB_CHANGE_HOOKS(HOOK)                                                              \
  HOOK(schedule)                                                                                 \
  HOOK(activate_task)                                                                            \
  HOOK(ttwu_runnable)                                                                            \
  HOOK(wakeup_preempt)                                                                           \
  HOOK(wake_affine_idle)                                                                         \
  HOOK(select_idle_cpu_depth)                                                                    \
  HOOK(select_idle_cpu_candidate)                                                                \
  HOOK(select_idle_cpu_visit)                                                                    \
  HOOK(select_idle_cpu_done)                                                                     \
  HOOK(do_idle)                                                                                  \
  HOOK(newidle_balance)                                                                          \
  HOOK(sched_tick)                                                                               \
  HOOK(call_function_single_prep_ipi)                                                            \
  HOOK(set_nr_if_polling)                                                                        \
  HOOK(do_idle_flush)                                                                            \
  HOOK(pick_next_task_newidle)                                                                   \
  HOOK(update_newidle_cost)                                                                      \
  HOOK(nohz_csd_func)                                                                            \
  HOOK(nohz_idle_balance_busy)                                                                   \
  HOOK(raise_softirq)                                                                            \
  HOOK(return_to_task)

enum class Hook : int {
#define SCHEDLAB_HOOK_ENUM(name) name,
  SCHEDLAB_CHANGE_HOOKS(SCHEDLAB_HOOK_ENUM)
#undef SCHEDLAB_HOOK_ENUM
  COUNT
};
inline constexpr int kNumHooks = static_cast<int>(Hook::COUNT);
const char* hook_name(Hook h);

}  // namespace schedlab::kernel
