// The sanity checker (--check): the model's invariants after every event, and the "wasted
// cores" measure (idle while work waited in the same LLC). Its bookkeeping is its own, per
// task and per CPU, so the scheduler's structures carry none of it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace schedlab::kernel {

class Kernel;
struct Task;

class Checker {
 public:
  explicit Checker(Kernel& k);
  // activate_task() placed p anew (its vruntime may change).
  void placed(const Task* p);
  void check();
  [[noreturn]] void fail(int cpu, const Task* t, const std::string& what) const;

 private:
  struct Mark {
    uint64_t gen = 0;
    int cpu = -1;
    bool queued = false;      // seen queued (not running) since its last placement
    int64_t vruntime = 0;     // vruntime when first seen queued
  };
  Mark& mark(const Task* t);
  Kernel& k_;
  sim::Time last_check_;
  uint64_t gen_ = 0;
  std::vector<Mark> marks_;   // by Task::id
  std::vector<char> wasting_;  // by CPU
};

}  // namespace schedlab::kernel
