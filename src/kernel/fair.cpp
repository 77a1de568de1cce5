// kernel/sched/fair.c: the fair class (EEVDF picking and placement), and the wakeup placement
// path select_task_rq_fair() -> wake_affine() -> select_idle_sibling() -> select_idle_cpu(),
// fork placement. Load balancing is in balance.cpp.
#include <algorithm>
#include <cstdint>

#include "kernel/change.hpp"
#include "kernel/sched.hpp"
#include "kernel/schedstat.hpp"

namespace schedlab::kernel {

namespace {
// Kernel constants (not machine costs): kernel/sched/topology.c sd_init() and fair.c.
constexpr int64_t kNice0Load = 1024;           // NICE_0_LOAD
constexpr int kSisPropMinScan = 4;             // SIS_PROP floor
constexpr int kNumaImbalanceDiv = 4;           // imb_numa_nr: 25 % of the node's CPUs
constexpr int64_t kAvgScanCostEwmaDiv = 8;     // sd->avg_scan_cost: update_avg()'s 1/8 EWMA
// CFS (before v6.6): the unscaled sysctl defaults of kernel/sched/fair.c. update_sysctl() scales
// all three by the same factor, 1 + ilog2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG), the factor
// already in the profile's base_slice_ns (sysctl_sched_min_granularity, renamed base_slice in
// v6.6 with the same default and scaling), so each is derived from it.
constexpr int64_t kNormalizedSchedLatencyNs = 6000000;       // normalized_sysctl_sched_latency
constexpr int64_t kNormalizedMinGranularityNs = 750000;      // normalized_sysctl_sched_min_granularity
constexpr int64_t kNormalizedWakeupGranularityNs = 1000000;  // normalized_sysctl_sched_wakeup_granularity
constexpr int64_t kSchedNrLatency = 8;                       // sched_nr_latency

// The wakeup path's reads of shared lines (cacheline.hpp), `offset` ns into the caller's work:
// `cpu`'s rq line (what idle_cpu() and the nr_running tests read), and the LLC's sd_llc_shared.
int64_t read_rq_line(Kernel& k, int this_cpu, int cpu, int64_t offset) {
  return line_read(k, k.rq(cpu).line, LineClass::Rq, this_cpu, k.now() + Time::ns(offset));
}
int64_t read_llc_shared(Kernel& k, SchedDomainShared& sds, int this_cpu, int64_t offset) {
  return line_read(k, sds.line, LineClass::LlcShared, this_cpu, k.now() + Time::ns(offset));
}
}  // namespace

// --- EEVDF ----------------------------------------------------------------------------------

// avg_vruntime(): the load-weighted mean vruntime of the runnable fair entities (curr too).
int64_t avg_vruntime(const Rq& rq) {
  __int128 sum = 0;
  int64_t w = 0;
  for (const Task* t : rq.cfs) {
    sum += static_cast<__int128>(t->vruntime) * t->weight;
    w += t->weight;
  }
  const Task* curr = rq.curr;
  if (curr != rq.idle && curr->on_rq && !curr->is_rt()) {
    sum += static_cast<__int128>(curr->vruntime) * curr->weight;
    w += curr->weight;
  }
  if (w == 0) return rq.idle->vruntime;  // the rq's zero point when empty
  return static_cast<int64_t>(sum / w);
}

// update_curr(): charge the running fair task's execution to its vruntime. EEVDF: then
// update_deadline(): a curr that reached its deadline gets a new one, a (weighted) slice from
// its vruntime (v6.6); and with another entity queued on the cfs_rq (cfs_rq->nr_queued > 1,
// delayed ones counted) curr is rescheduled when it did, or when it has run past its slice
// protection (v6.17: `resched || !protect_slice(curr)`). This runs at every update_curr(): the
// tick, the enqueue of a wakee, wakeup_preempt_fair(), a dequeue, __schedule(). The request is
// kept in rq.fair_resched until the tick or wakeup_preempt() delivers it (resched_curr_lazy(),
// which is resched_curr() under PREEMPT_NONE and PREEMPT_VOLUNTARY).
void update_curr(Kernel& k, Rq& rq) {
  Task* curr = rq.curr;
  if (curr == rq.idle || curr->is_rt()) return;
  int64_t delta = (k.now() - curr->exec_start).count();
  if (delta <= 0) return;
  curr->exec_start = k.now();
  curr->sum_exec_runtime += delta;
  curr->vruntime += delta * kNice0Load / curr->weight;
  // Track the rq's zero point so an emptied rq keeps a sensible clock.
  rq.idle->vruntime = std::max(rq.idle->vruntime, curr->vruntime - curr->slice);
  if (!k.f.on(Feature::EEVDF)) {
    update_min_vruntime_cfs(rq, nullptr);
    return;
  }
  bool resched = false;
  if (curr->vruntime >= curr->deadline) {
    curr->deadline = curr->vruntime + curr->slice * kNice0Load / curr->weight;
    resched = true;
    rq.c.eevdf_deadline_renewed++;
  }
  if (!curr->on_rq || rq.cfs.empty()) return;  // cfs_rq->nr_queued == 1
  if (resched || curr->vruntime >= curr->vprot) {
    if (!rq.fair_resched && !rq.need_resched) rq.c.eevdf_update_curr_resched++;
    rq.fair_resched = true;
  }
}

// place_entity() with PLACE_LAG: keep the lag the task had when it went to sleep. Adding p moves
// the average towards p by w_p / (W + w_p) of its lag, so the lag is first scaled by
// (W + w_p) / W (W: the load of the entities already queued, curr included when it is runnable)
// to keep it after the enqueue; with nothing queued there is no lag to keep (v6.6, the
// "lag *= load + w; lag /= load" of place_entity()).
void place_entity(Rq& rq, Task* p) {
  int64_t V = avg_vruntime(rq);
  if (p->new_task) {
    p->vruntime = V;
    p->deadline = V + p->slice / 2;  // PLACE_DEADLINE_INITIAL
    p->new_task = false;
    return;
  }
  int64_t load = 0;
  for (const Task* t : rq.cfs) load += t->weight;
  const Task* curr = rq.curr;
  if (curr != rq.idle && curr->on_rq && !curr->is_rt() && curr != p) load += curr->weight;
  int64_t lag = 0;
  if (load > 0 && p->vlag != 0)
    lag = static_cast<int64_t>(static_cast<__int128>(p->vlag) * (load + p->weight) / load);
  p->vruntime = V - lag;
  if (p->rel_deadline) {  // PLACE_REL_DEADLINE: a migrated task keeps the rest of its request
    p->deadline += p->vruntime;
    p->rel_deadline = false;
    return;
  }
  p->deadline = p->vruntime + p->slice * kNice0Load / p->weight;
}

namespace {
// cfs_rq->curr: rq.curr while it is a queued fair task (the queue rq.cfs holds the others).
Task* fair_curr(const Rq& rq) {
  Task* curr = rq.curr;
  return curr != rq.idle && curr->on_rq && !curr->is_rt() ? curr : nullptr;
}
}  // namespace

// pick_eevdf(): earliest virtual deadline among eligible entities (vruntime <= avg). Considers
// the queued tasks and curr if it is a runnable fair task. With `protect`, an eligible curr
// still short of its se->vprot is the pick (its slice protection; __pick_eevdf() tests
// eligibility first, so an ineligible curr is never protected).
Task* pick_eevdf(Rq& rq, bool protect) {
  int64_t V = avg_vruntime(rq);
  Task* curr = fair_curr(rq);
  if (protect && curr && curr->vruntime <= V && curr->vruntime < curr->vprot) return curr;
  Task* best = nullptr;
  Task* first = nullptr;
  auto consider = [&](Task* t) {
    if (!first || t->vruntime < first->vruntime) first = t;
    if (t->vruntime > V) return;
    if (!best || t->deadline < best->deadline) best = t;
  };
  for (Task* t : rq.cfs) consider(t);
  if (curr) consider(curr);
  return best ? best : first;
}

// --- CFS (NO_EEVDF: the fair class before v6.6) ---------------------------------------------
//
// Modeled from kernel/sched/fair.c and features.h of v6.1-v6.5 (the same rules since v5.x for
// what is modeled here). vruntime is absolute on its runqueue; min_vruntime only grows. Pick: the
// leftmost vruntime, unless a buddy is within wakeup_gran of it (NEXT: the wakee that preempted;
// LAST: the task it preempted, when the rq has sched_nr_latency tasks; SKIP: a yielder is passed
// over). Features of that era on by default and fixed here: GENTLE_FAIR_SLEEPERS, START_DEBIT,
// LAST_BUDDY, WAKEUP_PREEMPTION (the model's feature), BASE_SLICE (v6.1); NEXT_BUDDY (off) is
// not modeled. Left out: CACHE_HOT_BUDDY in task_hot(), group scheduling, SCHED_IDLE/BATCH
// policies, the long-sleeper reset of v6.3 (entity_is_long_sleeper()), fork's max with the
// parent's vruntime (the child starts at the target rq's min_vruntime + its vslice).

CfsTunables cfs_tunables(const Kernel& k) {
  const int64_t min_gran = k.m.tunables.base_slice_ns;  // sysctl_sched_min_granularity
  CfsTunables t;
  t.latency_ns = min_gran * kNormalizedSchedLatencyNs / kNormalizedMinGranularityNs;
  t.min_granularity_ns = min_gran;
  t.wakeup_granularity_ns = min_gran * kNormalizedWakeupGranularityNs / kNormalizedMinGranularityNs;
  t.nr_latency = kSchedNrLatency;
  return t;
}

namespace {

// calc_delta_fair(): real time to p's virtual time.
int64_t calc_delta_fair(int64_t delta, const Task* p) {
  return p->weight == kNice0Load ? delta : delta * kNice0Load / p->weight;
}

// __pick_first_entity(): the queued task with the smallest vruntime (the first queued of equal
// ones, as the rbtree puts an equal key to the right); `except` is left out.
Task* cfs_leftmost(const Rq& rq, const Task* except = nullptr) {
  Task* left = nullptr;
  for (Task* t : rq.cfs)
    if (t != except && (!left || t->vruntime < left->vruntime)) left = t;
  return left;
}

bool cfs_queued(const Rq& rq, const Task* p) {
  return std::find(rq.cfs.begin(), rq.cfs.end(), p) != rq.cfs.end();
}

void cfs_clear_buddies(Rq& rq, const Task* p) {
  if (rq.cfs_last == p) rq.cfs_last = nullptr;
  if (rq.cfs_next == p) rq.cfs_next = nullptr;
  if (rq.cfs_skip == p) rq.cfs_skip = nullptr;
}

// wakeup_preempt_entity(curr, se): -1 if se is not behind curr, 1 if it is behind by more than
// wakeup_gran (the granularity in se's virtual time), else 0.
int cfs_wakeup_preempt_entity(const Kernel& k, const Task* curr, const Task* se) {
  int64_t vdiff = curr->vruntime - se->vruntime;
  if (vdiff <= 0) return -1;
  return vdiff > calc_delta_fair(cfs_tunables(k).wakeup_granularity_ns, se) ? 1 : 0;
}

}  // namespace

// update_min_vruntime(): the smaller of curr's and the leftmost's vruntime, never backwards.
// `leaving` (being dequeued) counts as neither.
void update_min_vruntime_cfs(Rq& rq, const Task* leaving) {
  Task* curr = fair_curr(rq);
  if (curr == leaving) curr = nullptr;
  const Task* left = cfs_leftmost(rq, leaving);
  int64_t v = rq.min_vruntime;
  if (curr) v = curr->vruntime;
  if (left) v = curr ? std::min(v, left->vruntime) : left->vruntime;
  rq.min_vruntime = std::max(rq.min_vruntime, v);
}

// sched_slice(): p's share of the period (sched_latency, or nr x min_granularity past
// sched_nr_latency tasks) by weight, counting p as queued if it is not; at least min_granularity
// (BASE_SLICE). ALT_PERIOD's h_nr_running is nr_running without group scheduling.
int64_t sched_slice_cfs(const Kernel& k, const Rq& rq, const Task* p) {
  const CfsTunables t = cfs_tunables(k);
  int64_t nr = 0, load = 0;
  bool queued = false;
  for (const Task* q : rq.cfs) {
    ++nr, load += q->weight;
    queued |= q == p;
  }
  if (const Task* curr = fair_curr(rq)) {
    ++nr, load += curr->weight;
    queued |= curr == p;
  }
  if (!queued) ++nr, load += p->weight;
  const int64_t period = nr > t.nr_latency ? nr * t.min_granularity_ns : t.latency_ns;
  return std::max(period * p->weight / load, t.min_granularity_ns);
}

namespace {

// enqueue_entity(): a task whose vruntime belongs to another rq is renormalized to this one
// (vruntime - old min_vruntime + this min_vruntime: migrate_task_rq_fair() / dequeue without
// DEQUEUE_SLEEP, then the enqueue); place_entity() for a wakeup (GENTLE_FAIR_SLEEPERS: at most
// sched_latency / 2 behind min_vruntime) and a new task (START_DEBIT: min_vruntime + vslice).
void enqueue_task_cfs(Kernel& k, Rq& rq, Task* p) {
  update_curr(k, rq);
  if (p->new_task) {
    p->vruntime = rq.min_vruntime + calc_delta_fair(sched_slice_cfs(k, rq, p), p);
    p->new_task = false;
    rq.c.cfs_place_fork++;
  } else {
    if (p->cfs_rq_cpu >= 0 && p->cfs_rq_cpu != rq.cpu)
      p->vruntime += rq.min_vruntime - k.rq(p->cfs_rq_cpu).min_vruntime;
    if (p->cfs_sleeper) {
      const int64_t floor = rq.min_vruntime - cfs_tunables(k).latency_ns / 2;
      if (p->vruntime < floor) {
        p->vruntime = floor;
        rq.c.cfs_sleeper_capped++;
      }
    }
  }
  p->cfs_sleeper = false;
  p->cfs_rq_cpu = rq.cpu;
  if (k.checking()) k.check_placed(p);
  rq.cfs.push_back(p);
}

// dequeue_entity() of curr (it blocks or moves): drop it from the buddies; min_vruntime without
// it. A sleep keeps the absolute vruntime for the next wakeup's placement.
void dequeue_task_cfs(Kernel& k, Rq& rq, Task* p) {
  update_curr(k, rq);
  cfs_clear_buddies(rq, p);
  p->cfs_sleeper = p->state != TaskState::Running;
  p->cfs_rq_cpu = rq.cpu;
  update_min_vruntime_cfs(rq, p);
}

// pick_next_entity() (prev already back in the queue): the leftmost; the skip buddy passed over
// if the second is within wakeup_gran of it; then the next buddy, else the last buddy, if within
// wakeup_gran of the leftmost. The picked task stops being a buddy.
Task* pick_task_cfs(Kernel& k, Rq& rq) {
  if (rq.cfs.empty()) return nullptr;
  Task* left = cfs_leftmost(rq);
  Task* se = left;
  if (rq.cfs_skip == se) {
    Task* second = cfs_leftmost(rq, se);
    if (second && cfs_wakeup_preempt_entity(k, second, left) < 1) se = second;
  }
  if (rq.cfs_next && cfs_queued(rq, rq.cfs_next) && cfs_wakeup_preempt_entity(k, rq.cfs_next, left) < 1) {
    se = rq.cfs_next;
    rq.c.cfs_pick_next_buddy++;
  } else if (rq.cfs_last && cfs_queued(rq, rq.cfs_last) &&
             cfs_wakeup_preempt_entity(k, rq.cfs_last, left) < 1) {
    se = rq.cfs_last;
    rq.c.cfs_pick_last_buddy++;
  }
  cfs_clear_buddies(rq, se);
  rq.cfs.erase(std::find(rq.cfs.begin(), rq.cfs.end(), se));
  return se;
}

// set_next_entity() when the pick is another task than prev (with group scheduling, as the
// distributions build it, a prev picked again keeps its prev_sum_exec_runtime).
int64_t set_next_task_cfs(Kernel& k, Rq& rq, Task* p) {
  p->exec_start = k.now();
  if (p != rq.curr) p->prev_sum_exec_runtime = p->sum_exec_runtime;
  return 0;
}

// check_preempt_wakeup(): the wakee preempts when curr's vruntime is ahead of its own by more
// than wakeup_gran; it becomes the next buddy, and curr the last buddy when the rq has
// sched_nr_latency tasks (LAST_BUDDY).
bool wakeup_preempt_cfs(Kernel& k, Rq& rq, Task* p) {
  Task* curr = rq.curr;
  if (rq.need_resched || !k.f.on(Feature::WAKEUP_PREEMPTION)) return false;
  update_curr(k, rq);
  if (cfs_wakeup_preempt_entity(k, curr, p) != 1) {
    rq.c.cfs_wakeup_within_gran++;
    return false;
  }
  rq.cfs_next = p;
  rq.c.cfs_wakeup_preempt++;
  const int64_t nr = static_cast<int64_t>(rq.cfs.size()) + (fair_curr(rq) ? 1 : 0);
  if (curr->on_rq && nr >= cfs_tunables(k).nr_latency) rq.cfs_last = curr;
  return true;
}

// entity_tick() -> check_preempt_tick() with more than one fair task: preempt once curr has run
// its sched_slice() since it was switched in (and stop it being a buddy); after min_granularity,
// also when its vruntime is ahead of the leftmost's by more than that slice.
void task_tick_cfs(Kernel& k, Rq& rq, Task* curr) {
  update_curr(k, rq);
  if (rq.cfs.empty()) return;  // cfs_rq->nr_running == 1
  const int64_t ideal = sched_slice_cfs(k, rq, curr);
  const int64_t ran = curr->sum_exec_runtime - curr->prev_sum_exec_runtime;
  if (ran > ideal) {
    rq.need_resched = true;
    rq.c.cfs_tick_preempt_slice++;
    cfs_clear_buddies(rq, curr);
    return;
  }
  if (ran < cfs_tunables(k).min_granularity_ns) return;
  const Task* left = cfs_leftmost(rq);
  if (curr->vruntime - left->vruntime > ideal) {
    rq.need_resched = true;
    rq.c.cfs_tick_preempt_ahead++;
  }
}

// yield_task_fair() (CFS): alone it does nothing; otherwise curr is no buddy but the skip one.
void yield_task_cfs(Kernel& k, Rq& rq) {
  Task* p = rq.curr;
  if (rq.nr_running <= 1) return;
  cfs_clear_buddies(rq, p);
  update_curr(k, rq);
  rq.cfs_skip = p;
}

}  // namespace

namespace {
int64_t entity_lag(const Kernel& k, const Rq& rq, const Task* p);
// dequeue_entity() other than a sleep (a migration: detach_task(), move_queued_task()) with
// PLACE_REL_DEADLINE (v6.12, 82e9d0456e06): the deadline is kept relative to the vruntime, so
// place_entity() on the new rq gives back what was left of the request instead of a new slice.
void keep_relative_deadline(Task* p) {
  p->deadline -= p->vruntime;
  p->rel_deadline = true;
}
}  // namespace

// detach_task(): dequeue_entity() of a queued task that migrates: update_curr() of that rq's
// curr, the lag (clamped, as update_entity_lag()) and the relative deadline.
void detach_task_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF)) {
    cfs_clear_buddies(rq, p);
    p->cfs_rq_cpu = rq.cpu;
    update_min_vruntime_cfs(rq, p);
    return;
  }
  update_curr(k, rq);
  p->vlag = entity_lag(k, rq, p);
  keep_relative_deadline(p);
}

