// fair.c load balancing: sched_balance_newidle() (newidle_balance) with its avg_idle gating
// and per-domain cost, sched_balance_rq() (load_balance), periodic sched_balance_domains()
// (rebalance_domains), the nohz idle-balancer kick, SIS_UTIL's update_idle_cpu_scan(), and a
// PELT-like utilisation signal.
#include <algorithm>
#include <cmath>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
constexpr double kPeltHalfLifeMs = 32.0;     // PELT: y^32 = 0.5 per ms period
constexpr double kCapacityScale = 1024.0;    // SCHED_CAPACITY_SCALE
constexpr int kBusyFactor = 16;              // sd->busy_factor
constexpr int64_t kDecayPeriodNs = 1000000000;  // max_newidle_lb_cost decays once a second
}  // namespace

void update_rq_util(Kernel& k, Rq& rq) {
  Time now = k.now();
  double dt_ms = (now - rq.util_last).count() / 1e6;
  if (dt_ms > 0) {
    double decay = std::exp2(-dt_ms / kPeltHalfLifeMs);
    rq.util_avg = rq.util_avg * decay + (rq.util_busy ? kCapacityScale * (1 - decay) : 0.0);
  }
  rq.util_last = now;
  rq.util_busy = rq.curr != rq.idle;
}

// ttwu_do_activate(): avg_idle is an EWMA (1/8) of idle periods, capped at twice
// max_idle_balance_cost.
void update_avg_idle_on_wakeup(Kernel& k, Rq& rq) {
  if (!rq.idle_stamp_valid) return;
  int64_t delta = (k.now() - rq.idle_stamp).count();
  int64_t max = 2 * rq.max_idle_balance_cost;
  rq.avg_idle += (delta - rq.avg_idle) / 8;
  if (rq.avg_idle > max) rq.avg_idle = max;
  // SIS_PROP's per-rq estimate (ttwu_do_activate() set these in the same block).
  rq.wake_stamp = k.now();
  rq.wake_avg_idle = rq.avg_idle / 2;
  rq.idle_stamp_valid = false;
}

// task_hot(): ran within sysctl_sched_migration_cost.
bool task_hot(const Kernel& k, const Task* p) {
  return (k.now() - p->exec_start).count() < k.m.tunables.migration_cost_ns;
}

// sched_balance_rq() (load_balance()) at one level, simplified to CPU granularity: find the
// busiest runqueue in the span and pull half the difference (at least one task when newly
// idle), skipping cache-hot tasks unless the pull is otherwise impossible. Charges a remote read
// plus per-CPU stats work for every CPU visited and migrate_task_ns per task moved. Returns tasks
// pulled. rd->overload is refreshed at the root level (update_sd_lb_stats()).
int sched_balance_rq(Kernel& k, Rq& rq, SchedDomain& sd, bool newly_idle, int64_t& cost) {
  int busiest = -1;
  for (int c : sd.span) {
    cost += k.remote_read(rq.cpu, c) + k.m.costs.balance_per_cpu_ns;
    if (c == rq.cpu) continue;
    if (busiest < 0 || k.rqs[c].nr_running > k.rqs[busiest].nr_running) busiest = c;
  }
  if (&sd == &rq.sd.back()) k.rd.overload = k.rd.nr_overloaded > 0;  // root level stats
  if (busiest < 0) return 0;
  Rq& b = k.rqs[busiest];
  int diff = b.nr_running - rq.nr_running;
  if (b.nr_running < 2 || diff < 2) return 0;
  int want = std::max(1, diff / 2);
  int pulled = 0;
  for (int pass = 0; pass < 2 && pulled < want; ++pass) {
    for (size_t i = 0; i < b.cfs.size() && pulled < want && pulled < k.m.tunables.nr_migrate;) {
      Task* p = b.cfs[i];
      if (!p->allowed_on(rq.cpu) || (pass == 0 && task_hot(k, p))) {
        ++i;
        continue;
      }
      // detach_task() / attach_task(): keep the lag across runqueues.
      int64_t V = avg_vruntime(b);
      p->vlag = V - p->vruntime;
      b.cfs.erase(b.cfs.begin() + i);
      sub_nr_running(k, b, 1);
      p->on_rq = false;
      set_task_cpu(k, p, rq.cpu);
      activate_task(k, rq, p);
      wakeup_preempt(k, rq.cpu, rq, p, 0);  // attach_task()
      cost += k.m.costs.migrate_task_ns;
      ++pulled;
    }
    if (!newly_idle) break;  // periodic balance respects cache hotness
  }
  return pulled;
}

