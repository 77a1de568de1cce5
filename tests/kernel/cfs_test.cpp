// The CFS era (NO_EEVDF, the fair class before v6.6) against EEVDF on one hand-built CPU:
// wakeup_gran, the sleeper credit of GENTLE_FAIR_SLEEPERS, check_preempt_tick()'s ideal slice,
// and the counters each moves. The test machine's base_slice_ns is 3 ms, so sched_latency is
// 24 ms, min_granularity 3 ms and wakeup_gran 4 ms (the kernel's 6 / 0.75 / 1 ms scaled by 4).
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {

constexpr int64_t kMs = 1000000;

// B computes 20 ms, sleeps `sleep_ns`, then computes 1 ms; A is a CPU hog. B is created first,
// A second, both on CPU 0. Records when B's sleep ended and when its program resumed, and both
// vruntimes at that resumption. Under CFS (START_DEBIT) B starts at vruntime 24 ms (the whole
// period: it is alone), A at 12 ms; with 12 ms slices A runs 0-13 ms, B 13-26, A 26-39, B 39-46,
// so B falls asleep at vruntime 44 ms with A at 38 ms: after S ms of sleep A is S - 6 ms ahead.
struct Sleeper {
  std::unique_ptr<Kernel> k;
  Task* a = nullptr;
  Task* b = nullptr;
  Time sleep_end;
  Time resumed;
  int64_t a_v_at_resume = 0, b_v_at_resume = 0;
};

Sleeper run_sleeper(const std::string& features_list, int64_t sleep_ns) {
  Sleeper r;
  r.k = std::make_unique<Kernel>(test_machine(1, 1, 1, 1), features(features_list),
                                 KernelOptions{1, nullptr});
  Sleeper* rp = &r;
  r.b = r.k->create_task("b", lambda([rp, sleep_ns](Api& k, Task& self, int n) {
                           if (n == 0) return Action::compute(20 * kMs);
                           if (n == 1) {
                             rp->sleep_end = k.now() + Time::ns(sleep_ns);
                             return Action::sleep(sleep_ns);
                           }
                           if (n == 2) {
                             rp->resumed = k.now();
                             rp->a_v_at_resume = rp->a->vruntime;
                             rp->b_v_at_resume = self.vruntime;
                             return Action::compute(kMs);
                           }
                           return Action::exit();
                         }),
                         pinned(0));
  r.a = r.k->create_task("a", hog(), pinned(0));
  r.k->run(Time::ms(100));
  return r;
}

// `n` CPU hogs on CPU 0 for `ms` milliseconds.
std::unique_ptr<Kernel> run_hogs(const std::string& features_list, int n, int ms) {
  auto k = std::make_unique<Kernel>(test_machine(1, 1, 1, 1), features(features_list),
                                    KernelOptions{1, nullptr});
  for (int i = 0; i < n; ++i) k->create_task("hog" + std::to_string(i), hog(), pinned(0));
  k->run(Time::ms(ms));
  return k;
}

}  // namespace

TEST(CfsEra, TunablesAreTheKernelDefaultsScaledLikeBaseSlice) {
  Kernel k(test_machine(1, 1, 1, 1), features("NO_EEVDF"), KernelOptions{1, nullptr});
  const kernel::CfsTunables t = kernel::cfs_tunables(k);
  EXPECT_EQ(t.min_granularity_ns, 3 * kMs);     // base_slice_ns: 0.75 ms x 4
  EXPECT_EQ(t.latency_ns, 24 * kMs);            // 6 ms x 4
  EXPECT_EQ(t.wakeup_granularity_ns, 4 * kMs);  // 1 ms x 4
  EXPECT_EQ(t.nr_latency, 8);
}

