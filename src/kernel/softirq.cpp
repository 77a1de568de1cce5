// kernel/softirq.c: the per-CPU pending mask; raise_softirq_irqoff(), which wakes ksoftirqd when
// raised outside interrupt context; __do_softirq() run at irq_exit() and after do_idle()'s
// call-queue flush, as a step with interrupts enabled; ksoftirqd/N, created at its first wakeup.
// Only SCHED_SOFTIRQ is modeled.
#include <fmt/format.h>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"
#include "kernel/softirq.hpp"

namespace schedlab::kernel {

namespace {

constexpr uint32_t bit(SoftirqNr nr) { return 1u << nr; }

// The softirq handlers of one __do_softirq() pass, decided now, in softirq context (a raise
// inside them wakes no ksoftirqd). Returns their cost.
int64_t run_softirqs(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  SoftirqCpu& s = k.softirq(rq.cpu);
  const uint32_t pending = s.pending;
  s.pending = 0;
  cpu.enter_irq_ctx();
  int64_t c = k.cost(k.m.costs.softirq_ns);
  if (pending & bit(SCHED_SOFTIRQ)) {
    rq.c.softirq_sched++;
    c += sched_balance_softirq(k, rq);
  }
  cpu.exit_irq_ctx();
  return c;
}

// ksoftirqd/N: run_ksoftirqd() runs what is pending, then the thread sleeps.
class Ksoftirqd final : public Behavior {
 public:
  Ksoftirqd(Kernel& k, int cpu) : k_(k), cpu_(cpu) {}
  Action next(Api&, Task&) override {
    if (!local_softirq_pending(k_, cpu_)) return Action::block();
    return Action::compute(run_softirqs(k_, k_.rq(cpu_)));
  }

 private:
  Kernel& k_;
  int cpu_;
};

// wakeup_softirqd()
int64_t wakeup_softirqd(Kernel& k, int cpu) {
  SoftirqCpu& s = k.softirq(cpu);
  if (!s.ksoftirqd)
    s.ksoftirqd = k.create_kthread(fmt::format("ksoftirqd/{}", cpu),
                                   std::make_unique<Ksoftirqd>(k, cpu), cpu);
  if (s.ksoftirqd->state != TaskState::Interruptible) return 0;
  k.rq(cpu).c.ksoftirqd_wakeups++;
  return try_to_wake_up(k, cpu, nullptr, s.ksoftirqd, false);
}

}  // namespace

bool local_softirq_pending(const Kernel& k, int cpu) { return k.softirq(cpu).pending != 0; }

// raise_softirq_irqoff(): mark pending; outside interrupt context nothing would run it soon, so
// ksoftirqd is woken (should_wake_ksoftirqd() is true on !PREEMPT_RT) -- except, with
// ILB_NO_KSOFTIRQD, in do_idle()'s flush, whose do_softirq() follows.
int64_t raise_softirq_irqoff(Kernel& k, int cpu, SoftirqNr nr) {
  k.softirq(cpu).pending |= bit(nr);
  const Cpu& c = k.cpu(cpu);
  if (c.in_interrupt()) return 0;
  bool wake = true;
  int64_t hook_ns = 0;
  for (Change* ch : k.hooks(Hook::raise_softirq)) {
    HookResult<bool> r = ch->on_raise_softirq(k.rq(cpu), nr, wake);
    wake = r.value;
    hook_ns += r.cost_ns;
  }
  return hook_ns + (wake ? wakeup_softirqd(k, cpu) : 0);
}

// __do_softirq() as one step with interrupts enabled; SoftirqEnd restarts it if an interrupt
// raised more meanwhile.
void do_softirq(Kernel& k, Rq& rq) {
  Cpu& cpu = k.cpu(rq.cpu);
  cpu.softirq_running = true;
  KernelStep s = KernelStep::irqs_enabled(KernelPath::Softirq, run_softirqs(k, rq));
  s.done = StepDone::SoftirqEnd;
  cpu.push_step(s);
}

}  // namespace schedlab::kernel
