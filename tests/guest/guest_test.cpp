// The guest model, the haltpoll governor, background activity and the per-run inputs
// (docs/variance.md S1-S4), each shown by its effect on the counters of a simulated run.
#include <gtest/gtest.h>

#include <cmath>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/changes/haltpoll_governor.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

namespace {

constexpr int kCallFunc = static_cast<int>(trace::IpiKind::CallFunctionSingle);
constexpr int64_t kIpiSend = 8000, kHaltedWake = 10000, kRunningIpi = 11000;

machine::Recorded rec(double v) { return {v, "test"}; }

// A 2-vCPU KVM guest with the cpuidle-haltpoll driver (POLL, then halt), its IPI and wake-up
// costs given as distributions, like a calibrated profile of the dev VM.
machine::Machine guest_vm(int64_t guest_halt_poll_ns = 0) {
  machine::Machine m = test_machine(1, 2, 1, 2);
  m.cpuidle_driver = "haltpoll";
  m.governor = "haltpoll";
  m.idle_states = {{"POLL", "CPUIDLE CORE POLL IDLE", 0, 0, 0, true, false},
                   {"haltpoll idle", "default architecture idle", 1000, 1000, 0, false, false}};
  auto& g = m.guest;
  g.present = true;
  g.hypervisor = {"KVM", "test"};
  g.guest_halt_poll_ns = rec(guest_halt_poll_ns);
  g.guest_halt_poll_grow = rec(2);
  g.guest_halt_poll_grow_start = rec(50000);
  g.guest_halt_poll_shrink = rec(2);
  g.guest_halt_poll_allow_shrink = rec(1);
  g.ipi_send_ns = rec(kIpiSend);
  g.ipi_send_sigma = rec(0.15);
  g.halted_wake_ns = rec(kHaltedWake);
  g.halted_wake_sigma = rec(0.19);
  g.running_ipi_ns = rec(kRunningIpi);
  g.running_ipi_sigma = rec(0.15);
  return m;
}

machine::Machine bare(machine::Machine m) {
  m.guest = machine::Guest{};
  return m;
}

// perf bench sched pipe in miniature: a on CPU 0 and b on CPU b_cpu hand a token back and forth
// `rounds` times (each does 1 us of work first); a side blocks only while it has no token, as a
// pipe reader does (a wake-up can come before the block when something preempted the sleeper);
// `elapsed` is when a finished.
struct Tokens {
  int a = 0, b = 0;
};
class Side final : public kernel::Behavior {
 public:
  Side(std::shared_ptr<Tokens> t, bool is_a, int rounds, Time* end)
      : t_(std::move(t)), a_(is_a), rounds_(rounds), end_(end) {}
  Task* peer = nullptr;
  Action next(Api& api, Task&) override {
    int& mine = a_ ? t_->a : t_->b;
    int& theirs = a_ ? t_->b : t_->a;
    for (;;) switch (state_) {
        case kWait:  // a starts by sending; b by waiting
          if (a_ && done_ == 0 && !started_) {
            started_ = true;
            state_ = kWork;
            continue;
          }
          if (mine == 0) return Action::block();
          --mine;
          if (a_ && ++done_ == rounds_) {
            *end_ = api.now();
            api.stop();
            return Action::exit();
          }
          state_ = kWork;
          continue;
        case kWork:
          state_ = kSend;
          return Action::compute(1000);
        case kSend:
          ++theirs;
          state_ = kWait;
          return Action::wake(peer, false);
      }
  }

