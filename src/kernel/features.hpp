// Scheduler features, named as in /sys/kernel/debug/sched/features, with the kernel's defaults.
// `--features SM_IDLE,NO_SIS_UTIL` turns SM_IDLE on and SIS_UTIL off.
#pragma once
#include <array>
#include <string>
#include <vector>

namespace schedlab::kernel {

enum class Feature : int {
  TTWU_QUEUE,         // queue remote wakeups on the target's wake list (core.c ttwu_queue)
  SIS_UTIL,           // bound select_idle_cpu() scan depth by LLC utilisation (v6.0)
  SIS_PROP,           // older bound by avg_idle / avg_scan_cost (removed in v6.7)
  WA_IDLE,            // wake_affine_idle()
  WA_WEIGHT,          // wake_affine_weight()
  WA_BIAS,            // imbalance bias in wake_affine_weight()
  WAKEUP_PREEMPTION,  // a woken task may preempt the running one
  NEWIDLE_BALANCE,    // balance when a CPU is about to go idle
  SM_IDLE,            // idle re-entry fast path in __schedule() (3dcac251b066, v6.12)
  IDLE_CPUMASK,       // per-LLC idle cpumask for wakeup (Aubrey Li's 2020 RFC, not merged)
  IDLE_SPIN,          // busy wait before going idle (Nicholas Piggin's 2018 RFC, not merged)
  COUNT
};

struct FeatureInfo {
  Feature id;
  const char* name;
  bool default_on;
  const char* help;
};

const std::vector<FeatureInfo>& feature_table();

class Features {
 public:
  Features();  // kernel defaults
  bool on(Feature f) const { return bits_[static_cast<int>(f)]; }
  void set(Feature f, bool v) { bits_[static_cast<int>(f)] = v; }
  // Applies a comma-separated list: NAME turns on, NO_NAME turns off; "" changes nothing.
  // Throws std::invalid_argument("unknown feature 'X' (see `schedlab features`)").
  void apply(const std::string& list);
  // The features that differ from the defaults, as a --features string ("" if none).
  std::string describe() const;

 private:
  std::array<bool, static_cast<int>(Feature::COUNT)> bits_{};
};

}  // namespace schedlab::kernel
