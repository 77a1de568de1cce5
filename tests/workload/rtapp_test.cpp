// rt-app use cases on the model: each event's effect on the kernel counters and on rt-app's log
// rows, the grammar's errors and warnings, the logs as rt-app writes them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"
#include "workload/rtapp.hpp"

using namespace schedlab;
using workload::Rtapp;
using Row = workload::Rtapp::Row;

namespace {

machine::Machine one_cpu() { return fixture::test_machine(1, 1, 1, 1); }
machine::Machine two_cpus() { return fixture::test_machine(1, 2, 1, 2); }

struct Run {
  std::unique_ptr<kernel::Kernel> k;
  std::unique_ptr<Rtapp> w;
  std::vector<Rtapp::ThreadLog> logs;
  const std::vector<Row>& rows(const std::string& thread) const {
    for (const auto& l : logs)
      if (l.name == thread) return l.rows;
    static const std::vector<Row> none;
    ADD_FAILURE() << "no thread " << thread;
    return none;
  }
  double metric(const std::string& name) const {
    for (const auto& m : w->metrics())
      if (m.name == name) return m.value;
    ADD_FAILURE() << "no metric " << name;
    return -1;
  }
  uint64_t last_end() const {
    uint64_t e = 0;
    for (const auto& l : logs)
      for (const auto& r : l.rows) e = std::max(e, r.end);
    return e;
  }
};

Run run(const std::string& json, const machine::Machine& m = two_cpus(), uint64_t seed = 1) {
  Run r;
  r.w = std::make_unique<Rtapp>(workload::parse_rtapp(json, "t.json", m.topo.nr_cpus()));
  r.k = std::make_unique<kernel::Kernel>(m, kernel::Features(), kernel::KernelOptions{seed, nullptr});
  r.w->setup(r.k->api());
  r.k->run(r.w->time_limit());
  EXPECT_TRUE(r.w->finished());
  r.logs = r.w->thread_logs();
  return r;
}

std::string error_of(const std::string& json, int nr_cpus = 2) {
  try {
    workload::parse_rtapp(json, "t.json", nr_cpus);
  } catch (const workload::WorkloadError& e) {
    return e.what();
  }
  return "";
}

std::string run_error(const std::string& json, const machine::Machine& m = two_cpus()) {
  try {
    run(json, m);
  } catch (const workload::WorkloadError& e) {
    return e.what();
  }
  return "";
}

bool has_warning(const Rtapp& w, const std::string& s) {
  for (const auto& x : w.warnings())
    if (x.find(s) != std::string::npos) return true;
  return false;
}

// The opening brace and a global object: pLoad given (no calibration notice), logs kept in
// memory by the tests.
std::string open_global(const std::string& extra = "") {
  std::string s = R"({"global": { "calibration": 100, "logdir": "/tmp")";
  if (!extra.empty()) s.append(", ").append(extra);
  return s.append(" },\n");
}

}  // namespace

// ---- run, runtime, sleep ------------------------------------------------------------------

TEST(Rtapp, RunIsAFixedAmountOfWorkLoggedPerIteration) {
  auto r = run(open_global() + R"("tasks": { "t": { "loop": 5, "run": 1000 } } })");
  const auto& rows = r.rows("t-0");
  ASSERT_EQ(rows.size(), 5u);
  for (const auto& x : rows) {
    EXPECT_EQ(x.ind, 0);
    EXPECT_EQ(x.perf, 10u);  // 1000 us / pLoad 100 ns
    EXPECT_EQ(x.c_duration, 1000u);
    EXPECT_EQ(x.c_period, 0u);
    EXPECT_EQ(x.wu_lat, 0u);
    EXPECT_GE(x.run, 1000u);  // ticks interrupt it
    EXPECT_LE(x.run, 1010u);
    EXPECT_GE(x.period, x.run);
  }
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i].start, rows[i - 1].end);
  EXPECT_GE(r.k->total().busy_ns, 5000000);
}

TEST(Rtapp, RuntimeIsFixedWallTimeRunIsFixedWork) {
  // Sharing one CPU with a hog, run 5 ms of work takes about twice as long; runtime 5 ms ends
  // after 5 ms with about half the work done (perf counts it: pLoad 10 ns, 3 per 32 us piece).
  const std::string hog = R"("hog": { "loop": 1, "run": 40000 },)";
  auto a = run(R"({ "global": { "calibration": 10, "logdir": "/tmp" }, "tasks": { )" + hog +
                   R"( "t": { "loop": 1, "run": 5000 } } })",
               one_cpu());
  auto b = run(R"({ "global": { "calibration": 10, "logdir": "/tmp" }, "tasks": { )" + hog +
                   R"( "t": { "loop": 1, "runtime": 5000 } } })",
               one_cpu());
  const Row& ra = a.rows("t-1").at(0);
  const Row& rb = b.rows("t-1").at(0);
  EXPECT_EQ(ra.perf, 500u);
  EXPECT_GE(ra.run, 8000u);
  // runtime checks the clock after each piece: it ends at most a preemption late.
  EXPECT_GE(rb.run, 5000u);
  EXPECT_LT(rb.run + 1500, ra.run);
  EXPECT_LT(rb.perf, 350u);
  EXPECT_GT(rb.perf, 150u);
  EXPECT_EQ(rb.c_duration, 5000u);
}