namespace {

// normalized_sysctl_sched_base_slice: the unscaled base slice (0.70 ms since v6.15, 2ae891b82695
// "sched: Reduce the default slice to avoid tasks getting an extra tick"; 0.75 ms before), the
// quantum a picked
// task is protected for without RUN_TO_PARITY (kernel constant, kernel/sched/fair.c).
constexpr int64_t kNormalizedBaseSliceNs = 700000;

// cfs_rq_min_slice(): the shortest slice among curr (if given) and the queued entities.
int64_t cfs_rq_min_slice(const Rq& rq, const Task* curr) {
  int64_t m = curr ? curr->slice : INT64_MAX;
  for (const Task* t : rq.cfs) m = std::min(m, t->slice);
  return m;
}

// set_protect_slice(), from set_next_entity() when another task is picked (a task picked again
// keeps its vprot: put_prev_set_next_task() does nothing then). The task is protected up to its
// deadline, or for a shorter slice: with RUN_TO_PARITY the shortest slice queued beside it
// (v6.17 "Limit run to parity to the min slice of enqueued entities"), without it the
// normalized base slice (v6.17 "Fix NO_RUN_TO_PARITY case": a minimum quantum).
void set_protect_slice(Kernel& k, const Rq& rq, Task* p) {
  int64_t slice = k.f.on(Feature::RUN_TO_PARITY) ? cfs_rq_min_slice(rq, nullptr) : kNormalizedBaseSliceNs;
  slice = std::min(slice, p->slice);
  p->vprot = p->deadline;
  if (slice != p->slice) p->vprot = std::min(p->vprot, p->vruntime + calc_delta_fair(slice, p));
}

// update_protect_slice(): curr's protection shrinks to the shortest slice now on the rq.
void update_protect_slice(const Rq& rq, Task* curr) {
  curr->vprot = std::min(curr->vprot, curr->vruntime + calc_delta_fair(cfs_rq_min_slice(rq, curr), curr));
}

// protect_slice() is `vruntime < vprot`; cancel_protect_slice() ends it.
void cancel_protect_slice(Task* p) { p->vprot = std::min(p->vprot, p->vruntime); }

}  // namespace

