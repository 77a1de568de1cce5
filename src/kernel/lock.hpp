// rq->__lock and p->pi_lock as queued spinlocks (kernel/locking/qspinlock.c): waiters are
// served in the order they arrive (FIFO, as the MCS queue), each spinning with interrupts off;
// the next waiter takes the lock one cache-line transfer after the holder releases it.
//
// The model decides a kernel path when it starts and charges it as steps whose lengths are known
// then (engine: cpu.hpp), so a lock is a list of reservations: for each path queued on it, the
// CPU and when it holds the lock, known once its path has charged the work done under it
// (spin_unlock()). A path asks for the lock `offset` ns into the work it is building; while a
// reservation of another CPU covers that time it spins to that reservation's end plus the
// handover, then queues behind the next one it meets (FIFO), and the wait is part of its
// steps (interrupts off: an IPI arriving meanwhile waits). Reservations are made in the order
// the model builds the paths (the event order: time, then the queue's sequence); a path that
// asks for the lock before the start of a reservation made earlier takes it at once (its work
// may then overlap that reservation: docs/model.md, "Locks").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/time.hpp"
#include "trace/sink.hpp"

namespace schedlab::kernel {

class Kernel;
using trace::LockClass;

struct SpinLock {
  struct Hold {
    sim::Time from, to;  // [from, to): held by `cpu`
    int cpu;
  };
  // The reservations not yet over, by start: up to kInline in the lock itself (a lock rarely
  // has more, and the holds are then in the lock's own cache line, not on the heap); beyond
  // that all of them in `spill` until it is empty again.
  class Holds {
   public:
    static constexpr int kInline = 2;
    bool empty() const { return size() == 0; }
    size_t size() const { return spilled_ ? spill_->size() : n_; }
    const Hold* begin() const { return spilled_ ? spill_->data() : inl_; }
    const Hold* end() const { return begin() + size(); }
    const Hold& operator[](size_t i) const { return begin()[i]; }
    const Hold& back() const { return end()[-1]; }
    // Drops the holds over by `now` (those before the first one that is not); returns how
    // many are left, from begin().
    size_t prune(sim::Time now) {
      static_assert(kInline == 2);
      if (spilled_) return prune_spilled(now);
      if (n_ == 0 || inl_[0].to > now) return n_;
      if (n_ == 1 || inl_[1].to <= now) return n_ = 0;
      inl_[0] = inl_[1];
      return n_ = 1;
    }
    // Appends a hold (it starts no earlier than the last one).
    void push_back(sim::Time from, sim::Time to, int cpu) {
      if (!spilled_ && n_ < kInline) {
        Hold& x = inl_[n_++];  // each field stored on its own (no temporary read back)
        x.from = from;
        x.to = to;
        x.cpu = cpu;
        return;
      }
      push_back_spilled(from, to, cpu);
    }
    // Inserts a hold by its start, after those that start no later.
    void insert_by_start(sim::Time from, sim::Time to, int cpu);

   private:
    size_t prune_spilled(sim::Time now);
    [[gnu::noinline]] void push_back_spilled(sim::Time from, sim::Time to, int cpu);
    void spill();  // moves the inline holds to `spill_`
    Hold inl_[kInline];
    uint8_t n_ = 0;         // inline holds, while !spilled_
    bool spilled_ = false;  // all holds are in spill_
    std::unique_ptr<std::vector<Hold>> spill_;  // made at the first spill, kept
  };
  sim::Time from;           // the open reservation's start
  int holder = -1;          // its CPU (the lock word's line is in its cache); -1: never taken
  bool open = false;        // taken by a path still being built: its release is not known yet
  Holds holds;
};
static_assert(sizeof(SpinLock) <= 80);

// Takes `l` for `cpu`, `offset` ns after now; returns the ns it spins first (0: uncontended).
// `id` names the lock in the trace (its CPU, or the task's pid). Counts the acquisition, and
// the contention and wait, on `cpu`'s counters for the class.
int64_t spin_lock(Kernel& k, SpinLock& l, LockClass cls, int id, int cpu, int64_t offset);
// Releases `l` `offset` ns after now (the end of the work done under it).
void spin_unlock(Kernel& k, SpinLock& l, int64_t offset);

}  // namespace schedlab::kernel
