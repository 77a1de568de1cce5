// Discrete-event queue. Events run in time order; events at the same time run in the order
// they were scheduled (insertion sequence), so a run is fully deterministic.
//
// Two ways to schedule:
// - an Event object owned by a component (a CPU's segment end, its tick, a task's hrtimer), as
//   gem5's components own their events: scheduled, re-armed and cancelled without allocating;
// - a callback (at()/after()), kept in a pooled event; for tests and rare harness timers.
//
// The queue is a timing wheel with one slot per nanosecond over the next 16 us (a slot's events
// all fall due at the same time, so appending keeps them in sequence order; a two-level bitmap
// finds the next non-empty slot), plus a heap for the events due later (ticks): scheduling,
// cancelling and taking the next event cost O(1) without comparing events for the near-term
// events that make up nearly all of a run, and the order is exactly (time, sequence).
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
  bool in_wheel_ = false;   // linked in a wheel slot (else, if scheduled, in the far heap)
  Event* prev_ = nullptr;   // the slot's list, in sequence order
  Event* next_ = nullptr;
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
  // (Inline: it and deschedule() run a few times per event.)
  [[gnu::always_inline]] void schedule(Event& e, Time t) {
    if (t < now_ || e.scheduled_) [[unlikely]]
      schedule_error(t);
    e.when_ = t;
    e.seq_ = seq_++;
    e.scheduled_ = true;
    if ((t - now_).count() < kSlots)
      link(e);
    else
      far_push(Entry{key(t, e.seq_), &e});
  }
  // Cancels e if it is scheduled, then schedules it at t.
  void reschedule(Event& e, Time t) {
    deschedule(e);
    schedule(e, t);
  }
  // Cancels e; a no-op if it is not scheduled.
  void deschedule(Event& e) {
    if (!e.scheduled_) return;
    e.scheduled_ = false;
    if (e.in_wheel_) unlink(e);
  }

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
  // Called after every 65536th event (progress reports; must not touch the simulation).
  void set_periodic(std::function<void()> fn) { periodic_ = std::move(fn); }
  uint64_t events_run() const { return events_run_; }

 private:
  static constexpr int64_t kSlots = 1 << 14;  // 1 ns each: the wheel covers 16 us
  static constexpr size_t kWords = kSlots / 64;
  static bool before(const Event& a, const Event& b) {
    return a.when_ < b.when_ || (a.when_ == b.when_ && a.seq_ < b.seq_);
  }
  [[noreturn]] void schedule_error(Time t) const;
  // Appends e to its slot: every event there is due at the same time and was scheduled earlier.
  void link(Event& e) {
    const size_t b = static_cast<size_t>(e.when_.count() & (kSlots - 1));
    Slot& s = wheel_[b];
    e.next_ = nullptr;
    e.prev_ = s.tail;
    if (s.tail) {
      s.tail->next_ = &e;
    } else {
      s.head = &e;
      wheel_bits_[b >> 6] |= 1ULL << (b & 63);
      wheel_words_[b >> 12] |= 1ULL << ((b >> 6) & 63);
    }
    s.tail = &e;
    e.in_wheel_ = true;
    ++wheel_count_;
  }
  void unlink(Event& e) {
    const size_t b = static_cast<size_t>(e.when_.count() & (kSlots - 1));
    Slot& s = wheel_[b];
    if (e.prev_)
      e.prev_->next_ = e.next_;
    else
      s.head = e.next_;
    if (e.next_)
      e.next_->prev_ = e.prev_;
    else
      s.tail = e.prev_;
    if (!s.head) clear_bit(b);
    e.prev_ = e.next_ = nullptr;
    e.in_wheel_ = false;
    --wheel_count_;
  }
  void clear_bit(size_t b) {
    uint64_t& w = wheel_bits_[b >> 6];
    w &= ~(1ULL << (b & 63));
    if (!w) wheel_words_[b >> 12] &= ~(1ULL << ((b >> 6) & 63));
  }
  Event* wheel_first() const;  // the earliest event in the wheel (null if empty)
  size_t first_word(size_t lo, size_t hi) const;  // first non-empty bitmap word in [lo, hi)

  // Far events: a binary heap on (time, sequence) as one 128-bit key. A cancelled or re-armed
  // event leaves its entry behind, skipped when it comes up (its sequence no longer matches).
  using Key = unsigned __int128;
  struct Entry {
    Key key;
    Event* e;
  };
  static Key key(Time t, uint64_t seq) {
    return (static_cast<Key>(static_cast<uint64_t>(t.count())) << 64) | seq;
  }
  void far_push(const Entry& x);
  void far_pop();
  Event* far_first();  // drops stale entries; null if none

  struct Callback;
  struct Slot {
    Event* head = nullptr;
    Event* tail = nullptr;
  };
  std::vector<Slot> wheel_;             // time t lives in slot t % kSlots; holds [now, now + kSlots)
  std::vector<uint64_t> wheel_bits_;    // non-empty slots
  std::vector<uint64_t> wheel_words_;   // non-empty words of wheel_bits_
  int64_t wheel_count_ = 0;
  std::vector<Entry> far_;
  std::vector<std::unique_ptr<Callback>> callbacks_;
  std::vector<uint32_t> free_;
  Time now_;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  bool stopped_ = false;
  Fn after_each_;
  std::function<void()> periodic_;
};

}  // namespace schedlab::sim
