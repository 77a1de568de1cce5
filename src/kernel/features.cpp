#include "kernel/features.hpp"

#include <sstream>
#include <stdexcept>

namespace schedlab::kernel {

const std::vector<FeatureInfo>& feature_table() {
  static const std::vector<FeatureInfo> t = {
      {Feature::TTWU_QUEUE, "TTWU_QUEUE", true,
       "remote wakeups go through the target's wake list (call_single_queue)"},
      {Feature::SIS_UTIL, "SIS_UTIL", true,
       "select_idle_cpu() scans at most sd_llc_shared->nr_idle_scan CPUs (v6.0)"},
      {Feature::SIS_PROP, "SIS_PROP", false,
       "select_idle_cpu() scan depth from avg_idle / avg_scan_cost (before v6.7)"},
      {Feature::WA_IDLE, "WA_IDLE", true, "wake_affine() prefers an idle waker or previous CPU"},
      {Feature::WA_WEIGHT, "WA_WEIGHT", true, "wake_affine() compares the two CPUs' load"},
      {Feature::WA_BIAS, "WA_BIAS", true, "wake_affine() biases the load comparison to prev"},
      {Feature::WAKEUP_PREEMPTION, "WAKEUP_PREEMPTION", true,
       "a woken task may preempt the current one (EEVDF pick)"},
      {Feature::NEWIDLE_BALANCE, "NEWIDLE_BALANCE", true,
       "pull work when a CPU is about to go idle (newidle_balance)"},
      {Feature::SM_IDLE, "SM_IDLE", false,
       "schedule_idle() with nothing to run skips pick_next_task() and returns to idle "
       "(3dcac251b066, v6.12)"},
      {Feature::IDLE_CPUMASK, "IDLE_CPUMASK", false,
       "select_idle_cpu() scans a per-LLC mask of idle CPUs, set on idle entry, cleared at "
       "the busy tick (2020 RFC)"},
      {Feature::IDLE_SPIN, "IDLE_SPIN", false,
       "busy wait up to tunables.idle_spin_max_ns before switching to idle when the blocking "
       "task is alone (2018 RFC)"},
  };
  return t;
}

Features::Features() {
  for (const auto& f : feature_table()) set(f.id, f.default_on);
}

void Features::apply(const std::string& list) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    bool value = true;
    std::string name = item;
    if (name.rfind("NO_", 0) == 0) {
      value = false;
      name = name.substr(3);
    }
    bool found = false;
    for (const auto& f : feature_table()) {
      if (name == f.name) {
        set(f.id, value);
        found = true;
      }
    }
    if (!found)
      throw std::invalid_argument("--features: unknown feature '" + item +
                                  "' (see `schedlab features`)");
  }
}

std::string Features::describe() const {
  std::string out;
  for (const auto& f : feature_table()) {
    if (on(f.id) == f.default_on) continue;
    if (!out.empty()) out += ",";
    out += on(f.id) ? f.name : std::string("NO_") + f.name;
  }
  return out;
}

}  // namespace schedlab::kernel
