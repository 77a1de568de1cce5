// HALTPOLL_GOVERNOR: the cpuidle haltpoll governor (Marcelo Tosatti, "cpuidle: add haltpoll
// governor", v5.4, drivers/cpuidle/governors/haltpoll.c), used when the profile's
// machine.governor is "haltpoll" (the cpuidle-haltpoll driver of KVM guests: state 0 POLL, state
// 1 halt). Instead of predicting like menu it keeps a per-CPU poll window, poll_limit_ns, from 0:
// with no window it halts (and lets the tick stop); after a halt it polls up to the window; a
// poll that ran out of its window halts next. After every halt the window grows when the halt
// was short (a wake-up came soon after the CPU gave up polling) and shrinks when it was longer
// than guest_halt_poll_ns. The parameters are the profile's [guest] guest_halt_poll_* (what
// `schedlab host probe` read from /sys/module/haltpoll/parameters), else the kernel defaults.
// Without it (NO_HALTPOLL_GOVERNOR) menu stands in for every governor, as before. The governor
// is an ops table (cpuidle.hpp) this change installs at boot; the idle path calls it.
#include "kernel/changes/haltpoll_governor.hpp"

#include <algorithm>
#include <vector>

#include "kernel/change.hpp"
#include "kernel/cpuidle.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

HaltpollParams haltpoll_defaults() {
  // module_param defaults in drivers/cpuidle/governors/haltpoll.c (docs/sources.md HALTPOLL).
  return {200000, 2, 50000, 2, true};
}

HaltpollParams haltpoll_params(const machine::Machine& m) {
  HaltpollParams p = haltpoll_defaults();
  const machine::Guest& g = m.guest;
  if (!g.present) return p;
  auto take = [](const machine::Recorded& r, int64_t& out) {
    if (r.known()) out = static_cast<int64_t>(r.value);
  };
  take(g.guest_halt_poll_ns, p.guest_halt_poll_ns);
  take(g.guest_halt_poll_grow, p.guest_halt_poll_grow);
  take(g.guest_halt_poll_grow_start, p.guest_halt_poll_grow_start);
  take(g.guest_halt_poll_shrink, p.guest_halt_poll_shrink);
  if (g.guest_halt_poll_allow_shrink.known()) p.guest_halt_poll_allow_shrink = g.guest_halt_poll_allow_shrink.value != 0;
  return p;
}

int64_t haltpoll_adjust_poll_limit(int64_t limit, int64_t block_ns, const HaltpollParams& p, int& change) {
  change = 0;
  if (block_ns > limit && block_ns <= p.guest_halt_poll_ns) {
    int64_t v = limit * p.guest_halt_poll_grow;
    v = std::min(std::max(v, p.guest_halt_poll_grow_start), p.guest_halt_poll_ns);
    change = v != limit ? 1 : 0;
    return v;
  }
  if (block_ns > p.guest_halt_poll_ns && p.guest_halt_poll_allow_shrink) {
    int64_t v = p.guest_halt_poll_shrink == 0 ? 0 : limit / p.guest_halt_poll_shrink;
    if (v < p.guest_halt_poll_grow_start) v = 0;
    change = v != limit ? -1 : 0;
    return v;
  }
  return limit;
}

namespace {

// The change picks the governor at boot: where it is on and the profile's machine.governor is
// "haltpoll" (with the cpuidle-haltpoll driver's two states), its constructor installs the
// haltpoll ops table (cpuidle.hpp) in place of menu's. It has no hooks: the idle path calls the
// governor through the table.
class HaltpollGovernor final : public Change {
 public:
  enum Counter { kGrow, kShrink, kPollTimeout };
  static constexpr int kPoll = 0, kHalt = 1;  // the cpuidle-haltpoll driver's states

  HaltpollGovernor(Kernel& k, const ChangeType& t)
      : Change(k, t), p_(haltpoll_params(k.m)), cpu_(k.nr_cpus()) {
    if (k.m.governor != "haltpoll" || k.m.idle_states.size() < 2) return;
    k.cpuidle().governor = &kOps;
    k.cpuidle().governor_data = this;
  }

