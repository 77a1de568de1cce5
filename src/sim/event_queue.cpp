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

EventQueue::EventQueue()
    : wheel_(kSlots), wheel_bits_(kWords, 0), wheel_words_((kWords + 63) / 64, 0) {}
EventQueue::~EventQueue() = default;

void EventQueue::schedule_error(Time t) const {
  if (t < now_) throw std::logic_error("event scheduled in the past");
  throw std::logic_error("event scheduled twice");
}

size_t EventQueue::first_word(size_t lo, size_t hi) const {
  for (size_t s = lo >> 6; (s << 6) < hi; ++s) {
    uint64_t m = wheel_words_[s];
    if ((s << 6) < lo) m &= ~0ULL << (lo & 63);
    if (m) {
      size_t j = (s << 6) + static_cast<size_t>(__builtin_ctzll(m));
      return j < hi ? j : kWords;
    }
  }
  return kWords;
}

// Every event in the wheel is due in [now, now + kSlots), so the first non-empty slot from
// now's on (wrapping) holds the earliest, at the head of its list.
Event* EventQueue::wheel_first() const {
  if (wheel_count_ == 0) return nullptr;
  const size_t b0 = static_cast<size_t>(now_.count() & (kSlots - 1));
  const size_t w = b0 >> 6;
  uint64_t bits = wheel_bits_[w] & (~0ULL << (b0 & 63));
  size_t word = w;
  if (!bits) {
    word = first_word(w + 1, kWords);
    if (word == kWords) word = first_word(0, w + 1);
    bits = wheel_bits_[word];
  }
  return wheel_[(word << 6) + static_cast<size_t>(__builtin_ctzll(bits))].head;
}

void EventQueue::far_push(const Entry& x) {
  size_t i = far_.size();
  far_.push_back(x);
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (x.key >= far_[parent].key) break;
    far_[i] = far_[parent];
    i = parent;
  }
  far_[i] = x;
}

void EventQueue::far_pop() {
  Entry x = far_.back();
  far_.pop_back();
  const size_t n = far_.size();
  if (n == 0) return;
  size_t i = 0;
  for (size_t c = 1; c < n; c = 2 * i + 1) {
    if (c + 1 < n && far_[c + 1].key < far_[c].key) ++c;
    if (x.key <= far_[c].key) break;
    far_[i] = far_[c];
    i = c;
  }
  far_[i] = x;
}

Event* EventQueue::far_first() {
  while (!far_.empty()) {
    const Entry& top = far_[0];
    Event* e = top.e;
    if (e->scheduled_ && !e->in_wheel_ && e->seq_ == static_cast<uint64_t>(top.key)) return e;
    far_pop();  // cancelled or re-armed since
  }
  return nullptr;
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
    deschedule(c);
    c.fn = nullptr;
    ++c.gen;
    free_.push_back(id.slot);
  }
  id = EventId{};
}

void EventQueue::run(Time until) {
  stopped_ = false;
  while (!stopped_) {
    Event* w = wheel_first();
    Event* e;
    // Every far entry, stale or not, has a key no smaller than the heap's top: a wheel event
    // before the top's key is first without looking at the top's event (the common case).
    if (w && (far_.empty() || key(w->when_, w->seq_) < far_[0].key)) {
      e = w;
    } else {
      Event* f = far_.empty() ? nullptr : far_first();
      e = w && (!f || before(*w, *f)) ? w : f;
    }
    if (!e || e->when_ > until) break;
    if (e == w) {
      // The head of its slot: no previous event in the list.
      Slot& s = wheel_[static_cast<size_t>(e->when_.count() & (kSlots - 1))];
      s.head = e->next_;
      if (e->next_)
        e->next_->prev_ = nullptr;
      else {
        s.tail = nullptr;
        clear_bit(static_cast<size_t>(e->when_.count() & (kSlots - 1)));
      }
      e->next_ = nullptr;
      e->in_wheel_ = false;
      --wheel_count_;
    } else {
      far_pop();
    }
    now_ = e->when_;
    e->scheduled_ = false;
    ++events_run_;
    e->process();
    if (after_each_) after_each_();
    if ((events_run_ & 0xffff) == 0 && periodic_) periodic_();
  }
}

}  // namespace schedlab::sim