TEST(Rtapp, SleepBlocksWithTimerSlackForFairTasksOnly) {
  auto other = run(open_global() + R"("tasks": { "t": { "loop": 4, "run": 100, "sleep": 1000 } } })", one_cpu());
  auto fifo = run(open_global() + R"("tasks": { "t": { "policy": "SCHED_FIFO", "loop": 4, "run": 100, "sleep": 1000 } } })",
                  one_cpu());
  for (const auto& x : other.rows("t-0")) {
    EXPECT_GE(x.period, 1150u);  // run + sleep + the 50 us default slack + the wakeup
    EXPECT_LE(x.period, 1300u);
  }
  for (const auto& x : fifo.rows("t-0")) {
    EXPECT_GE(x.period, 1100u);
    EXPECT_LT(x.period, 1150u);  // SCHED_FIFO: no slack
  }
  // Each sleep is a block, a switch to idle and a timer wakeup.
  EXPECT_GE(other.k->total().context_switches, 8);
  EXPECT_GE(other.k->total().idle_usage[0] + other.k->total().idle_usage[1] + other.k->total().idle_usage[2], 4);
}

// ---- timer ----------------------------------------------------------------------------------

TEST(Rtapp, TimerKeepsThePeriodAndLogsSlackAndWakeupLatency) {
  auto r = run(open_global() +
               R"("tasks": { "t": { "loop": 10, "run": 1000, "timer": { "ref": "unique", "period": 5000 } } } })");
  const auto& rows = r.rows("t-0");
  ASSERT_EQ(rows.size(), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    EXPECT_EQ(x.c_period, 5000u);
    EXPECT_GE(x.wu_lat, 50u);  // the default timer slack at least
    EXPECT_LE(x.wu_lat, 150u);
    EXPECT_EQ(x.end, 5000 * (i + 1) + x.wu_lat);  // woken at t_next = t_first + n * period
    EXPECT_GE(x.slack, 3800);
    EXPECT_LE(x.slack, 4000);
    EXPECT_EQ(x.missed, 0);
    if (i > 0) {
      EXPECT_EQ(x.period, 5000u);
    }
  }
  EXPECT_EQ(r.metric("missed"), 0);
  EXPECT_EQ(r.metric("t.wu_lat_p50"), rows[5].wu_lat);
  EXPECT_GE(r.metric("t.slack_p1"), 3800);
}

namespace {
std::string overrun(const std::string& mode) {
  return open_global() + R"("tasks": { "t": { "loop": 1, "phases": {
      "before": { "loop": 3, "run": 1000, "timer": { "ref": "unique", "period": 5000, "mode": ")" + mode + R"(" } },
      "overrun": { "loop": 1, "run": 12000, "timer": { "ref": "unique", "period": 5000 } },
      "after": { "loop": 4, "run": 1000, "timer": { "ref": "unique", "period": 5000 } } } } } })";
}
}  // namespace

TEST(Rtapp, MissedActivationRelativeRebasesAbsoluteCatchesUp) {
  auto rel = run(overrun("relative"));
  auto abs = run(overrun("absolute"));
  const auto& rr = rel.rows("t-0");
  const auto& ar = abs.rows("t-0");
  ASSERT_EQ(rr.size(), 8u);
  ASSERT_EQ(ar.size(), 8u);
  // The overrun iteration finds its activation past: no sleep, wu_lat 0, negative slack.
  EXPECT_EQ(rr[3].missed, 1);
  EXPECT_EQ(rr[3].wu_lat, 0u);
  EXPECT_LT(rr[3].slack, -6000);
  // Relative: the next activation counts from the overrun's end, so nothing else is missed.
  EXPECT_EQ(rel.metric("missed"), 1);
  EXPECT_NEAR(static_cast<double>(rr[4].end), static_cast<double>(rr[3].end + 5000 + rr[4].wu_lat), 1);  // usec rounding
  EXPECT_EQ(rr[5].period, 5000u);
  // Absolute: the grid stays, the next iteration is late too, then the grid resumes.
  EXPECT_EQ(abs.metric("missed"), 2);
  EXPECT_EQ(ar[7].end % 5000, ar[7].wu_lat);
  EXPECT_LT(ar[7].end, rr[7].end);
}

TEST(Rtapp, UniqueTimersArePerThreadSharedOnesAdvanceForEveryUser) {
  auto uniq = run(open_global() +
                  R"("tasks": { "t": { "instance": 2, "loop": 6, "run": 500, "timer": { "ref": "unique", "period": 4000 } } } })");
  auto shared = run(open_global() +
                    R"("tasks": { "t": { "instance": 2, "loop": 6, "run": 500, "timer": { "ref": "tick", "period": 4000 } } } })");
  for (const char* th : {"t-0", "t-1"}) {
    EXPECT_EQ(uniq.rows(th).back().period, 4000u) << th;
    // Both threads add a period to the one shared t_next: each sees twice the period.
    EXPECT_EQ(shared.rows(th).back().period, 8000u) << th;
  }
}

