// The scheduler tick (sched_tick) with NOHZ idle, and a simplified idle-load-balancer kick.
#include "kernel/kernel.hpp"

namespace schedlab::kernel {

void Kernel::start_tick(Rq& rq) {
  if (ev_.pending(rq.tick_event)) return;
  int64_t t = m_.tick_ns();
  int64_t next = (ev_.now().count() / t + 1) * t;
  int cpu = rq.cpu;
  rq.tick_event = ev_.at(Time::ns(next), [this, cpu] { tick(cpu); });
}

void Kernel::stop_tick(Rq& rq) {
  rq.tick_stopped = true;
  ev_.cancel(rq.tick_event);
}

void Kernel::tick(int cpu) {
  Rq& rq = rqs_[cpu];
  if (rq.tick_stopped) return;
  start_tick(rq);
  Irq irq{Irq::Tick};
  deliver_irq(cpu, irq);
}

// nohz_balancer_kick(), simplified: a busy CPU with more than one runnable task kicks the first
// tickless idle CPU (at most once per jiffy), which then runs its own periodic balance as if
// idle. Left out: balancing on behalf of every idle CPU, blocked-load updates.
void Kernel::nohz_balancer_kick(Rq& rq, int64_t& cost) {
  if (rq.nr_running < 2 || ev_.now() < nohz_next_balance_) return;
  int ilb = -1;
  for (int i = 1; i < nr_cpus(); ++i) {
    int c = (rq.cpu + i) % nr_cpus();
    if (rqs_[c].tick_stopped && idle_cpu(c)) {
      ilb = c;
      break;
    }
  }
  if (ilb < 0) return;
  nohz_next_balance_ = ev_.now() + Time::ns(m_.tick_ns());
  Csd csd{rq.cpu, 0, false, nullptr, [this](int c) {
            int64_t lb = 0;
            Rq& r = rqs_[c];
            for (auto& sd : r.sd) sd.last_balance = Time();  // due now
            rebalance_domains(r, lb);
            return lb;
          }};
  cost += smp_call_function_single(rq, ilb, std::move(csd));
}

}  // namespace schedlab::kernel
