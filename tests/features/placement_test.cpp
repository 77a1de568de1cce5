// The wakeup placement changes SIS_NODE and SIS_SHORT, each shown by its effect on the counters.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::change_counter;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {


// One socket of 8 CPUs (no SMT) in two LLCs of 4, or two sockets of one 4-CPU LLC each; hogs
// pinned on CPUs 0-3, so the first LLC has no idle CPU and the other is idle.
std::unique_ptr<Kernel> first_llc_busy(const std::string& list, int sockets) {
  auto m = sockets == 1 ? test_machine(1, 8, 1, 4) : test_machine(2, 4, 1, 4);
  auto k = std::make_unique<Kernel>(m, features(list), KernelOptions{1, nullptr});
  for (int c = 0; c < 4; ++c) k->create_task("hog", hog(), pinned(c));
  k->run(Time::ms(10));
  for (auto& sds : k->sched().llcs) sds.nr_idle_scan = 4;  // SIS_UTIL lets each scan its whole LLC
  return k;
}

}  // namespace

TEST(SisNode, ScansTheOtherLlcsOfTheSocketWhenTheTargetsLlcIsBusy) {
  int found[2];
  int64_t cost[2];
  int i = 0;
  for (const char* f : {"", "SIS_NODE"}) {
    auto k = first_llc_busy(f, 1);
    Task p;
    p.cpu = 1;
    cost[i] = 0;
    found[i] = kernel::select_idle_sibling(*k, 0, &p, 1, 1, cost[i]);
    const auto& c = k->rq(0).c;
    EXPECT_EQ(change_counter(c, "select_idle_node_calls"), i);
    EXPECT_EQ(change_counter(c, "select_idle_node_llcs"), i);
    EXPECT_EQ(change_counter(c, "select_idle_node_found"), i);
    // The target's LLC first (CPUs 2, 3, 0), then with SIS_NODE the other from its first CPU.
    EXPECT_EQ(c.select_idle_cpu_calls, 1 + i);
    ++i;
  }
  EXPECT_EQ(found[0], 1);  // nothing idle in the LLC: the target
  EXPECT_EQ(found[1], 5);  // select_idle_cpu() from CPU 4 starts at 5
  EXPECT_GT(cost[1], cost[0]);
}

TEST(SisNode, NeverCrossesANumaNode) {
  // Two sockets of one LLC: the LLC domain's parent is NUMA, so select_idle_node() stops.
  auto k = first_llc_busy("SIS_NODE", 2);
  Task p;
  p.cpu = 1;
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_sibling(*k, 0, &p, 1, 1, cost), 1);
  EXPECT_EQ(change_counter(k->rq(0).c, "select_idle_node_calls"), 0);
  EXPECT_EQ(k->rq(0).c.select_idle_cpu_calls, 1);
}

namespace {
// A waker pinned on CPU 0 wakes (WF_SYNC) an unpinned wakee every 500 us, 200 times, while hogs keep CPUs 1-3
// busy: wake_affine() picks CPU 0, whose LLC has no idle CPU.
struct SyncPair {
  std::unique_ptr<Kernel> k;
  Task* wakee = nullptr;
};
SyncPair sync_pair(const std::string& list) {
  SyncPair s;
  s.k = std::make_unique<Kernel>(test_machine(1, 8, 1, 4), features(list),
                                 KernelOptions{1, nullptr});
  for (int c = 1; c < 4; ++c) s.k->create_task("hog", hog(), pinned(c));
  kernel::TaskOptions o;
  o.start_blocked = true;
  s.wakee = s.k->create_task("wakee", lambda([](Api&, Task&, int i) {
                               return i % 2 == 0 ? Action::compute(50000) : Action::block();
                             }),
                             o);
  Task* v = s.wakee;
  s.k->create_task("waker", lambda([v](Api&, Task&, int i) {
                     if (i == 0) return Action::sleep(30000000);  // SIS_UTIL has seen both LLCs
                     if (i > 400) return Action::exit();
                     if (i % 2 == 1) return Action::compute(500000);
                     return Action::wake(v, true);
                   }),
                   pinned(0));
  s.k->run(Time::ms(200));
  return s;
}
}  // namespace

TEST(SisNode, SyncWakeupsLeaveTheBusyLlcInsteadOfQueueing) {
  auto off = sync_pair("");
  auto on = sync_pair("SIS_NODE");
  auto c_off = off.k->total();
  auto c_on = on.k->total();
  EXPECT_EQ(change_counter(c_off, "select_idle_node_found"), 0);
  EXPECT_GT(change_counter(c_on, "select_idle_node_found"), 20);
  EXPECT_LE(change_counter(c_on, "select_idle_node_found"),
            change_counter(c_on, "select_idle_node_calls"));
  // With it the wakee runs on an idle CPU of the other LLC.
  EXPECT_GE(on.wakee->cpu, 4);
}