TEST(Rtapp, CumulativeSlackAddsTheTimersOfAPhase) {
  // Two activations of one timer per iteration, each leaving about 900 us of slack.
  const std::string tasks = R"("tasks": { "t": { "loop": 3, "run": 100, "timer": { "ref": "a", "period": 1000 },
      "run2": 100, "timer2": { "ref": "a", "period": 1000 } } } })";
  auto last = run(open_global() + tasks);
  auto cum = run(open_global(R"("cumulative_slack": true)") + tasks);
  const auto& l = last.rows("t-0");
  const auto& c = cum.rows("t-0");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[2].c_period, 2000u);
  // Same schedule either way; cumulative adds the first activation's slack to the last one's.
  EXPECT_EQ(l[2].end, c[2].end);
  EXPECT_GE(l[2].slack, 800);
  EXPECT_NEAR(static_cast<double>(c[2].slack), 2.0 * static_cast<double>(l[2].slack), 100);
}

// ---- mutexes, conditions, barrier, suspend/resume, semaphores -------------------------------

TEST(Rtapp, ContendedMutexSerializesAndBlocksInTheKernel) {
  const std::string body = R"("loop": 20, "lock": "m", "run": 1000, "unlock": "m")";
  auto locked = run(open_global() + R"("tasks": { "a": { "cpus": [0], )" + body + R"( }, "b": { "cpus": [1], )" + body + " } } }");
  auto free = run(open_global() + R"("tasks": { "a": { "cpus": [0], "loop": 20, "run": 1000 }, "b": { "cpus": [1], "loop": 20, "run": 1000 } } })");
  EXPECT_GE(locked.last_end(), 40000u);  // 2 x 20 x 1 ms, one at a time
  EXPECT_LE(free.last_end(), 21000u);
  // The loser waits in FUTEX_WAIT (a block: CPU 1 goes idle) and is woken by FUTEX_WAKE.
  EXPECT_GT(locked.k->total().context_switches, free.k->total().context_switches);
  EXPECT_GE(locked.k->total().ttwu_remote + locked.k->total().ttwu_local, 1);
}

TEST(Rtapp, SignalWakesOneWaiterBroadcastWakesAll) {
  auto waiters = [](const std::string& n) {
    return R"("c": { "instance": )" + n + R"(, "loop": 10, "lock": "m", "wait": { "ref": "q", "mutex": "m" }, "unlock": "m", "run": 100 },)";
  };
  const std::string producer = R"("p": { "delay": 500, "loop": 10, "run": 1000, "lock": "m", "broad": "q", "unlock": "m", "sleep": 1000 })";
  auto r = run(open_global() + R"("tasks": { )" + waiters("3") + producer + " } }");
  for (const char* th : {"c-0", "c-1", "c-2"}) {
    const auto& rows = r.rows(th);
    ASSERT_EQ(rows.size(), 10u) << th;
    // Paced by p (run 1000 + sleep 1000); the order in which the three relock the mutex varies.
    EXPECT_GE((rows.back().end - rows.front().end) / 9, 2000u) << th;
  }
  // With signal only one of the three wakes per signal: 10 signals for 30 waits leave the
  // others waiting, and without a duration rt-app would hang: a deadlock error.
  std::string e = run_error(open_global() + R"("tasks": { )" + waiters("3") +
                            R"("p": { "delay": 500, "loop": 10, "run": 1000, "lock": "m", "signal": "q", "unlock": "m", "sleep": 1000 } } })");
  EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
  EXPECT_NE(e.find("c-"), std::string::npos) << e;
  EXPECT_NE(e.find("in wait 'q' (t.json:"), std::string::npos) << e;
}

TEST(Rtapp, SyncPingPongsAndADeadlockWithADurationIsAWarning) {
  const std::string body = R"("loop": -1, "lock": "m", "sync": { "ref": "c", "mutex": "m" }, "unlock": "m", "run": 100)";
  auto r = run(open_global(R"("duration": 1)") + R"("tasks": { "a": { "cpus": [0], )" + body +
               R"( }, "b": { "cpus": [1], )" + body + " } } }");
  // Each sync wakes the other thread and waits for it: they alternate for the whole second.
  size_t a = r.rows("a-0").size(), b = r.rows("b-1").size();
  EXPECT_GT(a, 1000u);
  EXPECT_LE(std::max(a, b) - std::min(a, b), 1u);
  EXPECT_GE(r.k->total().context_switches, static_cast<int64_t>(2 * (a + b)));
  // A lone sync thread waits forever: with a duration the run goes on, with a warning.
  auto lone = run(open_global(R"("duration": 1)") + R"("tasks": { "a": { )" + body + " } } }");
  EXPECT_TRUE(has_warning(*lone.w, "deadlock")) << "no deadlock warning";
  EXPECT_EQ(lone.rows("a-0").size(), 0u);
}

TEST(Rtapp, BarrierHoldsEveryoneUntilTheSlowestArrives) {
  auto task = [](const char* n, int us) {
    return fmt::format(R"("{}": {{ "loop": 5, "run": {}, "barrier": "b" }})", n, us);
  };
  auto r = run(open_global() + R"("tasks": { )" + task("fast", 100) + "," + task("mid", 500) + "," +
                   task("slow", 2000) + " } }",
               fixture::test_machine(1, 4, 1, 4));
  for (const char* th : {"fast-0", "mid-1", "slow-2"}) {
    const auto& rows = r.rows(th);
    ASSERT_EQ(rows.size(), 5u) << th;
    // Each loop waits for the slow thread's 2 ms run; the release-to-running latency differs
    // from one barrier to the next by a few us (the idle state each waiter sat in).
    uint64_t sum = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      EXPECT_GE(rows[i].period, 1990u) << th;
      sum += rows[i].period;
    }
    EXPECT_GE(sum, 2000u * (rows.size() - 1) - 10) << th;
  }
}

