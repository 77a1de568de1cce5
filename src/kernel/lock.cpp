// Queued spinlocks as reservations (lock.hpp).
#include "kernel/lock.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernel/sched.hpp"

namespace schedlab::kernel {

namespace {
struct ClassCounters {
  int64_t& acquired;
  int64_t& contended;
  int64_t& wait_ns;
  int64_t& wait_max_ns;
};
ClassCounters counters_of(CpuCounters& c, LockClass cls) {
  if (cls == LockClass::Pi)
    return {c.lock_pi_acquired, c.lock_pi_contended, c.lock_pi_wait_ns, c.lock_pi_wait_max_ns};
  return {c.lock_rq_acquired, c.lock_rq_contended, c.lock_rq_wait_ns, c.lock_rq_wait_max_ns};
}
[[noreturn, gnu::cold, gnu::noinline]] void lock_taken_again(const SpinLock& l, LockClass cls, int id) {
  throw std::logic_error(std::string("spin_lock: ") + trace::lock_class_name(cls) + " lock " +
                         std::to_string(id) + " taken again while held by CPU " +
                         std::to_string(l.holder));
}
// spin_unlock()'s reservation when it starts before the last one: inserted by its start.
[[gnu::noinline]] void insert_hold(SpinLock& l, sim::Time to) {
  std::vector<SpinLock::Hold>& h = l.holds;
  auto pos = h.end();
  while (pos != h.begin() && (pos - 1)->from > l.from) --pos;
  h.insert(pos, {l.from, to, l.holder});
}
}  // namespace

// A CPU never waits behind its own reservation: its paths run one after another, so an earlier
// one of its own has released the lock by the time a later one asks (the offsets of paths built
// inside another's steps are estimates).
int64_t spin_lock(Kernel& k, SpinLock& l, LockClass cls, int id, int cpu, int64_t offset) {
  if (l.open) [[unlikely]]
    lock_taken_again(l, cls, id);
  const sim::Time now = k.now();
  const sim::Time at = now + sim::Time::ns(offset);
  std::vector<SpinLock::Hold>& h = l.holds;
  if (!h.empty()) {
    size_t over = 0;  // reservations over by now: dropped
    while (over < h.size() && h[over].to <= now) ++over;
    if (over == h.size())
      h.clear();
    else if (over > 0)
      h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(over));
  }
  // Queue behind the reservations of other CPUs that cover the time we would take it.
  sim::Time t = at;
  int behind = -1;
  // Every reservation overlapping the wait so far was made earlier: it is ahead in the queue.
  for (const SpinLock::Hold& r : h) {
    if (r.from > t) break;
    if (r.cpu == cpu || r.to <= at) continue;
    const sim::Time next = r.to + sim::Time::ns(k.remote_read(r.cpu, cpu));  // the line comes over
    if (next > t) t = next, behind = r.cpu;
  }
  const int64_t wait = (t - at).count();
  ClassCounters c = counters_of(k.rq(cpu).c, cls);
  ++c.acquired;
  if (wait > 0) {
    ++c.contended;
    c.wait_ns += wait;
    c.wait_max_ns = std::max(c.wait_max_ns, wait);
    if (k.sink) k.sink->lock_contended(at, t, cpu, cls, id, behind);
  }
  l.from = t;
  l.holder = cpu;
  l.open = true;
  return wait;
}

void spin_unlock(Kernel& k, SpinLock& l, int64_t offset) {
  l.open = false;
  const sim::Time to = k.now() + sim::Time::ns(offset);
  if (to <= l.from) return;  // held for no time: nothing to queue behind
  std::vector<SpinLock::Hold>& h = l.holds;
  if (h.empty() || h.back().from <= l.from) {
    // The common case, the latest start: appended (each field stored on its own, so that no
    // temporary is written and read back in other widths).
    SpinLock::Hold& x = h.emplace_back();
    x.from = l.from;
    x.to = to;
    x.cpu = l.holder;
    return;
  }
  insert_hold(l, to);
}

}  // namespace schedlab::kernel
