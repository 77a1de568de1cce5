// Queued spinlocks as reservations (lock.hpp).
#include "kernel/lock.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
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
// Queues behind the reservations of other CPUs that cover the time `cpu` would take the lock
// (`at`): returns when it takes it, the CPU it waited for last in `behind`. Every reservation
// overlapping the wait so far was made earlier: it is ahead in the queue. (Out of line: most
// locks have no reservation left when taken.)
[[gnu::noinline]] sim::Time queue_behind(const Kernel& k, const SpinLock::Hold* h, size_t n,
                                         int cpu, sim::Time at, int& behind) {
  sim::Time t = at;
  for (size_t i = 0; i < n; ++i) {
    const SpinLock::Hold& r = h[i];
    if (r.from > t) break;
    if (r.cpu == cpu || r.to <= at) continue;
    const sim::Time next = r.to + sim::Time::ns(k.remote_read(r.cpu, cpu));  // the line comes over
    if (next > t) t = next, behind = r.cpu;
  }
  return t;
}
// A wait: the acquisition, the contention and the wait counted, and traced.
[[gnu::noinline]] void count_contended(Kernel& k, LockClass cls, int id, int cpu, sim::Time at,
                                       sim::Time t, int behind) {
  const int64_t wait = (t - at).count();
  ClassCounters c = counters_of(k.rq(cpu).c, cls);
  ++c.acquired;
  ++c.contended;
  c.wait_ns += wait;
  c.wait_max_ns = std::max(c.wait_max_ns, wait);
  if (k.sink) k.sink->lock_contended(at, t, cpu, cls, id, behind);
}
}  // namespace

size_t SpinLock::Holds::prune_spilled(sim::Time now) {
  std::vector<Hold>& v = *spill_;
  size_t over = 0;
  while (over < v.size() && v[over].to <= now) ++over;
  if (over == v.size()) {
    v.clear();
    spilled_ = false;
    return n_ = 0;
  }
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(over));
  return v.size();
}

void SpinLock::Holds::spill() {
  if (!spill_) spill_ = std::make_unique<std::vector<Hold>>();
  spill_->assign(inl_, inl_ + n_);
  spilled_ = true;
}

void SpinLock::Holds::push_back_spilled(sim::Time from, sim::Time to, int cpu) {
  if (!spilled_) spill();
  spill_->push_back({from, to, cpu});
}

// spin_unlock()'s reservation when it starts before the last one.
void SpinLock::Holds::insert_by_start(sim::Time from, sim::Time to, int cpu) {
  if (!spilled_ && n_ < kInline) {
    size_t pos = n_;
    while (pos > 0 && inl_[pos - 1].from > from) {
      inl_[pos] = inl_[pos - 1];
      --pos;
    }
    inl_[pos] = {from, to, cpu};
    ++n_;
    return;
  }
  if (!spilled_) spill();
  std::vector<Hold>& v = *spill_;
  auto pos = v.end();
  while (pos != v.begin() && (pos - 1)->from > from) --pos;
  v.insert(pos, {from, to, cpu});
}

// A CPU never waits behind its own reservation: its paths run one after another, so an earlier
// one of its own has released the lock by the time a later one asks (the offsets of paths built
// inside another's steps are estimates).
int64_t spin_lock(Kernel& k, SpinLock& l, LockClass cls, int id, int cpu, int64_t offset) {
  if (l.open) [[unlikely]]
    lock_taken_again(l, cls, id);
  const sim::Time now = k.now();
  const sim::Time at = now + sim::Time::ns(offset);
  SpinLock::Holds& h = l.holds;
  sim::Time t = at;
  int behind = -1;
  // Reservations over by now are dropped.
  if (const size_t n = h.prune(now); n > 0) t = queue_behind(k, h.begin(), n, cpu, at, behind);
  const int64_t wait = (t - at).count();
  if (wait > 0)
    count_contended(k, cls, id, cpu, at, t, behind);
  else
    ++counters_of(k.rq(cpu).c, cls).acquired;
  l.from = t;
  l.holder = cpu;
  l.open = true;
  return wait;
}

void spin_unlock(Kernel& k, SpinLock& l, int64_t offset) {
  l.open = false;
  const sim::Time to = k.now() + sim::Time::ns(offset);
  if (to <= l.from) return;  // held for no time: nothing to queue behind
  SpinLock::Holds& h = l.holds;
  if (h.empty() || h.back().from <= l.from)
    h.push_back(l.from, to, l.holder);  // the common case, the latest start: appended
  else
    h.insert_by_start(l.from, to, l.holder);
}

}  // namespace schedlab::kernel
