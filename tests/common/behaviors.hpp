// Small task programs for mechanism tests.
#pragma once
#include <functional>
#include <string>

#include "kernel/kernel.hpp"

namespace schedlab::fixture {

using kernel::Action;
using kernel::Api;
using kernel::Kernel;
using kernel::Task;

// Runs a function returning the next action; the function sees a step counter.
class Lambda : public kernel::Behavior {
 public:
  explicit Lambda(std::function<Action(Api&, Task&, int)> f) : f_(std::move(f)) {}
  Action next(Api& k, Task& t) override { return f_(k, t, n_++); }

 private:
  std::function<Action(Api&, Task&, int)> f_;
  int n_ = 0;
};

inline std::unique_ptr<kernel::Behavior> lambda(std::function<Action(Api&, Task&, int)> f) {
  return std::make_unique<Lambda>(std::move(f));
}

// Features from a --features list ("SIS_NODE,NO_SIS_UTIL").
inline kernel::Features features(const std::string& list) {
  kernel::Features f;
  f.apply(list);
  return f;
}

// A CPU hog: computes for a second at a time, never sleeps.
inline std::unique_ptr<kernel::Behavior> hog() {
  return lambda([](Api&, Task&, int) { return Action::compute(1000000000); });
}

inline kernel::TaskOptions pinned(int cpu, bool blocked = false) {
  kernel::TaskOptions o;
  o.cpus = {cpu};
  o.pin_cpu = cpu;
  o.start_blocked = blocked;
  return o;
}

}  // namespace schedlab::fixture
