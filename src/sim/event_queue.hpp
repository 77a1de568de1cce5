// Discrete-event queue. Events run in time order; events at the same time run in the order
// they were scheduled (insertion sequence), so a run is fully deterministic.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/time.hpp"

namespace schedlab::sim {

// Identifies a scheduled event so that it can be cancelled. A default handle is empty.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t gen = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class EventQueue {
 public:
  using Fn = std::function<void()>;

  Time now() const { return now_; }
  // Schedules fn at absolute time t (t >= now()).
  EventId at(Time t, Fn fn);
  EventId after(Time d, Fn fn) { return at(now_ + d, std::move(fn)); }
  // Cancels a pending event; cancelling an event that already ran or was cancelled is a no-op.
  void cancel(EventId& id);
  bool pending(const EventId& id) const;
  // Runs events until the queue is empty, stop() is called, or the next event is after `until`.
  void run(Time until = Time::max());
  void stop() { stopped_ = true; }
  // Called after every event (used by the sanity checker); empty = nothing.
  void set_after_each(Fn fn) { after_each_ = std::move(fn); }
  uint64_t events_run() const { return events_run_; }
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    Time t;
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    Fn fn;
    uint32_t gen = 0;
    bool live = false;
  };
  static bool later(const Entry& a, const Entry& b) {
    return a.t != b.t ? a.t > b.t : a.seq > b.seq;
  }
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  Time now_;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  bool stopped_ = false;
  Fn after_each_;
};

}  // namespace schedlab::sim