// --- the fair class -------------------------------------------------------------------------

namespace {

void enqueue_task_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF)) return enqueue_task_cfs(k, rq, p);
  update_curr(k, rq);
  place_entity(rq, p);
  if (k.checking()) k.check_placed(p);
  rq.cfs.push_back(p);
}

// update_entity_lag(): p's lag against the rq's average (p still counted in it), clamped.
int64_t entity_lag(const Kernel& k, const Rq& rq, const Task* p) {
  int64_t V = avg_vruntime(rq);
  int64_t limit = std::max<int64_t>(2 * p->slice, k.tick_period_ns());
  return std::clamp<int64_t>(V - p->vruntime, -limit, limit);
}

}  // namespace

// DEQUEUE_DELAYED: the delayed task leaves the queue for good, its lag taken while it is still
// counted (a positive one dropped with DELAY_ZERO: finish_delayed_dequeue_entity()).
void finish_delayed_dequeue_fair(Kernel& k, Rq& rq, Task* p) {
  p->vlag = entity_lag(k, rq, p);
  if (k.f.on(Feature::DELAY_ZERO) && p->vlag > 0) p->vlag = 0;
  p->sched_delayed = false;
  p->on_rq = false;
  rq.cfs.erase(std::find(rq.cfs.begin(), rq.cfs.end(), p));
  sub_nr_running(k, rq, 1);
  pelt_dequeue(k, rq, p);
}

