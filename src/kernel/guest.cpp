// The guest model and background activity (guest.hpp; docs/variance.md S2, S3).
#include "kernel/guest.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "kernel/cpu.hpp"
#include "kernel/cpuidle.hpp"
#include "kernel/deferred.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

double LogNormal::median_after(int64_t halted_ns) const {
  if (halted_ns < 0 || (gap5us <= 0 && gap500us <= 0)) return median;
  // calibrate's gaps (host/calibrate.cpp add_wake_spec(): _gap5us, the 60 us default, _gap500us)
  static const double x5 = std::log(5000.0), x60 = std::log(60000.0), x500 = std::log(500000.0);
  const double lo = gap5us > 0 ? gap5us : median, hi = gap500us > 0 ? gap500us : median;
  const double x = std::log(static_cast<double>(std::max<int64_t>(halted_ns, 1)));
  if (x <= x5) return lo;
  if (x <= x60) return lo + (x - x5) / (x60 - x5) * (median - lo);
  if (x <= x500) return median + (x - x60) / (x500 - x60) * (hi - median);
  return hi;
}

int64_t LogNormal::draw(sim::Rng& rng, int64_t halted_ns) const {
  const double med = median_after(halted_ns);
  if (med <= 0) return 0;
  double v = sigma > 0 ? med * std::exp(sigma * rng.normal()) : med;
  if (max > 0) v = std::min(v, max);
  return static_cast<int64_t>(v + 0.5);
}

namespace {
LogNormal dist_of(const machine::Recorded& median, const machine::Recorded& sigma) {
  LogNormal d;
  d.known = median.known();
  d.median = median.known() ? median.value : 0;
  d.sigma = sigma.known() ? sigma.value : 0;
  return d;
}
double known_or_0(const machine::Recorded& r) { return r.known() ? r.value : 0; }
}  // namespace

void GuestModel::init(const machine::Machine& m, const sim::Rng& seed_rng, int nr_cpus) {
  on = m.guest.present;
  ops = on ? &kvm_guest_ops : &bare_metal_ops;
  if (!on) return;
  ipi_virtualization = m.guest.ipi_virtualization.known() && m.guest.ipi_virtualization.value != 0;
  ipi_send = dist_of(m.guest.ipi_send_ns, m.guest.ipi_send_sigma);
  halted_wake = dist_of(m.guest.halted_wake_ns, m.guest.halted_wake_sigma);
  ipi_send.gap5us = known_or_0(m.guest.ipi_send_gap5us_ns);
  ipi_send.gap500us = known_or_0(m.guest.ipi_send_gap500us_ns);
  halted_wake.gap5us = known_or_0(m.guest.halted_wake_gap5us_ns);
  halted_wake.gap500us = known_or_0(m.guest.halted_wake_gap500us_ns);
  running_ipi = dist_of(m.guest.running_ipi_ns, m.guest.running_ipi_sigma);
  for (int c = 0; c < nr_cpus; ++c) rng.push_back(seed_rng.split("guest/" + std::to_string(c)));
  host_wake_at.assign(nr_cpus, Time());
  send_found_halted_ns.assign(nr_cpus, -1);
  stolen_until.assign(nr_cpus, Time());
}

bool vcpu_halted(const Kernel& k, int cpu) {
  if (k.cpu(cpu).mode() != Mode::Idle) return false;
  int state = k.cpuidle(cpu).state;
  const int nst = static_cast<int>(k.m.idle_states.size());
  if (state >= 0 && state < nst) return !k.m.idle_states[state].polling;
  return !k.m.tunables.idle_poll;  // default_idle (HLT) or idle=poll
}

namespace {
// How long the vCPU has been in its halted state at `at` (-1: not halted).
int64_t halted_for(const Kernel& k, int cpu, Time at) {
  if (!vcpu_halted(k, cpu)) return -1;
  return std::max<int64_t>(0, (at - k.cpuidle(cpu).entered).count());
}

int64_t bare_ipi_send_ns(Kernel& k, int, int) { return k.cost(k.m.costs.ipi_send_ns); }
int64_t bare_ipi_latency_ns(Kernel& k, int from, int to, Time, bool& host_woken) {
  host_woken = false;
  return k.cost(k.m.ipi_latency_ns(k.topo.distance(from, to)));
}
bool bare_hold_irq(Kernel&, int, const Irq&) { return false; }
}  // namespace

const PlatformOps bare_metal_ops = {
    .name = "bare metal",
    .ipi_send_ns = bare_ipi_send_ns,
    .ipi_latency_ns = bare_ipi_latency_ns,
    .hold_irq = bare_hold_irq,
};
const PlatformOps kvm_guest_ops = {
    .name = "kvm guest",
    .ipi_send_ns = guest_ipi_send_ns,
    .ipi_latency_ns = guest_ipi_latency_ns,
    .hold_irq = guest_hold_irq,
};