namespace {
// One LLC of 8 CPUs, no SMT: hogs on CPUs 2-7 (never asleep: dur_avg stays 0, "short" as v2
// defines it) and on CPU 1 either one more hog or a task that runs 20 ms between 1 ms sleeps
// (long). CPU 0 is idle.
std::unique_ptr<Kernel> busy_llc_with(const std::string& list, bool long_target) {
  auto k = std::make_unique<Kernel>(test_machine(1, 8, 1, 8), features(list),
                                    KernelOptions{1, nullptr});
  for (int c = 2; c < 8; ++c) k->create_task("hog", hog(), pinned(c));
  if (long_target)
    k->create_task("long", lambda([](Api&, Task&, int i) {
                     return i % 2 == 0 ? Action::compute(20000000) : Action::sleep(1000000);
                   }),
                   pinned(1));
  else
    k->create_task("hog", hog(), pinned(1));
  k->run(Time::ms(215));  // the long task is 5 ms into its 11th run
  return k;
}

int probe(Kernel& k, int nr_idle_scan, int64_t& scanned) {
  k.llc_shared(0).nr_idle_scan = nr_idle_scan;
  Task p;
  p.cpu = 1;
  int64_t cost = 0;
  int64_t before = k.rq(0).c.select_idle_cpu_scanned;
  int cpu = kernel::select_idle_cpu(k, 0, &p, 1, false, cost);
  scanned = k.rq(0).c.select_idle_cpu_scanned - before;
  return cpu;
}
}  // namespace

TEST(SisShort, BusyLlcTakesTheTargetWhenItsOnlyTaskIsShort) {
  int64_t scanned = 0;
  // SIS_UTIL depth 3 of 8 CPUs (5 * 3 < 3 * 8): busy.
  auto on = busy_llc_with("SIS_SHORT", false);
  EXPECT_EQ(probe(*on, 2, scanned), 1);
  EXPECT_EQ(scanned, 0);
  EXPECT_EQ(change_counter(on->rq(0).c, "sis_short_target"), 1);
  // Depth 5 (5 * 5 >= 24): not busy enough, the scan runs (CPUs 2..5, then the limit).
  EXPECT_EQ(probe(*on, 4, scanned), -1);
  EXPECT_EQ(scanned, 4);
  // Depth 1 (nr_idle_scan 0): an overloaded LLC is not scanned and no CPU is taken.
  EXPECT_EQ(probe(*on, 0, scanned), -1);
  EXPECT_EQ(change_counter(on->rq(0).c, "sis_short_target"), 1);

  auto off = busy_llc_with("", false);
  EXPECT_EQ(probe(*off, 2, scanned), -1);
  EXPECT_EQ(scanned, 2);
  EXPECT_EQ(change_counter(off->rq(0).c, "sis_short_target"), 0);
}

TEST(SisShort, ALongTargetTaskIsNotTaken) {
  auto k = busy_llc_with("SIS_SHORT", true);
  // Ten 20 ms runs ended in a voluntary sleep: dur_avg rose past the 3 ms min granularity.
  EXPECT_GE(change_counter(k->rq(1).c, "sis_short_dur_updates"), 3);
  int64_t scanned = 0;
  EXPECT_EQ(probe(*k, 2, scanned), -1);
  EXPECT_EQ(scanned, 2);
  EXPECT_EQ(change_counter(k->rq(0).c, "sis_short_target"), 0);
}

TEST(SisShort, WakeAffineIdleChoosesTheWakingCpuWhenItsOnlyTaskIsShort) {
  // CPU 1 (the wakee's prev) runs a hog and CPU 0 (the waker's) a hog or the long task: neither
  // is idle and the wakeup is not WF_SYNC, so WA_IDLE has no answer and WA_WEIGHT keeps prev.
  struct Case {
    const char* features;
    bool long_waker;
    int expect;
  };
  for (const Case& c : {Case{"", false, 1}, Case{"SIS_SHORT", false, 0}, Case{"SIS_SHORT", true, 1}}) {
    SCOPED_TRACE(std::string(c.features) + (c.long_waker ? " long waker" : " short waker"));
    auto k = std::make_unique<Kernel>(test_machine(1, 4, 1, 4), features(c.features),
                                      KernelOptions{1, nullptr});
    k->create_task("hog", hog(), pinned(1));
    if (c.long_waker)
      k->create_task("long", lambda([](Api&, Task&, int i) {
                       return i % 2 == 0 ? Action::compute(20000000) : Action::sleep(1000000);
                     }),
                     pinned(0));
    else
      k->create_task("hog", hog(), pinned(0));
    k->run(Time::ms(215));
    Task p;  // asleep after running on CPU 1: its load still there (wake_affine_weight())
    p.cpu = 1;
    p.sched_class = &kernel::fair_sched_class;
    p.load_last = k->now();  // a load of its full weight now
    kernel::pelt_enqueue(*k, k->rq(1), &p);
    kernel::pelt_dequeue(*k, k->rq(1), &p);
    int64_t cost = 0;
    EXPECT_EQ(kernel::wake_affine(*k, 0, 1, false, nullptr, &p, cost), c.expect);
    EXPECT_EQ(change_counter(k->rq(0).c, "sis_short_affine"), c.expect == 0 ? 1 : 0);
  }
}
