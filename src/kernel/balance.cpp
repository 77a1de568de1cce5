// fair.c load balancing: sched_balance_newidle() (newidle_balance) with its gates, the
// blocked-load update and the per-domain walk whose cost is learned in max_newidle_lb_cost;
// sched_balance_rq() (load_balance), periodic sched_balance_domains() (rebalance_domains) from
// SCHED_SOFTIRQ; NOHZ idle balancing as the kernel runs it (nohz_balancer_kick() -> kick_ilb()
// -> nohz_csd_func() -> SCHED_SOFTIRQ -> _nohz_idle_balance() over the tickless idle CPUs, and
// nohz_newidle_balance() -> NOHZ_NEWILB_KICK -> nohz_run_idle_balance()); SIS_UTIL's
// update_idle_cpu_scan(); a PELT-like utilisation signal.
#include <algorithm>
#include <cmath>
#include <optional>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"
#include "kernel/schedstat.hpp"

namespace schedlab::kernel {

namespace {
constexpr double kPeltHalfLifeMs = 32.0;     // PELT: y^32 = 0.5 per ms period
constexpr double kCapacityScale = 1024.0;    // SCHED_CAPACITY_SCALE
constexpr int kBusyFactor = 16;              // sd->busy_factor
constexpr int64_t kDecayPeriodNs = 1000000000;  // max_newidle_lb_cost decays once a second (HZ)
constexpr int64_t kLbCostDecayNum = 253;        // ... by 253/256 (~1 %), as sched_balance_domains()
constexpr int64_t kLbCostDecayDen = 256;
constexpr int64_t kAvgIdleEwmaDiv = 8;          // update_avg(): avg += (sample - avg) / 8
constexpr int64_t kLoadAvgPeriodMs = 32;     // LOAD_AVG_PERIOD: nohz.next_blocked interval
constexpr int64_t kNoBalanceJiffies = 60;    // _nohz_idle_balance(): next_balance = now + 60*HZ
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
  rq.avg_idle += (delta - rq.avg_idle) / kAvgIdleEwmaDiv;
  if (rq.avg_idle > max) rq.avg_idle = max;
  // SIS_PROP's per-rq estimate (ttwu_do_activate() set these in the same block).
  rq.wake_stamp = k.now();
  rq.wake_avg_idle = rq.avg_idle / 2;
  rq.idle_stamp_valid = false;
}

// task_hot(): ran within sysctl_sched_migration_cost; never at the SMT level (siblings share the
// cache: SD_SHARE_CPUCAPACITY), never with a migration cost of 0. (CACHE_HOT_BUDDY, SCHED_IDLE
// tasks and core scheduling's cookie are not modeled.) A task that never ran is cold: its
// exec_start is 0 from __sched_fork(), the uptime ago.
bool task_hot(const Kernel& k, const SchedDomain& sd, const Task* p) {
  if (sd.level == SdLevel::SMT || k.m.tunables.migration_cost_ns == 0) return false;
  if (p->nr_switches_in == 0) return false;
  return (k.now() - p->exec_start).count() < k.m.tunables.migration_cost_ns;
}

// can_migrate_task() for a queued fair task: not where p may not run; a cache-hot task only once
// the domain has failed more than cache_nice_tries balances in a row (sd->nr_balance_failed,
// raised by periodic balance only: load_balance(), 58b26c4c0257, 2010). `hot` says whether p
// was hot. (No active balance, no NUMA locality: migrate_degrades_locality().)
static bool can_migrate_task(const Kernel& k, const Rq& dst, const SchedDomain& sd, const Task* p,
                             bool& hot) {
  hot = false;
  if (!p->allowed_on(dst.cpu)) return false;
  hot = task_hot(k, sd, p);
  return !hot || sd.nr_balance_failed > sd.cache_nice_tries;
}

// sched_balance_update_blocked_averages() of `rq`, run by `this_cpu`: decays the rq's PELT
// signals (the remote rq's lock and lines when another CPU does it) and clears
// rq->has_blocked_load once nothing is left to decay.
int64_t sched_balance_update_blocked_averages(Kernel& k, int this_cpu, Rq& rq) {
  int64_t c = k.cost(k.m.costs.update_blocked_averages_ns);
  if (this_cpu != rq.cpu) c += k.remote_read(this_cpu, rq.cpu);
  update_rq_util(k, rq);
  update_load_avg(k, rq, nullptr);
  rq.last_blocked_load_update_tick = k.jiffies();
  rq.has_blocked_load = rq.util_avg >= 1.0;
  return c;
}

// sched_balance_rq() (load_balance()) of `rq` at one level, run by `this_cpu`, simplified to CPU
// granularity: find the busiest runqueue in the span and pull half the difference (at least one
// task), each task as can_migrate_task() allows: a cache-hot one only after enough failed
// periodic balances, whether the balance is periodic or newly idle. Charges a remote read plus per-CPU stats work for every CPU visited and migrate_task_ns per
// task moved. Returns tasks pulled. rd->overload is refreshed at the root level
// (update_sd_lb_stats()).
int sched_balance_rq(Kernel& k, int this_cpu, Rq& rq, SchedDomain& sd, bool newly_idle,
                     int64_t& cost) {
  const int st = sd_idle_index(sd, newly_idle        ? CpuIdleType::NewlyIdle
                                   : rq.curr == rq.idle ? CpuIdleType::Idle
                                                        : CpuIdleType::NotIdle);
  rq.c.lb_count[st]++;
  int busiest = -1;
  for (int c : sd.span) {
    cost += k.remote_read(this_cpu, c) + k.m.costs.balance_per_cpu_ns;
    if (c == rq.cpu) continue;
    if (busiest < 0 || k.rq(c).nr_running > k.rq(busiest).nr_running) busiest = c;
  }
  if (&sd == &rq.sd.back()) k.rd().overload = k.rd().nr_overloaded > 0;  // root level stats
  // No imbalance is "no busiest group" then "balanced" (the model has no groups: never nobusyq).
  // out_balanced: the failure count restarts.
  if (busiest < 0) return sd.nr_balance_failed = 0, rq.c.lb_nobusyg[st]++, rq.c.lb_balanced[st]++, 0;
  Rq& b = k.rq(busiest);
  int diff = b.nr_running - rq.nr_running;
  if (b.nr_running < 2 || diff < 2)
    return sd.nr_balance_failed = 0, rq.c.lb_nobusyg[st]++, rq.c.lb_balanced[st]++, 0;
  int want = std::max(1, diff / 2);
  rq.c.lb_imbalance_task[st] += want;  // migrate_task: the model balances task counts
  // detach_tasks() under the busiest rq's lock (migrate_task_ns per task moved stands for the
  // detach and the attach), then attach_tasks() under this rq's lock.
  const int64_t at = k.cpu(this_cpu).queued_ns();
  cost += spin_lock(k, b.lock, LockClass::Rq, busiest, this_cpu, at + cost);
  int pulled = 0;
  for (size_t i = 0; i < b.cfs.size() && pulled < want && pulled < k.m.tunables.nr_migrate;) {
    Task* p = b.cfs[i];
    bool hot = false;
    if (p->sched_delayed) {  // DELAY_DEQUEUE: a blocked task is not moved (left out: its dequeue)
      ++i;
      continue;
    }
    if (!can_migrate_task(k, rq, sd, p, hot)) {
      rq.c.nr_failed_migrations_hot += hot;
      ++i;
      continue;
    }
    // detach_task() / attach_task(): keep the lag across runqueues (EEVDF).
    detach_task_fair(k, b, p);
    b.cfs.erase(b.cfs.begin() + i);
    sub_nr_running(k, b, 1);
    pelt_dequeue(k, b, p);
    p->on_rq = false;
    set_task_cpu(k, p, rq.cpu);
    activate_task(k, rq, p);
    cost += k.m.costs.migrate_task_ns;
    wakeup_preempt(k, this_cpu, rq, p, cost);  // attach_task()
    ++pulled;
    rq.c.lb_hot_gained[st] += hot;
  }
  if (pulled > 0) {
    rq.c.lb_gained[st] += pulled;
    sd.nr_balance_failed = 0;
  } else {
    rq.c.lb_failed[st]++;
    if (!newly_idle) sd.nr_balance_failed++;  // newidle balance never raises it
  }
  spin_unlock(k, b.lock, at + cost);
  if (pulled > 0) {
    cost += spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, this_cpu, at + cost);
    spin_unlock(k, rq.lock, at + cost);
  }
  return pulled;
}

