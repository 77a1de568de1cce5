// kernel/sched/fair.c: EEVDF picking and placement, and the wakeup placement path
// select_task_rq_fair() -> wake_affine() -> select_idle_sibling() -> select_idle_cpu().
#include <algorithm>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
// Kernel constants (not machine costs): kernel/sched/topology.c sd_init() and fair.c.
constexpr int64_t kNice0Load = 1024;           // NICE_0_LOAD
constexpr int kSisPropMinScan = 4;             // SIS_PROP floor
constexpr int kNumaImbalanceDiv = 4;           // imb_numa_nr: 25 % of the node's CPUs
}  // namespace

// avg_vruntime(): the load-weighted mean vruntime of the runnable fair entities (curr too).
int64_t Kernel::avg_vruntime(const Rq& rq) const {
  __int128 sum = 0;
  int64_t w = 0;
  for (const Task* t : rq.cfs) {
    sum += static_cast<__int128>(t->vruntime) * t->weight;
    w += t->weight;
  }
  const Task* curr = rq.spin_task ? rq.spin_task : rq.curr;
  if (curr != rq.idle && curr->on_rq && !curr->is_rt()) {
    sum += static_cast<__int128>(curr->vruntime) * curr->weight;
    w += curr->weight;
  }
  if (w == 0) return rq.idle->vruntime;  // the rq's zero point when empty
  return static_cast<int64_t>(sum / w);
}

// update_curr(): charge the running fair task's execution to its vruntime.
void Kernel::update_curr(Rq& rq) {
  Task* curr = rq.curr;
  if (curr == rq.idle || curr->is_rt()) return;
  int64_t delta = (ev_.now() - curr->exec_start).count();
  if (delta <= 0) return;
  curr->exec_start = ev_.now();
  curr->vruntime += delta * kNice0Load / curr->weight;
  // Track the rq's zero point so an emptied rq keeps a sensible clock.
  rq.idle->vruntime = std::max(rq.idle->vruntime, curr->vruntime - curr->slice);
}

// place_entity() with PLACE_LAG: keep the lag the task had when it went to sleep.
void Kernel::place_entity(Rq& rq, Task* p) {
  int64_t V = avg_vruntime(rq);
  if (p->new_task) {
    p->vruntime = V;
    p->deadline = V + p->slice / 2;  // PLACE_DEADLINE_INITIAL
    p->new_task = false;
    return;
  }
  p->vruntime = V - p->vlag;
  p->deadline = p->vruntime + p->slice * kNice0Load / p->weight;
}

// sched_yield() -> do_sched_yield(): the class's yield_task(), then schedule() with prev still
// runnable. yield_task_fair() (EEVDF): alone on the rq it does nothing; otherwise the deadline
// moves one (weighted) slice out, so pick_eevdf() prefers another eligible task if there is
// one. yield_task_rt(): requeue at the tail of its priority, behind equal-priority tasks.
// Left out: buddies (not modeled), the syscall entry cost, SCHED_DEADLINE.
void Kernel::sched_yield(Rq& rq) {
  Task* p = rq.curr;
  if (!p->is_rt() && rq.nr_running > 1) {
    update_curr(rq);
    p->deadline += p->slice * kNice0Load / p->weight;
  }
  rq.yield_to_tail = p->is_rt();
  schedule(rq, 0);  // pick_next_task() runs synchronously inside
  rq.yield_to_tail = false;
}

// pick_eevdf(): earliest virtual deadline among eligible entities (vruntime <= avg). Considers
// the queued tasks and curr if it is a runnable fair task.
Task* Kernel::pick_eevdf(Rq& rq) {
  int64_t V = avg_vruntime(rq);
  Task* best = nullptr;
  Task* first = nullptr;
  auto consider = [&](Task* t) {
    if (!first || t->vruntime < first->vruntime) first = t;
    if (t->vruntime > V) return;
    if (!best || t->deadline < best->deadline) best = t;
  };
  for (Task* t : rq.cfs) consider(t);
  Task* curr = rq.spin_task ? rq.spin_task : rq.curr;
  if (curr != rq.idle && curr->on_rq && !curr->is_rt()) consider(curr);
  return best ? best : first;
}

int64_t Kernel::probe_cost(int from, int to) const {
  return m_.remote_read_ns(m_.topo.distance(from, to));
}

