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
  Entry x{key(t, e.seq_), &e};
  Heap& h = (t - now_).count() < kFarNs ? near_ : far_;
  if (consumed_ == &h) {
    consumed_ = nullptr;
    h.replace_top(x);
  } else {
    h.push(x);
  }
}

void EventQueue::Heap::push(const Entry& x) {
  size_t i = v.size();
  v.push_back(x);
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (x.key >= v[parent].key) break;
    v[i] = v[parent];
    i = parent;
  }
  v[i] = x;
}

// Removes the top, bottom-up: the hole at the root follows the smaller child down to a leaf,
// then the last entry rises from there (usually not far).
void EventQueue::Heap::pop() {
  Entry x = v.back();
  v.pop_back();
  const size_t n = v.size();
  if (n == 0) return;
  size_t i = 0;
  for (size_t c = 1; c < n; c = 2 * i + 1) {
    if (c + 1 < n && v[c + 1].key < v[c].key) ++c;
    v[i] = v[c];
    i = c;
  }
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (x.key >= v[parent].key) break;
    v[i] = v[parent];
    i = parent;
  }
  v[i] = x;
}

// Puts x in place of the top entry: x sifts down from the root.
void EventQueue::Heap::replace_top(const Entry& x) {
  const size_t n = v.size();
  size_t i = 0;
  for (size_t c = 1; c < n; c = 2 * i + 1) {
    if (c + 1 < n && v[c + 1].key < v[c].key) ++c;
    if (x.key < v[c].key) break;
    v[i] = v[c];
    i = c;
  }
  v[i] = x;
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
  while (!stopped_) {
    if (consumed_) {  // the last event scheduled nothing into its heap
      consumed_->pop();
      consumed_ = nullptr;
    }
    Heap* h;
    if (near_.v.empty()) {
      if (far_.v.empty()) break;
      h = &far_;
    } else {
      h = far_.v.empty() || near_.v[0].key < far_.v[0].key ? &near_ : &far_;
    }
    const Entry top = h->v[0];
    const Time t = Time::ns(static_cast<int64_t>(static_cast<uint64_t>(top.key >> 64)));
    if (t > until) break;
    Event& e = *top.e;
    if (!e.scheduled_ || e.seq_ != static_cast<uint64_t>(top.key)) {  // cancelled since
      h->pop();
      continue;
    }
    consumed_ = h;
    now_ = t;
    e.scheduled_ = false;
    ++events_run_;
    e.process();
    if (after_each_) after_each_();
  }
  if (consumed_) {
    consumed_->pop();
    consumed_ = nullptr;
  }
}

}  // namespace schedlab::sim