int64_t ipi_send_cost(Kernel& k, int from, int to) { return k.guest().ops->ipi_send_ns(k, from, to); }
int64_t ipi_latency_ns(Kernel& k, int from, int to, Time at, bool& host_woken) {
  return k.guest().ops->ipi_latency_ns(k, from, to, at, host_woken);
}

// G2: without IPI virtualisation every send exits (KVM_HC_SEND_IPI with pv_send_ipi, else the
// x2APIC ICR write); the model sends to one target at a time, so the two cost the same here.
int64_t guest_ipi_send_ns(Kernel& k, int from, int to) {
  GuestModel& g = k.guest();
  if (g.ipi_virtualization && !vcpu_halted(k, to)) return k.cost(k.m.costs.ipi_send_ns);
  k.rq(from).c.guest_ipi_exits++;
  const int64_t halted = halted_for(k, to, k.now());
  g.send_found_halted_ns[to] = halted;
  if (!g.ipi_send.known) return k.cost(k.m.costs.ipi_send_ns);
  return k.cost(g.ipi_send.draw(g.rng[from], halted));
}

// G1: a halted vCPU runs the handler when the host has woken it (halted_wake, from the send);
// a second interrupt while that wake-up is in flight lands with it. A running vCPU gets the
// one-way part of the measured round trip (running_ipi - send - handler entry), at least one
// cache-line transfer.
int64_t guest_ipi_latency_ns(Kernel& k, int from, int to, Time at, bool& host_woken) {
  GuestModel& g = k.guest();
  const int64_t bare = k.cost(k.m.ipi_latency_ns(k.topo.distance(from, to)));
  host_woken = false;
  const int64_t found = g.send_found_halted_ns[to];
  g.send_found_halted_ns[to] = -1;
  if (vcpu_halted(k, to) && g.halted_wake.known) {
    host_woken = true;
    if (g.host_wake_at[to] > at) return (g.host_wake_at[to] - at).count();
    int64_t lat = k.cost(g.halted_wake.draw(g.rng[to], found >= 0 ? found : halted_for(k, to, at)));
    g.host_wake_at[to] = at + Time::ns(lat);
    k.rq(to).c.guest_halted_wakes++;
    k.rq(to).c.guest_halted_wake_ns += lat;
    return lat;
  }
  if (!g.running_ipi.known || !g.ipi_send.known) return bare;
  int64_t one_way = k.cost(g.running_ipi.draw(g.rng[from])) - static_cast<int64_t>(g.ipi_send.median) -
                    k.m.costs.ipi_entry_ns;
  return std::max(one_way, k.remote_read(from, to));
}

// G1/G5 for interrupts that were not sent as IPIs to a halted vCPU (its own timers and tick, a
// background interrupt, an IPI that found it running and arrives after it halted), and steal: an
// interrupt for a vCPU the host is not running waits until the host runs it again.
bool guest_hold_irq(Kernel& k, int cpu, const Irq& irq) {
  GuestModel& g = k.guest();
  if (!g.on) return false;
  Time now = k.now();
  Time when = now;
  if (g.stolen_until[cpu] > when) when = g.stolen_until[cpu];
  if (!irq.host_woken && vcpu_halted(k, cpu) && g.halted_wake.known) {
    if (g.host_wake_at[cpu] > now) {
      when = std::max(when, g.host_wake_at[cpu]);
    } else {
      int64_t lat = k.cost(g.halted_wake.draw(g.rng[cpu], halted_for(k, cpu, now)));
      g.host_wake_at[cpu] = now + Time::ns(lat);
      k.rq(cpu).c.guest_halted_wakes++;
      k.rq(cpu).c.guest_halted_wake_ns += lat;
      when = std::max(when, g.host_wake_at[cpu]);
    }
  }
  if (when <= now) return false;
  DeferredEvent& e = k.deferred(DeferredEvent::HeldIrq, cpu);
  e.irq = irq;
  e.irq.host_woken = true;
  k.ev.schedule(e, when);
  return true;
}

// --- background activity ------------------------------------------------------------------

void BackgroundSource::arm(bool first) {
  // Exponential inter-arrival times; the first at a uniform phase of the mean period.
  double period_s = 1.0 / rate_hz;
  double gap_s = first ? rng.uniform() * period_s : -std::log(1.0 - rng.uniform()) * period_s;
  k->ev.schedule(*this, k->now() + Time::ns(static_cast<int64_t>(gap_s * 1e9) + 1));
}

