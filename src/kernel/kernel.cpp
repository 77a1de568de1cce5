// The simulated system (kernel.hpp): boot (every CPU in its idle loop at time 0), task
// creation, the run loop, the pooled one-shot events, and the workload API (api.hpp).
#include "kernel/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernel/check.hpp"

namespace schedlab::kernel {

Kernel::Kernel(const machine::Machine& machine, const Features& features,
               const KernelOptions& opts)
    : m(machine), f(features), topo(machine.topo), sink(opts.sink), rng(opts.seed),
      cost_rng_(sim::Rng(opts.seed).split("costs")) {
  const int n = topo.nr_cpus();
  tick_period_ns_ = m.tick_period_ns();
  for (Distance d : {Distance::Self, Distance::Smt, Distance::Llc, Distance::OtherLlc,
                     Distance::OtherSocket})
    remote_read_ns_[static_cast<int>(d)] = m.remote_read_ns(d);
  boot_state();
  build_sched_domains(*this);
  // The changes that are on, one instance each for this run; their hooks in name order.
  change_by_index_.assign(change_types().size(), nullptr);
  for (const ChangeType* t : change_types()) {
    if (!f.change_on(t->index)) continue;
    changes_.push_back(t->make(*this, *t));
    change_by_index_[t->index] = changes_.back().get();
    for (int h = 0; h < kNumHooks; ++h)
      if (t->uses(static_cast<Hook>(h))) hooks_[h].push_back(changes_.back().get());
  }
  if (sink) sink->begin(m);
  if (opts.check) {
    checker_ = std::make_unique<Checker>(*this);
    ev.set_after_each([this] { checker_->check(); });
  }
  // docs/variance.md: the per-run cost factor (S1), the tick phase (S4), the guest (S3).
  if (m.noise.run_sigma > 0) run_factor_ = std::exp(m.noise.run_sigma * rng.split("noise/run").normal());
  if (m.noise.tick_phase) tick_phase_ns_ = static_cast<int64_t>(rng.split("tick/phase").below(tick_period_ns_));
  guest_->init(m, rng, n);
  // Every CPU starts in its idle loop at time 0: just booted (--cold), or up and idle a while.
  if (opts.cold) {
    for (int cpu = 0; cpu < n; ++cpu) {
      tick_sched_timer_start(*this, cpu);
      do_idle(*this, rq(cpu));
    }
  } else {
    warm_start(*this);
  }
  // [[background]] (S2); its kernel threads take low pids, the benchmark's tasks keep theirs.
  if (!m.background.empty()) {
    const int first_pid = next_pid_;
    background_start(*this, background_);
    next_pid_ = first_pid;
  }
}

Kernel::~Kernel() = default;

// Each subsystem's state for this machine, as boot (sched_init(), the per-CPU areas) leaves it:
// every CPU in kernel mode running its idle task.
void Kernel::boot_state() {
  const int n = topo.nr_cpus();
  sched_ = std::make_unique<SchedState>();
  nohz_ = std::make_unique<NohzState>();
  fair_scratch_ = std::make_unique<FairScratch>();
  cpus_ = std::make_unique<CpuState>();
  cpuidle_ = std::make_unique<CpuidleState>();
  tick_ = std::make_unique<TickState>();
  softirq_ = std::make_unique<SoftirqState>();
  smp_ = std::make_unique<SmpScratch>();
  guest_ = std::make_unique<GuestModel>();
  sched_->rqs.resize(n);
  cpuidle_->dev.resize(n);
  cpuidle_->menu.resize(n);
  tick_->cpus.resize(n);
  cpus_->core_busy.assign(topo.nr_cores(), topo.threads_per_core());  // all boot in kernel mode
  cpus_->core_polls.assign(topo.nr_cores(), 0);
  nohz_->idle_cpus_mask.assign((n + 63) / 64, 0);
  softirq_->cpus.resize(n);
  sched_->nr_assigned.assign(n, 0);
  fair_scratch_->core_seen.assign(topo.nr_cores(), 0);
  fair_scratch_->fork.count.assign(topo.nr_cores(), 0);
  fair_scratch_->fork.sum.assign(topo.nr_cores(), 0);
  size_t nstates = m.idle_states.size() + 1;  // + default_idle / idle=poll slot
  for (int cpu = 0; cpu < n; ++cpu) {
    Rq& rq = sched_->rqs[cpu];
    rq.cpu = cpu;
    auto idle = std::make_unique<Task>();
    idle->id = static_cast<int>(tasks_.size());
    idle->pid = 0;
    idle->comm = "swapper/" + std::to_string(cpu);
    idle->cpu = cpu;
    idle->state = TaskState::Running;
    idle->sched_class = &idle_sched_class;
    rq.idle = idle.get();
    rq.curr = idle.get();
    tasks_.push_back(std::move(idle));
    rq.c.idle_ns.assign(nstates, 0);
    rq.c.idle_usage.assign(nstates, 0);
    rq.c.change.assign(nr_change_counters(), 0);
    rq.avg_idle = 2 * m.tunables.migration_cost_ns;  // sched_init()
    rq.wake_avg_idle = rq.avg_idle;                   // ... and SIS_PROP's aged copy of it
    rq.max_idle_balance_cost = m.tunables.migration_cost_ns;
    rq.llc = topo.llc_of(cpu);
    rq.line.init(n, cpu);
  }
  cpus_->cpus.reset(new Cpu[n]);
  for (int cpu = 0; cpu < n; ++cpu) cpus_->cpus[cpu].init(*this, cpu);
  std::vector<SchedDomainShared>& llcs = sched_->llcs;
  llcs.resize(topo.nr_llcs());
  for (int l = 0; l < topo.nr_llcs(); ++l) {
    llcs[l].cpus = topo.llc_cpus(l);
    // __sdt_alloc() zero-allocates sched_domain_shared: SIS_UTIL scans nothing until the
    // first periodic balance of the LLC level computes nr_idle_scan.
    llcs[l].nr_idle_scan = 0;
    llcs[l].has_idle_cores = topo.threads_per_core() > 1;
    llcs[l].nr_busy_cpus = static_cast<int>(llcs[l].cpus.size());  // sd_init(): all busy at boot
    llcs[l].line.init(n, llcs[l].cpus.front());
  }
}

// The per-run factor (noise.run_sigma) times, with noise.jitter_cov, an independent draw.
int64_t Kernel::cost(int64_t ns) {
  if (ns <= 0) return 0;
  double cov = m.noise.jitter_cov;
  if (cov <= 0 && run_factor_ == 1.0) return ns;
  double factor = run_factor_;
  if (cov > 0) factor *= std::max(0.0, 1.0 + cov * cost_rng_.normal());
  return static_cast<int64_t>(ns * factor + 0.5);
}

CpuCounters Kernel::total() const {
  CpuCounters t;
  for (const auto& rq : sched_->rqs) t.add(rq.c);
  return t;
}

void Kernel::check_placed(const Task* p) { checker_->placed(p); }

const std::vector<bool>* Kernel::intern_cpumask(const std::vector<int>& list) {
  std::vector<bool> mask(nr_cpus(), false);
  for (int c : list) mask.at(c) = true;
  for (const auto& m : cpumasks_)
    if (*m == mask) return m.get();
  cpumasks_.push_back(std::make_unique<std::vector<bool>>(std::move(mask)));
  return cpumasks_.back().get();
}

int Kernel::cpumask_id(const std::vector<int>& cpus) {
  const std::vector<bool>* m = intern_cpumask(cpus);
  for (size_t i = 0; i < cpumasks_.size(); ++i)
    if (cpumasks_[i].get() == m) return static_cast<int>(i);
  throw std::logic_error("cpumask_id: interned mask not found");
}

Task* Kernel::create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o) {
  auto t = std::make_unique<Task>();
  Task* p = t.get();
  p->id = static_cast<int>(tasks_.size());
  p->pid = next_pid_++;
  p->comm = std::move(comm);
  p->policy = o.policy;
  p->rt_prio = o.rt_prio;
  p->sched_class = p->is_rt() ? &rt_sched_class : &fair_sched_class;
  p->behavior = std::move(b);
  p->program = p->behavior.get();
  p->mm = o.mm < 0 ? p->pid : o.mm;
  p->slice = o.slice_ns > 0 ? o.slice_ns : m.tunables.base_slice_ns;
  if (o.weight > 0) p->weight = o.weight;
  p->load_avg = static_cast<double>(p->weight);  // init_entity_runnable_average()
  p->load_last = now();
  const std::vector<int>& cpus = !o.cpus.empty() || p->mm == 0 ? o.cpus : default_affinity_;
  if (!cpus.empty()) {
    p->allowed = intern_cpumask(cpus);
    p->nr_cpus_allowed = 0;
    for (bool b : *p->allowed) p->nr_cpus_allowed += b;
  } else {
    p->nr_cpus_allowed = nr_cpus();
  }
  tasks_.push_back(std::move(t));
  int fork_cpu = p->allowed_on(o.fork_cpu) ? o.fork_cpu : cpus.front();
  int cpu = o.pin_cpu >= 0 ? o.pin_cpu : sched_balance_find_dst_cpu(*this, p, fork_cpu);
  p->cpu = cpu;
  nr_assigned(cpu)++;
  p->recent_used_cpu = cpu;
  p->state = TaskState::Interruptible;
  p->wakee_flip_decay_ts = now();
  if (!o.start_blocked) wake_up(p, cpu);
  return p;
}

