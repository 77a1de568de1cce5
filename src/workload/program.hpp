// A convenience base for task programs: a queue of steps, each an Action or an instant piece of
// program logic (which may queue more actions to run next). step() refills the queue.
// The queue and its pieces of logic are stored in place: a program never allocates per step.
#pragma once
#include <cstddef>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel/api.hpp"
#include "workload/channel.hpp"
#include "sim/fifo.hpp"

namespace schedlab::workload {

using kernel::Action;
using kernel::Api;
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
  void one_done(Api& k) {
    if (--remaining > 0) return;
    t1 = k.now();
    finished = true;
    k.stop();
  }
};

// A piece of program logic kept in place: a lambda of at most four words of captures that can
// be copied bytewise (pointers, references, numbers). Larger captures do not compile rather than
// allocate.
class StepFn {
 public:
  StepFn() = default;
  template <class F>
  StepFn(F f) {  // NOLINT: implicit, so push([..](Api&, Task&) {...}) reads naturally
    static_assert(sizeof(F) <= sizeof(buf_) && alignof(F) <= alignof(void*) &&
                      std::is_trivially_copyable_v<F>,
                  "a program step may capture at most four pointers or numbers");
    ::new (static_cast<void*>(buf_)) F(f);
    call_ = [](const void* p, Api& k, Task& t) { (*static_cast<const F*>(p))(k, t); };
  }
  void operator()(Api& k, Task& t) const { call_(buf_, k, t); }

 private:
  alignas(void*) unsigned char buf_[4 * sizeof(void*)] = {};
  void (*call_)(const void*, Api&, Task&) = nullptr;
};

class Program : public kernel::Behavior {
 public:
  // A program that runs this many items without producing an action is stuck (a bug).
  static constexpr int64_t kMaxItemsPerAction = 1000000;
  Action next(Api& k, Task& self) final {
    cpu_ = k.asking_task_cpu();  // task_cpu(self): where this program runs until it returns an action
    for (int64_t items = 0;; ++items) {
      if (items == kMaxItemsPerAction)
        throw std::logic_error("workload program of pid " + std::to_string(k.stat(self).pid) +
                               " ran " +
                               std::to_string(kMaxItemsPerAction) +
                               " steps without an action (a workload bug: it never blocks, "
                               "computes or exits)");
      if (queue_.empty()) step(k, self);
      if (queue_.empty()) return Action::exit();
      // The front item is read in place and only the part its kind uses is copied out (the
      // whole 48-byte item was copied per step) before it is dropped: a function may push.
      const Item& front = queue_.front();
      inserted_.clear();
      switch (front.kind) {
        case Item::Act: {
          const Action a = front.action;
          queue_.drop_front();
          return a;
        }
        case Item::Fn: {
          const StepFn fn = front.fn;
          queue_.drop_front();
          fn(k, self);
          break;
        }
        case Item::Publish: {
          // The written data becomes readable; a blocked reader is woken (WF_SYNC). A pipe
          // writer that had waited and leaves room wakes the next waiting writer.
          const auto io = front.io;
          queue_.drop_front();
          Channel& ch = *io.ch;
          ch.publish(io.bytes, cpu_);
          // A cold buffer brings its bytes through the core's L2; a reused warm one is already
          // counted (at its free).
          if (io.cache)
            ch.ready_mark.push_back(io.cold ? io.cache->add(cpu_, ch.footprint(io.bytes)) : io.cache->count(cpu_));
          if (!ch.readers.empty()) {
            Task* r = ch.readers.front();
            ch.readers.erase(ch.readers.begin());
            then(Action::wake(r, true));
          }
          if (io.flag && ch.kind == ChannelKind::Pipe && !ch.pipe_full()) wake_writers(ch, false);
          break;
        }
        case Item::Release: {
          // Buffer space freed: blocked writers are woken to retry (WF_SYNC), as the kind's
          // rule says (Channel::release()).
          const auto io = front.io;
          queue_.drop_front();
          Channel& ch = *io.ch;
          Channel::Wake w = ch.release(io.bytes, io.flag);
          if (w.any) wake_writers(ch, w.all);
          break;
        }
        case Item::OnExit:
          queue_.drop_front();
          on_exit_(k, self);
          break;
      }
      if (!inserted_.empty()) {
        queue_.push_front(inserted_.begin(), inserted_.end());
        inserted_.clear();
      }
    }
  }

 protected:
  // Fills the queue with the next steps (called when it is empty).
  virtual void step(Api& k, Task& self) = 0;
  void push(Action a) {
    Item& it = queue_.push_slot();
    it.kind = Item::Act;
    it.action = a;
  }
  void push(StepFn fn) {
    Item it(Item::Fn);
    it.fn = fn;
    queue_.push_back(it);
  }
  // From inside a queued function: run this action (or function) next, in call order, before
  // anything queued earlier. A function run this way may itself call then().
  void then(Action a) { inserted_.push_back(Item(Item::Act, a)); }
  void then(StepFn fn) {
    Item it(Item::Fn);
    it.fn = fn;
    inserted_.push_back(it);
  }