void BackgroundSource::process() {
  Kernel& kern = *k;
  int c = cpu >= 0 ? cpu : static_cast<int>(rng.below(kern.nr_cpus()));
  int64_t d = duration.draw(rng);
  Cpu& target = kern.cpu(c);
  kern.rq(c).c.background_events++;
  if (what->kind == "steal") {
    if (target.mode() == Mode::Idle) {
      // A halted vCPU the host does not run shows nothing; what arrives meanwhile waits.
      GuestModel& g = kern.guest();
      if (g.on) g.stolen_until[c] = std::max(g.stolen_until[c], kern.now() + Time::ns(d));
    } else {
      target.deliver_irq(Irq::of(Irq::Steal, d));
    }
  } else {
    target.deliver_irq(Irq::of(Irq::Background, d));
  }
  arm(false);
}

namespace {

// A [[background]] kernel thread or task: sleeps an exponential time (from a uniform first
// phase), runs its recorded duration, and again.
// It starts asleep, its first wake-up an hrtimer at that phase (first_sleep_ns()): a run starts
// on a machine whose kernel threads last ran long ago, not with each of them just back asleep
// (with DELAY_DEQUEUE such a thread stays queued, delayed, behind whatever its CPU runs next,
// and two tasks on one runqueue keep the root domain overloaded).
class BackgroundTask final : public Behavior {
 public:
  BackgroundTask(double rate_hz, LogNormal d, sim::Rng rng) : rate_(rate_hz), d_(d), rng_(rng) {}
  int64_t first_sleep_ns() { return static_cast<int64_t>(rng_.uniform() / rate_ * 1e9) + 1; }
  Action next(Api&, Task&) override {
    bool run = n_++ % 2 == 0;
    if (run) return Action::compute(std::max<int64_t>(1, d_.draw(rng_)));
    const double gap_s = -std::log(1.0 - rng_.uniform()) / rate_;
    return Action::sleep(static_cast<int64_t>(gap_s * 1e9) + 1);
  }

 private:
  double rate_;
  LogNormal d_;
  sim::Rng rng_;
  uint64_t n_ = 0;
};

// "kworker/N:N" on CPU 3 is "kworker/3:3" (the recorded name stands for every such thread).
std::string comm_for(const std::string& name, int cpu) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    bool digit_slot = name[i] == 'N' && (i == 0 || !std::isalpha(static_cast<unsigned char>(name[i - 1])) ||
                                         name[i - 1] == 'u') &&
                      (i + 1 == name.size() || !std::isalpha(static_cast<unsigned char>(name[i + 1])) ||
                       name[i + 1] == 'H');
    out += digit_slot && cpu >= 0 ? std::to_string(cpu) : std::string(1, name[i]);
  }
  return out.substr(0, 15);  // TASK_COMM_LEN - 1
}

}  // namespace

void background_start(Kernel& k, std::vector<std::unique_ptr<BackgroundSource>>& sources) {
  for (const auto& a : k.m.background) {
    if (a.rate_hz.value <= 0) continue;
    if (a.kind == "kthread" && a.name == "ksoftirqd/N") continue;  // the model runs its own (softirq.cpp)
    LogNormal d;
    d.known = true;
    d.median = a.duration_ns.value;
    d.sigma = a.duration_sigma.value;
    d.max = a.duration_max_ns.known() ? a.duration_max_ns.value : 0;
    const bool per_cpu = a.scope == "per_cpu";
    const int n = per_cpu ? k.nr_cpus() : 1;
    for (int i = 0; i < n; ++i) {
      int cpu = per_cpu ? i : -1;
      sim::Rng rng = k.rng.split("background/" + a.name + "/" + (per_cpu ? std::to_string(i) : "system"));
      if (a.kind == "kthread" || a.kind == "task") {
        auto b = std::make_unique<BackgroundTask>(a.rate_hz.value, d, rng);
        const int64_t first = b->first_sleep_ns();
        Task* p;
        if (a.kind == "kthread" && per_cpu) {
          p = k.create_kthread(comm_for(a.name, cpu), std::move(b), cpu);  // bound to its CPU
        } else {
          // Unbound: placed by fork balancing; a low pid, so the benchmark's pids do not move.
          TaskOptions o;
          o.start_blocked = true;
          o.mm = a.kind == "kthread" ? 0 : -1;
          p = k.create_task(comm_for(a.name, cpu), std::move(b), o);
          p->pid = k.next_kthread_pid();
          if (o.mm < 0) p->mm = p->pid;
        }
        p->background = true;
        // Asleep in hrtimer_nanosleep() since before the run: the timer, armed on its CPU, wakes it.
        hrtimer_start_sleep(k, p->cpu, p, (k.now() + Time::ns(first)).count());
        continue;
      }
      auto s = std::make_unique<BackgroundSource>();
      s->k = &k;
      s->what = &a;
      s->cpu = cpu;
      s->rate_hz = a.rate_hz.value;
      s->duration = d;
      s->rng = rng;
      s->arm(true);
      sources.push_back(std::move(s));
    }
  }
}

}  // namespace schedlab::kernel