// record_wakee(): count how often the waker switches wakee (decays by half each second).
void Kernel::record_wakee(Task* waker, Task* p) {
  if (!waker) return;
  if (ev_.now() > waker->wakee_flip_decay_ts + Time::sec(1)) {
    waker->wakee_flips >>= 1;
    waker->wakee_flip_decay_ts = ev_.now();
  }
  if (waker->last_wakee != p) {
    waker->last_wakee = p;
    waker->wakee_flips++;
  }
}

// wake_wide(): many-to-many wakeup pattern larger than the LLC -> don't pull to the waker.
bool Kernel::wake_wide(Task* waker, Task* p) const {
  if (!waker) return false;
  int64_t factor = m_.topo.llc_size();
  int64_t master = std::max(waker->wakee_flips, p->wakee_flips);
  int64_t slave = std::min(waker->wakee_flips, p->wakee_flips);
  return !(slave < factor || master < slave * factor);
}

// wake_affine(): WA_IDLE then WA_WEIGHT (loads approximated by runnable weight).
int Kernel::wake_affine(int this_cpu, int prev_cpu, bool sync, Task* p, int64_t& cost) {
  cost += probe_cost(this_cpu, prev_cpu);
  int target = -1;
  if (f_.on(Feature::WA_IDLE)) {
    bool share = m_.topo.llc_of(this_cpu) == m_.topo.llc_of(prev_cpu);
    if (available_idle_cpu(this_cpu) && share)
      target = available_idle_cpu(prev_cpu) ? prev_cpu : this_cpu;
    else if (sync && rqs_[this_cpu].nr_running == 1)
      target = this_cpu;
    else if (available_idle_cpu(prev_cpu))
      target = prev_cpu;
  }
  if (target < 0 && f_.on(Feature::WA_WEIGHT)) {
    int64_t this_load = rqs_[this_cpu].nr_running * kNice0Load;
    int64_t prev_load = rqs_[prev_cpu].nr_running * kNice0Load;
    int64_t this_eff = this_load;
    if (sync) {
      if (kNice0Load > this_eff) {
        target = this_cpu;
      } else {
        this_eff -= kNice0Load;
      }
    }
    if (target < 0) {
      this_eff += p->weight;
      int64_t prev_eff = prev_load;  // p is not on prev's rq any more
      int pct = rqs_[prev_cpu].sd.empty() ? 117 : rqs_[prev_cpu].sd.back().imbalance_pct;
      if (f_.on(Feature::WA_BIAS)) {
        this_eff *= 100;
        prev_eff *= 100 + (pct - 100) / 2;
      }
      if (sync) prev_eff += 1;
      target = this_eff < prev_eff ? this_cpu : -1;
    }
  }
  return target == this_cpu ? this_cpu : prev_cpu;
}

// select_task_rq_fair() for a wakeup: wake_affine() within the lowest domain spanning both CPUs,
// then select_idle_sibling(). Left out: EAS, the slow path (SD_BALANCE_WAKE is off by default).
int Kernel::select_task_rq_fair(int this_cpu, Task* waker, Task* p, bool sync, int64_t& cost) {
  int prev_cpu = p->cpu;
  record_wakee(waker, p);
  int new_cpu = prev_cpu;
  bool want_affine = !wake_wide(waker, p) && p->allowed_on(this_cpu);
  if (want_affine && this_cpu != prev_cpu) new_cpu = wake_affine(this_cpu, prev_cpu, sync, p, cost);
  return select_idle_sibling(this_cpu, p, prev_cpu, new_cpu, cost);
}

// select_idle_sibling(): target, prev, recent_used_cpu, an idle SMT sibling of prev, then the
// LLC scan. Left out: asymmetric capacity, clusters, the per-CPU kthread shortcut.
int Kernel::select_idle_sibling(int this_cpu, Task* p, int prev, int target, int64_t& cost) {
  const auto& topo = m_.topo;
  cost += probe_cost(this_cpu, target);
  if (available_idle_cpu(target) && p->allowed_on(target)) return target;
  bool prev_share = topo.llc_of(prev) == topo.llc_of(target);
  if (prev != target && prev_share) {
    cost += probe_cost(this_cpu, prev);
    if (available_idle_cpu(prev) && p->allowed_on(prev)) return prev;
  }
  int recent = p->recent_used_cpu;
  p->recent_used_cpu = prev;
  if (recent >= 0 && recent != prev && recent != target &&
      topo.llc_of(recent) == topo.llc_of(target) && p->allowed_on(recent)) {
    cost += probe_cost(this_cpu, recent);
    if (available_idle_cpu(recent)) return recent;
  }
  LlcShared& sds = llcs_[topo.llc_of(target)];
  bool has_idle_core = false;
  if (topo.threads_per_core > 1) {
    cost += probe_cost(this_cpu, sds.cpus.front());  // the shared line
    has_idle_core = sds.has_idle_cores;
    if (!has_idle_core && prev_share) {
      int i = select_idle_smt(this_cpu, p, prev, cost);
      if (i >= 0) return i;
    }
  }
  int i = select_idle_cpu(this_cpu, p, target, has_idle_core, cost);
  if (i >= 0) return i;
  return target;
}