// update_newidle_cost(): track the max cost of a level; otherwise decay it by ~1 % once it has
// not been raised for a second (v5.17+). (NI_MIGRATION_GATE, the rules before v5.17, keeps only
// the max here, and the periodic balance decays it once a second whatever the raises.)
static void update_newidle_cost(Kernel& k, SchedDomain& sd, int64_t cost) {
  if (cost > sd.max_newidle_lb_cost) {
    sd.max_newidle_lb_cost = cost;
    sd.last_decay_max_lb_cost = k.now();
  } else if ((k.now() - sd.last_decay_max_lb_cost).count() > kDecayPeriodNs) {
    sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * kLbCostDecayNum / kLbCostDecayDen;
    sd.last_decay_max_lb_cost = k.now();
  }
}

// sched_balance_newidle() (newidle_balance()), IRQs off all along (the rq lock is dropped for the
// walk, interrupts stay disabled): skipped when a wakeup is pending; rq->idle_stamp set; the
// gate: root domain not overloaded, or avg_idle below the lowest domain's max_newidle_lb_cost
// (Hook::newidle_balance; NI_MIGRATION_GATE: avg_idle below sysctl_sched_migration_cost); past it
// update_blocked_averages(), then each level while avg_idle covers the cost spent so far plus the
// level's max cost, stopping once a task was pulled or one is waiting (should_we_balance()).
// The blocked-load update counts in the first level's cost (v5.17+). Without a pull,
// nohz_newidle_balance(). Its work is charged as steps of the CPU's chain.
int sched_balance_newidle(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  rq.c.newidle_balance_calls++;
  if (rq.ttwu_pending) {
    rq.c.newidle_balance_skipped++;
    return 0;
  }
  rq.idle_stamp = k.now();
  rq.idle_stamp_valid = true;
  if (rq.sd.empty()) {
    rq.c.newidle_balance_skipped++;
    return 0;
  }
  bool balance = k.rd().overload && rq.avg_idle >= rq.sd.front().max_newidle_lb_cost;
  for (Change* c : k.hooks(Hook::newidle_balance))
    balance = decided(c->on_newidle_balance(rq, balance));
  int pulled = 0;
  if (!balance) {
    rq.c.newidle_balance_skipped++;
  } else {
    rq.c.newidle_balance_walks++;
    spin_unlock(k, rq.lock, cpu.queued_ns());  // raw_spin_rq_unlock(this_rq) for the walk
    int64_t uba = sched_balance_update_blocked_averages(k, rq.cpu, rq);
    cpu.push_step(KernelPath::NewidleBalance, uba);
    int64_t blocked = uba;  // counted in the first level's cost
    int64_t curr_cost = 0;
    for (auto& sd : rq.sd) {
      bool go = rq.avg_idle >= curr_cost + sd.max_newidle_lb_cost;
      if (!go) break;
      int64_t domain_cost = 0;
      rq.c.newidle_balance_lb_count++;
      pulled = sched_balance_rq(k, rq.cpu, rq, sd, true, domain_cost);
      domain_cost = k.cost(domain_cost);
      cpu.push_step(KernelPath::NewidleBalance, domain_cost);
      domain_cost += blocked;
      std::optional<int64_t> counted;  // a change updated sd's cost itself: what counts
      for (Change* c : k.hooks(Hook::update_newidle_cost)) {
        if (counted) break;
        counted = decided(c->on_update_newidle_cost(rq, sd, blocked, domain_cost, counted));
      }
      if (counted)
        domain_cost = *counted;
      else
        update_newidle_cost(k, sd, domain_cost);
      blocked = 0;
      curr_cost += domain_cost;
      if (pulled > 0 || rq.nr_running > 0 || rq.ttwu_pending) break;
    }
    rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, curr_cost);
    // raw_spin_rq_lock(this_rq) again; held to the end of __schedule().
    int64_t wait = spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, rq.cpu, cpu.queued_ns());
    if (wait > 0) cpu.push_step(KernelPath::NewidleBalance, wait);
  }
  if (pulled > 0) {
    rq.c.newidle_balance_pulled += pulled;
    rq.idle_stamp_valid = false;
  } else {
    nohz_newidle_balance(k, rq);
  }
  return pulled;
}