 private:
  enum { kWait, kWork, kSend } state_ = kWait;
  std::shared_ptr<Tokens> t_;
  bool a_;
  int rounds_;
  Time* end_;
  int done_ = 0;
  bool started_ = false;
};

struct PingPong {
  std::unique_ptr<Kernel> k;
  Time elapsed;
  PingPong(const machine::Machine& m, int rounds, uint64_t seed = 1, int b_cpu = 1,
           Features f = Features()) {
    k = std::make_unique<Kernel>(m, f, KernelOptions{seed, nullptr});
    auto t = std::make_shared<Tokens>();
    auto bb = std::make_unique<Side>(t, false, rounds, &elapsed);
    Side* b_side = bb.get();
    Task* b = k->create_task("b", std::move(bb), pinned(b_cpu, true));
    auto ab = std::make_unique<Side>(t, true, rounds, &elapsed);
    ab->peer = b;
    Side* a_side = ab.get();
    Task* a = k->create_task("a", std::move(ab), pinned(0, true));
    b_side->peer = a;
    (void)a_side;
    k->wake_up(a, 0);
    k->run(Time::sec(10));
    EXPECT_GT(elapsed.count(), 0) << "the ping-pong did not finish";
  }
  kernel::CpuCounters total() const { return k->total(); }
};

int64_t change_counter(const kernel::CpuCounters& c, const char* name) {
  return kernel::change_counter(c, name);
}

}  // namespace

// --- G1, G2: HLT and IPI sends are VM exits -------------------------------------------------

TEST(Guest, WakingAHaltedVcpuIsAnIpiExitAndAHostWakeup) {
  const int rounds = 200;
  PingPong g(guest_vm(0), rounds);
  PingPong b(bare(guest_vm(0)), rounds);
  auto t = g.total();
  // Every wake-up crosses to a halted vCPU: an IPI, a VM exit on the sender, a host wake-up.
  EXPECT_EQ(t.wake_polling_no_ipi, 0);
  EXPECT_GE(t.ipi_sent[kCallFunc], 2 * rounds);
  EXPECT_GE(t.guest_ipi_exits, 2 * rounds);
  EXPECT_GE(t.guest_halted_wakes, 2 * rounds);
  double mean_wake = static_cast<double>(t.guest_halted_wake_ns) / t.guest_halted_wakes;
  EXPECT_GT(mean_wake, 0.9 * kHaltedWake);  // lognormal: the mean is above the median
  EXPECT_LT(mean_wake, 1.2 * kHaltedWake);
  // Bare metal: none of it, and each round trip is shorter by about two sends and two wake-ups.
  auto tb = b.total();
  EXPECT_EQ(tb.guest_ipi_exits + tb.guest_halted_wakes + tb.guest_halted_wake_ns, 0);
  double per_round = static_cast<double>((g.elapsed - b.elapsed).count()) / rounds;
  EXPECT_GT(per_round, 0.8 * 2 * (kIpiSend + kHaltedWake - 1000 - 100));
}

// The gap points (guest.halted_wake_gap5us_ns, _gap500us_ns): linear in ln(time halted) between
// 5, 60 and 500 us, flat outside; one point alone bends only its side; none: the median.
TEST(Guest, HaltedWakeMedianRunsThroughTheGapPoints) {
  kernel::LogNormal d;
  d.median = 10000;
  EXPECT_EQ(d.median_after(1000), 10000);
  d.gap5us = 8000;
  d.gap500us = 16000;
  EXPECT_EQ(d.median_after(-1), 10000);  // not halted
  EXPECT_EQ(d.median_after(0), 8000);
  EXPECT_EQ(d.median_after(5000), 8000);
  EXPECT_DOUBLE_EQ(d.median_after(60000), 10000);
  EXPECT_NEAR(d.median_after(static_cast<int64_t>(std::sqrt(5000.0 * 60000.0))), 9000, 1);
  EXPECT_NEAR(d.median_after(static_cast<int64_t>(std::sqrt(60000.0 * 500000.0))), 13000, 1);
  EXPECT_EQ(d.median_after(500000), 16000);
  EXPECT_EQ(d.median_after(50000000), 16000);
  d.gap5us = 0;
  EXPECT_EQ(d.median_after(1000), 10000);
  EXPECT_EQ(d.median_after(500000), 16000);
}

