#include "sim/event_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace schedlab::sim {

// A pooled event holding a callback; its slot is reused once it has run or been cancelled.
struct EventQueue::Callback final : Event {
  EventQueue* q = nullptr;
  uint32_t slot = 0;
  uint32_t gen = 0;
  Fn fn;
  void process() override {
    Fn f = std::move(fn);
    fn = nullptr;
    ++gen;
    q->free_.push_back(slot);
    f();
  }
};

EventQueue::EventQueue() = default;
EventQueue::~EventQueue() = default;

void EventQueue::schedule(Event& e, Time t) {
  if (t < now_) throw std::logic_error("event scheduled in the past");
  if (e.scheduled_) throw std::logic_error("event scheduled twice");
  e.when_ = t;
  e.seq_ = seq_++;
  e.scheduled_ = true;
  push(Entry{key(t, e.seq_), &e});
}

void EventQueue::push(const Entry& x) {
  size_t i = heap_.size();
  heap_.push_back(x);
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (x.key >= heap_[parent].key) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = x;
}

// Removes the top, bottom-up: the hole at the root follows the smaller child down to a leaf,
// then the last entry rises from there (usually not far).
void EventQueue::pop() {
  Entry x = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  size_t i = 0;
  for (size_t c = 1; c < n; c = 2 * i + 1) {
    if (c + 1 < n && heap_[c + 1].key < heap_[c].key) ++c;
    heap_[i] = heap_[c];
    i = c;
  }
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (x.key >= heap_[parent].key) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = x;
}

EventId EventQueue::at(Time t, Fn fn) {
  if (t < now_) throw std::logic_error("event scheduled in the past");
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::make_unique<Callback>());
    callbacks_.back()->q = this;
    callbacks_.back()->slot = slot;
  }
  Callback& c = *callbacks_[slot];
  c.fn = std::move(fn);
  schedule(c, t);
  return EventId{slot, c.gen};
}

bool EventQueue::pending(const EventId& id) const {
  return id.valid() && id.slot < callbacks_.size() && callbacks_[id.slot]->gen == id.gen &&
         callbacks_[id.slot]->scheduled_;
}

void EventQueue::cancel(EventId& id) {
  if (pending(id)) {
    Callback& c = *callbacks_[id.slot];
    c.scheduled_ = false;
    c.fn = nullptr;
    ++c.gen;
    free_.push_back(id.slot);
  }
  id = EventId{};
}

void EventQueue::run(Time until) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    Entry top = heap_.front();
    const Time t = Time::ns(static_cast<int64_t>(static_cast<uint64_t>(top.key >> 64)));
    if (t > until) break;
    pop();
    Event& e = *top.e;
    if (!e.scheduled_ || e.seq_ != static_cast<uint64_t>(top.key)) continue;  // cancelled since
    now_ = t;
    e.scheduled_ = false;
    ++events_run_;
    e.process();
    if (after_each_) after_each_();
  }
}

}  // namespace schedlab::sim