  // The end of a task: do_exit() work, then `last` (e.g. tell whoever waits), then exit.
  void exit_after(int64_t exit_ns, std::function<void(Api&, Task&)> last) {
    if (exit_ns > 0) push(Action::compute(exit_ns));
    if (last) {
      on_exit_ = std::move(last);
      queue_.push_back(Item(Item::OnExit));
    }
    push(Action::exit());
  }

  // write(): block while full, then copy, publish and wake a blocked reader (WF_SYNC).
  // Returns false (and queues a Block) if the caller must retry after being woken.
  bool write(Channel& ch, int64_t bytes, const ChannelCosts& c, Task& self) {
    if (!ch.can_write(bytes)) {
      ch.writers.push_back(&self);
      write_waited_ = true;
      push(Action::block());
      return false;
    }
    const int64_t new_slots = ch.kind == ChannelKind::Pipe && c.send_newbuf_ns > 0 ? ch.pipe_new_pages(bytes) : 0;
    ch.reserve(bytes);
    const bool remote = ch.last_cpu >= 0 && ch.last_cpu != cpu_;
    ch.last_cpu = cpu_;
    CacheFootprint* cache = c.cache && c.cache->on() ? c.cache : nullptr;
    const bool cold = cache && cache->take_cold(cpu_);  // the buffer it writes (channel.hpp)
    push(Action::compute(c.send(bytes) + (remote ? c.send_remote_ns : 0) + (cold ? c.send_cold_ns : 0) +
                         new_slots * c.send_newbuf_ns));
    push_io(Item::Publish, &ch, bytes, write_waited_, cache, cold);
    write_waited_ = false;
    return true;
  }

  // read() of one message: block while empty, then copy and wake blocked writers.
  bool read(Channel& ch, const ChannelCosts& c, Task& self) {
    if (!ch.can_read()) {
      ch.readers.push_back(&self);
      push(Action::block());
      return false;
    }
    const bool was_full = ch.kind == ChannelKind::Pipe && ch.pipe_full();
    int from = -1;
    int64_t bytes = ch.take(from);
    const int64_t freed = ch.kind == ChannelKind::Pipe && c.recv_release_ns > 0 ? ch.pipe_freed_pages(bytes) : 0;
    ch.last_cpu = cpu_;
    int64_t cold = 0;
    if (c.cache && c.cache->on()) {
      // Cold when more than the L2 moved through this core since the message's send (a read on
      // another CPU pays the remote cost instead); the read moves its bytes too.
      const int64_t mark = ch.ready_mark.pop_front();
      if (from == cpu_) {
        ++c.cache->reads_checked;
        if (c.cache->count(cpu_) - mark > c.cache->l2_bytes) {
          cold = c.recv_cold_ns;
          ++c.cache->reads_cold;
        }
      }
      c.cache->add(cpu_, ch.footprint(bytes));
      c.cache->free_on(from);  // the buffer goes back to its sending core's free stack
    }
    push(Action::compute(c.recv(bytes) + (from != cpu_ ? c.recv_remote_ns : 0) + cold + freed * c.recv_release_ns));
    push_io(Item::Release, &ch, bytes, was_full);
    return true;
  }

 private:
  struct Item {
    enum Kind : uint8_t { Act, Fn, Publish, Release, OnExit } kind = Act;
    union {
      Action action;  // Act
      StepFn fn;      // Fn
      struct {
        Channel* ch;
        int64_t bytes;
        bool flag;    // Publish: the writer had waited; Release: the pipe was full at the read
        bool cold;    // Publish: the send wrote a cold buffer (its bytes are counted)
        CacheFootprint* cache;  // Publish: counts the message's bytes (nullptr: rule off)
      } io;           // Publish, Release
    };
    explicit Item(Kind k = Act) : kind(k), action() {}
    Item(Kind k, Action a) : kind(k), action(a) {}
    Item(Kind k, Channel* ch, int64_t bytes, bool flag) : kind(k), io{ch, bytes, flag, false, nullptr} {}
  };

  void push_io(typename Item::Kind kind, Channel* ch, int64_t bytes, bool flag, CacheFootprint* cache = nullptr,
               bool cold = false) {
    Item& it = queue_.push_slot();
    it.kind = kind;
    it.io.ch = ch;
    it.io.bytes = bytes;
    it.io.flag = flag;
    it.io.cold = cold;
    it.io.cache = cache;
  }

  // Wakes the channel's blocked writers: all of them, or the first (an exclusive wait).
  void wake_writers(Channel& ch, bool all) {
    if (ch.writers.empty()) return;
    if (!all) {
      Task* t = ch.writers.front();
      ch.writers.erase(ch.writers.begin());
      then(Action::wake(t, true));
      return;
    }
    for (Task* t : ch.writers) then(Action::wake(t, true));
    ch.writers.clear();
  }

 public:
  // The bytes a program's queue holds per queued step (memory estimates: hackbench's main task
  // queues a wakeup for every child).
  static constexpr std::size_t queue_item_bytes() { return sizeof(Item); }

 private:
  std::vector<Item> inserted_;  // (first: it and the queue's indices share the object's first line)
  sim::Fifo<Item> queue_;
  std::function<void(Api&, Task&)> on_exit_;
  bool write_waited_ = false;  // the last write() blocked: the next successful one had waited
  int cpu_ = -1;               // task_cpu() of this program's task during next()
};

}  // namespace schedlab::workload
