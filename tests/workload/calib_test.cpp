// The calibration microbenchmarks as model workloads (workload/calib.hpp): each pays the costs
// of the steps it runs.
#include <gtest/gtest.h>

#include "machine/machine.hpp"
#include "machine/param_api.hpp"
#include "run_helper.hpp"

using namespace schedlab;
using wltest::metric;
using wltest::parse_error;
using wltest::run_workload;

namespace {
machine::Machine with(const std::string& key, double v) {
  auto m = machine::load_profile("tiny-4");
  machine::set_param(m, key, v);
  return m;
}
double run_metric(const machine::Machine& m, const std::vector<std::string>& cmd, const std::string& name) {
  auto r = run_workload(m, cmd);
  EXPECT_TRUE(r.w->finished());
  return metric(*r.w, name);
}
}  // namespace

TEST(Calib, FutexPingPongHalfIsTwoSyscallsAndOneSwitch) {
  // Half a round trip: one FUTEX_WAKE and one FUTEX_WAIT call plus one pass through the
  // scheduler. (Whether the woken partner preempts the waker before it reaches FUTEX_WAIT, which
  // then returns at once, depends on the costs: the time is not linear in them.)
  auto base = machine::load_profile("tiny-4");
  auto r = run_workload(base, {"calib", "futex-pingpong", "-c", "1", "-n", "1000"});
  ASSERT_TRUE(r.w->finished());
  double h = metric(*r.w, "futex_pingpong_same_cpu_half");
  EXPECT_GT(h, static_cast<double>(base.costs.futex_wake_ns + base.costs.futex_wait_ns + base.costs.context_switch_ns));
  EXPECT_LT(h, 3.0 * static_cast<double>(base.costs.futex_wake_ns + base.costs.futex_wait_ns +
                                         base.costs.context_switch_ns + base.costs.schedule_ns + base.costs.ttwu_ns));
  // 2 switches per round trip (+ the start and the end): every half sleeps once.
  EXPECT_NEAR(static_cast<double>(r.k->total().context_switches), 2.0 * 1001, 10);
  auto slow = with("costs.futex_wait_ns", static_cast<double>(base.costs.futex_wait_ns + 5000));
  EXPECT_GT(run_metric(slow, {"calib", "futex-pingpong", "-c", "1", "-n", "1000"}, "futex_pingpong_same_cpu_half"),
            h + 4000);
}

TEST(Calib, ForkCallIsForkAndReapPaysExit) {
  auto base = machine::load_profile("tiny-4");
  double f = run_metric(base, {"calib", "fork", "-c", "0", "-n", "5"}, "fork_call");
  EXPECT_DOUBLE_EQ(f, static_cast<double>(base.costs.fork_ns));
  double r0 = run_metric(base, {"calib", "fork", "-c", "0", "-n", "5"}, "fork_exit_reap");
  double r1 = run_metric(with("costs.exit_ns", static_cast<double>(base.costs.exit_ns + 50000)),
                         {"calib", "fork", "-c", "0", "-n", "5"}, "fork_exit_reap");
  EXPECT_GT(r0, static_cast<double>(base.costs.exit_ns));
  EXPECT_NEAR(r1 - r0, 50000, 100);
}

TEST(Calib, WakeLatencyAcrossCpusAfterAGap) {
  auto base = machine::load_profile("tiny-4");
  auto r = run_workload(base, {"calib", "wake", "-c", "0,1", "-n", "40"});
  ASSERT_TRUE(r.w->finished());
  EXPECT_EQ(metric(*r.w, "wakeups"), 40);
  double lat = metric(*r.w, "wake_latency"), sys = metric(*r.w, "wake_syscall");
  EXPECT_GT(sys, static_cast<double>(base.costs.futex_wake_ns));
  EXPECT_GT(lat, sys);
  // A longer waker syscall moves both: the latency is timed from before FUTEX_WAKE.
  auto m = with("costs.futex_wake_ns", static_cast<double>(base.costs.futex_wake_ns + 3000));
  auto r2 = run_workload(m, {"calib", "wake", "-c", "0,1", "-n", "40"});
  EXPECT_NEAR(metric(*r2.w, "wake_syscall") - sys, 3000, 50);
  EXPECT_NEAR(metric(*r2.w, "wake_latency") - lat, 3000, 50);
}