// nohz_newidle_balance(): a CPU going idle for long enough, while idle CPUs' blocked load is due
// for an update, flags itself to do it at the top of do_idle() instead of kicking another CPU.
void nohz_newidle_balance(Kernel& k, Rq& rq) {
  if (rq.avg_idle < k.m.tunables.migration_cost_ns) return;
  if (!k.nohz().has_blocked || k.jiffies() < k.nohz().next_blocked) return;
  rq.nohz_flags |= NOHZ_NEWILB_KICK;
  rq.c.nohz_newilb_kick++;
}

// update_idle_cpu_scan() (SIS_UTIL, Chen Yu, v6.0): nr_idle_scan falls quadratically with the
// LLC's utilisation and reaches 0 at about 85 % (1/imbalance_pct).
void update_idle_cpu_scan(Kernel& k, int llc) {
  SchedDomainShared& sds = k.llc_shared(llc);
  double sum = 0;
  for (int c : sds.cpus) {
    update_rq_util(k, k.rq(c));
    sum += std::min(k.rq(c).util_avg, kCapacityScale);
  }
  double w = static_cast<double>(sds.cpus.size());
  int pct = kSdImbalancePct;  // if the LLC has no domain of its own
  for (const auto& sd : k.rq(sds.cpus.front()).sd)
    if (sd.is_llc) pct = sd.imbalance_pct;
  double x = sum / w;
  double t = std::min(kCapacityScale, x * x * pct * pct / (10000.0 * kCapacityScale));
  double y = kCapacityScale - t;
  sds.nr_idle_scan = static_cast<int>(y * w / kCapacityScale);
}