Task* Kernel::create_kthread(std::string comm, std::unique_ptr<Behavior> b, int cpu) {
  auto t = std::make_unique<Task>();
  Task* p = t.get();
  p->id = static_cast<int>(tasks_.size());
  p->pid = next_kthread_pid_++;
  p->comm = std::move(comm);
  p->sched_class = &fair_sched_class;
  p->behavior = std::move(b);
  p->program = p->behavior.get();
  p->mm = 0;
  p->kernel_thread = true;
  p->slice = m.tunables.base_slice_ns;
  p->allowed = intern_cpumask({cpu});
  p->nr_cpus_allowed = 1;
  p->cpu = cpu;
  p->recent_used_cpu = cpu;
  p->state = TaskState::Interruptible;
  p->wakee_flip_decay_ts = now();
  tasks_.push_back(std::move(t));
  return p;
}

void Kernel::wake_up(Task* p, int from_cpu) {
  // A wakeup from outside any task program (the benchmark harness): its cost is not charged.
  try_to_wake_up(*this, from_cpu, nullptr, p, false);
}

void Kernel::run(Time limit) {
  ev.run(limit);
  end_time_ = now();
  if (checker_) checker_->check();
  for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
    Cpu& c = this->cpu(cpu);
    if (c.mode() == Mode::Task) c.pause_task_segment();
    c.account(c.bucket());
    if (checker_) {
      const auto& cc = rq(cpu).c;
      int64_t total = cc.busy_ns + derived::kernel_total_ns(cc) + derived::idle_total_ns(cc);
      if (total != end_time_.count())
        checker_->fail(cpu, nullptr, "time not conserved: busy + kernel + idle != simulated time");
    }
  }
  if (sink) sink->end(end_time_);
}