TEST(Rtapp, SuspendWaitsForResume) {
  auto r = run(open_global() + R"("tasks": {
      "a": { "loop": 5, "suspend": "x", "run": 100 },
      "b": { "loop": 5, "run": 1000, "resume": "a", "sleep": 500 } } })");
  const auto& a = r.rows("a-0");
  const auto& b = r.rows("b-1");
  ASSERT_EQ(a.size(), 5u);
  // a's iteration i ends 100 us of work after b's i-th resume.
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_GT(a[i].end, b[i].start + 1000) << i;
    EXPECT_LT(a[i].end, b[i].start + 1400) << i;
  }
}

TEST(Rtapp, SemaphoreRemembersPostsConditionsDoNot) {
  auto sem = run(open_global() + R"("tasks": {
      "p": { "loop": 1, "sem_post": "s", "sem_post2": "s", "sem_post3": "s", "run": 10 },
      "c": { "delay": 2000, "loop": 3, "sem_wait": "s", "run": 100 } } })");
  // The three posts came before the waits: the consumer never blocks.
  const auto& c = sem.rows("c-1");
  ASSERT_EQ(c.size(), 3u);
  for (const auto& x : c) EXPECT_LE(x.period, 110u);
  // A wait before the post blocks and the post wakes it.
  auto late = run(open_global() + R"("tasks": {
      "p": { "delay": 3000, "loop": 1, "run": 10, "sem_post": "s" },
      "c": { "loop": 1, "sem_wait": "s", "run": 100 } } })");
  EXPECT_GE(late.rows("c-1").at(0).end, 3000u);
  EXPECT_GE(late.k->total().ttwu_local + late.k->total().ttwu_remote, 1);
}

// ---- yield, fork, mem, iorun ------------------------------------------------------------------

TEST(Rtapp, YieldHandsTheCpuToTheOtherThread) {
  const std::string with = R"("tasks": { "a": { "loop": 50, "run": 100, "yield": "" }, "b": { "loop": 50, "run": 100, "yield": "" } } })";
  const std::string without = R"("tasks": { "a": { "loop": 50, "run": 100 }, "b": { "loop": 50, "run": 100 } } })";
  auto y = run(open_global() + with, one_cpu());
  auto n = run(open_global() + without, one_cpu());
  EXPECT_GE(y.k->total().context_switches, 95);
  EXPECT_LT(n.k->total().context_switches, 20);
  // Interleaved: a's rows end while b is between its own.
  EXPECT_LT(y.rows("a-0").at(0).end, y.rows("b-1").at(1).end);
}

TEST(Rtapp, ForkCreatesThreadsNamedAsRtApp) {
  auto r = run(open_global() + R"("tasks": {
      "parent": { "loop": 3, "fork": "child", "run": 100 },
      "child": { "instance": 0, "loop": 2, "run": 50 } } })");
  std::vector<std::string> names;
  for (const auto& l : r.logs) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"parent-0", "child-1-0000", "child-2-0001", "child-3-0002"}));
  EXPECT_EQ(r.rows("child-2-0001").size(), 2u);
  EXPECT_EQ(r.rows("child-2-0001")[0].ind, 2);
  // clone() costs the parent fork_ns (50 us on the test machine) per iteration.
  EXPECT_GE(r.rows("parent-0")[0].period, 150u);
  EXPECT_EQ(r.w->output_files().size(), 4u);
}

TEST(Rtapp, ForkLimitStopsARunawayFork) {
  std::string e = run_error(open_global(R"("duration": 10)") + R"("tasks": {
      "t": { "loop": -1, "fork": "child", "run": 10 },
      "child": { "instance": 0, "loop": 1, "run": 1 } } })");
  EXPECT_NE(e.find("t.json:3: fork: child reached its fork limit (1024)"), std::string::npos) << e;
}

TEST(Rtapp, MemAndIorunAreComputeAtTheProfilesCopyAndWriteCosts) {
  auto r = run(open_global(R"("mem_buffer_size": 65536)") + R"("tasks": {
      "m": { "loop": 1, "mem": 1048576 },
      "io": { "loop": 1, "iorun": 1048576 } } })");
  // 1 MiB at pipe_copy_ns_per_kb = 100: 102.4 us; 16 writes of 64 KiB at pipe_write_ns = 600:
  // 9.6 us (to /dev/null nothing is copied).
  EXPECT_NEAR(static_cast<double>(r.rows("m-0").at(0).period), 102.4, 2.0);
  EXPECT_NEAR(static_cast<double>(r.rows("io-1").at(0).period), 9.6, 1.5);
  auto file = run(open_global(R"("mem_buffer_size": 65536, "io_device": "/tmp/x")") +
                  R"("tasks": { "io": { "loop": 1, "iorun": 1048576 } } })");
  EXPECT_NEAR(static_cast<double>(file.rows("io-0").at(0).period), 9.6 + 102.4, 2.0);
}

// ---- scheduling attributes -------------------------------------------------------------------

