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
#include <cstdint>
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
  std::vector<Hold> holds;  // reservations not yet over, by start
  sim::Time from;           // the open reservation's start
  int holder = -1;          // its CPU (the lock word's line is in its cache); -1: never taken
  bool open = false;        // taken by a path still being built: its release is not known yet
};

// Takes `l` for `cpu`, `offset` ns after now; returns the ns it spins first (0: uncontended).
// `id` names the lock in the trace (its CPU, or the task's pid). Counts the acquisition, and
// the contention and wait, on `cpu`'s counters for the class.
int64_t spin_lock(Kernel& k, SpinLock& l, LockClass cls, int id, int cpu, int64_t offset);
// Releases `l` `offset` ns after now (the end of the work done under it).
void spin_unlock(Kernel& k, SpinLock& l, int64_t offset);

}  // namespace schedlab::kernel
