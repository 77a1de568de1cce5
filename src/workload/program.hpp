// A convenience base for task programs: a queue of steps, each an Action or an instant piece of
// program logic (which may queue more actions to run next). step() refills the queue.
#pragma once
#include <deque>
#include <functional>
#include <vector>

#include "kernel/kernel.hpp"
#include "workload/channel.hpp"

namespace schedlab::workload {

using kernel::Action;
using kernel::Kernel;
using kernel::Task;

// Linux's default timer slack for SCHED_OTHER tasks (timer_slack_ns = 50 us): a sleep of s is an
// hrtimer range [s, s + slack], and on an otherwise quiet timer base it fires at the hard end
// (the clock event is programmed for the hard expiry). Real-time tasks get no slack
// (hrtimer_nanosleep(): rt_task(current) -> slack 0).
inline constexpr int64_t kTimerSlackNs = 50000;

// Counts down a benchmark's tasks: the last one to finish records the end time and stops the run.
struct Completion {
  int remaining = 0;
  bool finished = false;
  sim::Time t0, t1;
  void one_done(Kernel& k) {
    if (--remaining > 0) return;
    t1 = k.now();
    finished = true;
    k.stop();
  }
};

class Program : public kernel::Behavior {
 public:
  Action next(Kernel& k, Task& self) final {
    for (int guard = 0; guard < 1000000; ++guard) {
      if (queue_.empty()) step(k, self);
      if (queue_.empty()) return Action::exit();
      Item it = std::move(queue_.front());
      queue_.pop_front();
      if (!it.fn) return it.action;
      inserted_.clear();
      it.fn(k, self);
      for (auto i = inserted_.rbegin(); i != inserted_.rend(); ++i) queue_.push_front(*i);
      inserted_.clear();
    }
    return Action::exit();
  }

 protected:
  // Fills the queue with the next steps (called when it is empty).
  virtual void step(Kernel& k, Task& self) = 0;
  void push(Action a) { queue_.push_back(Item{a, nullptr}); }
  void push(std::function<void(Kernel&, Task&)> fn) { queue_.push_back(Item{{}, std::move(fn)}); }
  // From inside a queued function: run this action (or function) next, in call order, before
  // anything queued earlier. A function run this way may itself call then().
  void then(Action a) { inserted_.push_back(Item{a, nullptr}); }
  void then(std::function<void(Kernel&, Task&)> fn) { inserted_.push_back(Item{{}, std::move(fn)}); }

  // The end of a task: do_exit() work, then `last` (e.g. tell whoever waits), then exit.
  void exit_after(int64_t exit_ns, std::function<void(Kernel&, Task&)> last) {
    if (exit_ns > 0) push(Action::compute(exit_ns));
    if (last) push(std::move(last));
    push(Action::exit());
  }

  // write(): block while full, then copy, publish and wake a blocked reader (WF_SYNC).
  // Returns false (and queues a Block) if the caller must retry after being woken.
  bool write(Channel& ch, int64_t bytes, const ChannelCosts& c, Task& self) {
    if (!ch.can_write(bytes)) {
      ch.writers.push_back(&self);
      push(Action::block());
      return false;
    }
    ch.reserve(bytes);
    push(Action::compute(c.send(bytes)));
    push([this, &ch, bytes](Kernel&, Task&) {
      ch.publish(bytes);
      if (!ch.readers.empty()) {
        Task* r = ch.readers.front();
        ch.readers.erase(ch.readers.begin());
        then(Action::wake(r, true));
      }
    });
    return true;
  }

  // read() of one message: block while empty, then copy and wake blocked writers.
  bool read(Channel& ch, const ChannelCosts& c, Task& self) {
    if (!ch.can_read()) {
      ch.readers.push_back(&self);
      push(Action::block());
      return false;
    }
    int64_t bytes = ch.take();
    push(Action::compute(c.recv(bytes)));
    push([this, &ch, bytes](Kernel&, Task&) {
      ch.release(bytes);
      std::vector<Task*> w;
      w.swap(ch.writers);
      for (Task* t : w) then(Action::wake(t, true));
    });
    return true;
  }

 private:
  struct Item {
    Action action;
    std::function<void(Kernel&, Task&)> fn;
  };
  std::deque<Item> queue_;
  std::vector<Item> inserted_;
};

}  // namespace schedlab::workload