// sched_balance_newidle() (newidle_balance()): skipped when a wakeup is pending, when no
// runqueue is overloaded, or when avg_idle is below the lowest domain's max_newidle_lb_cost;
// otherwise balance level by level while avg_idle covers the cost spent so far plus the next
// level's cost. Its work is one step of the CPU's chain.
int sched_balance_newidle(Kernel& k, Rq& rq) {
  rq.c.newidle_balance_calls++;
  if (rq.ttwu_pending || rq.sd.empty()) {
    rq.c.newidle_balance_skipped++;
    return 0;
  }
  rq.idle_stamp = k.now();
  rq.idle_stamp_valid = true;
  bool balance = k.rd.overload && rq.avg_idle >= rq.sd.front().max_newidle_lb_cost;
  for (Change* c : k.hooks(Hook::newidle_balance)) c->on_newidle_balance(rq, balance);
  if (!balance) {
    rq.c.newidle_balance_skipped++;
    return 0;
  }
  int64_t base = k.cost(k.m.costs.newidle_balance_base_ns);
  int64_t curr_cost = 0;
  int n = 0;
  for (auto& sd : rq.sd) {
    bool go = rq.avg_idle >= curr_cost + sd.max_newidle_lb_cost;
    for (Change* c : k.hooks(Hook::newidle_balance_domain))
      c->on_newidle_balance_domain(rq, sd, curr_cost, go);
    if (!go) break;
    int64_t domain_cost = 0;
    n = sched_balance_rq(k, rq, sd, true, domain_cost);
    domain_cost = k.cost(domain_cost);
    if (domain_cost > sd.max_newidle_lb_cost) {
      sd.max_newidle_lb_cost = domain_cost;
      sd.last_decay_max_lb_cost = k.now();
    }
    curr_cost += domain_cost;
    if (n > 0 || rq.nr_running > 0 || rq.ttwu_pending) break;
  }
  rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, curr_cost);
  if (n > 0) {
    rq.c.newidle_balance_pulled += n;
    rq.idle_stamp_valid = false;
  }
  k.cpus[rq.cpu].push_step(KernelPath::NewidleBalance, base + curr_cost);
  return n;
}

// update_idle_cpu_scan() (SIS_UTIL, Chen Yu, v6.0): nr_idle_scan falls quadratically with the
// LLC's utilisation and reaches 0 at about 85 % (1/imbalance_pct).
void update_idle_cpu_scan(Kernel& k, int llc) {
  SchedDomainShared& sds = k.llcs[llc];
  double sum = 0;
  for (int c : sds.cpus) {
    update_rq_util(k, k.rqs[c]);
    sum += std::min(k.rqs[c].util_avg, kCapacityScale);
  }
  double w = static_cast<double>(sds.cpus.size());
  int pct = 117;  // sd_init()'s imbalance_pct, if the LLC has no domain of its own
  for (const auto& sd : k.rqs[sds.cpus.front()].sd)
    if (sd.is_llc) pct = sd.imbalance_pct;
  double x = sum / w;
  double t = std::min(kCapacityScale, x * x * pct * pct / (10000.0 * kCapacityScale));
  double y = kCapacityScale - t;
  sds.nr_idle_scan = static_cast<int>(y * w / kCapacityScale);
}