// B sleeps 8 ms (46-54 ms): A is then 2 ms ahead, within the 4 ms wakeup_gran, so CFS lets A run
// on until its slice ends at the 59 ms tick (13 ms after A was switched in at 46 ms), 7 ms ahead
// by then; under EEVDF B, eligible (it slept with positive lag) with the earlier deadline, is
// the pick at once.
TEST(CfsEra, WakeeWithinWakeupGranDoesNotPreempt) {
  Sleeper cfs = run_sleeper("NO_EEVDF", 8 * kMs);
  Sleeper eevdf = run_sleeper("", 8 * kMs);
  const auto& c = cfs.k->rq(0).c;
  EXPECT_EQ(c.cfs_wakeup_preempt, 0);
  EXPECT_EQ(c.cfs_wakeup_within_gran, 1);
  EXPECT_EQ(c.cfs_sleeper_capped, 0);  // 8 ms of sleep is less than the 12 ms credit
  EXPECT_NEAR(cfs.a_v_at_resume - cfs.b_v_at_resume, 7 * kMs, 200000);  // A ran on 5 ms
  EXPECT_GT(cfs.resumed - cfs.sleep_end, Time::ms(4));  // waited for A's slice to end
  EXPECT_LT(eevdf.resumed - eevdf.sleep_end, Time::us(50));
  // EEVDF moves none of the CFS counters.
  const auto& e = eevdf.k->rq(0).c;
  EXPECT_EQ(e.cfs_wakeup_preempt + e.cfs_wakeup_within_gran + e.cfs_sleeper_capped, 0);
  EXPECT_EQ(e.cfs_tick_preempt_slice + e.cfs_tick_preempt_ahead + e.cfs_place_fork, 0);
}

// A sleep of 12 ms puts A 6 ms ahead: beyond wakeup_gran, B preempts at once and A becomes no
// last buddy (the rq has fewer than sched_nr_latency tasks).
TEST(CfsEra, WakeeBeyondWakeupGranPreempts) {
  Sleeper cfs = run_sleeper("NO_EEVDF", 12 * kMs);
  const auto& c = cfs.k->rq(0).c;
  EXPECT_EQ(c.cfs_wakeup_preempt, 1);
  EXPECT_EQ(c.cfs_wakeup_within_gran, 0);
  EXPECT_LT(cfs.resumed - cfs.sleep_end, Time::us(50));
  EXPECT_EQ(c.cfs_pick_last_buddy, 0);
}

// GENTLE_FAIR_SLEEPERS: after 40 ms of sleep B's vruntime would be 34 ms behind A's; the
// placement lifts it to min_vruntime (A's) - sched_latency / 2 = 12 ms behind.
TEST(CfsEra, SleeperCreditCapsAtHalfTheLatency) {
  Sleeper cfs = run_sleeper("NO_EEVDF", 40 * kMs);
  const auto& c = cfs.k->rq(0).c;
  EXPECT_EQ(c.cfs_sleeper_capped, 1);
  EXPECT_EQ(c.cfs_wakeup_preempt, 1);  // 12 ms > wakeup_gran
  const int64_t behind = cfs.a_v_at_resume - cfs.b_v_at_resume;
  EXPECT_NEAR(behind, 12 * kMs, 50000);  // A ran a few us on after the wakeup, B paid its switch-in
}

// Two hogs: sched_slice() is sched_latency / 2 = 12 ms each, so the tick preempts after 12 ms
// (the first tick past it: 13 ms runs); EEVDF switches at the 3 ms slice.
TEST(CfsEra, TickPreemptsAfterTheIdealSlice) {
  auto cfs = run_hogs("NO_EEVDF", 2, 131);
  const auto& c = cfs->rq(0).c;
  EXPECT_EQ(c.cfs_tick_preempt_slice, 10);  // at 13, 26, ..., 130 ms
  EXPECT_EQ(c.cfs_tick_preempt_ahead, 0);
  EXPECT_EQ(c.cfs_place_fork, 2);
  auto eevdf = run_hogs("", 2, 131);
  EXPECT_GT(eevdf->rq(0).c.context_switches, 3 * c.context_switches);
}

// Ten hogs: past sched_nr_latency the period is 10 x min_granularity, so each slice is the
// 3 ms min_granularity (4 ms runs at a 1 ms tick).
TEST(CfsEra, PastNrLatencyTheSliceIsMinGranularity) {
  auto cfs = run_hogs("NO_EEVDF", 10, 101);
  const auto& c = cfs->rq(0).c;
  EXPECT_GE(c.cfs_tick_preempt_slice + c.cfs_tick_preempt_ahead, 24);
  EXPECT_LE(c.cfs_tick_preempt_slice + c.cfs_tick_preempt_ahead, 26);
}