TEST(Guest, IpiToARunningVcpuIsDeliveredWithoutAHostWakeup) {
  int64_t exit_wait = 0;
  for (bool ipiv : {false, true}) {
    machine::Machine m = guest_vm(0);
    if (ipiv) m.guest.ipi_virtualization = rec(1);
    Kernel k(m, Features(), KernelOptions{1, nullptr});
    Time called, returned;
    k.create_task("busy", lambda([](Api&, Task&, int n) {
                    return n == 0 ? Action::compute(20000000) : Action::exit();
                  }),
                  pinned(1));
    k.create_task("caller", lambda([&](Api& api, Task&, int n) {
                    if (n == 0) return Action::sleep(2000000);
                    if (n == 1) {
                      called = api.now();
                      return Action::call_func(1, 0, true);
                    }
                    if (n == 2) returned = api.now();
                    return Action::exit();
                  }),
                  pinned(0));
    const int64_t halted_before = 0;
    k.run(Time::ms(10));
    EXPECT_EQ(k.rq(1).c.ipi_received[kCallFunc], 1) << ipiv;
    EXPECT_EQ(k.rq(1).c.guest_halted_wakes, halted_before) << ipiv;  // it was running
    int64_t wait = (returned - called).count();
    if (!ipiv) {
      EXPECT_EQ(k.rq(0).c.guest_ipi_exits, 1);
      // The sender's exit plus the one-way rest of the measured round trip.
      EXPECT_GT(wait, 0.6 * kRunningIpi);
      EXPECT_LT(wait, 1.6 * kRunningIpi);
      exit_wait = wait;
    } else {
      EXPECT_EQ(k.rq(0).c.guest_ipi_exits, 0);  // posted: no exit
      EXPECT_LT(wait, exit_wait - 0.7 * kIpiSend);
    }
  }
}

// G5: a halted vCPU's own timer waits for the host too.
TEST(Guest, TimerOnAHaltedVcpuFiresAHostWakeupLate) {
  const int sleeps = 20;
  auto run = [&](const machine::Machine& m, Time& end) {
    auto k = std::make_unique<Kernel>(m, Features(), KernelOptions{1, nullptr});
    k->create_task("sleeper", lambda([&end](Api& api, Task&, int n) {
                     if (n < sleeps) return Action::sleep(1000000);
                     end = api.now();
                     api.stop();
                     return Action::exit();
                   }),
                   pinned(0));
    k->run(Time::sec(1));
    return k;
  };
  Time eg, eb;
  auto g = run(guest_vm(0), eg);
  auto b = run(bare(guest_vm(0)), eb);
  EXPECT_EQ(g->total().ipi_sent[0] + g->total().ipi_sent[1], 0);
  EXPECT_GE(g->rq(0).c.guest_halted_wakes, sleeps);
  EXPECT_GT((eg - eb).count(), sleeps * 0.7 * kHaltedWake);
}

// --- G3: the haltpoll governor ----------------------------------------------------------------

TEST(HaltpollGovernor, WithoutAWindowEveryIdlePeriodHaltsAndEveryWakeupIsAnIpi) {
  PingPong r(guest_vm(0), 200);
  auto t = r.total();
  EXPECT_EQ(t.idle_usage[0], 0);  // POLL never entered
  EXPECT_GT(t.idle_usage[1], 400);
  EXPECT_EQ(t.wake_polling_no_ipi, 0);
  EXPECT_EQ(change_counter(t, "haltpoll_grow"), 0);
}

TEST(HaltpollGovernor, AWindowGrowsAndTheWakeupsFindTheCpuPolling) {
  PingPong none(guest_vm(0), 200);
  PingPong win(guest_vm(200000), 200);
  auto t = win.total();
  EXPECT_GT(change_counter(t, "haltpoll_grow"), 0);
  EXPECT_GT(t.idle_usage[0], 0);
  EXPECT_GT(t.wake_polling_no_ipi, 300);  // once grown, the ~20 us gaps are inside the window
  EXPECT_LT(t.guest_halted_wakes, none.total().guest_halted_wakes / 2);
  EXPECT_LT(win.elapsed.count(), none.elapsed.count() * 0.7);
}