TEST(Rtapp, FifoPreemptsFairAndWakesWithoutSlack) {
  auto task = [](const std::string& policy) {
    return R"("rt": { "policy": ")" + policy +
           R"(", "loop": 20, "run": 500, "timer": { "ref": "unique", "period": 2000 } }, "hog": { "loop": 1, "run": 50000 })";
  };
  auto fifo = run(open_global() + R"("tasks": { )" + task("SCHED_FIFO") + " } }", one_cpu());
  auto other = run(open_global() + R"("tasks": { )" + task("SCHED_OTHER") + " } }", one_cpu());
  EXPECT_LT(fifo.metric("rt.wu_lat_p99"), 20);
  EXPECT_GE(other.metric("rt.wu_lat_p50"), 50);
  EXPECT_GT(other.metric("rt.wu_lat_p99"), fifo.metric("rt.wu_lat_p99"));
  EXPECT_EQ(fifo.k->tasks().back()->policy, kernel::Policy::Normal);  // the hog
}

TEST(Rtapp, NiceSetsTheFairShare) {
  // (In phases: a thread-level "runtime" would also be read as a custom slice.) 300 ms: a new
  // deadline is a weighted slice out (update_deadline()), so the nice-5 task runs a whole real
  // slice when picked and the share converges over tens of slices, not within a few.
  auto r = run(R"({ "global": { "calibration": 10, "logdir": "/tmp" }, "tasks": {
      "a": { "priority": 0, "loop": 1, "phases": { "p": { "runtime": 300000 } } },
      "b": { "priority": 5, "loop": 1, "phases": { "p": { "runtime": 300000 } } } } })",
               one_cpu());
  double ratio = static_cast<double>(r.rows("a-0").at(0).perf) / static_cast<double>(r.rows("b-1").at(0).perf);
  EXPECT_GT(ratio, 2.5);  // sched_prio_to_weight: 1024 / 335 = 3.06
  EXPECT_LT(ratio, 3.6);
}

TEST(Rtapp, CustomSliceShortensFairTimeSlices) {
  auto pair = [](const std::string& extra) {
    return open_global() + R"("tasks": { "a": { )" + extra + R"("loop": 1, "run": 30000 }, "b": { )" + extra +
           R"("loop": 1, "run": 30000 } } })";
  };
  auto def = run(pair(""), one_cpu());
  auto shrt = run(pair(R"("dl-runtime": 500, )"), one_cpu());
  EXPECT_GT(shrt.k->total().context_switches, 2 * def.k->total().context_switches);
}

TEST(Rtapp, CpusPinTheThread) {
  auto r = run(open_global() + R"("tasks": { "t": { "cpus": [1], "loop": 10, "run": 1000, "sleep": 100 } } })");
  EXPECT_GE(r.k->rq(1).c.busy_ns, 10000000);
  EXPECT_LT(r.k->rq(0).c.busy_ns, 100000);
}

TEST(Rtapp, InstancesDelayAndLoops) {
  auto r = run(open_global() + R"("tasks": {
      "t": { "instance": 3, "delay": 5000, "loop": 2, "phases": {
        "p1": { "loop": 2, "run": 100 }, "p2": { "run": 50 } } } } })",
               fixture::test_machine(1, 4, 1, 4));
  for (const char* th : {"t-0", "t-1", "t-2"}) {
    const auto& rows = r.rows(th);
    ASSERT_EQ(rows.size(), 6u) << th;  // 2 x (2 + 1) iterations
    EXPECT_GE(rows[0].start, 5050u) << th;  // after the delay (and its slack)
    EXPECT_EQ(rows[2].c_duration, 50u);
    EXPECT_EQ(rows[3].c_duration, 100u);
  }
  EXPECT_EQ(r.w->output_files().size(), 3u);
}

TEST(Rtapp, ThreadLoopZeroRunsNothing) {
  auto r = run(open_global() + R"("tasks": { "t": { "loop": 0, "phases": { "p": { "run": 100 } } }, "u": { "loop": 1, "run": 10 } } })");
  EXPECT_TRUE(r.rows("t-0").empty());
  EXPECT_EQ(r.rows("u-1").size(), 1u);
}

// ---- logs ---------------------------------------------------------------------------------------

TEST(Rtapp, LogFilesAreRtAppsColumnsAndNames) {
  EXPECT_EQ(Rtapp::log_header(),
            "#idx     perf      run   period           start             end          rel_st      slack "
            "c_duration   c_period     wu_lat\n");
  Row x;
  x.ind = 1;
  x.perf = 20;
  x.run = 2004;
  x.period = 10000;
  x.start = 20093;
  x.end = 30093;
  x.rel_st = 20093;
  x.slack = -12;
  x.c_duration = 2000;
  x.c_period = 10000;
  x.wu_lat = 93;
  EXPECT_EQ(Rtapp::format_row(x),
            "   1       20     2004    10000           20093           30093           20093        -12 "
            "      2000      10000         93\n");
  auto r = run(R"({ "global": { "calibration": 100, "logdir": "/tmp/logs", "log_basename": "uc" },
      "tasks": { "t": { "instance": 2, "loop": 3, "run": 100 } } })");
  auto files = r.w->output_files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "/tmp/logs/uc-t-0.log");
  EXPECT_EQ(files[1].path, "/tmp/logs/uc-t-1.log");
  std::string want = Rtapp::log_header();
  for (const auto& row : r.rows("t-1")) want += Rtapp::format_row(row);
  EXPECT_EQ(files[1].content, want);
  EXPECT_EQ(std::count(files[1].content.begin(), files[1].content.end(), '\n'), 4);
}