// sched_balance_domains() (rebalance_domains()) of `rq`, run by `this_cpu` (its own CPU from
// SCHED_SOFTIRQ, or the ILB CPU on its behalf): periodic balance of each level whose interval
// has expired (x16 when the CPU is busy); doubles the interval while balanced, resets it after a
// pull; SIS_UTIL's hint is refreshed at the LLC level; max_newidle_lb_cost decays ~1 % per
// second.
void sched_balance_domains(Kernel& k, int this_cpu, Rq& rq, int64_t& cost) {
  bool idle = rq.curr == rq.idle;
  Time next = Time::max();
  bool decayed = false;
  int64_t sum_cost = 0;
  for (auto& sd : rq.sd) {
    if ((k.now() - sd.last_decay_max_lb_cost).count() > kDecayPeriodNs) {
      sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * kLbCostDecayNum / kLbCostDecayDen;
      sd.last_decay_max_lb_cost = k.now();
      decayed = true;
    }
    sum_cost += sd.max_newidle_lb_cost;
    int64_t interval_ms = sd.balance_interval_ms * (idle ? 1 : kBusyFactor);
    Time due = sd.last_balance + Time::ms(interval_ms);
    if (k.now() >= due) {
      rq.c.load_balance_calls++;
      int n = sched_balance_rq(k, this_cpu, rq, sd, false, cost);
      rq.c.load_balance_pulled += n;
      if (n > 0)
        sd.balance_interval_ms = sd.min_interval_ms;
      else
        sd.balance_interval_ms = std::min(sd.balance_interval_ms * 2, sd.max_interval_ms);
      if (sd.is_llc && k.f.on(Feature::SIS_UTIL)) {
        SchedDomainShared& sds = k.llc_shared(rq.llc);
        const int before = sds.nr_idle_scan;
        update_idle_cpu_scan(k, rq.llc);
        if (!idle) sds.nr_idle_scan_busy_refreshed = true;
        if (sds.nr_idle_scan != before) line_write(sds.line, this_cpu);  // WRITE_ONCE on a change
      }
      sd.last_balance = k.now();
      due = sd.last_balance + Time::ms(sd.balance_interval_ms * (idle ? 1 : kBusyFactor));
    }
    next = std::min(next, due);
  }
  if (decayed) rq.max_idle_balance_cost = std::max(k.m.tunables.migration_cost_ns, sum_cost);
  rq.next_balance = next;
}