TEST(HaltpollGovernor, OffMenuStandsIn) {
  Features f;
  f.apply("NO_HALTPOLL_GOVERNOR");
  PingPong on(guest_vm(200000), 200);
  PingPong off(guest_vm(200000), 200, 1, 1, f);
  // menu predicts the ~20 us idle periods, picks the 1 us halt state and never learns a window.
  EXPECT_EQ(change_counter(off.total(), "haltpoll_grow"), 0);
  EXPECT_LT(off.total().wake_polling_no_ipi * 4, on.total().wake_polling_no_ipi);
  EXPECT_GT(off.total().guest_halted_wakes, 2 * on.total().guest_halted_wakes);
}

TEST(HaltpollGovernor, GrowAndShrinkArithmetic) {
  kernel::HaltpollParams p = kernel::haltpoll_defaults();  // 200 us, x2, from 50 us, /2
  int ch = 0;
  int64_t l = 0;
  l = kernel::haltpoll_adjust_poll_limit(l, 30000, p, ch);
  EXPECT_EQ(l, 50000);  // grow_start
  EXPECT_EQ(ch, 1);
  l = kernel::haltpoll_adjust_poll_limit(l, 60000, p, ch);
  EXPECT_EQ(l, 100000);
  l = kernel::haltpoll_adjust_poll_limit(l, 150000, p, ch);
  EXPECT_EQ(l, 200000);
  l = kernel::haltpoll_adjust_poll_limit(l, 150000, p, ch);  // within the window: unchanged
  EXPECT_EQ(l, 200000);
  EXPECT_EQ(ch, 0);
  l = kernel::haltpoll_adjust_poll_limit(l, 300000, p, ch);  // longer than guest_halt_poll_ns
  EXPECT_EQ(l, 100000);
  EXPECT_EQ(ch, -1);
  l = kernel::haltpoll_adjust_poll_limit(l, 300000, p, ch);
  EXPECT_EQ(l, 50000);
  l = kernel::haltpoll_adjust_poll_limit(l, 300000, p, ch);  // below grow_start: to 0
  EXPECT_EQ(l, 0);
  p.guest_halt_poll_allow_shrink = false;
  EXPECT_EQ(kernel::haltpoll_adjust_poll_limit(200000, 300000, p, ch), 200000);
  p.guest_halt_poll_allow_shrink = true;
  p.guest_halt_poll_shrink = 0;
  EXPECT_EQ(kernel::haltpoll_adjust_poll_limit(200000, 300000, p, ch), 0);
  p.guest_halt_poll_ns = 0;  // this VM: never grows
  EXPECT_EQ(kernel::haltpoll_adjust_poll_limit(0, 100, p, ch), 0);
}

TEST(HaltpollGovernor, ParametersComeFromTheProfile) {
  machine::Machine m = guest_vm(123456);
  EXPECT_EQ(kernel::haltpoll_params(m).guest_halt_poll_ns, 123456);
  EXPECT_EQ(kernel::haltpoll_params(bare(m)).guest_halt_poll_ns, kernel::haltpoll_defaults().guest_halt_poll_ns);
}

// --- S2: background activity ------------------------------------------------------------------

namespace {
machine::BackgroundActivity activity(const char* name, const char* kind, const char* scope, double hz,
                                     double ns, double sigma = 0) {
  machine::BackgroundActivity a;
  a.name = name;
  a.kind = kind;
  a.scope = scope;
  a.rate_hz = rec(hz);
  a.duration_ns = rec(ns);
  a.duration_sigma = rec(sigma);
  return a;
}
}  // namespace

TEST(Background, PerCpuInterruptsOnAnIdleMachine) {
  machine::Machine m = test_machine(1, 2, 1, 2);
  m.background = {activity("LOC", "irq", "per_cpu", 1000, 10000)};
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  k.run(Time::sec(1));
  for (int c = 0; c < 2; ++c) {
    const auto& cc = k.rq(c).c;
    EXPECT_NEAR(cc.background_events, 1000, 3 * std::sqrt(1000.0)) << c;
    EXPECT_EQ(cc.background_irq_ns, cc.background_events * 10000) << c;  // the handlers
    // Each also paid interrupt entry (and exit) in the irq path.
    EXPECT_GE(cc.kernel_ns[static_cast<int>(trace::KernelPath::Irq)],
              cc.background_irq_ns + cc.background_events * m.costs.ipi_entry_ns)
        << c;
    // Nearly each one took the CPU out of idle (some arrive while it enters or leaves a state).
    EXPECT_GE(kernel::derived::idle_usage_total(cc), 0.9 * cc.background_events) << c;
  }
  Kernel quiet(test_machine(1, 2, 1, 2), Features(), KernelOptions{1, nullptr});
  quiet.run(Time::sec(1));
  EXPECT_EQ(quiet.total().background_events, 0);
}

