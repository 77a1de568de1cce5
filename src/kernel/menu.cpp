// drivers/cpuidle/governors/menu.c, simplified: predicted idle = the time to the next hrtimer
// armed on this CPU (tick_nohz_get_sleep_length(); none: unbounded), lowered to the "typical
// interval" of the last 8 idle periods when they are consistent (get_typical_interval()). The
// deepest enabled state whose target residency fits; stop the tick when the prediction is at
// least a tick. Left out: the correction factors by buckets, the latency QoS limit.
#include <algorithm>

#include "kernel/cpuidle.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

namespace {
constexpr int kMenuIntervals = MenuDevice::kIntervals;              // menu.c INTERVALS
constexpr int64_t kTypicalVarianceNs2 = 400LL * 1000 * 400 * 1000;  // menu: 400 us^2
// menu_update(): a wakeup by the tick says little about how long the idle period would have
// been; menu records 9/10 of MAX_INTERESTING (50 ms) instead.
constexpr int64_t kTickWakeupNs = 45LL * 1000 * 1000;

// menu_reflect() / menu_update(): the idle period's length joins the history.
void menu_reflect(Kernel& k, Rq& rq, int /*state*/, int64_t residency_ns, bool by_tick) {
  menu_update(k, rq.cpu, by_tick ? kTickWakeupNs : residency_ns);
}
// menu leaves POLL's limit as the driver computed it.
int64_t menu_poll_time(Kernel& /*k*/, Rq& /*rq*/, int64_t limit_ns) { return limit_ns; }
}  // namespace

const CpuidleGovernorOps menu_governor = {
    .name = "menu", .select = menu_select, .reflect = menu_reflect, .poll_time = menu_poll_time};

int menu_select(Kernel& k, Rq& rq, bool& stop_tick) {
  const auto& states = k.m.idle_states;
  const MenuDevice& data = k.menu(rq.cpu);
  int64_t tick = k.tick_period_ns();
  int64_t predicted = INT64_MAX / 4;  // no timer: tickless idle can last long
  if (!rq.timers.empty())
    predicted = std::max<int64_t>(0, rq.timers.front() - k.now().count());
  // get_typical_interval(): drop the largest sample until the rest is consistent.
  int64_t v[kMenuIntervals];
  int n = data.nr;
  std::copy(data.intervals, data.intervals + n, v);
  while (n >= kMenuIntervals * 3 / 4) {
    double avg = 0, var = 0;
    for (int i = 0; i < n; ++i) avg += v[i];
    avg /= n;
    for (int i = 0; i < n; ++i) var += (v[i] - avg) * (v[i] - avg);
    var /= n;
    if (var <= kTypicalVarianceNs2 || avg * avg > 36 * var) {
      predicted = std::min<int64_t>(predicted, static_cast<int64_t>(avg));
      break;
    }
    int64_t* max = std::max_element(v, v + n);
    std::copy(max + 1, v + n, max);
    --n;
  }
  if (data.nr < kMenuIntervals * 3 / 4 && data.nr > 0) {
    int64_t last = data.intervals[data.nr - 1];
    predicted = std::min(predicted, std::max<int64_t>(last, 0));
  }
  const bool poll_limited = k.cpuidle(rq.cpu).poll_time_limit;
  int chosen = -1;
  for (int i = 0; i < static_cast<int>(states.size()); ++i) {
    const auto& s = states[i];
    if (s.disabled) continue;
    if (poll_limited && s.is_poll()) continue;
    if (chosen < 0 || s.target_residency_ns <= predicted) chosen = i;
  }
  stop_tick = predicted >= tick && chosen >= 0 && !states[chosen].is_poll();
  return chosen;  // -1: no usable state -> default_idle
}

// menu_update(): remember how long the CPU really stayed idle.
void menu_update(Kernel& k, int cpu, int64_t measured_ns) {
  MenuDevice& data = k.menu(cpu);
  if (data.nr == kMenuIntervals) {
    std::copy(data.intervals + 1, data.intervals + kMenuIntervals, data.intervals);
    --data.nr;
  }
  data.intervals[data.nr++] = measured_ns;
}

}  // namespace schedlab::kernel