TEST(Rtapp, LogModes) {
  const std::string tasks = R"("tasks": { "t": { "loop": 3, "run": 100 }, "forever": { "loop": -1, "run": 100, "sleep": 100 } } })";
  // No global object: rt-app writes no logs; "disable" neither.
  EXPECT_TRUE(run(R"({ "tasks": { "t": { "loop": 3, "run": 100 } } })").w->output_files().empty());
  EXPECT_TRUE(run(open_global(R"("duration": 1, "log_size": "disable")") + tasks).w->output_files().empty());
  // A buffer (log_size in MB): rows of a thread that exits are written; a thread still running
  // when the duration ends is cancelled before it flushes, so only its header remains.
  auto buf = run(open_global(R"("duration": 1, "log_size": 1)") + tasks);
  auto files = buf.w->output_files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(std::count(files[0].content.begin(), files[0].content.end(), '\n'), 4);
  EXPECT_EQ(files[1].content, Rtapp::log_header());
  EXPECT_GT(buf.rows("forever-1").size(), 1000u);  // the rows exist; rt-app loses them
  EXPECT_TRUE(has_warning(*buf.w, "loses its"));
  // "file": every row as it completes.
  auto file = run(open_global(R"("duration": 1, "log_size": "file")") + tasks);
  auto ff = file.w->output_files();
  EXPECT_EQ(static_cast<size_t>(std::count(ff[1].content.begin(), ff[1].content.end(), '\n')),
            1 + file.rows("forever-1").size());
}

TEST(Rtapp, SameSeedSameLogs) {
  const std::string uc = open_global(R"("duration": 1)") + R"("tasks": {
      "p": { "instance": 3, "run": 700, "timer": { "ref": "unique", "period": 3000 } },
      "q": { "run": 200, "lock": "m", "run2": 50, "unlock": "m", "sleep": 900 } } })";
  auto m = fixture::test_machine(1, 2, 2, 2);
  m.noise.jitter_cov = 0.05;
  auto a = run(uc, m, 7), b = run(uc, m, 7), c = run(uc, m, 8);
  auto fa = a.w->output_files(), fb = b.w->output_files(), fc = c.w->output_files();
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_EQ(fa[i].content, fb[i].content);
  EXPECT_NE(fa[0].content, fc[0].content);  // the seed changes the jittered costs
}

TEST(Rtapp, ReportIsRtAppsNoticesAndASummary) {
  auto r = run(R"({ "global": { "logdir": "/tmp" }, "tasks": { "t": { "policy": "SCHED_FIFO", "loop": 2, "run": 10 } } })");
  std::string rep = r.w->report();
  EXPECT_NE(rep.find("[rt-app] <error> missing calibration setting force CPU0\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("[rt-app] <notice> pLoad = 100ns : calib_cpu 0\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("[rt-app] <notice> [0] Starting with SCHED_FIFO policy with priority 10\n"), std::string::npos);
  EXPECT_NE(rep.find("[rt-app] <notice> [0] Exiting.\n"), std::string::npos);
  EXPECT_NE(rep.find("# schedlab: t "), std::string::npos) << rep;
}

TEST(Rtapp, MetricsPerTaskGroup) {
  auto r = run(open_global(R"("duration": 1)") + R"("tasks": {
      "p": { "instance": 2, "run": 100, "timer": { "ref": "unique", "period": 1000 } },
      "s": { "run": 100, "sleep": 400 } } })");
  std::vector<std::string> names;
  for (const auto& m : r.w->metrics()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"wu_lat_p99", "missed", "p.wu_lat_p50", "p.wu_lat_p99", "p.slack_p50",
                                             "p.slack_p1", "p.missed", "s.period_p50", "s.period_p99"}));
  EXPECT_GT(r.metric("s.period_p50"), 500);
  EXPECT_GE(r.metric("p.wu_lat_p99"), r.metric("p.wu_lat_p50"));
}

// ---- grammar: errors and warnings ---------------------------------------------------------------

