// Scheduler features, named as in /sys/kernel/debug/sched/features, with the kernel's defaults,
// and the scheduler changes (change.hpp), which are features too. `--features SM_IDLE,NO_SIS_UTIL`
// turns SM_IDLE on and SIS_UTIL off. A Features value also carries the changes' tunables
// (`--set change.IDLE_SPIN.max_ns=500000`).
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedlab::kernel {

// The features of the modeled mainline kernel, defined once: FEATURE(name, default, meaning).
// (Scheduler changes that are not part of the core model register themselves instead.)
#define SCHEDLAB_FEATURES(FEATURE)                                                               \
  FEATURE(TTWU_QUEUE, true,                                                                      \
          "remote wakeups go through the target's wake list (call_single_queue)")                \
  FEATURE(TTWU_QUEUE_IDLE, true,                                                                 \
          "a same-LLC wakeup onto an idle CPU goes through its wake list (v6.0, f3dd3f674555); " \
          "off: the v5.x rule, it takes the target's rq lock")                                   \
  FEATURE(SIS_UTIL, true,                                                                        \
          "select_idle_cpu() scans at most sd_llc_shared->nr_idle_scan CPUs (v6.0)")             \
  FEATURE(SIS_PROP, false,                                                                       \
          "select_idle_cpu() scan depth from avg_idle / avg_scan_cost (before v6.7)")            \
  FEATURE(WA_IDLE, true, "wake_affine() prefers an idle waker or previous CPU")                  \
  FEATURE(WA_WEIGHT, true, "wake_affine() compares the two CPUs' load")                          \
  FEATURE(WA_BIAS, true, "wake_affine() biases the load comparison to prev")                     \
  FEATURE(WAKEUP_PREEMPTION, true, "a woken task may preempt the current one (EEVDF pick)")      \
  FEATURE(RUN_TO_PARITY, true,                                                                   \
          "a picked task keeps the CPU against wakeups while it is eligible, up to its "         \
          "deadline or the shortest queued slice (v6.6 63304558ba5d; vprot v6.17); off: for "    \
          "the normalized base slice (0.70 ms) at most")                                         \
  FEATURE(PREEMPT_SHORT, true,                                                                   \
          "a wakee with a shorter slice is picked past curr's slice protection (v6.12)")         \
  FEATURE(NEWIDLE_BALANCE, true, "pull work when a CPU is about to go idle (newidle_balance)")    \
  FEATURE(EEVDF, true,                                                                           \
          "the fair class picks and preempts by EEVDF (v6.6, 147f3efaa241); off: the CFS rules "  \
          "before v6.6 (wakeup_gran, GENTLE_FAIR_SLEEPERS, START_DEBIT, sched_slice(), buddies)") \
  FEATURE(DELAY_DEQUEUE, false,                                                                  \
          "a fair task that blocks while not eligible stays queued (sched_delayed) until it is "   \
          "picked or woken; a wakeup requeues it in place (v6.12, on in the kernel; off here "     \
          "until validated)")                                                                   \
  FEATURE(DELAY_ZERO, true,                                                                      \
          "with DELAY_DEQUEUE: a delayed task's positive lag is dropped when it is dequeued or "   \
          "requeued (v6.12)")

enum class Feature : int {
#define SCHEDLAB_FEATURE_ENUM(name, on, meaning) name,
  SCHEDLAB_FEATURES(SCHEDLAB_FEATURE_ENUM)
#undef SCHEDLAB_FEATURE_ENUM
  COUNT
};

// One row of `schedlab features`: a core feature or a registered change.
struct FeatureInfo {
  const char* name;
  bool default_on;
  const char* help;
  int change = -1;  // index in change_types(), or -1 for a core feature
};
// Core features in SCHEDLAB_FEATURES order, then the changes by name.
std::vector<FeatureInfo> feature_table();

// A feature list that does not parse: one line naming the flag (--features, --base, --test, a
// sweep's or catalogue's key) and the item.
class FeatureError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Features {
 public:
  Features();  // kernel defaults, every change at its default and its tunables' defaults
  bool on(Feature f) const { return bits_[static_cast<int>(f)]; }
  void set(Feature f, bool v) { bits_[static_cast<int>(f)] = v; }
  bool change_on(int change) const { return changes_[change]; }
  void set_change(int change, bool v) { changes_[change] = v; }
  // The one feature-list parser. A list is comma-separated items, spaces around an item
  // ignored; NAME turns a feature or change on, NO_NAME turns it off; "" changes nothing.
  // Strict: an empty item ("SM_IDLE,,", ",SM_IDLE"), an unknown name, or a feature given twice
  // ("SM_IDLE,NO_SM_IDLE") throws FeatureError naming `flag` and the item, e.g.
  // "--features: unknown feature 'X' (see `schedlab features`)".
  void apply(const std::string& list, const std::string& flag = "--features");
  // The kernel defaults with `list` applied.
  static Features parse(const std::string& list, const std::string& flag = "--features");
  // The list's items, trimmed, in order; "" has none. An empty item throws FeatureError naming
  // `flag` and the list.
  static std::vector<std::string> split(const std::string& list, const std::string& flag = "--features");
  // Is `name` (without NO_) a core feature or a registered change?
  static bool known(const std::string& name);
  // The features that differ from the defaults, as a --features string ("" if none).
  std::string describe() const;

  // A change's tunable, by the change's index and the tunable's index in its ChangeInfo.
  int64_t tunable(int change, int i) const { return tunables_[change][i]; }
  // `--set change.NAME.KEY=VALUE` (the part after `--set `); throws std::invalid_argument with
  // one line naming the flag.
  void apply_set(const std::string& assignment);
  // Is this a --set assignment for a change tunable (it starts with "change.")?
  static bool is_change_set(const std::string& assignment);

 private:
  std::array<bool, static_cast<int>(Feature::COUNT)> bits_{};
  std::vector<bool> changes_;
  std::vector<std::vector<int64_t>> tunables_;
};

}  // namespace schedlab::kernel
