// fair.c load balancing: newidle_balance() (sched_balance_newidle) with its avg_idle gating and
// per-domain cost, periodic rebalance_domains(), SIS_UTIL's update_idle_cpu_scan(), and a
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

void Kernel::update_util(Rq& rq) {
  Time now = ev_.now();
  double dt_ms = (now - rq.util_last).count() / 1e6;
  if (dt_ms > 0) {
    double decay = std::exp2(-dt_ms / kPeltHalfLifeMs);
    rq.util_avg = rq.util_avg * decay + (rq.util_busy ? kCapacityScale * (1 - decay) : 0.0);
  }
  rq.util_last = now;
  rq.util_busy = rq.curr != rq.idle;
}

// rd->overload: set when a runqueue reaches two tasks, cleared only when a balance at the root
// domain level finds no overloaded runqueue (update_sd_lb_stats()).
bool Kernel::root_domain_overloaded() const { return rd_overload_; }

// ttwu_do_activate(): avg_idle is an EWMA (1/8) of idle periods, capped at twice
// max_idle_balance_cost.
void Kernel::update_avg_idle_on_wakeup(Rq& rq) {
  if (!rq.idle_stamp_valid) return;
  int64_t delta = (ev_.now() - rq.idle_stamp).count();
  int64_t max = 2 * rq.max_idle_balance_cost;
  rq.avg_idle += (delta - rq.avg_idle) / 8;
  if (rq.avg_idle > max) rq.avg_idle = max;
  // SIS_PROP's per-rq estimate (ttwu_do_activate() set these in the same block).
  rq.wake_stamp = ev_.now();
  rq.wake_avg_idle = rq.avg_idle / 2;
  rq.idle_stamp_valid = false;
}

// task_hot(): ran within sysctl_sched_migration_cost.
bool Kernel::task_hot(const Task* p) const {
  return (ev_.now() - p->exec_start).count() < m_.tunables.migration_cost_ns;
}

// load_balance() at one level, simplified to CPU granularity: find the busiest runqueue in the
// span and pull half the difference (at least one task when newly idle), skipping cache-hot
// tasks unless the pull is otherwise impossible. Charges a remote read plus per-CPU stats work
// for every CPU visited and migrate_task_ns per task moved. Returns tasks pulled.
int Kernel::load_balance(Rq& rq, SchedDomain& sd, bool newly_idle, int64_t& cost) {
  int busiest = -1;
  for (int c : sd.span) {
    cost += m_.remote_read_ns(m_.topo.distance(rq.cpu, c)) + m_.costs.balance_per_cpu_ns;
    if (c == rq.cpu) continue;
    if (busiest < 0 || rqs_[c].nr_running > rqs_[busiest].nr_running) busiest = c;
  }
  if (&sd == &rq.sd.back()) rd_overload_ = nr_overloaded_ > 0;  // root level stats
  if (busiest < 0) return 0;
  Rq& b = rqs_[busiest];
  int diff = b.nr_running - rq.nr_running;
  if (b.nr_running < 2 || diff < 2) return 0;
  int want = std::max(1, diff / 2);
  int pulled = 0;
  for (int pass = 0; pass < 2 && pulled < want; ++pass) {
    for (size_t i = 0; i < b.cfs.size() && pulled < want && pulled < m_.tunables.nr_migrate;) {
      Task* p = b.cfs[i];
      if (!p->allowed_on(rq.cpu) || (pass == 0 && task_hot(p))) {
        ++i;
        continue;
      }
      // detach_task() / attach_task(): keep the lag across runqueues.
      int64_t V = avg_vruntime(b);
      p->vlag = V - p->vruntime;
      b.cfs.erase(b.cfs.begin() + i);
      nr_running_add(b, -1);
      p->on_rq = false;
      set_task_cpu(p, rq.cpu);
      activate_task(rq, p, false);
      wakeup_preempt(rq.cpu, rq, p, 0);  // attach_task()
      cost += m_.costs.migrate_task_ns;
      ++pulled;
    }
    if (!newly_idle) break;  // periodic balance respects cache hotness
  }
  return pulled;
}

