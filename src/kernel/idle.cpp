// kernel/sched/idle.c do_idle() and drivers/cpuidle: polling, state selection (a menu-like
// governor), entry and exit, the POLL time limit, NOHZ tick stop.
#include <algorithm>
#include <cmath>

#include "kernel/kernel.hpp"

namespace schedlab::kernel {

namespace {
constexpr size_t kMenuIntervals = 8;          // menu.c INTERVALS
constexpr int64_t kPollMinNs = 10000;         // CPUIDLE_POLL_MIN
constexpr int64_t kTypicalVarianceNs2 = 400LL * 1000 * 400 * 1000;  // menu: 400 us^2
// menu_update(): a wakeup by the tick says little about how long the idle period would have
// been; menu records 9/10 of MAX_INTERESTING (50 ms) instead.
constexpr int64_t kTickWakeupNs = 45LL * 1000 * 1000;
}  // namespace

// Writes this CPU's bit in its LLC's idle mask if it changed. The mask is one shared line per
// LLC, so a write costs a line transfer within the LLC (the reviewers' concern).
int64_t Kernel::update_idle_cpumask(Rq& rq, bool idle) {
  if (rq.last_idle_state == idle) return 0;
  rq.last_idle_state = idle;
  llcs_[rq.llc].idle_mask[rq.cpu] = idle;
  return m_.remote_read_ns(Distance::Llc);
}

// do_idle(): set TIF_POLLING_NRFLAG, then loop choosing and entering idle states until
// need_resched; then flush the call queue and schedule_idle().
void Kernel::do_idle(Rq& rq) {
  rq.polling = true;
  rq.poll_timed_out = false;
  // rq->idle_stamp is set by newidle balance; without it, here, so avg_idle still learns.
  if (!f_.on(Feature::NEWIDLE_BALANCE) && !rq.idle_stamp_valid) {
    rq.idle_stamp = ev_.now();
    rq.idle_stamp_valid = true;
  }
  update_util(rq);
  if (!rq.pending_irqs.empty()) {
    set_mode(rq, Mode::Kernel);
    process_pending_irqs(rq, [this, &rq] { do_idle(rq); });
    return;
  }
  if (rq.need_resched) {
    exit_idle_loop(rq);
    return;
  }
  // IDLE_CPUMASK: the RFC sets the bit on a pass through do_idle()'s loop, i.e. only when
  // there is really nothing to run.
  if (f_.on(Feature::IDLE_CPUMASK)) rq.idle_entry_extra_ns += update_idle_cpumask(rq, true);
  cpuidle_enter(rq);
}

// menu governor, simplified: predicted idle = the time to the next hrtimer armed on this CPU
// (tick_nohz_get_sleep_length(); none: unbounded), lowered to the "typical interval" of the last
// 8 idle periods when they are consistent. Deepest enabled state whose target residency fits;
// stop the tick when the prediction is at least a tick.
int Kernel::menu_select(Rq& rq, bool& stop_tick) {
  const auto& states = m_.idle_states;
  int64_t tick = m_.tick_ns();
  int64_t predicted = INT64_MAX / 4;  // no timer: tickless idle can last long
  if (!rq.timers.empty())
    predicted = std::max<int64_t>(0, *rq.timers.begin() - ev_.now().count());
  std::vector<int64_t> v = rq.idle_history;
  while (v.size() >= kMenuIntervals * 3 / 4) {
    double avg = 0, var = 0;
    for (auto x : v) avg += x;
    avg /= v.size();
    for (auto x : v) var += (x - avg) * (x - avg);
    var /= v.size();
    if (var <= kTypicalVarianceNs2 || avg * avg > 36 * var) {
      predicted = std::min<int64_t>(predicted, static_cast<int64_t>(avg));
      break;
    }
    v.erase(std::max_element(v.begin(), v.end()));
  }
  if (rq.idle_history.size() < kMenuIntervals * 3 / 4 && !rq.idle_history.empty()) {
    int64_t last = rq.idle_history.back();
    predicted = std::min(predicted, std::max<int64_t>(last, 0));
  }
  int chosen = -1;
  for (int i = 0; i < static_cast<int>(states.size()); ++i) {
    const auto& s = states[i];
    if (s.disabled) continue;
    if (rq.poll_timed_out && s.name == "POLL") continue;
    if (chosen < 0 || s.target_residency_ns <= predicted) chosen = i;
  }
  stop_tick = predicted >= tick && chosen >= 0 && states[chosen].name != "POLL";
  return chosen;  // -1: no usable state -> default_idle
}

// cpuidle_idle_call(): governor, NOHZ tick stop, call_cpuidle() which clears polling before a
// non-polling state, then the state itself.
void Kernel::cpuidle_enter(Rq& rq) {
  bool stop = false;
  int state;
  const int nstates = static_cast<int>(m_.idle_states.size());
  if (m_.tunables.idle_poll) {
    state = nstates;  // cpu_idle_poll(): polling, tick kept, no cpuidle
  } else {
    state = menu_select(rq, stop);
    if (state < 0) {
      state = nstates;  // default_idle_call(): HLT/WFI, not polling, tick stopped
      stop = true;
    }
  }
  int64_t c = m_.tunables.idle_poll ? 0 : cost(m_.costs.cpuidle_select_ns);
  c += rq.idle_entry_extra_ns;
  rq.idle_entry_extra_ns = 0;
  if (stop && !rq.tick_stopped) c += cost(m_.costs.nohz_stop_tick_ns);
  run_steps(rq, {{KernelPath::IdleEntry, c}}, [this, &rq, state, stop] {
    if (!rq.pending_irqs.empty() || rq.need_resched) {  // e.g. a polling wakeup meanwhile
      idle_loop_next(rq);
      return;
    }
    const int nst = static_cast<int>(m_.idle_states.size());
    bool polls = state < nst ? m_.idle_states[state].polling : m_.tunables.idle_poll;
    rq.polling = polls;
    if (stop) stop_tick(rq);
    rq.idle_state = state;
    rq.idle_start = ev_.now();
    rq.c.idle_usage[state]++;
    set_mode(rq, Mode::Idle);
    account(rq, bucket_for_idle(state));
    if (sink_) sink_->cpu_idle(ev_.now(), rq.cpu, state < nst ? state : 0);
    if (state < nst && m_.idle_states[state].name == "POLL") {
      // cpuidle_poll_time(): first enabled state with residency >= POLL_MIN, capped at
      // TICK_NSEC / 16.
      int64_t limit = m_.tick_ns() / 16;
      for (int i = state + 1; i < nst; ++i) {
        const auto& s = m_.idle_states[i];
        if (s.disabled || s.target_residency_ns < kPollMinNs) continue;
        limit = std::min(limit, s.target_residency_ns);
        break;
      }
      int cpu = rq.cpu;
      rq.poll_limit_event = ev_.after(Time::ns(limit), [this, cpu] { poll_time_limit(cpu); });
    }
  });
}

void Kernel::poll_time_limit(int cpu) {
  Rq& rq = rqs_[cpu];
  if (rq.mode != Mode::Idle) return;
  record_idle(rq, (ev_.now() - rq.idle_start).count());
  if (sink_) sink_->cpu_idle(ev_.now(), cpu, -1);
  rq.poll_timed_out = true;
  rq.polling = true;
  cpuidle_enter(rq);
}

void Kernel::record_idle(Rq& rq, int64_t ns) {
  rq.idle_history.push_back(ns);
  if (rq.idle_history.size() > kMenuIntervals) rq.idle_history.erase(rq.idle_history.begin());
}

// Leaving an idle state: by an interrupt (irq != null) or by a polling wakeup. Pays the state's
// real exit cost, runs the interrupt, then either leaves the idle loop (need_resched) or picks a
// state again.
void Kernel::idle_wake(Rq& rq, Irq* irq) {
  ev_.cancel(rq.poll_limit_event);
  ev_.cancel(rq.polling_wake_event);
  const int nst = static_cast<int>(m_.idle_states.size());
  int state = rq.idle_state;
  bool by_tick = irq && irq->kind == Irq::Tick;
  record_idle(rq, by_tick ? kTickWakeupNs : (ev_.now() - rq.idle_start).count());
  if (sink_) sink_->cpu_idle(ev_.now(), rq.cpu, -1);
  int64_t exit = state < nst ? m_.idle_states[state].wake_cost_ns : 0;
  rq.idle_state = -1;
  rq.polling = true;  // exit_idle: __current_set_polling()
  std::vector<KernelStep> steps{{KernelPath::IdleExit, cost(exit)}};
  if (irq) {
    Irq copy = *irq;
    run_steps(rq, std::move(steps), [this, &rq, copy] {
      handle_irq(rq, copy, [this, &rq] { idle_loop_next(rq); });
    });
  } else {
    run_steps(rq, std::move(steps), [this, &rq] { exit_idle_loop(rq); });
  }
}

// The next turn of do_idle()'s loop: take interrupts that arrived meanwhile, then leave the loop
// if need_resched is set, else choose and enter a state again.
void Kernel::idle_loop_next(Rq& rq) {
  if (!rq.pending_irqs.empty()) {
    process_pending_irqs(rq, [this, &rq] { idle_loop_next(rq); });
    return;
  }
  if (rq.need_resched)
    exit_idle_loop(rq);
  else
    cpuidle_enter(rq);
}

// need_resched seen: clear polling, restart the tick, flush_smp_call_function_queue(), then
// schedule_idle().
void Kernel::exit_idle_loop(Rq& rq) {
  rq.polling = false;
  std::vector<KernelStep> steps;
  if (rq.tick_stopped) {
    steps.push_back({KernelPath::IdleExit, cost(m_.costs.nohz_restart_tick_ns)});
    rq.tick_stopped = false;
    start_tick(rq);
  }
  for (auto& s : flush_smp_call_function_queue(rq)) steps.push_back(std::move(s));
  run_steps(rq, std::move(steps), [this, &rq] {
    if (!rq.pending_irqs.empty()) {
      process_pending_irqs(rq, [this, &rq] { schedule(rq, -1); });
      return;
    }
    schedule(rq, -1);
  });
}

}  // namespace schedlab::kernel