namespace {

// dequeue_entity(): remember the lag (clamped) for the next placement.
void dequeue_task_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF)) return dequeue_task_cfs(k, rq, p);
  update_curr(k, rq);
  p->vlag = entity_lag(k, rq, p);
  if (p->state == TaskState::Running) keep_relative_deadline(p);  // not a sleep: a migration
}

void put_prev_task_fair(Kernel&, Rq& rq, Task* prev) { rq.cfs.push_back(prev); }

// pick_next_entity(): a delayed task that is the pick is dequeued for good now (DEQUEUE_DELAYED:
// its lag taken while still counted, a positive one dropped with DELAY_ZERO) and the pick runs
// again.
Task* pick_task_fair(Kernel& k, Rq& rq) {
  if (!k.f.on(Feature::EEVDF)) return pick_task_cfs(k, rq);
  while (!rq.cfs.empty()) {
    Task* next = pick_eevdf(rq);
    if (next->sched_delayed) {
      rq.c.delay_dequeue_picked++;
      finish_delayed_dequeue_fair(k, rq, next);
      continue;
    }
    rq.cfs.erase(std::find(rq.cfs.begin(), rq.cfs.end(), next));
    return next;
  }
  return nullptr;
}

// set_next_entity(): the picked task's execution clock starts now, so the switch itself is
// charged to it and its time waiting in the queue is not. A task other than the one running
// gets its slice protection (rq.curr is still prev here).
int64_t set_next_task_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF)) return set_next_task_cfs(k, rq, p);
  p->exec_start = k.now();
  if (p != rq.curr) set_protect_slice(k, rq, p);
  return 0;
}