// nohz_idle_balance(): the ILB's pending flags (from nohz_csd_func()) on a CPU that was idle
// when kicked: balance on behalf of the NOHZ idle CPUs instead of for itself.
static bool nohz_idle_balance(Kernel& k, Rq& rq, int64_t& cost) {
  const uint8_t flags = rq.nohz_idle_balance;
  if (!flags) return false;
  rq.nohz_idle_balance = 0;
  if (!rq.idle_balance) return false;
  cost += _nohz_idle_balance(k, rq, flags);
  return true;
}

// sched_balance_softirq() (run_rebalance_domains()): SCHED_SOFTIRQ.
int64_t sched_balance_softirq(Kernel& k, Rq& rq) {
  int64_t c = 0;
  if (nohz_idle_balance(k, rq, c)) return c;
  c += sched_balance_update_blocked_averages(k, rq.cpu, rq);
  sched_balance_domains(k, rq.cpu, rq, c);
  return c;
}

// sched_balance_trigger() from the tick (interrupt context): SCHED_SOFTIRQ when a periodic
// balance is due; the NOHZ idle-balance kick.
void sched_balance_trigger(Kernel& k, Rq& rq, int64_t& cost) {
  if (rq.sd.empty()) return;
  if (k.now() >= rq.next_balance) cost += raise_softirq_irqoff(k, rq.cpu, SCHED_SOFTIRQ);
  nohz_balancer_kick(k, rq, cost);
}

// nohz_balance_enter_idle() from tick_nohz_idle_stop_tick(): the CPU joins nohz.idle_cpus_mask
// (once per tickless period; it leaves lazily at its first busy tick) and leaves its LLC's
// nr_busy_cpus; every idle entry marks blocked load to decay.
void nohz_balance_enter_idle(Kernel& k, Rq& rq) {
  rq.has_blocked_load = true;
  if (!rq.nohz_tick_stopped && !rq.sd.empty()) {
    rq.nohz_tick_stopped = true;
    k.nohz().idle_cpus_mask[rq.cpu >> 6] |= 1ULL << (rq.cpu & 63);
    k.nohz().nr_cpus++;
    if (!rq.sd_nohz_idle) {  // set_cpu_sd_state_idle()
      rq.sd_nohz_idle = true;
      k.llc_shared(rq.llc).nr_busy_cpus--;
      line_write(k.llc_shared(rq.llc).line, rq.cpu);
    }
    k.nohz().needs_update = true;
  }
  k.nohz().has_blocked = true;
}

// nohz_balance_exit_idle() at the first busy tick.
void nohz_balance_exit_idle(Kernel& k, Rq& rq) {
  if (!rq.nohz_tick_stopped) return;
  rq.nohz_tick_stopped = false;
  k.nohz().idle_cpus_mask[rq.cpu >> 6] &= ~(1ULL << (rq.cpu & 63));
  k.nohz().nr_cpus--;
  if (rq.sd_nohz_idle) {  // set_cpu_sd_state_busy()
    rq.sd_nohz_idle = false;
    k.llc_shared(rq.llc).nr_busy_cpus++;
    line_write(k.llc_shared(rq.llc).line, rq.cpu);
  }
}