TEST(RtappGrammar, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string json;
    std::string want;  // prefix "t.json:LINE: KEY" and a fragment
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"{\n\"tasks\": {\n\"t\": { \"run\": 10 \"sleep\": 5 } } }", "t.json:3:", "JSON syntax error"},
      {"[1]", "t.json:1: (top level)", "must be an object"},
      {"{ \"global\": {} }", "t.json:1: tasks", "missing"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"slep\": 5 } } }", "t.json:4: tasks.t.slep", "unknown event 'slep'"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"run\": \"10\" } } }", "t.json:4: tasks.t.run", "integer"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"run\": -1 } } }", "t.json:4: tasks.t.run", "out of range"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"lock\": 3 } } }", "t.json:4: tasks.t.lock", "string"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"memrun\": {} } } }", "t.json:4: tasks.t.memrun", "not modeled"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"lock\": \"m\", \"run\": 1 } } }", "t.json:4: tasks.t", "never unlocked"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"unlock\": \"m\" } } }", "t.json:4: tasks.t.unlock", "not locked"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"lock\": \"m\",\n\"lock2\": \"m\", \"unlock\": \"m\" } } }", "t.json:5: tasks.t.lock2", "already held"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"wait\": { \"ref\": \"c\", \"mutex\": \"m\" } } } }", "t.json:4: tasks.t.wait", "not locked by this thread"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"wait\": { \"mutex\": \"m\" } } } }", "t.json:4: tasks.t.wait", "needs \"ref\""},
      {"{\n\"tasks\": {\n\"a\": { \"loop\": 1, \"phases\": { \"p\": { \"barrier\": \"b\" },\n\"q\": { \"barrier\": \"b\" } } },\n\"b\": { \"loop\": 1, \"barrier\": \"b\" } } }",
       "t.json:3: barrier b", "never opens"},
      {"{\n\"tasks\": {\n\"a\": { \"loop\": 3, \"barrier\": \"b\" },\n\"b\": { \"loop\": 2,\n\"barrier\": \"b\" } } }", "t.json:5: tasks.b.barrier", "reached 2 times"},
      {"{\n\"tasks\": {\n\"t\": { \"loop\": 1,\n\"fork\": \"nobody\" } } }", "t.json:4: fork", "no task named 'nobody'"},
      {"{\n\"tasks\": {\n\"t\": {\n\"run\": 1 } } }", "t.json:3: tasks.t", "loops forever"},
      {"{\n\"global\": {\n\"default_policy\": \"SCHED_DEADLINE\" },\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }", "t.json:3: global.default_policy", "SCHED_DEADLINE is not modeled"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"policy\": \"SCHED_RR\" } } }", "t.json:3: tasks.t.policy", "SCHED_RR is not modeled"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"policy\": \"SCHED_BATCH\" } } }", "t.json:3: tasks.t.policy", "not modeled"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"policy\": \"FIFO\" } } }", "t.json:3: tasks.t.policy", "invalid policy"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1, \"policy\": \"SCHED_FIFO\",\n\"priority\": 100 } } }", "t.json:3: tasks.t.priority", "[1, 99]"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"priority\": 20 } } }", "t.json:3: tasks.t.priority", "nice 20"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"cpus\": [2] } } }", "t.json:3: tasks.t.cpus", "invalid cpu 2"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"cpus\": [] } } }", "t.json:3: tasks.t.cpus", "empty"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"phases\": { \"a\": { \"run\": 1 },\n\"b\": { \"run\": 1,\n\"priority\": 5 } } } } }", "t.json:4: tasks.t.phases.b.priority", "cannot change a running thread's policy"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1,\n\"taskgroup\": \"/tg\" } } }", "t.json:3: tasks.t.taskgroup", "not modeled"},
      {"{\n\"global\": {\n\"pi_enabled\": true },\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }", "t.json:3: global.pi_enabled", "not modeled"},
      {"{\n\"global\": {\n\"duration\": \"5\" },\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }", "t.json:3: global.duration", "integer"},
      {"{\n\"global\": {\n\"calibration\": \"fast\" },\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }", "t.json:3: global.calibration", "CPU<n>"},
      {"{\n\"global\": {\n\"ftrace\": \"main,bogus\" },\n\"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }", "t.json:3: global.ftrace", "invalid ftrace category 'bogus'"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"phases\": {\n\"p\": { \"loop\": 2 } } } } }", "t.json:3: tasks.t.phases.p", "no events"},
      {"{\n\"tasks\": { \"t\": { \"loop\": 1, \"phases\": {\n\"p\": { \"run\": 1,\n\"delay\": 5 } } } } }", "t.json:4: tasks.t.phases.p.delay", "task-level key"},
      {"{\n\"tasks\": { \"t\": { \"run\": 1,\n\"instance\": 0, \"loop\": 1 } } }", "t.json:2: tasks", "no thread would run"},
  };
  for (const auto& c : cases) {
    std::string e = error_of(c.json);
    EXPECT_EQ(e.rfind(c.want, 0), 0u) << "want prefix " << c.want << "\ngot: " << e << "\nfor: " << c.json;
    EXPECT_NE(e.find(c.fragment), std::string::npos) << "want " << c.fragment << "\ngot: " << e;
  }
}

// A phase's "cpus" is its affinity (the thread's "cpus" otherwise): the thread moves at the
// phase's start (set_thread_affinity()).
TEST(RtappGrammar, EachPhaseCarriesItsAffinity) {
  auto cfg = workload::parse_rtapp(R"({ "tasks": { "t": { "loop": 1, "cpus": [0],
      "phases": { "a": { "run": 1 }, "b": { "run": 1, "cpus": [1] }, "c": { "run": 1 } } } } })", "t.json", 2);
  const auto& t = cfg.tasks[0];
  EXPECT_EQ(t.cpus, (std::vector<int>{0}));  // at creation: the first phase's
  EXPECT_EQ(t.phases[0].cpus, (std::vector<int>{0}));
  EXPECT_EQ(t.phases[1].cpus, (std::vector<int>{1}));
  EXPECT_EQ(t.phases[2].cpus, (std::vector<int>{0}));  // back to the thread's
}

TEST(RtappGrammar, RepeatedEventsRunInOrderAndEventKeysArePrefixes) {
  auto cfg = workload::parse_rtapp(R"({ "tasks": { "t": { "loop": 1,
      "run": 10, "sleep": 20, "run": 30, "runtime7": 40, "sleep_long": 50, "timer0": { "ref": "x", "period": 60 },
      "lock_a": "m", "unlock_a": "m", "broadcast": "c", "memory": 70 } } })", "t.json", 2);
  const auto& ev = cfg.tasks[0].phases[0].events;
  std::vector<std::string> kinds;
  for (const auto& e : ev) kinds.push_back(workload::rtapp::event_name(e.type));
  EXPECT_EQ(kinds, (std::vector<std::string>{"run", "sleep", "run", "runtime", "sleep", "timer", "lock", "unlock",
                                             "broad", "mem"}));
  EXPECT_EQ(ev[2].us, 30);
  EXPECT_EQ(ev[0].line, 2);
}

