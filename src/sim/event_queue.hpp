// Discrete-event queue. Events run in time order; events at the same time run in the order
// they were scheduled (insertion sequence), so a run is fully deterministic.
//
// Two ways to schedule:
// - an Event object owned by a component (a CPU's segment end, its tick, a task's hrtimer), as
//   gem5's components own their events: scheduled, re-armed and cancelled without allocating;
// - a callback (at()/after()), kept in a pooled event; for tests and rare harness timers.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/time.hpp"

namespace schedlab::sim {

class EventQueue;

// An event a component owns. Must outlive every EventQueue::run() it is scheduled in.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  virtual ~Event() = default;
  bool scheduled() const { return scheduled_; }
  Time when() const { return when_; }

 protected:
  // Runs the event (the queue's clock is at when()); it may schedule itself again.
  virtual void process() = 0;

 private:
  friend class EventQueue;
  Time when_;
  uint64_t seq_ = 0;
  bool scheduled_ = false;
};

// Identifies a callback event so that it can be cancelled. A default handle is empty.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t gen = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class EventQueue {
 public:
  using Fn = std::function<void()>;

  EventQueue();
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  Time now() const { return now_; }

  // --- owned events ---
  // Schedules e at absolute time t (t >= now()); e must not be scheduled already.
  void schedule(Event& e, Time t);
  // Cancels e if it is scheduled, then schedules it at t.
  void reschedule(Event& e, Time t) {
    e.scheduled_ = false;
    schedule(e, t);
  }
  // Cancels e; a no-op if it is not scheduled.
  void deschedule(Event& e) { e.scheduled_ = false; }

  // --- callbacks ---
  // Schedules fn at absolute time t (t >= now()).
  EventId at(Time t, Fn fn);
  EventId after(Time d, Fn fn) { return at(now_ + d, std::move(fn)); }
  // Cancels a pending callback; cancelling one that already ran or was cancelled is a no-op.
  void cancel(EventId& id);
  bool pending(const EventId& id) const;

  // Runs events until the queue is empty, stop() is called, or the next event is after `until`.
  void run(Time until = Time::max());
  void stop() { stopped_ = true; }
  // Called after every event (used by the sanity checker); empty = nothing.
  void set_after_each(Fn fn) { after_each_ = std::move(fn); }
  uint64_t events_run() const { return events_run_; }

 private:
  // Two binary min-heaps on the key (time, sequence), one 128-bit integer so that a
  // comparison is one branch-free compare: events due within kFarNs of when they are scheduled
  // (segment and step ends, IPIs: nearly all of them) and the far ones (ticks, POLL limits,
  // timeouts), which would otherwise deepen every sift. The next event is the smaller of the two
  // tops, so the order is exactly (time, sequence). A cancelled or re-armed event leaves its
  // entry behind; it is skipped when it comes up (its sequence number no longer matches).
  static constexpr int64_t kFarNs = 20000;
  using Key = unsigned __int128;
  static Key key(Time t, uint64_t seq) {
    return (static_cast<Key>(static_cast<uint64_t>(t.count())) << 64) | seq;
  }
  struct Entry {
    Key key;
    Event* e;
  };
  struct Heap {
    std::vector<Entry> v;
    void push(const Entry& x);
    void pop();
    void replace_top(const Entry& x);
  };
  struct Callback;
  Heap near_, far_;
  std::vector<std::unique_ptr<Callback>> callbacks_;
  std::vector<uint32_t> free_;
  Time now_;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  bool stopped_ = false;
  // The running event's entry is still at the top of this heap: the first event it schedules
  // into the same heap takes its place (one sift-down) instead of a pop and a push.
  Heap* consumed_ = nullptr;
  Fn after_each_;
};

}  // namespace schedlab::sim
