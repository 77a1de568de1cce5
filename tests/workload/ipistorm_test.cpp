#include <gtest/gtest.h>

#include <regex>

#include "../common/fixture.hpp"
#include "run_helper.hpp"
#include "workload/ipistorm.hpp"

using namespace schedlab;
using wltest::parse_error;
using wltest::run_workload;

TEST(Ipistorm, Defaults) {
  auto o = workload::parse_ipistorm_options({}, 4);
  EXPECT_EQ(o.numipi, 100000);
  EXPECT_TRUE(o.single);
  EXPECT_EQ(o.offset, 1);
  EXPECT_EQ(o.cpulist, std::vector<int>{0});
  EXPECT_TRUE(o.wait);
  EXPECT_EQ(o.delay_us, 0);
}

TEST(Ipistorm, ParsesModuleParameters) {
  auto o = workload::parse_ipistorm_options(
      {"ipistorm.ko", "numipi=50", "single=1", "offset=2", "cpulist=0,2-3", "wait=0", "delay=5"}, 8);
  EXPECT_EQ(o.numipi, 50);
  EXPECT_EQ(o.offset, 2);
  EXPECT_EQ(o.cpulist, (std::vector<int>{0, 2, 3}));
  EXPECT_FALSE(o.wait);
  EXPECT_EQ(o.delay_us, 5);
  EXPECT_EQ(parse_error({"insmod", "ipistorm.ko", "numipi=10", "cpulist=1"}), "");
  EXPECT_EQ(parse_error({"ipistorm", "numipi=10"}), "");
}

TEST(Ipistorm, BadParametersNameTheParameter) {
  EXPECT_NE(parse_error({"ipistorm", "bogus=1"}).find("bogus"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "numipi=abc"}).find("numipi"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "numipi=0"}).find("numipi"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "cpulist=4"}, 4).find("cpulist"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "cpulist=3-1"}, 4).find("cpulist"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "cpulist=a"}, 4).find("cpulist"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "wait=maybe"}).find("wait"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "single=0"}).find("single"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "offset=-1"}).find("offset"), std::string::npos);
  EXPECT_NE(parse_error({"ipistorm", "numipi"}).find("numipi"), std::string::npos);
  EXPECT_NE(parse_error({"insmod", "other.ko"}).find("insmod"), std::string::npos);
}

TEST(Ipistorm, RunsEveryCallOnTheTargetAndReportsTime) {
  auto r = run_workload(fixture::test_machine(), {"ipistorm", "numipi=2000", "cpulist=0,1"});
  ASSERT_TRUE(r.w->finished());
  // Besides ipistorm's calls, the senders' ticks kick the NOHZ idle balancer (a csd each).
  auto t = r.k->total();
  EXPECT_GE(t.call_functions_run, 4000);
  EXPECT_LE(t.call_functions_run, 4000 + t.nohz_ilb_kick);
  std::string rep = r.w->report();
  EXPECT_TRUE(std::regex_search(rep, std::regex("(^|\n)Time: \\d+\\.\\d{3}\n"))) << rep;
  EXPECT_TRUE(std::regex_search(rep, std::regex("ipistorm: 0 -> 1\nipistorm: 1 -> 2\n"))) << rep;
  for (const auto& m : r.w->metrics()) {
    EXPECT_GT(m.value, 0) << m.name;
    EXPECT_FALSE(m.higher_is_better) << m.name;
  }
}

// With delay= the target is fully back in idle when each call comes.
TEST(Ipistorm, PollingIdleTargetGetsNoIpis) {
  // Every idle state of the test machine is polling (POLL, MWAIT C1/C6).
  auto r = run_workload(fixture::test_machine(), {"ipistorm", "numipi=300", "delay=20"});
  ASSERT_TRUE(r.w->finished());
  // The target (CPU 1) runs every call from its idle loop's flush, none from an IPI (an IPI
  // it got was an idle-balance kick, also a csd).
  const auto& c = r.k->rq(1).c;
  EXPECT_EQ(c.call_functions_run - c.nohz_csd_run, 300);
  EXPECT_EQ(c.csd_run_ipi + c.csd_run_idle, c.call_functions_run);
  EXPECT_LE(c.csd_run_ipi, c.nohz_csd_run);
  EXPECT_GE(c.csd_run_idle, 300);
}

TEST(Ipistorm, NonPollingIdleTargetGetsAnIpiPerCall) {
  auto m = fixture::test_machine();
  machine::disable_idle_states(m, {"POLL", "C1", "C6"});
  auto r = run_workload(m, {"ipistorm", "numipi=300", "delay=20"});
  ASSERT_TRUE(r.w->finished());
  const auto& c = r.k->rq(1).c;
  EXPECT_EQ(c.call_functions_run - c.nohz_csd_run, 300);
  EXPECT_EQ(c.csd_run_ipi, c.call_functions_run);
  EXPECT_GE(c.ipi_received[1], 300);  // one handler may run two queued csds
  EXPECT_LE(c.ipi_received[1], c.call_functions_run);
  EXPECT_EQ(r.k->total().wake_polling_no_ipi, 0);
}

// Back to back (wait=1, no delay) each call finds the target either polling (a need_resched
// kick, then schedule_idle() with polling cleared) or not (inside that schedule_idle(), or in a
// non-polling state): a real IPI. Every call is exactly one of the two.
TEST(Ipistorm, BackToBackCallsAreKicksOrIpis) {
  for (bool disable : {false, true}) {
    auto m = fixture::test_machine();
    if (disable) machine::disable_idle_states(m, {"POLL", "C1", "C6"});
    auto r = run_workload(m, {"ipistorm", "numipi=1000"});
    ASSERT_TRUE(r.w->finished());
    const auto& c = r.k->rq(1).c;
    EXPECT_EQ(c.call_functions_run - c.nohz_csd_run, 1000);
    EXPECT_EQ(c.csd_run_ipi + c.csd_run_idle, c.call_functions_run) << disable;
    EXPECT_EQ(c.csd_run_ipi, c.ipi_received[1]) << disable;
    EXPECT_GT(c.csd_run_ipi, c.nohz_csd_run) << disable;
    // With polling states some calls find the target polling again in time: a kick.
    if (!disable) {
      EXPECT_GT(c.csd_run_idle, c.nohz_csd_run);
    }
  }
}

TEST(Ipistorm, DelayAndNoWaitFinish) {
  auto r = run_workload(fixture::test_machine(), {"ipistorm", "numipi=100", "delay=10", "wait=0"});
  ASSERT_TRUE(r.w->finished());
  EXPECT_EQ(r.k->total().call_functions_run, 100);
  // 100 sleeps of 10 us each at least.
  EXPECT_GE(wltest::metric(*r.w, "time"), 100 * 10e-6);
}

TEST(Ipistorm, Deterministic) {
  auto a = run_workload(fixture::test_machine(), {"ipistorm", "numipi=500", "cpulist=0-3"});
  auto b = run_workload(fixture::test_machine(), {"ipistorm", "numipi=500", "cpulist=0-3"});
  EXPECT_EQ(a.w->report(), b.w->report());
  EXPECT_EQ(a.k->end_time(), b.k->end_time());
}