// newidle_balance(): skipped when a wakeup is pending, when no runqueue is overloaded, or when
// avg_idle is below the lowest domain's max_newidle_lb_cost; otherwise balance level by level
// while avg_idle covers the cost spent so far plus the next level's cost.
std::vector<KernelStep> Kernel::newidle_balance(Rq& rq, bool& pulled) {
  pulled = false;
  rq.c.newidle_calls++;
  if (rq.ttwu_pending || rq.sd.empty()) {
    rq.c.newidle_skipped++;
    return {};
  }
  rq.idle_stamp = ev_.now();
  rq.idle_stamp_valid = true;
  if (!root_domain_overloaded() || rq.avg_idle < rq.sd.front().max_newidle_lb_cost) {
    rq.c.newidle_skipped++;
    return {};
  }
  int64_t base = cost(m_.costs.newidle_balance_base_ns);
  int64_t curr_cost = 0;
  int n = 0;
  for (auto& sd : rq.sd) {
    if (rq.avg_idle < curr_cost + sd.max_newidle_lb_cost) break;
    int64_t domain_cost = 0;
    n = load_balance(rq, sd, true, domain_cost);
    domain_cost = cost(domain_cost);
    if (domain_cost > sd.max_newidle_lb_cost) {
      sd.max_newidle_lb_cost = domain_cost;
      sd.last_decay_max_lb_cost = ev_.now();
    }
    curr_cost += domain_cost;
    if (n > 0 || rq.nr_running > 0 || rq.ttwu_pending) break;
  }
  rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, curr_cost);
  if (n > 0) {
    pulled = true;
    rq.c.newidle_pulled += n;
    rq.idle_stamp_valid = false;
  }
  return {{KernelPath::NewidleBalance, base + curr_cost}};
}

// update_idle_cpu_scan() (SIS_UTIL, Chen Yu, v6.0): nr_idle_scan falls quadratically with the
// LLC's utilisation and reaches 0 at about 85 % (1/imbalance_pct).
void Kernel::update_idle_cpu_scan(int llc) {
  LlcShared& sds = llcs_[llc];
  double sum = 0;
  for (int c : sds.cpus) {
    update_util(rqs_[c]);
    sum += std::min(rqs_[c].util_avg, kCapacityScale);
  }
  double w = static_cast<double>(sds.cpus.size());
  int pct = rqs_[sds.cpus.front()].sd.empty() ? 117 : 117;
  for (const auto& sd : rqs_[sds.cpus.front()].sd)
    if (sd.is_llc) pct = sd.imbalance_pct;
  double x = sum / w;
  double t = std::min(kCapacityScale, x * x * pct * pct / (10000.0 * kCapacityScale));
  double y = kCapacityScale - t;
  sds.nr_idle_scan = static_cast<int>(y * w / kCapacityScale);
}

// rebalance_domains(): periodic balance of each level whose interval has expired (x16 when the
// CPU is busy); doubles the interval while balanced, resets it after a pull; SIS_UTIL's hint is
// refreshed at the LLC level; max_newidle_lb_cost decays ~1 % per second.
void Kernel::rebalance_domains(Rq& rq, int64_t& cost) {
  bool idle = rq.curr == rq.idle;
  Time next = Time::max();
  bool decayed = false;
  int64_t sum_cost = 0;
  for (auto& sd : rq.sd) {
    if ((ev_.now() - sd.last_decay_max_lb_cost).count() > kDecayPeriodNs) {
      sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
      sd.last_decay_max_lb_cost = ev_.now();
      decayed = true;
    }
    sum_cost += sd.max_newidle_lb_cost;
    int64_t interval_ms = sd.balance_interval_ms * (idle ? 1 : kBusyFactor);
    Time due = sd.last_balance + Time::ms(interval_ms);
    if (ev_.now() >= due) {
      rq.c.lb_calls++;
      int n = load_balance(rq, sd, false, cost);
      rq.c.lb_pulled += n;
      if (n > 0)
        sd.balance_interval_ms = sd.min_interval_ms;
      else
        sd.balance_interval_ms = std::min(sd.balance_interval_ms * 2, sd.max_interval_ms);
      if (sd.is_llc && f_.on(Feature::SIS_UTIL)) update_idle_cpu_scan(rq.llc);
      sd.last_balance = ev_.now();
      due = sd.last_balance + Time::ms(sd.balance_interval_ms * (idle ? 1 : kBusyFactor));
    }
    next = std::min(next, due);
  }
  if (decayed) rq.max_idle_balance_cost = std::max(m_.tunables.migration_cost_ns, sum_cost);
  rq.next_balance = next;
}

}  // namespace schedlab::kernel