int Kernel::select_idle_smt(int this_cpu, Task* p, int target, int64_t& cost) {
  for (int s : m_.topo.smt_siblings(target)) {
    if (s == target) continue;
    cost += probe_cost(this_cpu, s);
    if (p->allowed_on(s) && available_idle_cpu(s)) return s;
  }
  return -1;
}

// select_idle_cpu(): scan the LLC from target+1, wrapping. SIS_UTIL bounds the per-CPU scan to
// nr_idle_scan (none at all when the LLC is overloaded); SIS_PROP bounds it by avg_idle over
// avg_scan_cost; IDLE_CPUMASK restricts the candidates to the LLC's idle mask (bits set on idle
// entry, cleared lazily at the busy tick) and still verifies each with available_idle_cpu().
int Kernel::select_idle_cpu(int this_cpu, Task* p, int target, bool has_idle_core,
                            int64_t& cost) {
  const auto& topo = m_.topo;
  LlcShared& sds = llcs_[topo.llc_of(target)];
  Rq& this_rq = rqs_[this_cpu];
  this_rq.c.sis_calls++;
  int nr = INT32_MAX;
  if (f_.on(Feature::SIS_PROP) && !has_idle_core) {
    // Age this CPU's idle estimate by the jiffies since its last wakeup.
    int64_t jiffies_now = ev_.now().count() / m_.tick_ns();
    int64_t jiffies_then = this_rq.wake_stamp.count() / m_.tick_ns();
    int64_t avg_idle = this_rq.wake_avg_idle;
    for (int64_t j = jiffies_then; j < jiffies_now && avg_idle > 0; ++j) avg_idle /= 2;
    this_rq.wake_avg_idle = avg_idle;
    this_rq.wake_stamp = ev_.now();
    int64_t avg_cost = sds.avg_scan_cost + 1;
    int64_t span_avg = static_cast<int64_t>(sds.cpus.size()) * avg_idle;
    nr = span_avg > kSisPropMinScan * avg_cost ? static_cast<int>(span_avg / avg_cost)
                                                 : kSisPropMinScan;
  }
  if (f_.on(Feature::SIS_UTIL)) {
    int n = sds.nr_idle_scan + 1;
    if (n == 1) return -1;  // overloaded LLC: don't scan at all
    nr = std::min(nr, n);
  }
  const int llc_n = static_cast<int>(sds.cpus.size());
  // Start at the CPU after target in the LLC span and wrap (for_each_cpu_wrap).
  int start = 0;
  for (int k = 0; k < llc_n; ++k)
    if (sds.cpus[k] > target) {
      start = k;
      break;
    }
  const bool use_mask = f_.on(Feature::IDLE_CPUMASK);
  int64_t scan_cost = 0;
  int found = -1;
  bool cut_off = false;  // the depth limit ended the scan (the kernel returns -1 at once)
  int idle_fallback = -1;
  std::vector<bool> done_core;
  if (has_idle_core) done_core.assign(topo.nr_cores(), false);
  for (int k = 0; k < llc_n && found < 0; ++k) {
    int cpu = sds.cpus[(start + k) % llc_n];
    if (!p->allowed_on(cpu)) continue;
    if (use_mask && !sds.idle_mask[cpu]) continue;
    if (has_idle_core) {
      // select_idle_core(): a whole idle core; not limited by nr.
      int core = topo.core_of(cpu);
      if (done_core[core]) continue;
      done_core[core] = true;
      bool all_idle = true;
      for (int s : topo.smt_siblings(cpu)) {
        scan_cost += probe_cost(this_cpu, s);
        this_rq.c.sis_scanned++;
        bool idle = available_idle_cpu(s);
        if (use_mask && sds.idle_mask[s] && !idle) this_rq.c.idle_cpumask_stale++;
        if (!idle) {
          all_idle = false;
          if (idle_fallback >= 0) break;  // a fallback is known: no need to look further
          continue;
        }
        if (idle_fallback < 0 && p->allowed_on(s)) idle_fallback = s;
      }
      if (all_idle) found = cpu;
    } else {
      if (--nr <= 0) {
        cut_off = true;
        break;
      }
      scan_cost += probe_cost(this_cpu, cpu);
      this_rq.c.sis_scanned++;
      bool idle = available_idle_cpu(cpu);
      if (idle) {
        found = cpu;
      } else if (use_mask) {
        this_rq.c.idle_cpumask_stale++;
      }
    }
  }
  if (has_idle_core && found < 0) {
    sds.has_idle_cores = false;  // set_idle_cores(target, false)
    found = idle_fallback;
  }
  // SIS_PROP: sd->avg_scan_cost (1/8 EWMA) and the waker's idle estimate learn from scans that
  // ran to the end of the per-CPU path.
  if (f_.on(Feature::SIS_PROP) && !has_idle_core && !cut_off) {
    sds.avg_scan_cost += (scan_cost - sds.avg_scan_cost) / 8;
    this_rq.wake_avg_idle -= std::min(this_rq.wake_avg_idle, scan_cost);
  }
  this_rq.c.sis_scan_ns += scan_cost;
  if (found >= 0) this_rq.c.sis_found++;
  cost += scan_cost;
  return found;
}