TEST(Calib, PipeRoundTripAcrossCpusCostsMoreThanOnOne) {
  auto base = machine::load_profile("tiny-4");
  double same = run_metric(base, {"calib", "pipe", "-c", "0"}, "usecs_per_op");
  double cross = run_metric(base, {"calib", "pipe", "-c", "0,1"}, "usecs_per_op");
  double proc = run_metric(base, {"calib", "pipe", "-c", "0", "-P"}, "usecs_per_op");
  EXPECT_GT(same, 0);
  EXPECT_GT(cross, same);
  // Two mm switches; they also lengthen each run, which moves the lag each wakee is placed with
  // (doubled by PLACE_LAG's load scaling with one other task queued) and so which wakeups
  // preempt: up to ~5 % of the two switches more.
  EXPECT_NEAR((proc - same) * 1000, 2.0 * static_cast<double>(base.costs.switch_mm_ns),
              0.05 * 2.0 * static_cast<double>(base.costs.switch_mm_ns));
}

TEST(Calib, MembarrierIpiPaysTheIpiRoundTrip) {
  auto base = machine::load_profile("tiny-4");
  double v0 = run_metric(base, {"calib", "membarrier", "-c", "0,1", "-n", "50"}, "membarrier_ipi");
  EXPECT_GT(v0, 0);
  double v1 = run_metric(with("costs.csd_func_ns", static_cast<double>(base.costs.csd_func_ns + 2000)),
                         {"calib", "membarrier", "-c", "0,1", "-n", "50"}, "membarrier_ipi");
  EXPECT_NEAR(v1 - v0, 2000, 50);  // the caller waits for the handler
}

TEST(Calib, BadCommandLines) {
  EXPECT_NE(parse_error({"calib"}).find("first argument"), std::string::npos);
  EXPECT_NE(parse_error({"calib", "bogus"}).find("bogus"), std::string::npos);
  EXPECT_NE(parse_error({"calib", "wake", "-c", "1"}).find("two different CPUs"), std::string::npos);
  EXPECT_NE(parse_error({"calib", "pipe", "-c", "9"}, 4).find("-c"), std::string::npos);
  EXPECT_NE(parse_error({"calib", "fork", "-n", "0"}).find("-n"), std::string::npos);
  EXPECT_EQ(parse_error({"calib", "pipe", "-c", "0,1", "-P"}), "");
  EXPECT_NE(parse_error({"calib", "coldmsg", "-k", "0"}).find("-k"), std::string::npos);
  EXPECT_NE(parse_error({"calib", "coldmsg", "-m", "x"}).find("-m"), std::string::npos);
  EXPECT_EQ(parse_error({"calib", "coldmsg", "-u", "-k", "8", "-m", "40"}), "");
}

TEST(Calib, ColdFillDrainPaysTheColdCostsOnlyWithAnL2) {
  // 8 socketpairs x 40 messages of 896-byte skbs: 4.4 L2s of 64 KiB. Every drained message has
  // the other 319 moved since its send: cold. The fill after a drain reuses its newest frees:
  // the first 64 KiB / 896 + 1 = 74 of 320 sends are warm.
  auto m = machine::load_profile("tiny-4");
  m.topo.l2_bytes = 64 << 10;
  const std::vector<std::string> cmd = {"calib", "coldmsg", "-c", "1", "-u", "-k", "8", "-m", "40"};
  const double send = run_metric(m, cmd, "msg_send"), recv = run_metric(m, cmd, "msg_recv");
  const double ucopy = static_cast<double>(m.costs.unix_copy_ns_per_kb * 100 / 1024);
  EXPECT_DOUBLE_EQ(send, static_cast<double>(m.costs.unix_send_ns) + ucopy);  // no cold cost: warm
  EXPECT_DOUBLE_EQ(recv, static_cast<double>(m.costs.unix_recv_ns) + ucopy);
  machine::set_param(m, "costs.unix_send_cold_ns", 1000);
  machine::set_param(m, "costs.unix_recv_cold_ns", 500);
  // (Within 1 %: the ticks that fall into the longer fill or drain add their handler's time.)
  EXPECT_NEAR(run_metric(m, cmd, "msg_send") - send, 1000.0 * (320 - 74) / 320, 10);
  EXPECT_NEAR(run_metric(m, cmd, "msg_recv") - recv, 500.0, 5);
  EXPECT_EQ(metric(*run_workload(m, cmd).w, "msg_sends_cold"), 320 + 3 * (320 - 74));  // warm-up chunk: all cold
  // The pipe's writes pay the pipe's cold write (footprint 100 bytes: 656 of 16 x 600 warm).
  const std::vector<std::string> pcmd = {"calib", "coldmsg", "-c", "1", "-k", "16", "-m", "600"};
  const double pwrite = run_metric(m, pcmd, "msg_send");
  machine::set_param(m, "costs.pipe_write_cold_ns", 1000);
  EXPECT_NEAR(run_metric(m, pcmd, "msg_send") - pwrite, 1000.0 * (9600 - 656) / 9600, 10);
  // Without an L2 size nothing is cold.
  m.topo.l2_bytes = 0;
  EXPECT_DOUBLE_EQ(run_metric(m, cmd, "msg_send"), send);
  // A socket's send buffer holds 238 skbs of 896 bytes: more is refused before the run.
  EXPECT_THROW(run_workload(m, {"calib", "coldmsg", "-u", "-m", "300"}), workload::WorkloadError);
}