// check_preempt_wakeup_fair() (v6.17/v6.18): preempt when the wakee is now the pick. An eligible
// curr short of its vprot is the pick (its slice protection), unless PREEMPT_SHORT and the
// wakee asks for a shorter slice: then the pick ignores the protection, and the protection is
// cancelled if the wakee preempts, else (with RUN_TO_PARITY) shrunk to the shortest slice now on
// the rq. Left out: buddies (NEXT_BUDDY is off by default).
bool wakeup_preempt_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF)) return wakeup_preempt_cfs(k, rq, p);
  // TIF_NEED_RESCHED already set (or asked for by the enqueue's update_curr()): nothing to do.
  if (rq.need_resched || rq.fair_resched) return false;
  if (!k.f.on(Feature::WAKEUP_PREEMPTION)) return false;
  update_curr(k, rq);
  Task* curr = fair_curr(rq);
  const bool preempt_short = curr && k.f.on(Feature::PREEMPT_SHORT) && p->slice < curr->slice;
  if (pick_eevdf(rq, !preempt_short) == p) {
    if (preempt_short) cancel_protect_slice(curr);
    return true;
  }
  if (preempt_short && k.f.on(Feature::RUN_TO_PARITY)) update_protect_slice(rq, curr);
  return false;
}

// task_tick_fair() -> update_curr(): a slice used up gets a new deadline; with someone else
// queued, curr is rescheduled when it did, or when it has run past its slice protection
// (v6.17: `resched || !protect_slice(curr)`). A task re-picked after a new deadline keeps the
// old vprot, so from then on only the tick and the pick keep it on the CPU.
void task_tick_fair(Kernel& k, Rq& rq, Task* curr) {
  if (!k.f.on(Feature::EEVDF)) return task_tick_cfs(k, rq, curr);
  update_curr(k, rq);
  if (rq.fair_resched) {  // the tick runs on curr's own CPU: resched_curr() sets the flag
    rq.fair_resched = false;
    rq.need_resched = true;
  }
}

// yield_task_fair() (EEVDF): alone on the rq it does nothing; otherwise the deadline moves one
// (weighted) slice out, so pick_eevdf() prefers another eligible task if there is one. Left
// out: buddies (not modeled).
void yield_task_fair(Kernel& k, Rq& rq) {
  if (!k.f.on(Feature::EEVDF)) return yield_task_cfs(k, rq);
  Task* p = rq.curr;
  if (rq.nr_running <= 1) return;
  update_curr(k, rq);
  p->deadline += p->slice * kNice0Load / p->weight;
}

}  // namespace

// dequeue_entity() with DEQUEUE_SLEEP of curr under DELAY_DEQUEUE: an eligible task leaves as
// before; one that is not (it ran ahead of the average: negative lag) stays queued, delayed,
// still counted in avg_vruntime() and nr_running, until pick_task_fair() picks it or a wakeup
// requeues it. Its vruntime is not touched while it waits.
bool delay_dequeue_fair(Kernel& k, Rq& rq, Task* p) {
  if (!k.f.on(Feature::EEVDF) || !k.f.on(Feature::DELAY_DEQUEUE)) return false;
  // Only a plain sleep: an exit (TASK_DEAD) and the special states are not delayed.
  if (p->sched_class != &fair_sched_class || p != rq.curr || p->state != TaskState::Interruptible)
    return false;
  update_curr(k, rq);
  if (p->vruntime <= avg_vruntime(rq)) return false;  // entity_eligible()
  p->sched_delayed = true;
  rq.c.delay_dequeue++;
  return true;
}

void requeue_delayed_fair(Kernel& k, Rq& rq, Task* p) {
  update_curr(k, rq);
  p->sched_delayed = false;
  rq.c.delay_requeue++;
  if (!k.f.on(Feature::DELAY_ZERO) || entity_lag(k, rq, p) <= 0) return;
  // The lag turned positive while it waited: re-placed at the average without it, lag 0.
  rq.cfs.erase(std::find(rq.cfs.begin(), rq.cfs.end(), p));
  p->vlag = 0;
  place_entity(rq, p);
  if (k.checking()) k.check_placed(p);
  rq.cfs.push_back(p);
}

const SchedClass fair_sched_class = {
    .name = "fair",
    .rank = 1,
    .enqueue_task = enqueue_task_fair,
    .dequeue_task = dequeue_task_fair,
    .put_prev_task = put_prev_task_fair,
    .pick_task = pick_task_fair,
    .set_next_task = set_next_task_fair,
    .wakeup_preempt = wakeup_preempt_fair,
    .select_task_rq = select_task_rq_fair,
    .task_tick = task_tick_fair,
    .yield_task = yield_task_fair,
};

// --- wakeup placement -----------------------------------------------------------------------

// record_wakee(): count how often the waker switches wakee (decays by half each second).
void record_wakee(Kernel& k, Task* waker, Task* p) {
  if (!waker) return;
  if (k.now() > waker->wakee_flip_decay_ts + Time::sec(1)) {
    waker->wakee_flips >>= 1;
    waker->wakee_flip_decay_ts = k.now();
  }
  if (waker->last_wakee != p) {
    waker->last_wakee = p;
    waker->wakee_flips++;
  }
}

// wake_wide(): many-to-many wakeup pattern larger than the LLC -> don't pull to the waker.
bool wake_wide(const Kernel& k, const Task* waker, const Task* p) {
  if (!waker) return false;
  int64_t factor = k.topo.llc_size();
  int64_t master = std::max(waker->wakee_flips, p->wakee_flips);
  int64_t slave = std::min(waker->wakee_flips, p->wakee_flips);
  return !(slave < factor || master < slave * factor);
}