TEST(RtappGrammar, DefaultsAsRtApp) {
  auto cfg = workload::parse_rtapp(R"({ "tasks": { "t": { "run": 10, "loop": 4 },
      "u": { "policy": "SCHED_FIFO", "phases": { "a": { "run": 1 } } } }, "global": { "duration": 2 } })", "t.json", 2);
  const auto& t = cfg.tasks[0];
  EXPECT_EQ(t.instances, 1);
  EXPECT_EQ(t.loop, 1);            // a thread without "phases" runs its one phase `loop` times
  EXPECT_EQ(t.phases[0].loop, 4);
  EXPECT_EQ(t.sched.policy, workload::rtapp::Policy::Other);
  EXPECT_EQ(t.sched.prio, 0);
  EXPECT_EQ(cfg.tasks[1].loop, -1);  // with "phases": forever
  EXPECT_EQ(cfg.tasks[1].sched.prio, 10);  // DEFAULT_THREAD_PRIORITY
  EXPECT_EQ(cfg.global.log, workload::rtapp::LogMode::File);
  EXPECT_EQ(cfg.global.logdir, "./");
  EXPECT_EQ(cfg.global.log_basename, "rt-app");
  EXPECT_EQ(cfg.global.mem_buffer_size, 4194304);
  EXPECT_EQ(cfg.global.io_device, "/dev/null");
}

TEST(RtappGrammar, WarningsForWhatHasNoMeaningInTheModel) {
  auto cfg = workload::parse_rtapp(R"({
      "global": { "duration": 1, "gnuplot": true, "lock_pages": false, "ftrace": "main", "frobnicate": 1 },
      "resources": { "m": { "type": "mutex" } },
      "tasks": { "t": { "util_min": 100, "nodes_membind": [0], "run": 10, "sleep": 10 },
                 "t": { "run": 10, "sleep": 10 } } })", "t.json", 2);
  std::string all;
  for (const auto& w : cfg.warnings) all += w + "\n";
  for (const char* s : {"t.json:2: global.gnuplot", "t.json:2: global.lock_pages", "t.json:2: global.ftrace",
                        "t.json:2: global.frobnicate: unknown key", "t.json:3: resources",
                        "t.json:4: tasks.t.util_min", "t.json:4: tasks.t.nodes_membind",
                        "t.json:5: tasks.t: repeated; renamed 't1'"})
    EXPECT_NE(all.find(s), std::string::npos) << s << " not in\n" << all;
  EXPECT_EQ(cfg.tasks.size(), 2u);
  EXPECT_EQ(cfg.tasks[1].name, "t1");
}

TEST(RtappGrammar, LegacyRuntimeIsACustomSliceOfAThread) {
  auto cfg = workload::parse_rtapp(R"({ "global": { "duration": 1 }, "tasks": {
      "a": { "runtime": 2000, "sleep": 10 }, "b": { "dl-runtime": 50, "run": 1, "sleep": 1 } } })", "t.json", 2);
  EXPECT_EQ(cfg.tasks[0].sched.slice_ns, 2000000);
  EXPECT_EQ(cfg.tasks[1].sched.slice_ns, 100000);  // clamped to the kernel's 0.1 ms minimum
}

TEST(RtappCommand, ReadsTheFileAndChecksTheLogdir) {
  auto parse_error = [](const std::vector<std::string>& argv) -> std::string {
    try {
      workload::parse_workload(argv, 2);
    } catch (const workload::WorkloadError& e) {
      return e.what();
    }
    return "";
  };
  std::string dir = ::testing::TempDir();
  std::string ok = dir + "/rtapp_ok.json", bad = dir + "/rtapp_baddir.json";
  {
    std::ofstream(ok) << R"({ "global": { "logdir": ")" << dir << R"(" }, "tasks": { "t": { "loop": 1, "run": 1 } } })";
    std::ofstream(bad) << "{ \"global\": {\n \"logdir\": \"/nonexistent/dir\" },\n \"tasks\": { \"t\": { \"loop\": 1, \"run\": 1 } } }";
  }
  EXPECT_EQ(parse_error({"rt-app", ok}), "");
  EXPECT_EQ(parse_error({"rt-app", "-l", "75", ok}), "");
  EXPECT_NE(parse_error({"rt-app", bad}).find("global.logdir: log directory '/nonexistent/dir' does not exist"), std::string::npos);
  EXPECT_NE(parse_error({"rt-app", "/nonexistent.json"}).find("cannot read '/nonexistent.json'"), std::string::npos);
  EXPECT_NE(parse_error({"rt-app", "-"}).find("stdin"), std::string::npos);
  EXPECT_NE(parse_error({"rt-app", "-x", ok}).find("unknown option '-x'"), std::string::npos);
  EXPECT_NE(parse_error({"rt-app"}).find("no use case file"), std::string::npos);
  EXPECT_NE(parse_error({"rt-app", ok, ok}).find("unexpected argument"), std::string::npos);
  std::remove(ok.c_str());
  std::remove(bad.c_str());
}