TEST(Calib, BenchmarkTasksSwitchesVoluntaryAndInvoluntary) {
  // Each side of a same-CPU pipe round trip leaves the CPU once: 2 switches per round trip,
  // voluntary (it blocked in read) or involuntary (the reader it woke preempted it before it
  // blocked). The kernel's own threads and the idle task are not counted.
  auto base = machine::load_profile("tiny-4");
  auto r = run_workload(base, {"calib", "pipe", "-c", "0", "-n", "1000"});
  ASSERT_TRUE(r.w->finished());
  auto t = r.k->total();
  EXPECT_NEAR(static_cast<double>(t.workload_nvcsw + t.workload_nivcsw), 2000, 5);
  EXPECT_GT(t.workload_nvcsw, 0);
  EXPECT_GT(t.workload_nivcsw, 0);
  EXPECT_LE(t.workload_nvcsw + t.workload_nivcsw, t.context_switches);
  // Across two CPUs nobody is preempted: every switch is a task blocking (or exiting).
  auto x = run_workload(base, {"calib", "pipe", "-c", "0,1", "-n", "1000"});
  EXPECT_EQ(x.k->total().workload_nivcsw, 0);
  EXPECT_NEAR(static_cast<double>(x.k->total().workload_nvcsw), 2000, 5);
}

TEST(Calib, BenchmarkTasksMigrationsAreTheirSetTaskCpuMoves) {
  // Pinned, the round trip's tasks never move; unpinned hackbench's tasks do, and on tiny-4 (no
  // kernel thread that can move) every migration is one of theirs.
  auto base = machine::load_profile("tiny-4");
  auto pinned = run_workload(base, {"calib", "pipe", "-c", "0,1", "-n", "1000"});
  EXPECT_EQ(pinned.k->total().workload_migrations, 0);
  auto hb = run_workload(base, {"hackbench", "-g", "2", "-l", "50"});
  ASSERT_TRUE(hb.w->finished());
  auto t = hb.k->total();
  EXPECT_GT(t.workload_migrations, 0);
  EXPECT_EQ(t.workload_migrations, t.migrations);
}

TEST(Calib, MessagePingPongPaysTheRemoteCostsOnlyAcrossCpus) {
  auto m = machine::load_profile("tiny-4");
  const auto plain = m;
  machine::set_param(m, "costs.unix_send_remote_ns", 400);
  machine::set_param(m, "costs.unix_recv_remote_ns", 300);
  machine::set_param(m, "costs.pipe_write_remote_ns", 200);
  machine::set_param(m, "costs.pipe_read_remote_ns", 100);
  const auto& c = m.costs;
  const double ucopy = static_cast<double>(c.unix_copy_ns_per_kb * 100 / 1024);
  const double pcopy = static_cast<double>(c.pipe_copy_ns_per_kb * 100 / 1024);
  auto msg = [](const machine::Machine& mm, const std::string& cpus, bool unix_socket, const std::string& side) {
    std::vector<std::string> cmd = {"calib", "msg", "-c", cpus, "-n", "200"};
    if (unix_socket) cmd.push_back("-u");
    return run_metric(mm, cmd, side);
  };
  // Both ends on one CPU: the same-CPU costs only.
  EXPECT_DOUBLE_EQ(msg(m, "1", true, "msg_send"), static_cast<double>(c.unix_send_ns) + ucopy);
  EXPECT_DOUBLE_EQ(msg(m, "1", true, "msg_recv"), static_cast<double>(c.unix_recv_ns) + ucopy);
  EXPECT_DOUBLE_EQ(msg(m, "1", false, "msg_send"), static_cast<double>(c.pipe_write_ns) + pcopy);
  EXPECT_DOUBLE_EQ(msg(m, "1", false, "msg_recv"), static_cast<double>(c.pipe_read_ns) + pcopy);
  // Across CPUs every write finds the channel last used on the other CPU and every read takes a
  // message written there: each side pays its remote cost.
  EXPECT_DOUBLE_EQ(msg(m, "0,1", true, "msg_send"), static_cast<double>(c.unix_send_ns) + ucopy + 400);
  EXPECT_DOUBLE_EQ(msg(m, "0,1", true, "msg_recv"), static_cast<double>(c.unix_recv_ns) + ucopy + 300);
  EXPECT_DOUBLE_EQ(msg(m, "0,1", false, "msg_send"), static_cast<double>(c.pipe_write_ns) + pcopy + 200);
  EXPECT_DOUBLE_EQ(msg(m, "0,1", false, "msg_recv"), static_cast<double>(c.pipe_read_ns) + pcopy + 100);
  // Remote costs of 0 (not modeled, the default): crossing costs nothing more.
  EXPECT_DOUBLE_EQ(msg(plain, "0,1", true, "msg_send"), msg(plain, "1", true, "msg_send"));
  EXPECT_DOUBLE_EQ(msg(plain, "0,1", false, "msg_recv"), msg(plain, "1", false, "msg_recv"));
}

