// The warm start (kernel/warm.cpp): at t = 0 the machine is one that has been up and idle, not
// one that has just booted (KernelOptions::cold). State asserted on a hand-built two-LLC machine.
#include <gtest/gtest.h>

#include <set>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {
// 1 socket, 4 cores x 2 threads, 2 cores per LLC: 8 CPUs, LLCs {0-3} and {4-7}; domains SMT (2),
// MC (4, the LLC), PKG (8).
machine::Machine two_llc() { return test_machine(1, 4, 2, 2); }
KernelOptions opts(uint64_t seed, bool cold) {
  KernelOptions o;
  o.seed = seed;
  o.cold = cold;
  return o;
}
}  // namespace

TEST(WarmStart, StateAtTimeZeroOnATwoLlcMachine) {
  auto m = two_llc();
  Kernel k(m, Features(), opts(1, false));
  ASSERT_EQ(k.nr_cpus(), 8);
  ASSERT_EQ(k.topo.nr_llcs(), 2);
  const int64_t period = k.tick_period_ns();
  std::set<int64_t> last_wakes;
  Time min_next = Time::max();
  for (int cpu = 0; cpu < 8; ++cpu) {
    const auto& rq = k.rq(cpu);
    ASSERT_EQ(rq.sd.size(), 3u) << cpu;
    // Every domain last balanced at the jiffy the CPU was last awake, within the last second,
    // and found balanced each time: balance_interval doubled to max_interval.
    const Time last = rq.sd.front().last_balance;
    EXPECT_LT(last.count(), 0) << cpu;
    EXPECT_GE(last.count(), -kernel::warm_idle_wake_ns()) << cpu;
    EXPECT_EQ(last.count() % period, 0) << cpu;
    last_wakes.insert(last.count());
    for (const auto& sd : rq.sd) {
      EXPECT_EQ(sd.last_balance, last) << cpu << " " << sd.name();
      EXPECT_EQ(sd.balance_interval_ms, sd.max_interval_ms) << cpu << " " << sd.name();
    }
    EXPECT_EQ(rq.sd[0].balance_interval_ms, 4);   // SMT: 2 CPUs, max_interval 2 x 2 ms
    EXPECT_EQ(rq.sd[1].balance_interval_ms, 8);   // MC
    EXPECT_EQ(rq.sd[2].balance_interval_ms, 16);  // PKG
    EXPECT_EQ(rq.next_balance, last + Time::ms(4)) << cpu;
    min_next = std::min(min_next, rq.next_balance);
    // Long idle: PELT decayed, no blocked load left, tick stopped, in the NOHZ idle mask and out
    // of the LLC's busy count; menu's history full of long idle periods.
    EXPECT_EQ(rq.util_avg, 0.0);
    EXPECT_FALSE(rq.has_blocked_load);
    EXPECT_TRUE(rq.idle_stamp_valid);
    EXPECT_EQ(rq.idle_stamp, last);
    EXPECT_TRUE(k.tick_sched(cpu).tick_stopped) << cpu;
    EXPECT_FALSE(k.cpu(cpu).tick.scheduled()) << cpu;
    EXPECT_TRUE(rq.nohz_tick_stopped) << cpu;
    EXPECT_TRUE(k.nohz().test(cpu)) << cpu;
    EXPECT_TRUE(rq.sd_nohz_idle) << cpu;
    EXPECT_EQ(k.menu(cpu).nr, kernel::MenuDevice::kIntervals);
    for (int i = 0; i < kernel::MenuDevice::kIntervals; ++i)
      EXPECT_EQ(k.menu(cpu).intervals[i], kernel::warm_idle_wake_ns());
  }
  // Staggered: the CPUs were not all last awake at the same jiffy.
  EXPECT_GT(last_wakes.size(), 1u);
  EXPECT_EQ(k.nohz().nr_cpus, 8);
  EXPECT_FALSE(k.nohz().has_blocked);
  EXPECT_EQ(k.nohz().next_balance, min_next.count() / period);
  for (int l = 0; l < 2; ++l) {
    // update_idle_cpu_scan() of an idle LLC: scan all 4 CPUs; no CPU busy; idle cores.
    EXPECT_EQ(k.llc_shared(l).nr_idle_scan, 4) << l;
    EXPECT_EQ(k.llc_shared(l).nr_busy_cpus, 0) << l;
    EXPECT_TRUE(k.llc_shared(l).has_idle_cores) << l;
  }
}

TEST(WarmStart, ColdKeepsTheBootState) {
  auto m = two_llc();
  Kernel k(m, Features(), opts(1, true));
  for (int cpu = 0; cpu < 8; ++cpu) {
    const auto& rq = k.rq(cpu);
    for (const auto& sd : rq.sd) EXPECT_EQ(sd.balance_interval_ms, sd.min_interval_ms);
    EXPECT_EQ(k.menu(cpu).nr, 0);
    EXPECT_FALSE(rq.idle_stamp_valid);
    // The tick is armed at boot; do_idle() stops it only after its entry steps.
    EXPECT_TRUE(k.cpu(cpu).tick.scheduled()) << cpu;
  }
  for (int l = 0; l < 2; ++l) EXPECT_EQ(k.llc_shared(l).nr_idle_scan, 0) << l;
}

TEST(WarmStart, StaggerFollowsTheSeed) {
  auto m = two_llc();
  auto wakes = [&](uint64_t seed) {
    Kernel k(m, Features(), opts(seed, false));
    std::vector<int64_t> v;
    for (int cpu = 0; cpu < 8; ++cpu) v.push_back(k.rq(cpu).sd.front().last_balance.count());
    return v;
  };
  EXPECT_EQ(wakes(1), wakes(1));
  EXPECT_NE(wakes(1), wakes(2));
}

TEST(WarmStart, IdlePollKeepsTheTick) {
  // cpu_idle_poll() never stops the tick: with idle=poll no CPU is tickless or NOHZ idle.
  auto m = two_llc();
  m.tunables.idle_poll = true;
  Kernel k(m, Features(), opts(1, false));
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_FALSE(k.tick_sched(cpu).tick_stopped) << cpu;
    EXPECT_TRUE(k.cpu(cpu).tick.scheduled()) << cpu;
    EXPECT_FALSE(k.nohz().test(cpu)) << cpu;
  }
  EXPECT_EQ(k.nohz().nr_cpus, 0);
  EXPECT_EQ(k.llc_shared(0).nr_busy_cpus, 4);
}

TEST(WarmStart, FirstBusyBalanceComesAtTheFirstBusyTick) {
  // Hogs on CPUs 0-3 (LLC 0). A busy CPU balances a domain busy_factor (16) x its interval after
  // the last time. From boot the first is 16 x 2 ms (SMT) after a stagger within one interval:
  // none in the first 20 ms. On the warm machine the CPUs last balanced up to a second ago, so
  // each whose last wake is older than 16 x 4 ms balances at its first busy tick.
  auto m = two_llc();
  auto balances = [&](bool cold, int ms) {
    Kernel k(m, Features(), opts(3, cold));
    for (int c = 0; c < 4; ++c) k.create_task("hog", hog(), pinned(c));
    k.run(Time::ms(ms));
    int64_t n = 0;
    for (int c = 0; c < 4; ++c) n += k.rq(c).c.load_balance_calls;
    return n;
  };
  EXPECT_EQ(balances(true, 20), 0);
  EXPECT_GT(balances(false, 3), 0);
}