// Calls fn(cpu) for each CPU of nohz.idle_cpus_mask, from `start` with wrap-around
// (for_each_cpu_wrap()); fn returns false to stop.
template <typename Fn>
static void for_each_nohz_idle_cpu_wrap(const Kernel& k, int start, Fn fn) {
  const int n = k.nr_cpus();
  for (int pass = 0; pass < 2; ++pass) {
    const int lo = pass == 0 ? start : 0, hi = pass == 0 ? n : start;
    for (int w = lo >> 6; (w << 6) < hi; ++w) {
      uint64_t bits = k.nohz().idle_cpus_mask[w];
      if ((w << 6) < lo) bits &= ~0ULL << (lo & 63);
      for (; bits; bits &= bits - 1) {
        int c = (w << 6) + __builtin_ctzll(bits);
        if (c >= hi) break;
        if (!fn(c)) return;
      }
    }
  }
}

// find_new_ilb(): the first idle CPU of nohz.idle_cpus_mask other than this one.
static int find_new_ilb(Kernel& k, int this_cpu, int64_t& cost) {
  int ilb = -1;
  for_each_nohz_idle_cpu_wrap(k, 0, [&](int c) {
    if (c == this_cpu) return true;
    cost += k.remote_read(this_cpu, c);
    if (!idle_cpu(k, c)) return true;
    ilb = c;
    return false;
  });
  return ilb;
}

// kick_ilb(): pick the idle load balancer, OR the flags into its nohz_flags and, unless a kick
// is already pending there, smp_call_function_single_async() its nohz_csd.
static void kick_ilb(Kernel& k, Rq& rq, uint8_t flags, int64_t& cost) {
  if (flags & NOHZ_BALANCE_KICK) k.nohz().next_balance = k.jiffies() + 1;
  int ilb = find_new_ilb(k, rq.cpu, cost);
  if (ilb < 0) return;
  Rq& t = k.rq(ilb);
  if ((t.nohz_flags & flags) == flags) return;
  const uint8_t old = t.nohz_flags;
  t.nohz_flags |= flags;
  cost += k.remote_read(rq.cpu, ilb);  // atomic_fetch_or() on its nohz_flags
  if (old & NOHZ_KICK_MASK) return;
  rq.c.nohz_ilb_kick++;
  Csd csd{.src_cpu = rq.cpu, .func = CsdFunc::NohzIdleBalance};
  cost += smp_call_function_single(k, rq, ilb, csd);
}

// nohz_balancer_kick() from a busy CPU's tick: leave the NOHZ idle mask lazily; kick the ILB for
// blocked-load stats when due, and for a full balance when this CPU has 2+ tasks or its LLC has
// more than one busy CPU (no capacity or asym-packing cases: the model has neither).
void nohz_balancer_kick(Kernel& k, Rq& rq, int64_t& cost) {
  if (rq.idle_balance) return;
  nohz_balance_exit_idle(k, rq);
  if (k.nohz().nr_cpus == 0) return;
  const int64_t now = k.jiffies();
  uint8_t flags = 0;
  if (k.nohz().has_blocked && now > k.nohz().next_blocked) flags = NOHZ_STATS_KICK;
  if (now >= k.nohz().next_balance) {
    if (rq.nr_running >= 2 || k.llc_shared(rq.llc).nr_busy_cpus > 1)
      flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
  }
  if (k.nohz().needs_update) flags |= NOHZ_NEXT_KICK;
  if (flags) kick_ilb(k, rq, flags, cost);
}

// update_nohz_stats(): refresh an idle CPU's blocked load (at most once per jiffy); true while
// it still has some.
static bool update_nohz_stats(Kernel& k, int this_cpu, Rq& rq, int64_t& cost) {
  if (!rq.has_blocked_load) return false;
  if (!rq.nohz_tick_stopped) return false;
  if (k.jiffies() <= rq.last_blocked_load_update_tick) return true;
  // The idle CPU's rq lock (rq_lock_irqsave()) for the update.
  const int64_t at = k.cpu(this_cpu).queued_ns();
  cost += spin_lock(k, rq.lock, LockClass::Rq, rq.cpu, this_cpu, at + cost);
  cost += sched_balance_update_blocked_averages(k, this_cpu, rq);
  spin_unlock(k, rq.lock, at + cost);
  return rq.has_blocked_load;
}