  static ChangeInfo info() {
    return {
        .name = "HALTPOLL_GOVERNOR",
        .default_on = true,
        .help =
            "the haltpoll cpuidle governor where machine.governor = haltpoll: poll up to an "
            "adaptive "
            "per-CPU window (guest_halt_poll_ns), then halt; off: menu stands in",
        .origin =
            "drivers/cpuidle/governors/haltpoll.c (Marcelo Tosatti, cpuidle: add haltpoll "
            "governor, v5.4); "
            "arm64: [PATCH v6 00/10] Enable haltpoll on arm64 "
            "(20240726201332.626395-1-ankur.a.arora@oracle.com)",
        .counters = {
            {"haltpoll_grow", "count", "poll windows grown after a short halt", true},
            {"haltpoll_shrink", "count", "poll windows shrunk after a long halt", true},
            {"haltpoll_poll_timeout", "count", "polls that ran out of their window (then halt)"}}};
  }

  // haltpoll_select()
  int select(Rq& rq, bool& stop_tick) {
    PerCpu& s = cpu_[rq.cpu];
    const bool poll_usable = !k.m.idle_states[kPoll].disabled && k.m.idle_states[kPoll].polling;
    // cpuidle_idle_call()'s default is to stop the tick; the governor clears it when polling.
    int state = kHalt;
    stop_tick = true;
    if (s.poll_limit_ns == 0 || !poll_usable) {
      state = kHalt;
    } else if (s.last_state == kPoll && k.cpuidle(rq.cpu).poll_time_limit) {
      state = kHalt;  // no event in the poll window: halt
      counter(rq, kPollTimeout)++;
    } else {
      state = kPoll;  // after a halt, or a poll ended by an event: poll again
      stop_tick = false;
    }
    s.last_state = state;
    return state;
  }

  // cpuidle_poll_time(): the window, once there is one.
  int64_t poll_time(Rq& rq, int64_t limit_ns) const {
    return cpu_[rq.cpu].poll_limit_ns > 0 ? cpu_[rq.cpu].poll_limit_ns : limit_ns;
  }

  // haltpoll_reflect(): after a halt, adjust_poll_limit() with its residency.
  void reflect(Rq& rq, int state, int64_t block_ns) {
    if (state != kHalt) return;
    PerCpu& s = cpu_[rq.cpu];
    int change = 0;
    s.poll_limit_ns = haltpoll_adjust_poll_limit(s.poll_limit_ns, block_ns, p_, change);
    if (change > 0) counter(rq, kGrow)++;
    if (change < 0) counter(rq, kShrink)++;
  }

 private:
  static HaltpollGovernor& self(Kernel& k) {
    return *static_cast<HaltpollGovernor*>(k.cpuidle().governor_data);
  }
  static const CpuidleGovernorOps kOps;

  struct PerCpu {
    int64_t poll_limit_ns = 0;  // dev->poll_limit_ns
    int last_state = -1;        // dev->last_state_idx
  };
  const HaltpollParams p_;
  std::vector<PerCpu> cpu_;
};

// The governor's bookkeeping costs are the idle path's own (cpuidle_select_ns, cpuidle_exit_ns).
const CpuidleGovernorOps HaltpollGovernor::kOps = {
    .name = "haltpoll",
    .select = [](Kernel& k, Rq& rq, bool& stop_tick) { return self(k).select(rq, stop_tick); },
    .reflect = [](Kernel& k, Rq& rq, int state, int64_t residency_ns, bool /*by_tick*/) {
      self(k).reflect(rq, state, residency_ns);
    },
    .poll_time = [](Kernel& k, Rq& rq, int64_t limit_ns) { return self(k).poll_time(rq, limit_ns); },
};
SCHEDLAB_REGISTER_CHANGE(HaltpollGovernor);

}  // namespace
}  // namespace schedlab::kernel
