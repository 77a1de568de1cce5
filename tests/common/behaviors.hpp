// Small task programs for mechanism tests.
#pragma once
#include <functional>

#include "kernel/kernel.hpp"

namespace schedlab::fixture {

using kernel::Action;
using kernel::Kernel;
using kernel::Task;

// Runs a function returning the next action; the function sees a step counter.
class Lambda : public kernel::Behavior {
 public:
  explicit Lambda(std::function<Action(Kernel&, Task&, int)> f) : f_(std::move(f)) {}
  Action next(Kernel& k, Task& t) override { return f_(k, t, n_++); }

 private:
  std::function<Action(Kernel&, Task&, int)> f_;
  int n_ = 0;
};

inline std::unique_ptr<kernel::Behavior> lambda(std::function<Action(Kernel&, Task&, int)> f) {
  return std::make_unique<Lambda>(std::move(f));
}

inline kernel::TaskOptions pinned(int cpu, bool blocked = false) {
  kernel::TaskOptions o;
  o.cpus = {cpu};
  o.pin_cpu = cpu;
  o.start_blocked = blocked;
  return o;
}

}  // namespace schedlab::fixture

namespace schedlab::kernel {
// Reaches into the model for tests that set up an exact situation.
class KernelTestPeer {
 public:
  static Rq& rq(Kernel& k, int cpu) { return k.rqs_[cpu]; }
  static LlcShared& llc(Kernel& k, int l) { return k.llcs_[l]; }
  static int select_idle_cpu(Kernel& k, int this_cpu, Task* p, int target, bool core,
                             int64_t& cost) {
    return k.select_idle_cpu(this_cpu, p, target, core, cost);
  }
};
}  // namespace schedlab::kernel