// _nohz_idle_balance(): on the ILB CPU (or from nohz_run_idle_balance()), for each NOHZ idle CPU
// from this_cpu + 1 around to this_cpu itself: refresh its blocked load (NOHZ_STATS_KICK) and,
// when its balance is due, run sched_balance_domains() on its behalf (NOHZ_BALANCE_KICK). It
// stops as soon as this CPU looks busy: need_resched() (which a polling kick has set), or with
// ILB_NO_NEED_RESCHED only when this CPU is also no longer idle_cpu().
static void nohz_idle_balance_begin(Kernel& k, Rq& this_rq, uint8_t flags, NohzPass& p) {
  p = NohzPass{.flags = flags, .start_jiffies = k.jiffies()};
  this_rq.c.nohz_idle_balance++;
  if (flags & NOHZ_STATS_KICK) k.nohz().has_blocked = false;
  if (flags & NOHZ_NEXT_KICK) k.nohz().needs_update = false;
}

// One turn of the loop, for NOHZ idle CPU c; false when the pass aborts.
static bool nohz_idle_balance_cpu(Kernel& k, Rq& this_rq, NohzPass& p, int c, int64_t& cost) {
  const int this_cpu = this_rq.cpu;
  const uint8_t flags = p.flags;
  cost += k.remote_read(this_cpu, c);
  if (!idle_cpu(k, c)) return true;
  bool busy = this_rq.need_resched;
  for (Change* ch : k.hooks(Hook::nohz_idle_balance_busy)) {
    HookResult<bool> r = ch->on_nohz_idle_balance_busy(this_rq, busy);
    busy = r.value;
    cost += r.cost_ns;
  }
  if (busy) {
    if (flags & NOHZ_STATS_KICK) p.has_blocked = true;
    if (flags & NOHZ_NEXT_KICK) k.nohz().needs_update = true;
    p.aborted = true;
    return false;
  }
  Rq& rq = k.rq(c);
  if (flags & NOHZ_STATS_KICK) p.has_blocked |= update_nohz_stats(k, this_cpu, rq, cost);
  if (k.now() >= rq.next_balance) {
    const int64_t at = k.cpu(this_cpu).queued_ns();
    cost += spin_lock(k, rq.lock, LockClass::Rq, c, this_cpu, at + cost);
    cost += k.remote_read(this_cpu, c);  // rq_lock_irqsave(); update_rq_clock()
    spin_unlock(k, rq.lock, at + cost);
    if (flags & NOHZ_BALANCE_KICK) sched_balance_domains(k, this_cpu, rq, cost);
  }
  if (rq.next_balance < p.next_balance) {
    p.next_balance = rq.next_balance;
    p.update_next = true;
  }
  return true;
}

static void nohz_idle_balance_end(Kernel& k, Rq& this_rq, const NohzPass& p) {
  if (p.aborted) {
    this_rq.c.nohz_idle_balance_abort++;
  } else {
    if (p.update_next) {
      int64_t j = p.next_balance.count() / k.tick_period_ns();
      k.nohz().next_balance =
          std::min(j, p.start_jiffies + kNoBalanceJiffies * k.m.tunables.hz);
    }
    if (p.flags & NOHZ_STATS_KICK)
      k.nohz().next_blocked = p.start_jiffies + kLoadAvgPeriodMs * k.m.tunables.hz / 1000;
  }
  if (p.has_blocked) k.nohz().has_blocked = true;
}

// The whole pass at once, in SCHED_SOFTIRQ on the ILB CPU (its need_resched() test sees only
// what was set before the softirq ran).
int64_t _nohz_idle_balance(Kernel& k, Rq& this_rq, uint8_t flags) {
  int64_t cost = 0;
  NohzPass p;
  nohz_idle_balance_begin(k, this_rq, flags, p);
  for_each_nohz_idle_cpu_wrap(k, (this_rq.cpu + 1) % k.nr_cpus(),
                              [&](int c) { return nohz_idle_balance_cpu(k, this_rq, p, c, cost); });
  nohz_idle_balance_end(k, this_rq, p);
  return k.cost(cost);
}

