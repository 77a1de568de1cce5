// The PELT load signal (kernel/sched/pelt.c, the load half of fair.c's update_load_avg()): each
// fair task's se->avg.load_avg and each runqueue's cfs_rq->avg.load_avg, which wake_affine_weight()
// compares (cpu_load(), task_h_load()).
//
// A task's load is a geometric average of its runnable time (running or queued, a delayed task
// included: it is still on the runqueue) times its weight, halving every 32 periods of 1024 us;
// it starts at the weight (init_entity_runnable_average()). A runqueue's load is the sum of the
// loads of the tasks attached to it, blocked ones included: a task that sleeps stays attached and
// its load decays where it slept, until a migration detaches it (migrate_task_rq_fair() ->
// remove_entity_load_avg()) and its next enqueue attaches it to the new runqueue
// (attach_entity_load_avg()); an exiting task is detached (task_dead_fair()). Since every task
// decays by the same factor, the runqueue's sum is kept directly: over an interval it decays by
// that factor and gains load_weight (the queued tasks' weights) times the rest.
//
// Like the kernel's, the signals are brought to date only at the updates: an enqueue or dequeue
// on the runqueue, a switch (set_next_entity() / put_prev_entity()), the tick (entity_tick()) and
// the blocked-load update; a reader (cpu_load(), task_h_load()) sees them as of then.
//
// Simplified: the signal is continuous in time (the kernel accrues whole 1024 us periods plus a
// partial one, which differs by less than one period's weight); no frequency or CPU-capacity
// invariance (every CPU at full capacity); no group scheduling (task_h_load() is the task's own
// load, as for a task of the root cgroup); the runnable and util signals are not kept here (the
// runqueue's util_avg is balance.cpp's).
#include <algorithm>
#include <array>
#include <cmath>

#include "kernel/sched.hpp"
#include "kernel/task.hpp"

namespace schedlab::kernel {

namespace {

constexpr int kPeriodShift = 20;      // a PELT period: 1024 us = 2^20 ns
constexpr int kFracShift = 10;        // 1/1024 of a period (1024 ns)
constexpr int kHalfLifePeriods = 32;  // LOAD_AVG_PERIOD: y^32 = 1/2
constexpr int kMaxHalvings = 64;      // beyond 2^-64 the old signal is gone

struct DecayTables {
  std::array<double, kHalfLifePeriods> whole{};  // y^n, n < 32
  std::array<double, 1 << (kPeriodShift - kFracShift)> frac{};  // y^(i / 1024)
  DecayTables() {
    for (int n = 0; n < kHalfLifePeriods; ++n) whole[n] = std::exp2(-double(n) / kHalfLifePeriods);
    for (size_t i = 0; i < frac.size(); ++i)
      frac[i] = std::exp2(-double(i) / double(frac.size()) / kHalfLifePeriods);
  }
};
const DecayTables kDecay;

void decay_rq(Kernel& k, Rq& rq) {
  const int64_t dt = (k.now() - rq.load_last).count();
  if (dt <= 0) return;
  const double d = pelt_decay(dt);
  rq.load_avg = rq.load_avg * d + static_cast<double>(rq.load_weight) * (1 - d);
  rq.load_last = k.now();
}

void decay_task(Kernel& k, Task* p) {
  const int64_t dt = (k.now() - p->load_last).count();
  if (dt <= 0) return;
  const double d = pelt_decay(dt);
  const double w = p->load_runnable ? static_cast<double>(p->weight) : 0.0;
  p->load_avg = p->load_avg * d + w * (1 - d);
  p->load_last = k.now();
}

bool tracked(const Task* p) { return p && p->sched_class == &fair_sched_class; }

}  // namespace

double pelt_decay(int64_t ns) {
  if (ns <= 0) return 1.0;
  const int64_t periods = ns >> kPeriodShift;
  if (periods >= int64_t{kHalfLifePeriods} * kMaxHalvings) return 0.0;
  const int64_t frac = (ns >> kFracShift) & ((int64_t{1} << (kPeriodShift - kFracShift)) - 1);
  return std::ldexp(kDecay.whole[periods % kHalfLifePeriods] * kDecay.frac[frac],
                    -static_cast<int>(periods / kHalfLifePeriods));
}

void update_load_avg(Kernel& k, Rq& rq, Task* p) {
  decay_rq(k, rq);
  if (tracked(p) && p->load_cpu == rq.cpu) decay_task(k, p);
}

void pelt_enqueue(Kernel& k, Rq& rq, Task* p) {
  if (!tracked(p) || p->load_runnable) return;
  decay_task(k, p);
  if (p->load_cpu != rq.cpu) {
    pelt_detach(k, p);
    decay_rq(k, rq);
    rq.load_avg += p->load_avg;  // attach_entity_load_avg()
    p->load_cpu = rq.cpu;
  } else {
    decay_rq(k, rq);
  }
  p->load_runnable = true;
  rq.load_weight += p->weight;
}

void pelt_dequeue(Kernel& k, Rq& rq, Task* p) {
  if (!p->load_runnable || p->load_cpu != rq.cpu) return;
  decay_rq(k, rq);
  decay_task(k, p);
  p->load_runnable = false;
  rq.load_weight -= p->weight;
}

void pelt_detach(Kernel& k, Task* p) {
  if (p->load_cpu < 0) return;
  Rq& rq = k.rq(p->load_cpu);
  pelt_dequeue(k, rq, p);
  decay_rq(k, rq);
  decay_task(k, p);
  rq.load_avg = std::max(0.0, rq.load_avg - p->load_avg);  // sub_positive()
  p->load_cpu = -1;
}

// The kernel's signals are integers (load_sum / divider): read as such.
int64_t cpu_load(const Rq& rq) { return static_cast<int64_t>(rq.load_avg); }

int64_t task_h_load(const Task* p) {
  return tracked(p) ? static_cast<int64_t>(p->load_avg) : 0;
}

}  // namespace schedlab::kernel