// __update_idle_core() from set_next_task_idle(): if every SMT sibling is idle, mark the LLC as
// having an idle core.
void Kernel::update_idle_core(Rq& rq) {
  LlcShared& sds = llcs_[rq.llc];
  if (sds.has_idle_cores) return;
  for (int s : m_.topo.smt_siblings(rq.cpu))
    if (s != rq.cpu && !idle_cpu(s)) return;
  sds.has_idle_cores = true;
}

// Fork placement, a simplified find_idlest_cpu(): walk socket -> LLC -> core -> CPU, each time
// taking the group with the fewest tasks assigned (ties: lowest id after the parent's group).
int Kernel::find_idlest_cpu(const Task* p, int start_cpu) const {
  const auto& topo = m_.topo;
  std::vector<int> load(nr_cpus(), 0);
  for (const auto& t : tasks_)
    if (t->pid != 0 && t.get() != p && t->state != TaskState::Dead) load[t->cpu]++;
  auto group_load = [&](const std::vector<int>& cpus) {
    int s = 0, allowed = 0;
    for (int c : cpus)
      if (p->allowed_on(c)) {
        s += load[c];
        ++allowed;
      }
    return allowed ? s * 1000 / allowed : INT32_MAX;
  };
  std::vector<int> cands;
  for (int c = 0; c < nr_cpus(); ++c)
    if (p->allowed_on(c)) cands.push_back(c);
  if (cands.empty()) return start_cpu;
  // Levels: socket, LLC, core.
  auto pick_group = [&](auto key) {
    std::vector<int> keys;
    for (int c : cands)
      if (std::find(keys.begin(), keys.end(), key(c)) == keys.end()) keys.push_back(key(c));
    std::sort(keys.begin(), keys.end());
    int start_key = key(start_cpu);
    int best = -1, best_load = INT32_MAX;
    size_t n = keys.size();
    size_t s0 = std::find(keys.begin(), keys.end(), start_key) - keys.begin();
    if (s0 == n) s0 = 0;
    for (size_t i = 0; i < n; ++i) {
      int k = keys[(s0 + i) % n];
      std::vector<int> g;
      for (int c : cands)
        if (key(c) == k) g.push_back(c);
      int l = group_load(g);
      if (l < best_load) {
        best_load = l;
        best = k;
      }
    }
    std::vector<int> next;
    for (int c : cands)
      if (key(c) == best) next.push_back(c);
    cands = next;
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
  if (topo.sockets > 1 && local_cpus > 0 && local_load * kNumaImbalanceDiv < local_cpus) {
    std::vector<int> next;
    for (int c : cands)
      if (topo.socket_of(c) == local_socket) next.push_back(c);
    cands = next;
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