TEST(Background, KernelThreadsWakeNextToTheBenchmarkAndOverloadItsCpu) {
  machine::Machine m = test_machine(1, 2, 1, 2);
  m.background = {activity("kworker/N:N", "kthread", "per_cpu", 200, 50000)};
  auto run = [](const machine::Machine& mm) {
    auto k = std::make_unique<Kernel>(mm, Features(), KernelOptions{1, nullptr});
    k->create_task("spin", lambda([](Api&, Task&, int n) {
                     return n == 0 ? Action::compute(500000000) : Action::exit();
                   }),
                   pinned(0));
    k->run(Time::ms(500));
    return k;
  };
  auto with = run(m);
  auto without = run(test_machine(1, 2, 1, 2));
  const auto& c0 = with->rq(0).c;
  EXPECT_NEAR(c0.background_events, 100, 40);
  EXPECT_GT(c0.background_overload, 0);  // each kworker wake-up on CPU 0 finds the spinner
  EXPECT_EQ(with->rq(1).c.background_overload, 0);  // CPU 1 has nothing else to run
  EXPECT_EQ(without->total().background_overload, 0);
  // The kworkers are kernel threads with low pids; the benchmark's task keeps its pid.
  int spin_pid = 0, low = 0;
  for (const auto& t : with->tasks()) {
    if (t->comm == "spin") spin_pid = t->pid;
    if (t->background) low += t->pid < 1000;
  }
  EXPECT_EQ(low, 2);
  for (const auto& t : without->tasks()) {
    if (t->comm == "spin") {
      EXPECT_EQ(t->pid, spin_pid);
    }
  }
}

// A run starts with the recorded kernel threads asleep since long ago: the first wake-up of each
// comes at a uniform phase of its period, not at t = 0. At 1 Hz per CPU none runs in the first
// 10 ms of 100 seeds' runs but a few (a 1 % chance each), so a CPU that goes idle finds no thread
// left queued behind a busy neighbour (with DELAY_DEQUEUE one that had just run and slept would
// stay on that runqueue, delayed, and keep the root domain overloaded).
TEST(Background, KernelThreadsStartAsleep) {
  machine::Machine m = test_machine(1, 2, 1, 2);
  m.background = {activity("kworker/N:N", "kthread", "per_cpu", 1, 5000),
                  activity("kdamond.N", "task", "system", 1, 5000)};
  int runs_with_events = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Kernel k(m, Features(), KernelOptions{seed, nullptr});
    k.create_task("spin", lambda([](Api&, Task&, int n) {
                    return n == 0 ? Action::compute(10000000) : Action::exit();
                  }),
                  pinned(0));
    k.run(Time::ms(10));
    runs_with_events += k.total().background_events > 0;
    if (k.total().background_events == 0) {
      EXPECT_EQ(k.total().rd_overload_set, 0) << seed;
    }
  }
  EXPECT_LE(runs_with_events, 10);  // 3 threads x 1 % each: about 3 of 100
  // Over a long run each still wakes at its rate.
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  k.run(Time::sec(20));
  EXPECT_NEAR(k.total().background_events, 60, 4 * std::sqrt(60.0));
}