// sched_balance_domains() (rebalance_domains()): periodic balance of each level whose interval
// has expired (x16 when the CPU is busy); doubles the interval while balanced, resets it after a
// pull; SIS_UTIL's hint is refreshed at the LLC level; max_newidle_lb_cost decays ~1 % per
// second.
void sched_balance_domains(Kernel& k, Rq& rq, int64_t& cost) {
  bool idle = rq.curr == rq.idle;
  Time next = Time::max();
  bool decayed = false;
  int64_t sum_cost = 0;
  for (auto& sd : rq.sd) {
    if ((k.now() - sd.last_decay_max_lb_cost).count() > kDecayPeriodNs) {
      sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
      sd.last_decay_max_lb_cost = k.now();
      decayed = true;
    }
    sum_cost += sd.max_newidle_lb_cost;
    int64_t interval_ms = sd.balance_interval_ms * (idle ? 1 : kBusyFactor);
    Time due = sd.last_balance + Time::ms(interval_ms);
    if (k.now() >= due) {
      rq.c.load_balance_calls++;
      int n = sched_balance_rq(k, rq, sd, false, cost);
      rq.c.load_balance_pulled += n;
      if (n > 0)
        sd.balance_interval_ms = sd.min_interval_ms;
      else
        sd.balance_interval_ms = std::min(sd.balance_interval_ms * 2, sd.max_interval_ms);
      if (sd.is_llc && k.f.on(Feature::SIS_UTIL)) update_idle_cpu_scan(k, rq.llc);
      sd.last_balance = k.now();
      due = sd.last_balance + Time::ms(sd.balance_interval_ms * (idle ? 1 : kBusyFactor));
    }
    next = std::min(next, due);
  }
  if (decayed) rq.max_idle_balance_cost = std::max(k.m.tunables.migration_cost_ns, sum_cost);
  rq.next_balance = next;
}

// nohz_balancer_kick(), simplified: a busy CPU with more than one runnable task kicks the first
// tickless idle CPU after it (at most once per jiffy; found in nohz.idle_cpus_mask), which then
// runs its own periodic balance as if idle (nohz_csd_func()). Left out: balancing on behalf of
// every idle CPU, blocked-load updates.
void nohz_balancer_kick(Kernel& k, Rq& rq, int64_t& cost) {
  if (rq.nr_running < 2 || k.now() < k.nohz_next_balance) return;
  const int n = k.nr_cpus();
  // The first CPU in [lo, hi) whose tick is stopped and that is idle.
  auto find = [&k](int lo, int hi) {
    for (int w = lo >> 6; (w << 6) < hi; ++w) {
      uint64_t bits = k.nohz_tick_stopped[w];
      if ((w << 6) < lo) bits &= ~0ULL << (lo & 63);
      for (; bits; bits &= bits - 1) {
        int c = (w << 6) + __builtin_ctzll(bits);
        if (c >= hi) return -1;
        if (idle_cpu(k, c)) return c;
      }
    }
    return -1;
  };
  int ilb = find(rq.cpu + 1, n);
  if (ilb < 0) ilb = find(0, rq.cpu);
  if (ilb < 0) return;
  k.nohz_next_balance = k.now() + Time::ns(k.tick_ns());
  Csd csd{rq.cpu, 0, false, nullptr, CsdFunc::NohzIdleBalance};
  cost += smp_call_function_single(k, rq, ilb, csd);
}

// nohz_csd_func() on the kicked CPU: balance every level now.
int64_t nohz_csd_func(Kernel& k, int cpu) {
  int64_t lb = 0;
  Rq& r = k.rqs[cpu];
  for (auto& sd : r.sd) sd.last_balance = Time();  // due now
  sched_balance_domains(k, r, lb);
  return lb;
}

}  // namespace schedlab::kernel