// wake_affine(): WA_IDLE then WA_WEIGHT on the CPUs' and tasks' PELT load (cpu_load(),
// task_h_load(); the waker is `current`). WA_BIAS uses the imbalance_pct of prev's top domain;
// the kernel uses the lowest domain spanning both CPUs (110 instead of 117 for SMT siblings: not
// modeled yet). Both CPUs are at full capacity (capacity_of() cancels).
int wake_affine(Kernel& k, int this_cpu, int prev_cpu, bool sync, Task* waker, Task* p,
                int64_t& cost) {
  cost += read_rq_line(k, this_cpu, prev_cpu, cost);
  int target = -1;
  if (k.f.on(Feature::WA_IDLE)) {
    bool share = k.topo.share_llc(this_cpu, prev_cpu);
    if (available_idle_cpu(k, this_cpu, cost) && share)
      target = available_idle_cpu(k, prev_cpu, cost) ? prev_cpu : this_cpu;
    else if (sync && k.rq(this_cpu).nr_running == 1)
      target = this_cpu;
    else if (available_idle_cpu(k, prev_cpu, cost))
      target = prev_cpu;
    for (Change* c : k.hooks(Hook::wake_affine_idle)) {
      if (target >= 0) break;
      HookResult<int> r = c->on_wake_affine_idle(this_cpu, prev_cpu, sync, target);
      target = r.value;
      cost += r.cost_ns;
    }
  }
  if (target < 0 && k.f.on(Feature::WA_WEIGHT)) {
    // wake_affine_weight(): the PELT loads (pelt.cpp), p's blocked load still in prev's.
    int64_t this_eff = cpu_load(k.rq(this_cpu));
    if (sync) {
      const Task* current = waker ? waker : k.rq(this_cpu).curr;
      const int64_t current_load = task_h_load(current);
      if (current_load > this_eff) {
        target = this_cpu;
      } else {
        this_eff -= current_load;
      }
    }
    if (target < 0) {
      const int64_t task_load = task_h_load(p);
      this_eff += task_load;
      int64_t prev_eff = cpu_load(k.rq(prev_cpu)) - task_load;
      int pct = k.rq(prev_cpu).sd.empty() ? kSdImbalancePct : k.rq(prev_cpu).sd.back().imbalance_pct;
      if (k.f.on(Feature::WA_BIAS)) {
        this_eff *= 100;
        prev_eff *= 100 + (pct - 100) / 2;
      }
      if (sync) prev_eff += 1;
      target = this_eff < prev_eff ? this_cpu : -1;
    }
  }
  if (target == this_cpu)
    if (int l = lowest_sd_level_spanning(k.topo, k.rq(this_cpu), prev_cpu); l >= 0)
      k.rq(this_cpu).c.ttwu_move_affine[l]++;  // schedstat
  return target == this_cpu ? this_cpu : prev_cpu;
}

// select_task_rq_fair() for a wakeup: wake_affine() when the waker's CPU is allowed and the
// pattern is not wide (every level is SD_WAKE_AFFINE and the top one spans every CPU, so some
// domain always spans both), then select_idle_sibling(). Left out: EAS, the slow path
// (SD_BALANCE_WAKE is off by default).
int select_task_rq_fair(Kernel& k, int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost) {
  int prev_cpu = p->cpu;
  record_wakee(k, waker, p);
  int new_cpu = prev_cpu;
  bool want_affine = !wake_wide(k, waker, p) && p->allowed_on(this_cpu);
  if (want_affine && this_cpu != prev_cpu)
    new_cpu = wake_affine(k, this_cpu, prev_cpu, sync, waker, p, cost);
  return select_idle_sibling(k, this_cpu, p, prev_cpu, new_cpu, cost);
}

// select_idle_sibling(): target, prev, recent_used_cpu, an idle SMT sibling of prev, then the
// LLC scan; with nothing idle, target (as the kernel, which may be outside p's allowed mask:
// select_task_rq() checks it). Left out: asymmetric capacity, clusters, the per-CPU kthread
// shortcut.
int select_idle_sibling(Kernel& k, int this_cpu, Task* p, int prev, int target, int64_t& cost) {
  const CpuTopology& topo = k.topo;
  cost += read_rq_line(k, this_cpu, target, cost);
  if (available_idle_cpu(k, target, cost) && p->allowed_on(target)) return target;
  bool prev_share = topo.share_llc(prev, target);
  if (prev != target && prev_share) {
    cost += read_rq_line(k, this_cpu, prev, cost);
    if (available_idle_cpu(k, prev, cost) && p->allowed_on(prev)) return prev;
  }
  int recent = p->recent_used_cpu;
  p->recent_used_cpu = prev;
  if (recent >= 0 && recent != prev && recent != target && topo.share_llc(recent, target) &&
      p->allowed_on(recent)) {
    cost += read_rq_line(k, this_cpu, recent, cost);
    if (available_idle_cpu(k, recent, cost)) return recent;
  }
  SchedDomainShared& sds = k.llc_shared(topo.llc_of(target));
  bool has_idle_core = false;
  if (topo.threads_per_core() > 1) {
    cost += read_llc_shared(k, sds, this_cpu, cost);  // test_idle_cores()
    has_idle_core = sds.has_idle_cores;
    if (!has_idle_core && prev_share) {
      int i = select_idle_smt(k, this_cpu, p, prev, cost);
      if (i >= 0) return i;
    }
  }
  int i = select_idle_cpu(k, this_cpu, p, target, has_idle_core, cost);
  for (Change* c : k.hooks(Hook::select_idle_cpu_done)) {
    HookResult<int> r = c->on_select_idle_cpu_done(this_cpu, p, target, i);
    i = r.value;
    cost += r.cost_ns;
  }
  if (i >= 0) return i;
  k.rq(this_cpu).c.sis_failed++;
  if (target == this_cpu && target != prev) k.rq(this_cpu).c.sis_failed_waker++;
  return target;
}

int select_idle_smt(Kernel& k, int this_cpu, Task* p, int target, int64_t& cost) {
  for (int s : k.topo.smt_mask(target)) {
    if (s == target) continue;
    cost += read_rq_line(k, this_cpu, s, cost);
    if (p->allowed_on(s) && available_idle_cpu(k, s, cost)) return s;
  }
  return -1;
}