// --- pooled one-shot events -----------------------------------------------------------------

DeferredEvent& Kernel::deferred(DeferredEvent::Kind kind, int cpu, Task* task, int64_t arg) {
  DeferredEvent* e;
  if (!free_deferred_.empty()) {
    e = free_deferred_.back();
    free_deferred_.pop_back();
  } else {
    deferred_pool_.push_back(std::make_unique<DeferredEvent>());
    e = deferred_pool_.back().get();
    e->k = this;
  }
  e->kind = kind;
  e->cpu = cpu;
  e->task = task;
  e->arg = arg;
  return *e;
}

void DeferredEvent::process() {
  Kernel& kern = *k;
  const Kind what = kind;
  const int c = cpu;
  Task* const p = task;
  const int64_t a = arg;
  const IpiKind kind_of_ipi = ipi;
  Change* const ch = change;
  const uint8_t ch_kind = change_kind;
  const Irq held = irq;
  kern.recycle(*this);
  switch (what) {
    case IpiArrival: {
      Irq i = Irq::of_ipi(kind_of_ipi);
      i.host_woken = a != 0;
      kern.cpu(c).deliver_irq(i);
      return;
    }
    case HeldIrq:
      kern.cpu(c).deliver_irq(held);
      return;
    case HrtimerExpiry: {
      // hrtimer expiry on the CPU the timer was armed on: the timer interrupt.
      auto& timers = kern.rq(c).timers;
      timers.erase(std::lower_bound(timers.begin(), timers.end(), a));
      kern.cpu(c).deliver_irq(Irq::of_timer(p));
      return;
    }
    case CsdUnlocked: {
      // The spinning sender sees its csd unlocked: put_cpu(), then its caller carries on.
      p->waiting_csd = false;
      Cpu& cpu = kern.cpu(p->cpu);
      if (kern.rq(p->cpu).curr == p && cpu.mode() == Mode::Task && !cpu.segment_running()) {
        cpu.push_step(KernelStep::irqs_enabled(KernelPath::Syscall,
                                               kern.cost(kern.m.costs.put_cpu_ns)));
        cpu.run_steps(Resume::ReturnToTask);
      }
      return;
    }
    case ChangeCall:
      ch->deferred(c, p, a, ch_kind);
      return;
  }
}

// --- the workload API -----------------------------------------------------------------------

Time Api::now() const { return k_.now(); }
const machine::Machine& Api::machine() const { return k_.m; }
int Api::nr_cpus() const { return k_.nr_cpus(); }
sim::Rng Api::rng(std::string_view name) const { return k_.rng.split(name); }
Task* Api::create_task(std::string comm, std::unique_ptr<Behavior> b, const TaskOptions& o) {
  return k_.create_task(std::move(comm), std::move(b), o);
}
void Api::wake_up(Task* p, int from_cpu) { k_.wake_up(p, from_cpu); }
int Api::task_cpu(const Task& t) const { return t.cpu; }
int Api::task_mm(const Task& t) const { return t.mm; }
TaskStat Api::stat(const Task& t) const {
  return {t.pid,          t.cpu, t.mm, t.run_delay_ns, t.nr_switches_in,
          t.state == TaskState::Dead, t.exit_time};
}
int64_t Api::cpu_idle_ns(int cpu) const {
  const Cpu& c = k_.cpu(cpu);
  int64_t ns = derived::idle_total_ns(k_.rq(cpu).c);
  if (c.bucket() > kNumKernelPaths) ns += (k_.now() - c.bucket_start()).count();  // in an idle state now
  return ns;
}
int Api::cpumask(const std::vector<int>& cpus) { return k_.cpumask_id(cpus); }
void Api::at(Time t, std::function<void()> fn) { k_.ev.at(t, std::move(fn)); }
void Api::stop() { k_.stop(); }

}  // namespace schedlab::kernel