TEST(Background, StealLengthensWallTimeNotTheTasksRuntime) {
  auto run = [](const machine::Machine& m, Time& end) {
    auto k = std::make_unique<Kernel>(m, Features(), KernelOptions{1, nullptr});
    k->create_task("spin", lambda([&end](Api& api, Task&, int n) {
                     if (n == 0) return Action::compute(1000000000);
                     end = api.now();
                     api.stop();
                     return Action::exit();
                   }),
                   pinned(0));
    k->run(Time::sec(5));
    return k;
  };
  machine::Machine m = guest_vm(0);
  m.background = {activity("steal", "steal", "per_cpu", 10, 1000000)};
  Time es, eq;
  auto s = run(m, es);
  auto q = run(guest_vm(0), eq);
  const auto& c = s->rq(0).c;
  EXPECT_NEAR(c.background_events, 10, 10);
  EXPECT_EQ(c.steal_ns, c.background_events * 1000000);
  EXPECT_GT((es - eq).count(), c.steal_ns * 9 / 10);  // wall time: about the steal
  EXPECT_NEAR(static_cast<double>(c.busy_ns), static_cast<double>(q->rq(0).c.busy_ns), 1e4);  // runtime: not
}

TEST(Background, SameSeedSameRunOtherSeedAnother) {
  machine::Machine m = guest_vm(0);
  m.background = {activity("LOC", "irq", "per_cpu", 300, 5000, 1.2),
                  activity("kworker/N:N", "kthread", "per_cpu", 100, 50000),
                  activity("tokio-rt-worker", "task", "system", 4, 600000)};
  PingPong a(m, 300, 7), b(m, 300, 7), c(m, 300, 8);
  EXPECT_EQ(a.elapsed, b.elapsed);
  EXPECT_EQ(a.total().background_events, b.total().background_events);
  EXPECT_EQ(a.total().guest_halted_wake_ns, b.total().guest_halted_wake_ns);
  EXPECT_NE(a.elapsed, c.elapsed);
  EXPECT_GT(a.total().background_events, 0);
}

// --- S1, S4: the per-run cost factor and the tick phase ---------------------------------------

TEST(RunInputs, PerRunFactorGivesTheRunsASpread) {
  machine::Machine m = bare(guest_vm(0));
  m.noise.run_sigma = 0.05;
  std::vector<double> t;
  for (uint64_t seed = 1; seed <= 20; ++seed) t.push_back(PingPong(m, 100, seed).elapsed.count());
  double mean = 0, var = 0;
  for (double x : t) mean += x / t.size();
  for (double x : t) var += (x - mean) * (x - mean) / (t.size() - 1);
  double cov = std::sqrt(var) / mean;
  EXPECT_GT(cov, 0.03);
  EXPECT_LT(cov, 0.075);
  // Without it the model has no random input here: every seed gives the same run.
  machine::Machine z = bare(guest_vm(0));
  EXPECT_EQ(PingPong(z, 100, 1).elapsed, PingPong(z, 100, 2).elapsed);
  Kernel k(z, Features(), KernelOptions{1, nullptr});
  EXPECT_EQ(k.cost_factor(), 1.0);
}

TEST(RunInputs, TickPhaseIsDrawnPerRun) {
  // Cold: the tick is armed at boot (a warm machine's CPUs are tickless at t = 0; warm.cpp puts
  // their last wakes on the same jiffy grid, kernel.WarmStart.*).
  machine::Machine m = test_machine(1, 2, 1, 2);
  const int64_t tick = m.tick_period_ns();
  auto cold = [](uint64_t seed) {
    KernelOptions o{seed, nullptr};
    o.cold = true;
    return o;
  };
  {
    Kernel k(m, Features(), cold(1));
    EXPECT_EQ(k.cpu(0).tick.when().count(), tick);  // on the jiffy from t = 0
  }
  m.noise.tick_phase = true;
  Kernel a(m, Features(), cold(1)), b(m, Features(), cold(2));
  EXPECT_NE(a.tick_phase_ns(), b.tick_phase_ns());
  for (Kernel* k : {&a, &b}) {
    EXPECT_LT(k->tick_phase_ns(), tick);
    int64_t first = k->cpu(0).tick.when().count();
    EXPECT_EQ(first % tick, k->tick_phase_ns() % tick);
    EXPECT_EQ(k->cpu(1).tick.when(), k->cpu(0).tick.when());  // all CPUs at one phase
  }
}
