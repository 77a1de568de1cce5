// IDLE_SPIN: busy-wait instead of switching to idle (Nicholas Piggin, "[RFC PATCH] sched: idle
// spin", 2018; not merged). When a task blocks and is alone on its runqueue, __schedule() does
// not dequeue it and switch to the idle task; the CPU spins (busy, interrupts on) until the task
// is woken (it just continues: no context switch, no idle exit), another task needs the CPU, or
// the bound change.IDLE_SPIN.max_ns. A task of the same or a higher class ends the spin (prev
// then blocks for real); a fair task does not disturb a spinning RT task (the reviewers'
// concern): it waits for the spin to end, counted in idle_spin_hidden_ns.
#include <vector>

#include "kernel/change.hpp"
#include "kernel/cpu.hpp"
#include "kernel/deferred.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {
namespace {

class IdleSpin final : public Change {
 public:
  enum Counter { kSpins, kHits, kSpinNs, kHiddenNs };
  enum Tunable { kMaxNs };
  enum Point : uint8_t { kStartSpin };
  enum Deferred : uint8_t { kWakeNotice };

  IdleSpin(Kernel& k, const ChangeType& t) : Change(k, t), cpu_(k.nr_cpus()) {
    for (int c = 0; c < k.nr_cpus(); ++c) {
      cpu_[c].timeout.owner = this;
      cpu_[c].timeout.cpu = c;
    }
  }

  static ChangeInfo info() {
    return {
        .name = "IDLE_SPIN",
        .default_on = false,
        .help =
            "busy wait up to change.IDLE_SPIN.max_ns before switching to idle when the blocking "
            "task is alone (2018 RFC)",
        .origin = "Nicholas Piggin, [RFC PATCH] sched: idle spin (LKML, 2018; not merged)",
        .counters = {{"idle_spin", "count", "spins started"},
                     {"idle_spin_hit", "count", "spins ended by the task's own wakeup (no switch)"},
                     {"idle_spin_ns", "ns", "time spinning", true,
                      [](const CpuCounters& c) {
                        return c.kernel_ns[static_cast<int>(KernelPath::Spin)];
                      }},
                     {"idle_spin_hidden_ns", "ns",
                      "time a queued fair task waited behind a spinning RT task"}},
        .tunables = {
            {"max_ns", "ns", 1000000, 0, 10000000000,
             "the spin's bound (the RFC: about 1 ms; a design value, not a measurement)"}}};
  }

  // prev blocks and is alone on the runqueue: spin instead of dequeuing it.
  HookResult<bool> on_schedule(Rq& rq, SchedMode mode, Task* prev, KernelPath path,
                               int64_t cost) override {
    PerCpu& s = cpu_[rq.cpu];
    bool spin = mode == SchedMode::SM_NONE && prev != rq.idle &&
                prev->state == TaskState::Interruptible && !s.no_spin_once &&
                rq.nr_running == 1;
    s.no_spin_once = false;
    if (!spin) return {.value = false};
    Cpu& cpu = k.cpu(rq.cpu);
    cpu.push_step(path, cost);
    s.prev = prev;
    run_steps(cpu, kStartSpin);
    return {.value = true};
  }

  // After the schedule step: spin (unless another task arrived meanwhile).
  void resume(Rq& rq, uint8_t) override {
    PerCpu& s = cpu_[rq.cpu];
    if (rq.nr_running > 1) {  // not alone any more
      s.no_spin_once = true;
      __schedule(k, rq, SchedMode::SM_NONE);
      return;
    }
    s.task = s.prev;
    s.start = k.now();
    counter(rq, kSpins)++;
    arm(s.timeout, k.now() + Time::ns(tunable(kMaxNs)));
    // return_to_task() ends the spin at once if the task was woken while we got here.
    k.cpu(rq.cpu).return_to_task();
  }

  // Back from an interrupt (or the start): keep spinning, or end the spin.
  HookResult<bool> on_return_to_task(Rq& rq) override {
    PerCpu& s = cpu_[rq.cpu];
    if (!s.task) return {.value = false};
    if (rq.need_resched || s.end_requested || s.task->state == TaskState::Running)
      finish_spin(rq);  // back from the interrupt (or the start): end it now
    else
      k.cpu(rq.cpu).spin_wait(KernelPath::Spin);
    return {.value = true};
  }

  // The spinner was woken: the spinning CPU notices one line transfer later.
  void on_ttwu_runnable(int this_cpu, Task* p, int64_t cost) override {
    int cpu = p->cpu;
    if (cpu_[cpu].task != p) return;
    int64_t notice = cost + k.remote_read(this_cpu, cpu);
    defer(k.now() + Time::ns(notice), cpu, p, cpu_[cpu].start.count(), kWakeNotice);
  }

  // A notice of an earlier spin is stale and ignored.
  void deferred(int cpu, Task* p, int64_t start, uint8_t) override {
    const PerCpu& s = cpu_[cpu];
    if (s.task == p && s.start.count() == start && k.cpu(cpu).spin_waiting())
      end_spin(k.rq(cpu));
  }

  // The bound.
  void event(int cpu, uint8_t) override { end_spin(k.rq(cpu)); }

  HookResult<std::optional<bool>> on_wakeup_preempt(Rq& rq, Task* p,
                                                   std::optional<bool> decided) override {
    Task* spinner = cpu_[rq.cpu].task;
    if (!spinner) return {.value = decided};
    return {.value = !(spinner->is_rt() && !p->is_rt())};
  }

  void on_activate_task(Rq& rq, Task* p) override {
    PerCpu& s = cpu_[rq.cpu];
    if (s.task && s.task->is_rt() && !p->is_rt() && !s.hidden) {
      s.hidden = true;
      s.hidden_since = k.now();
    }
  }

 private:
  struct PerCpu {
    Task* prev = nullptr;        // the blocking task, until the spin starts
    Task* task = nullptr;        // the task we are spinning for
    Time start;
    bool end_requested = false;  // ended while in an interrupt: end it on return
    bool no_spin_once = false;   // the spin just ended: block for real this time
    bool hidden = false;         // a fair task waits behind a spinning RT task ...
    Time hidden_since;           // ... since
    ChangeEvent timeout;
  };

  // Ends the spin: the task continues if it was woken, else it blocks for real.
  void end_spin(Rq& rq) {
    PerCpu& s = cpu_[rq.cpu];
    if (!s.task) return;
    if (k.cpu(rq.cpu).in_kernel()) {  // in an interrupt: return_to_task() ends it after
      s.end_requested = true;
      return;
    }
    finish_spin(rq);
  }
  // The end itself, outside any interrupt.
  void finish_spin(Rq& rq) {
    PerCpu& s = cpu_[rq.cpu];
    Task* p = s.task;
    s.end_requested = false;
    disarm(s.timeout);
    s.task = nullptr;
    if (s.hidden) {
      counter(rq, kHiddenNs) += (k.now() - s.hidden_since).count();
      s.hidden = false;
    }
    if (p->state == TaskState::Running) {
      counter(rq, kHits)++;
      k.cpu(rq.cpu).spin_wait_done();
      return;
    }
    s.no_spin_once = true;
    __schedule(k, rq, SchedMode::SM_NONE);
  }

  std::vector<PerCpu> cpu_;
};
SCHEDLAB_REGISTER_CHANGE(IdleSpin);

}  // namespace
}  // namespace schedlab::kernel