namespace {
// select_idle_core(): is every SMT sibling of `cpu` idle? The first idle sibling p may run on
// is remembered as a fallback (*idle_cpu); once one is known the scan of a busy core stops.
// `offset`: the caller's work before the scan.
bool select_idle_core(Kernel& k, Rq& this_rq, Task* p, int cpu, int& idle_cpu,
                      int64_t offset, int64_t& scan_cost) {
  bool all_idle = true;
  for (int s : k.topo.smt_mask(cpu)) {
    scan_cost += read_rq_line(k, this_rq.cpu, s, offset + scan_cost);
    this_rq.c.select_idle_cpu_scanned++;
    bool idle = available_idle_cpu(k, s, offset + scan_cost);
    for (Change* c : k.hooks(Hook::select_idle_cpu_visit))
      c->on_select_idle_cpu_visit(this_rq, s, idle);
    if (!idle) {
      all_idle = false;
      if (idle_cpu >= 0) break;  // a fallback is known: no need to look further
      continue;
    }
    if (idle_cpu < 0 && p->allowed_on(s)) idle_cpu = s;
  }
  return all_idle;
}
// select_idle_cpu()'s per-CPU scan when no change hooks it, as a tight loop: the line reads'
// counts are tallied and added once (nothing reads them during the scan), idle_cpu() inline.
// The same reads in the same order as select_idle_cpu()'s general loop.
int select_idle_cpu_tight(Kernel& k, Rq& this_rq, const Task* p, const SchedDomainShared& sds,
                          int start, int nr, int64_t cost, int64_t& scan_cost, bool& cut_off) {
  const int llc_n = static_cast<int>(sds.cpus.size());
  const int this_cpu = this_rq.cpu;
  LineTally tally;
  int64_t scanned = 0;
  int found = -1;
  const Time now = k.now();
  for (int i = 0, at = start; i < llc_n; ++i) {
    const int cpu = sds.cpus[at];
    if (++at == llc_n) at = 0;  // (start + i) % llc_n
    if (!p->allowed_on(cpu)) continue;
    if (--nr <= 0) {
      cut_off = true;
      break;
    }
    Rq& rq = k.rq(cpu);
    scan_cost += line_read_tallied(k, rq.line, this_cpu, now + Time::ns(cost + scan_cost), tally);
    ++scanned;
    // available_idle_cpu(): idle_cpu() inline for an empty rq; one with tasks may still read as
    // idle while their enqueues are ahead of the read (Rq::enqueue_pending).
    if (rq.curr == rq.idle && !rq.ttwu_pending &&
        (rq.nr_running == 0 || available_idle_cpu(k, cpu, cost + scan_cost))) {
      found = cpu;
      break;
    }
  }
  this_rq.c.select_idle_cpu_scanned += scanned;
  line_read_flush(k, LineClass::Rq, this_cpu, tally);
  return found;
}
}  // namespace

// select_idle_cpu(): scan the LLC from target+1, wrapping. SIS_PROP bounds the per-CPU scan by
// avg_idle over avg_scan_cost; SIS_UTIL's nr_idle_scan replaces that bound when both are on
// (SIS_PROP's bookkeeping still runs) and stops the scan at once when it is 0. Changes may
// narrow the candidates (Hook::select_idle_cpu_candidate; each is still verified with
// available_idle_cpu()) and see every CPU visited.
int select_idle_cpu(Kernel& k, int this_cpu, Task* p, int target, bool has_idle_core,
                    int64_t& cost) {
  const CpuTopology& topo = k.topo;
  SchedDomainShared& sds = k.llc_shared(topo.llc_of(target));
  Rq& this_rq = k.rq(this_cpu);
  this_rq.c.select_idle_cpu_calls++;
  int nr = INT32_MAX;
  if (k.f.on(Feature::SIS_PROP) && !has_idle_core) {
    // Age this CPU's idle estimate by the jiffies since its last wakeup.
    int64_t jiffies_now = k.now().count() / k.tick_period_ns();
    int64_t jiffies_then = this_rq.wake_stamp.count() / k.tick_period_ns();
    int64_t avg_idle = this_rq.wake_avg_idle;
    for (int64_t j = jiffies_then; j < jiffies_now && avg_idle > 0; ++j) avg_idle /= 2;
    this_rq.wake_avg_idle = avg_idle;
    this_rq.wake_stamp = k.now();
    int64_t avg_cost = sds.avg_scan_cost + 1;
    int64_t span_avg = static_cast<int64_t>(sds.cpus.size()) * avg_idle;
    nr = span_avg > kSisPropMinScan * avg_cost ? static_cast<int>(span_avg / avg_cost)
                                                 : kSisPropMinScan;
  }
  // SIS_UTIL's depth replaces SIS_PROP's when both are on (v6.0-v6.6); since v6.1 it is not
  // applied while the LLC has an idle core (select_idle_core() scans unbounded).
  if (k.f.on(Feature::SIS_UTIL) && !has_idle_core) {
    cost += read_llc_shared(k, sds, this_cpu, cost);  // READ_ONCE(sd_share->nr_idle_scan)
    nr = sds.nr_idle_scan + 1;  // because !--nr is the condition to stop the scan
    this_rq.c.sis_util_depth_calls++;
    if (!sds.nr_idle_scan_busy_refreshed) this_rq.c.sis_util_start_depth_calls++;
    if (nr == 1) return -1;     // overloaded LLC: don't scan at all
    for (Change* c : k.hooks(Hook::select_idle_cpu_depth)) {
      HookResult<int> r = c->on_select_idle_cpu_depth(this_rq, p, target, nr, -1);
      cost += r.cost_ns;
      if (r.value >= 0) return r.value;
    }
  }
  const int llc_n = static_cast<int>(sds.cpus.size());
  // Start at the CPU after target in the LLC span and wrap (for_each_cpu_wrap).
  int start = static_cast<int>(std::upper_bound(sds.cpus.begin(), sds.cpus.end(), target) -
                               sds.cpus.begin());
  if (start == llc_n) start = 0;
  const std::vector<Change*>& candidate_hooks = k.hooks(Hook::select_idle_cpu_candidate);
  const std::vector<Change*>& visit_hooks = k.hooks(Hook::select_idle_cpu_visit);
  int64_t scan_cost = 0;
  int found = -1;
  bool cut_off = false;  // the depth limit ended the scan (the kernel returns -1 at once)
  int idle_fallback = -1;
  if (has_idle_core && ++k.fair_scratch().core_seen_gen == 0) {  // the stamps wrapped: start afresh
    std::fill(k.fair_scratch().core_seen.begin(), k.fair_scratch().core_seen.end(), 0);
    k.fair_scratch().core_seen_gen = 1;
  }
  const bool tight = !has_idle_core && candidate_hooks.empty() && visit_hooks.empty();
  if (tight) found = select_idle_cpu_tight(k, this_rq, p, sds, start, nr, cost, scan_cost, cut_off);
  for (int i = 0, at = start; !tight && i < llc_n && found < 0 && !cut_off; ++i) {
    int cpu = sds.cpus[at];
    if (++at == llc_n) at = 0;  // (start + i) % llc_n
    if (!p->allowed_on(cpu)) continue;
    if (!candidate_hooks.empty() &&
        !std::all_of(candidate_hooks.begin(), candidate_hooks.end(), [&](Change* c) {
          HookResult<bool> r = c->on_select_idle_cpu_candidate(this_rq, cpu, true);
          scan_cost += r.cost_ns;  // IDLE_CPUMASK: the read of its mask's line
          return r.value;
        }))
      continue;
    if (has_idle_core) {
      // select_idle_core(): a whole idle core; not limited by nr.
      int core = topo.core_of(cpu);
      if (k.fair_scratch().core_seen[core] == k.fair_scratch().core_seen_gen) continue;
      k.fair_scratch().core_seen[core] = k.fair_scratch().core_seen_gen;
      if (select_idle_core(k, this_rq, p, cpu, idle_fallback, cost, scan_cost)) found = cpu;
    } else {
      if (--nr <= 0) {
        cut_off = true;
        break;
      }
      scan_cost += read_rq_line(k, this_cpu, cpu, cost + scan_cost);
      this_rq.c.select_idle_cpu_scanned++;
      bool idle = available_idle_cpu(k, cpu, cost + scan_cost);
      for (Change* c : visit_hooks) c->on_select_idle_cpu_visit(this_rq, cpu, idle);
      if (idle) found = cpu;
    }
  }
  if (has_idle_core && found < 0) {
    sds.has_idle_cores = false;  // set_idle_cores(target, false)
    line_write(sds.line, this_cpu);
    found = idle_fallback;
  }
  // SIS_PROP: sd->avg_scan_cost (1/8 EWMA) and the waker's idle estimate learn from scans that
  // ran to the end of the per-CPU path.
  if (k.f.on(Feature::SIS_PROP) && !has_idle_core && !cut_off) {
    sds.avg_scan_cost += (scan_cost - sds.avg_scan_cost) / kAvgScanCostEwmaDiv;
    this_rq.wake_avg_idle -= std::min(this_rq.wake_avg_idle, scan_cost);
  }
  this_rq.c.select_idle_cpu_scan_ns += scan_cost;
  if (found >= 0) this_rq.c.select_idle_cpu_found++;
  cost += scan_cost;
  return found;
}

