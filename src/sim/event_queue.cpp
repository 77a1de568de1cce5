#include "sim/event_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace schedlab::sim {

EventId EventQueue::at(Time t, Fn fn) {
  if (t < now_) throw std::logic_error("event scheduled in the past");
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.fn = std::move(fn);
  s.live = true;
  heap_.push_back(Entry{t, seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return EventId{slot, s.gen};
}

bool EventQueue::pending(const EventId& id) const {
  return id.valid() && id.slot < slots_.size() && slots_[id.slot].gen == id.gen &&
         slots_[id.slot].live;
}

void EventQueue::cancel(EventId& id) {
  if (pending(id)) {
    Slot& s = slots_[id.slot];
    s.live = false;
    s.fn = nullptr;
  }
  id = EventId{};
}

void EventQueue::run(Time until) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    Entry e = heap_.front();
    if (e.t > until) break;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    Slot& s = slots_[e.slot];
    if (s.live) {
      now_ = e.t;
      Fn fn = std::move(s.fn);
      s.fn = nullptr;
      s.live = false;
      s.gen++;
      free_.push_back(e.slot);
      ++events_run_;
      fn();
      if (after_each_) after_each_();
    } else {
      s.gen++;
      free_.push_back(e.slot);
    }
  }
}

}  // namespace schedlab::sim