// nohz_run_idle_balance() at the top of do_idle(): consume NOHZ_NEWILB_KICK; unless an ILB kick
// is also pending (its SCHED_SOFTIRQ will do the same) or need_resched, update the blocked load
// of the NOHZ idle CPUs now, with interrupts on. The kernel's loop tests need_resched() at each
// CPU, so a wake-up that lands during the pass (its IPI taken with interrupts on, or a remote
// enqueue) ends it at the next CPU: the pass runs one NOHZ idle CPU a step.
bool nohz_run_idle_balance(Kernel& k, Rq& rq) {
  if (!(rq.nohz_flags & NOHZ_NEWILB_KICK)) return false;
  const uint8_t flags = rq.nohz_flags;
  rq.nohz_flags &= static_cast<uint8_t>(~NOHZ_NEWILB_KICK);
  if (flags != NOHZ_NEWILB_KICK || rq.need_resched) return false;
  nohz_idle_balance_begin(k, rq, NOHZ_STATS_KICK, rq.nohz_run);
  rq.nohz_run_pos = 0;
  return true;
}

// The next turns of the pass up to one that costs time (a step with interrupts on, then back
// here), or its end: then do_idle() goes on (set polling, tick_nohz_idle_enter()).
void nohz_run_idle_balance_next(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  if (cpu.irqs_pending()) {
    cpu.set_mode(Mode::Kernel);
    cpu.process_pending_irqs(Resume::NohzRunIdleBalance);
    return;
  }
  const int n = k.nr_cpus();
  int64_t cost = 0;
  bool more = true;
  while (more && rq.nohz_run_pos < n) {
    const int c = (rq.cpu + 1 + rq.nohz_run_pos) % n;
    ++rq.nohz_run_pos;
    if (!k.nohz().test(c)) continue;
    more = nohz_idle_balance_cpu(k, rq, rq.nohz_run, c, cost);
    if (more && cost > 0) {
      cpu.push_step(KernelStep::irqs_enabled(KernelPath::NohzIdleBalance, k.cost(cost)));
      cpu.run_steps(Resume::NohzRunIdleBalance);
      return;
    }
  }
  nohz_idle_balance_end(k, rq, rq.nohz_run);
  rq.nohz_run_pos = -1;
  if (cost > 0) {
    cpu.push_step(KernelStep::irqs_enabled(KernelPath::NohzIdleBalance, k.cost(cost)));
    cpu.run_steps(Resume::DoIdlePolling);
    return;
  }
  do_idle_polling(k, rq);
}

// nohz_csd_func() on the kicked CPU (from the call-function IPI, or from do_idle()'s flush after
// a polling kick): take the kick flags; if the CPU is idle raise SCHED_SOFTIRQ for
// _nohz_idle_balance(). Before v6.13 it gave up when need_resched() was set, which a polling kick
// always sets (ILB_NO_NEED_RESCHED drops that test).
int64_t nohz_csd_func(Kernel& k, int cpu) {
  Rq& rq = k.rq(cpu);
  rq.c.nohz_csd_run++;
  const uint8_t flags = rq.nohz_flags & (NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
  rq.nohz_flags &= static_cast<uint8_t>(~(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK));
  rq.idle_balance = idle_cpu(k, cpu);
  bool bail = rq.need_resched;
  if (rq.idle_balance)
    for (Change* c : k.hooks(Hook::nohz_csd_func)) bail = decided(c->on_nohz_csd_func(rq, bail));
  if (rq.idle_balance && !bail) {
    rq.nohz_idle_balance = flags;
    return raise_softirq_irqoff(k, cpu, SCHED_SOFTIRQ);
  }
  rq.c.nohz_ilb_bail++;
  return 0;
}

}  // namespace schedlab::kernel