// __update_idle_core() from set_next_task_idle(): test_idle_cores() reads the LLC's shared line;
// if it is clear and every SMT sibling is idle (their rq lines), set_idle_cores() writes it (the
// write's RFO: a line transfer within the LLC, as before the line model). Returns the cost.
int64_t __update_idle_core(Kernel& k, Rq& rq) {
  SchedDomainShared& sds = k.llc_shared(rq.llc);
  int64_t c = read_llc_shared(k, sds, rq.cpu, 0);
  if (sds.has_idle_cores) return c;
  for (int s : k.topo.smt_mask(rq.cpu)) {
    if (s == rq.cpu) continue;
    c += read_rq_line(k, rq.cpu, s, c);
    if (!idle_cpu(k, s, c)) return c;
  }
  sds.has_idle_cores = true;
  line_write(sds.line, rq.cpu);
  rq.c.set_idle_cores++;
  return c + k.remote_read(Distance::Llc);
}

// --- fork placement -------------------------------------------------------------------------

// sched_balance_find_dst_cpu() (find_idlest_cpu()), simplified: walk socket -> LLC -> core ->
// CPU, each time taking the group with the fewest tasks assigned (ties: lowest id after the
// parent's group). Per-CPU task counts are kept up to date (Kernel::nr_assigned), so a fork
// costs O(allowed CPUs) as the kernel's walk over the domain's groups does.
int sched_balance_find_dst_cpu(Kernel& k, const Task* p, int start_cpu) {
  const CpuTopology& topo = k.topo;
  const std::vector<int>& load = k.sched().nr_assigned;
  ForkScratch& s = k.fair_scratch().fork;
  std::vector<int>& cands = s.cands;
  cands.clear();
  for (int c = 0; c < k.nr_cpus(); ++c)
    if (p->allowed_on(c)) cands.push_back(c);
  if (cands.empty()) return start_cpu;
  // One level: the groups (by key) of the candidates, visited from the parent's group on.
  auto pick_group = [&](auto key) {
    s.keys.clear();
    for (int c : cands) {
      int g = key(c);
      if (s.count[g]++ == 0) s.keys.push_back(g);
      s.sum[g] += load[c];
    }
    std::sort(s.keys.begin(), s.keys.end());
    size_t n = s.keys.size();
    size_t s0 = std::find(s.keys.begin(), s.keys.end(), key(start_cpu)) - s.keys.begin();
    if (s0 == n) s0 = 0;
    int best = -1, best_load = INT32_MAX;
    for (size_t i = 0; i < n; ++i) {
      int g = s.keys[(s0 + i) % n];
      int l = s.sum[g] * 1000 / s.count[g];
      if (l < best_load) {
        best_load = l;
        best = g;
      }
    }
    for (int g : s.keys) s.count[g] = s.sum[g] = 0;
    cands.erase(std::remove_if(cands.begin(), cands.end(), [&](int c) { return key(c) != best; }),
                cands.end());
  };
  // NUMA level: allow_numa_imbalance(): a fork stays on the parent's node while that node runs
  // fewer than a quarter of its CPUs' worth of tasks (imb_numa_nr).
  int local_socket = topo.socket_of(start_cpu);
  int local_load = 0, local_cpus = 0;
  for (int c : cands)
    if (topo.socket_of(c) == local_socket) {
      local_load += load[c];
      ++local_cpus;
    }
  if (topo.nr_sockets() > 1 && local_cpus > 0 && local_load * kNumaImbalanceDiv < local_cpus) {
    cands.erase(std::remove_if(cands.begin(), cands.end(),
                               [&](int c) { return topo.socket_of(c) != local_socket; }),
                cands.end());
  }
  pick_group([&](int c) { return topo.socket_of(c); });
  pick_group([&](int c) { return topo.llc_of(c); });
  pick_group([&](int c) { return topo.core_of(c); });
  int best = cands.front();
  for (int c : cands)
    if (load[c] < load[best]) best = c;
  return best;
}

}  // namespace schedlab::kernel