// After a 1 us gap the epyc-milan-2s wakee is still in its idle entry (the governor's choice and
// the tick stop) when the wake comes: no state is entered, cpuidle_reflect() is not called and
// menu's history keeps the warm start's long idles, so the next entry stops the tick again. Only
// a wake delayed past the entry (by a tick on the waker) adds a short idle to the history; after
// enough of them menu picks POLL, the entry is short and every later wake finds the CPU polling.
// The published run (WAKE-ZEN2) is 1,000,000 iterations and its figure the mean: the mean over a
// long run falls below the start's median once the CPU polls.
TEST(Calib, WakeAfterOneMicrosecondPollsOnlyOnceMenuHasLearnedTheShortIdles) {
  auto m = machine::load_profile("epyc-milan-2s");
  auto short_run = run_workload(m, {"calib", "wake", "-c", "0,1", "-g", "1", "-n", "150"});
  ASSERT_TRUE(short_run.w->finished());
  const auto& s = short_run.k->rq(1).c;
  EXPECT_EQ(s.idle_usage[0], 0);  // POLL never entered
  EXPECT_GE(s.cpuidle_rejected, 140);
  const double start_median = metric(*short_run.w, "wake_latency");
  EXPECT_NEAR(metric(*short_run.w, "wake_latency_mean"), start_median, 0.05 * start_median);

  auto long_run = run_workload(m, {"calib", "wake", "-c", "0,1", "-g", "1", "-n", "300000"});
  ASSERT_TRUE(long_run.w->finished());
  const auto& l = long_run.k->rq(1).c;
  EXPECT_GT(l.idle_usage[0], 100000);  // POLL, once learned
  EXPECT_GT(l.cpuidle_rejected, 1000);  // the start, before it was
  EXPECT_LT(metric(*long_run.w, "wake_latency_mean"), 0.9 * start_median);
}

// The message ping-pong writes each message into an empty pipe and reads it to its page's end:
// every write pays pipe_write_newbuf_ns and every read pipe_read_release_ns (one slot each); an
// AF_UNIX socket pays neither.
TEST(Calib, PipeMessagePingPongPaysOneSlotPerMessage) {
  auto m = machine::load_profile("tiny-4");
  machine::set_param(m, "costs.pipe_write_newbuf_ns", 70);
  machine::set_param(m, "costs.pipe_read_release_ns", 30);
  const auto& c = m.costs;
  const double pcopy = static_cast<double>(c.pipe_copy_ns_per_kb * 100 / 1024);
  const double ucopy = static_cast<double>(c.unix_copy_ns_per_kb * 100 / 1024);
  EXPECT_DOUBLE_EQ(run_metric(m, {"calib", "msg", "-c", "1", "-n", "200"}, "msg_send"),
                   static_cast<double>(c.pipe_write_ns) + pcopy + 70);
  EXPECT_DOUBLE_EQ(run_metric(m, {"calib", "msg", "-c", "1", "-n", "200"}, "msg_recv"),
                   static_cast<double>(c.pipe_read_ns) + pcopy + 30);
  EXPECT_DOUBLE_EQ(run_metric(m, {"calib", "msg", "-c", "1", "-u", "-n", "200"}, "msg_send"),
                   static_cast<double>(c.unix_send_ns) + ucopy);
}
