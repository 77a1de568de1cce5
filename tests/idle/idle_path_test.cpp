// The idle path as the kernel runs it (issue 13), each mechanism shown on the counters: do_idle()'s
// polling windows, interrupt entry and exit, interrupts off through __schedule(), the sender's
// smp_call_function_single() steps, newidle balance past its gates, NOHZ_NEWILB_KICK, the NOHZ
// idle balance (kick_ilb() -> nohz_csd_func() -> SCHED_SOFTIRQ), softirqs and ksoftirqd, and
// update_idle_core()'s write. The fixture's costs have no jitter, so times are exact. These run
// the default kernel, CSD_POLL_KICK (src/kernel/changes/) included, which the kernel layer's own
// tests (tests/kernel) do not link; the polling-kick tests of tests/kernel/mechanisms_test.cpp
// moved here for that reason.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::change_counter;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::KernelPath;
using sim::Time;

namespace {

constexpr int kCallFunc = static_cast<int>(trace::IpiKind::CallFunctionSingle);

int64_t path_ns(const kernel::CpuCounters& c, KernelPath p) {
  return c.kernel_ns[static_cast<int>(p)];
}

Features feats(const std::string& s) {
  Features f;
  f.apply(s);
  return f;
}

// Two CPUs of one LLC, no SMT; POLL and MWAIT C1 only (both keep polling; C6's 40 us exit would
// hide the windows under test).
machine::Machine two_cpus() {
  auto m = test_machine(1, 2, 1, 2);
  machine::disable_idle_states(m, {"C6"});
  return m;
}

kernel::TaskOptions kthread(int cpu) {
  auto o = pinned(cpu);
  o.mm = 0;
  return o;
}

// A kernel thread on CPU 0: computes `first_ns`, then calls CPU 1 at each of `gaps_ns` after
// the previous call (wait = false, so the gaps are the sender's own compute).
Task* caller(Kernel& k, int64_t first_ns, std::vector<int64_t> gaps_ns, bool wait = false) {
  return k.create_task("caller", lambda([first_ns, gaps_ns, wait](Api&, Task&, int n) {
                         if (n == 0) return Action::compute(first_ns);
                         int i = (n - 1) / 2;
                         if (i >= static_cast<int>(gaps_ns.size()) + 1) return Action::exit();
                         if ((n - 1) % 2 == 0) return Action::call_func(1, 0, wait);
                         if (i >= static_cast<int>(gaps_ns.size())) return Action::exit();
                         return Action::compute(gaps_ns[i]);
                       }),
                       kthread(0));
}

// Task on CPU 0 sleeps; a task on CPU 1 wakes it after `gap` (through CPU 0's wake list).
struct WakeIdleCpu {
  std::unique_ptr<Kernel> k;
  explicit WakeIdleCpu(const machine::Machine& m, Time gap) {
    k = std::make_unique<Kernel>(m, Features(), KernelOptions{1, nullptr});
    Task* sleeper = k->create_task("sleeper", lambda([](Api&, Task&, int n) {
                                     if (n == 0) return Action::block();
                                     if (n == 1) return Action::compute(1000);
                                     return Action::exit();
                                   }),
                                   pinned(0, true));
    k->create_task("waker", lambda([sleeper, gap](Api&, Task&, int n) {
                     if (n == 0) return Action::sleep(gap.count());
                     if (n == 1) return Action::wake(sleeper, false);
                     return Action::exit();
                   }),
                   pinned(1));
    k->run(Time::ms(100));
  }
};


}  // namespace

// A kick that lands while the target runs the governor (polling set, no state entered yet) is a
// flag store, no IPI; call_cpuidle()'s clear-and-test then refuses the state.
TEST(IdlePath, KickDuringGovernorIsSeenByCallCpuidle) {
  auto m = two_cpus();
  m.costs.cpuidle_select_ns = 20000;
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  caller(k, 10000, {});
  k.run(Time::ms(1));
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.csd_run_idle, 1);
  EXPECT_EQ(c1.csd_run_ipi, 0);
  EXPECT_EQ(c1.cpuidle_rejected, 1);
  EXPECT_EQ(k.total().ipi_sent[kCallFunc], 0);
  EXPECT_EQ(k.rq(0).c.wake_polling_no_ipi, 1);
}

// call_cpuidle() clears polling before the state's own bookkeeping: a call in that window is an
// IPI, pending (interrupts off) until the state is entered; the state returns at once and the
// handler runs the csd; the IPI sets no need_resched, so no schedule_idle().
TEST(IdlePath, CallWhilePollingIsClearedForTheStateIsAnIpi) {
  auto m = two_cpus();
  m.costs.cpuidle_enter_ns = 20000;
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  caller(k, 10000, {});
  k.run(Time::ms(1));
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.csd_run_ipi, 1);
  EXPECT_EQ(c1.csd_run_idle, 0);
  EXPECT_EQ(c1.ipi_received[kCallFunc], 1);
  EXPECT_EQ(c1.schedule_idle_calls, 0);
  EXPECT_GT(c1.irq_pending_ns, 5000);  // waited for the rest of the 20 us step
  EXPECT_EQ(k.rq(0).c.wake_polling_no_ipi, 0);
}

// The loop is left with polling still set: tick_nohz_idle_exit() runs before polling is cleared,
// and the flush after it takes what was queued meanwhile.
TEST(IdlePath, FlushAfterTickNohzIdleExitTakesLateCsds) {
  auto m = two_cpus();
  m.costs.tick_nohz_idle_exit_ns = 20000;
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  caller(k, 10000, {5000});
  k.run(Time::ms(1));
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.csd_run_idle, 2);  // one flush ran both
  EXPECT_EQ(c1.csd_run_ipi, 0);
  EXPECT_EQ(k.rq(0).c.wake_polling_no_ipi, 1);  // the second call piggybacked on the queue
  EXPECT_EQ(c1.schedule_idle_calls, 1);
}

// After the flush polling is clear and schedule_idle() runs with interrupts off from
// __schedule()'s entry to the rq unlock: a call then is an IPI that waits for the unlock.
TEST(IdlePath, IpiDuringScheduleIdleWaitsForTheRqUnlock) {
  auto m = two_cpus();
  m.costs.pick_next_task_ns = 20000;
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  caller(k, 10000, {5000});
  k.run(Time::ms(1));
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.csd_run_idle, 1);
  EXPECT_EQ(c1.csd_run_ipi, 1);
  EXPECT_EQ(c1.ipi_received[kCallFunc], 1);
  EXPECT_GT(c1.irq_pending_ns, 10000);
  EXPECT_GE(c1.irqs_off_ns, 20000);
  EXPECT_EQ(c1.schedule_idle_calls, 1);  // the IPI did not set need_resched: one pass
}

// Interrupt entry and irq_exit() are named costs on every interrupt.
TEST(IdlePath, InterruptEntryAndExitAreCharged) {
  auto m = non_polling(two_cpus());
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  caller(k, 10000, {});
  k.run(Time::us(100));  // before CPU 1's first tick
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.ipi_received[kCallFunc], 1);
  EXPECT_EQ(c1.ticks, 0);
  EXPECT_EQ(path_ns(c1, KernelPath::Irq), m.costs.ipi_entry_ns + m.costs.irq_exit_ns);
  EXPECT_EQ(c1.schedule_idle_calls, 0);
}

// smp_call_function_single() on the sender: csd setup and lock, llist_add() (a line transfer),
// set_nr_if_polling()'s read (a line transfer) and then its cmpxchg (another) or the ICR write,
// and put_cpu() once csd_lock_wait() sees the unlock.
TEST(IdlePath, SenderPaysTheCallFunctionSequence) {
  for (bool polling : {true, false}) {
    SCOPED_TRACE(polling);
    auto m = polling ? two_cpus() : non_polling(two_cpus());
    Kernel k(m, Features(), KernelOptions{1, nullptr});
    caller(k, 10000, {}, true);
    k.run(Time::us(100));
    const auto& c = m.costs;
    int64_t line = c.remote_read_llc_ns;
    int64_t expect = c.csd_lock_ns + line + line + (polling ? line : c.ipi_send_ns) + c.put_cpu_ns;
    EXPECT_EQ(path_ns(k.rq(0).c, KernelPath::Syscall), expect);
    EXPECT_EQ(k.rq(0).c.ipi_sent[kCallFunc], polling ? 0 : 1);
    EXPECT_EQ(k.rq(1).c.call_functions_run, 1);
  }
}

namespace {
// CPU 0 runs two tasks (rd->overloaded), CPU 1 one that blocks after a while: its newidle
// balance walks the domains and pulls.
struct Overloaded {
  std::unique_ptr<Kernel> k;
  // avg_idle_ns >= 0: CPU 1's avg_idle before the run (a CPU that idles briefly, say).
  Overloaded(const machine::Machine& m, const std::string& features, int64_t avg_idle_ns = -1) {
    // Cold: the gates are set up from the boot state (a warm CPU's idle_stamp is valid, so its
    // first wakeup moves the avg_idle set here).
    KernelOptions ko{1, nullptr};
    ko.cold = true;
    k = std::make_unique<Kernel>(m, feats(features), ko);
    if (avg_idle_ns >= 0) k->rq(1).avg_idle = avg_idle_ns;
    auto hog = [] {
      return lambda([](Api&, Task&, int n) {
        return n < 1 ? Action::compute(50000000) : Action::exit();
      });
    };
    k->create_task("short", lambda([](Api&, Task&, int n) {
                     return n == 0 ? Action::compute(300000) : Action::exit();
                   }),
                   pinned(1));
    k->create_task("hog", hog(), pinned(0));
    // Allowed on both CPUs, but both are busy when it wakes: it queues on CPU 0.
    kernel::TaskOptions o;
    o.pin_cpu = 0;
    k->create_task("hog", hog(), o);
    k->run(Time::ms(1));
  }
};
}  // namespace

// Past the gates (rd->overloaded, avg_idle above the level's max cost) the walk runs with
// interrupts off: update_blocked_averages(), then each level; the blocked-load update counts in
// the first level's learned cost (v5.17+), not with NI_MIGRATION_GATE.
TEST(IdlePath, NewidleWalkRunsPastTheGatesWithIrqsOff) {
  auto m = two_cpus();
  for (const std::string f : {"", "NI_MIGRATION_GATE"}) {
    SCOPED_TRACE(f);
    Overloaded o(m, f);
    const auto& c1 = o.k->rq(1).c;
    EXPECT_EQ(c1.newidle_balance_walks, 1);
    EXPECT_EQ(c1.newidle_balance_lb_count, 1);  // one level (MC) on this machine
    EXPECT_EQ(c1.newidle_balance_pulled, 1);
    // MC spans both CPUs: per CPU its stats work, a line for the other one, one task moved.
    const auto& c = m.costs;
    int64_t level = 2 * c.balance_per_cpu_ns + c.remote_read_llc_ns + c.migrate_task_ns;
    EXPECT_EQ(path_ns(c1, KernelPath::NewidleBalance), c.update_blocked_averages_ns + level);
    int64_t learned = o.k->rq(1).sd.front().max_newidle_lb_cost;
    EXPECT_EQ(learned, f.empty() ? c.update_blocked_averages_ns + level : level);
    EXPECT_GE(c1.irqs_off_ns, c.update_blocked_averages_ns + level);
  }
}

// NI_MIGRATION_GATE's own gate: an overloaded root domain and a level cost below avg_idle, but
// avg_idle below sysctl_sched_migration_cost: the pre-v5.17 kernel skips the walk.
TEST(IdlePath, MigrationCostGateSkipsShortIdle) {
  auto m = two_cpus();
  for (const std::string f : {"", "NI_MIGRATION_GATE"}) {
    SCOPED_TRACE(f);
    Overloaded o(m, f, m.tunables.migration_cost_ns / 2);
    const auto& c1 = o.k->rq(1).c;
    EXPECT_EQ(c1.newidle_balance_walks, f.empty() ? 1 : 0);
    EXPECT_EQ(c1.newidle_balance_pulled, f.empty() ? 1 : 0);
    EXPECT_EQ(change_counter(c1, "newidle_migration_gated"), f.empty() ? 0 : 1);
  }
}

// Not overloaded: the gate skips the walk (no blocked-load update), and nohz_newidle_balance()
// flags NOHZ_NEWILB_KICK (idle CPUs have blocked load due for an update, avg_idle is long): the
// next do_idle() runs _nohz_idle_balance() for the stats, and the next is due a LOAD_AVG_PERIOD
// later. Here the CPU doing it is CPU 0, the idle balancer CPU 1's tick kicks: its
// nohz_csd_func() gives up (a polling kick), but the schedule_idle() that kick causes goes
// through newidle balance.
TEST(IdlePath, NewidleFlagsNewIlbKickAndDoIdleRunsIt) {
  // Cold: idle CPUs have blocked load from boot (a warm machine's has decayed: no NEWILB kick).
  auto m = two_cpus();
  KernelOptions cold{1, nullptr};
  cold.cold = true;
  Kernel k(m, Features(), cold);
  k.create_task("busy", lambda([](Api&, Task&, int n) {
                  if (n < 3) return n % 2 == 0 ? Action::compute(3000000) : Action::sleep(1000);
                  return Action::exit();
                }),
                pinned(1));
  k.run(Time::ms(20));
  const auto t = k.total();
  EXPECT_EQ(t.newidle_balance_walks, 0);
  EXPECT_EQ(t.newidle_balance_skipped, t.newidle_balance_calls);
  EXPECT_EQ(t.nohz_newilb_kick, 1);  // later newidle passes are within nohz.next_blocked
  EXPECT_EQ(t.nohz_idle_balance, 1);
  EXPECT_GT(path_ns(t, KernelPath::NohzIdleBalance), 0);
  EXPECT_GT(k.rq(1).c.nohz_ilb_kick, 0);
  EXPECT_GT(k.rq(0).c.nohz_ilb_bail, 0);
  EXPECT_EQ(k.rq(0).c.nohz_newilb_kick, 1);
}

namespace {
// Four CPUs; CPU 0 runs two tasks bound to it: its ticks kick the NOHZ idle balancer, CPU 1 (the
// first tickless idle CPU), to balance on behalf of CPUs 1-3. Nothing may be pulled; CPU 2's
// balancing happens only on its behalf (its tick stays stopped).
struct IlbKick {
  std::unique_ptr<Kernel> k;
  IlbKick(const machine::Machine& m, const std::string& features) {
    k = std::make_unique<Kernel>(m, feats(features), KernelOptions{1, nullptr});
    for (int i = 0; i < 2; ++i)
      k->create_task("hog", lambda([](Api&, Task&, int n) {
                       return n < 1 ? Action::compute(60000000) : Action::exit();
                     }),
                     pinned(0));
    k->run(Time::ms(40));
  }
};

machine::Machine four_cpus() {
  auto m = test_machine(1, 4, 1, 4);
  machine::disable_idle_states(m, {"C6"});
  return m;
}
}  // namespace

// A polling ILB is kicked by TIF_NEED_RESCHED, so nohz_csd_func() (before v6.13) gives up.
TEST(IdlePath, PollingIlbGivesUpOnNeedResched) {
  IlbKick r(four_cpus(), "");
  const auto& c1 = r.k->rq(1).c;
  EXPECT_GT(r.k->rq(0).c.nohz_ilb_kick, 0);
  EXPECT_GT(c1.nohz_csd_run, 0);
  EXPECT_EQ(c1.nohz_ilb_bail, c1.nohz_csd_run);
  EXPECT_EQ(r.k->total().nohz_idle_balance, r.k->total().nohz_newilb_kick);  // stats only
  EXPECT_EQ(r.k->rq(2).c.load_balance_calls, 0);
}

// ILB_NO_NEED_RESCHED alone: SCHED_SOFTIRQ raised from the idle flush (not an interrupt) wakes
// ksoftirqd; the flush's do_softirq() then finds need_resched set and this CPU no longer idle,
// and the balance aborts at the first idle CPU it visits.
TEST(IdlePath, IlbRaisedInTheIdleFlushWakesKsoftirqdAndAborts) {
  IlbKick r(four_cpus(), "ILB_NO_NEED_RESCHED");
  const auto& c1 = r.k->rq(1).c;
  EXPECT_GT(c1.ksoftirqd_wakeups, 0);
  EXPECT_GT(c1.nohz_idle_balance, 0);
  EXPECT_GT(c1.nohz_idle_balance_abort, 0);
  EXPECT_EQ(r.k->rq(2).c.load_balance_calls, 0);
  // Every kick went on despite the polling kick's need_resched.
  EXPECT_EQ(c1.nohz_ilb_bail, 0);
  EXPECT_GE(change_counter(c1, "ilb_need_resched_ignored"), c1.nohz_csd_run);
}

// Both changes: the flush's do_softirq() runs _nohz_idle_balance() without waking ksoftirqd and
// balances on behalf of the idle CPUs.
TEST(IdlePath, IlbWithBothFixesBalancesForTheIdleCpus) {
  IlbKick r(four_cpus(), "ILB_NO_NEED_RESCHED,ILB_NO_KSOFTIRQD");
  const auto& c1 = r.k->rq(1).c;
  EXPECT_EQ(c1.ksoftirqd_wakeups, 0);
  EXPECT_GT(c1.nohz_idle_balance, 0);
  EXPECT_EQ(c1.nohz_idle_balance_abort, 0);
  EXPECT_GT(r.k->rq(2).c.load_balance_calls, 0);
  // The raises in the flush that would have woken ksoftirqd (the test above) did not.
  IlbKick alone(four_cpus(), "ILB_NO_NEED_RESCHED");
  EXPECT_GT(change_counter(c1, "ksoftirqd_wakeups_avoided"), 0);
  EXPECT_EQ(change_counter(alone.k->rq(1).c, "ksoftirqd_wakeups_avoided"), 0);
}

// A non-polling ILB gets the IPI: nohz_csd_func() runs in interrupt context, so the raise wakes no
// ksoftirqd and SCHED_SOFTIRQ runs at irq_exit().
TEST(IdlePath, IlbKickedByIpiRunsTheSoftirqAtIrqExit) {
  IlbKick r(non_polling(four_cpus()), "");
  const auto& c1 = r.k->rq(1).c;
  EXPECT_GT(c1.nohz_csd_run, 0);
  EXPECT_EQ(c1.nohz_ilb_bail, 0);
  EXPECT_EQ(c1.ksoftirqd_wakeups, 0);
  EXPECT_GT(c1.nohz_idle_balance, 0);
  EXPECT_GT(path_ns(c1, KernelPath::Softirq), 0);
  EXPECT_GT(r.k->rq(2).c.load_balance_calls, 0);
}

// The tick raises SCHED_SOFTIRQ for the periodic balance; it runs at irq_exit() (no ksoftirqd).
TEST(IdlePath, PeriodicBalanceRunsFromSchedSoftirq) {
  IlbKick r(four_cpus(), "");
  const auto& c0 = r.k->rq(0).c;
  EXPECT_GT(c0.softirq_sched, 0);
  EXPECT_EQ(c0.ksoftirqd_wakeups, 0);
  EXPECT_GT(path_ns(c0, KernelPath::Softirq), 0);
}

// set_next_task_idle() -> update_idle_core(): the LLC's has_idle_cores is written when a CPU goes
// idle next to an idle sibling while the flag is clear (SMT machines only).
TEST(IdlePath, UpdateIdleCoreWritesHasIdleCores) {
  for (int threads : {2, 1}) {
    SCOPED_TRACE(threads);
    auto m = test_machine(1, 2, threads, 2);
    Kernel k(m, Features(), KernelOptions{1, nullptr});
    // Five tasks on four CPUs run and sleep: wakeups that find no idle core clear the flag,
    // a CPU going idle next to an idle sibling sets it again.
    for (int i = 0; i < 5; ++i)
      k.create_task("w", lambda([](Api&, Task&, int n) {
                      if (n >= 400) return Action::exit();
                      return n % 2 == 0 ? Action::compute(50000) : Action::sleep(10000);
                    }),
                    {});
    k.run(Time::ms(50));
    if (threads == 2)
      EXPECT_GT(k.total().set_idle_cores, 0);
    else
      EXPECT_EQ(k.total().set_idle_cores, 0);
  }
}

// The polling kick (CSD_POLL_KICK) for a wakeup and for a call function (from tests/kernel).
TEST(PollingKick, WakingPollingIdleCpuSendsNoIpi) {
  WakeIdleCpu r(test_machine(1, 2, 1, 2), Time::us(500));
  auto t = r.k->total();
  EXPECT_EQ(t.ipi_sent[0] + t.ipi_sent[1], 0);
  EXPECT_GE(t.wake_polling_no_ipi, 1);
  EXPECT_EQ(r.k->rq(0).c.ipi_received[kCallFunc], 0);
}

TEST(PollingKick, CallFunctionToPollingIdleCpuGoesThroughScheduleIdle) {
  Kernel k(test_machine(1, 2, 1, 2), Features(), KernelOptions{1, nullptr});
  k.create_task("caller", lambda([](Api&, Task&, int n) {
                  if (n == 0) return Action::sleep(200000);
                  if (n == 1) return Action::call_func(1, 0, true);
                  return Action::exit();
                }),
                pinned(0));
  k.run(Time::ms(10));
  const auto& c1 = k.rq(1).c;
  EXPECT_EQ(c1.call_functions_run, 1);
  EXPECT_EQ(k.total().ipi_sent[kCallFunc], 0);
  EXPECT_EQ(k.rq(0).c.wake_polling_no_ipi, 1);
  EXPECT_GE(c1.schedule_idle_calls, 1);
  EXPECT_GE(c1.pick_next_task_from_idle, 1);  // SM_IDLE is off: a full pick follows
}

TEST(PollingKick, WakingNonPollingIdleCpuSendsIpiAndPaysExitLatency) {
  auto m = non_polling(test_machine(1, 2, 1, 2));
  WakeIdleCpu r(m, Time::us(500));
  auto t = r.k->total();
  EXPECT_EQ(t.wake_polling_no_ipi, 0);
  EXPECT_GE(t.ipi_sent[kCallFunc], 1);
  EXPECT_GE(r.k->rq(0).c.ipi_received[kCallFunc], 1);
  // CPU 0 sat in a non-polling state and paid at least that state's real exit cost.
  int64_t min_exit = INT64_MAX;
  for (const auto& s : m.idle_states)
    if (!s.disabled) min_exit = std::min(min_exit, s.wake_cost_ns);
  EXPECT_GE(r.k->rq(0).c.kernel_ns[static_cast<int>(KernelPath::IdleExit)], min_exit);
}

// nohz_run_idle_balance() at the top of do_idle() visits the NOHZ idle CPUs one at a time with
// interrupts on, and _nohz_idle_balance()'s loop tests need_resched() at each: a wake-up that
// lands during the pass (polling is still clear there: an IPI, whose sched_ttwu_pending() sets
// need_resched) ends it at the next CPU, and the wakee runs without waiting for the rest.
namespace {
struct WakeDuringNewIlbPass {
  std::unique_ptr<Kernel> k;
  Time woken_runs = Time::max();
  WakeDuringNewIlbPass(const machine::Machine& m, int64_t wake_after_ns) {
    KernelOptions cold{1, nullptr};
    cold.cold = true;  // idle CPUs have blocked load from boot: the pass has work on each
    k = std::make_unique<Kernel>(m, Features(), cold);
    Task* wakee = k->create_task("wakee", lambda([this](Api& api, Task&, int n) {
                                   if (n == 0) return Action::compute(1000);
                                   if (n == 1) return Action::block();
                                   if (n == 2) woken_runs = api.now();
                                   return Action::exit();
                                 }),
                                 pinned(1));
    k->create_task("waker", lambda([wakee, wake_after_ns](Api&, Task&, int n) {
                     if (n == 0) return Action::compute(wake_after_ns);
                     if (n == 1) return Action::wake(wakee, false);
                     return Action::exit();
                   }),
                   pinned(0));
    k->run(Time::ms(5));
  }
};
}  // namespace

TEST(IdlePath, WakeDuringNohzRunIdleBalanceEndsThePass) {
  auto m = test_machine(1, 16, 1, 16);
  machine::disable_idle_states(m, {"C6"});
  // Woken long after: the pass runs to its end over the 15 other CPUs, and the wake-up finds
  // CPU 1 polling.
  WakeDuringNewIlbPass late(m, 500000);
  const auto& l1 = late.k->rq(1).c;
  EXPECT_EQ(l1.nohz_newilb_kick, 1);
  EXPECT_EQ(l1.nohz_idle_balance, 1);
  EXPECT_EQ(l1.nohz_idle_balance_abort, 0);
  EXPECT_EQ(late.k->rq(0).c.wake_polling_no_ipi, 1);
  const int64_t full_pass = path_ns(l1, KernelPath::NohzIdleBalance);
  ASSERT_GT(full_pass, 0);
  // Woken 3 us in, while CPU 1 is in the pass: an IPI (polling is clear there), the pass ends
  // at the next CPU, and the wakee runs sooner than the whole pass would take. (CPU 1 goes
  // idle again when the wakee exits and runs the next pass, this one whole.)
  WakeDuringNewIlbPass early(m, 3000);
  const auto& e1 = early.k->rq(1).c;
  EXPECT_EQ(e1.nohz_idle_balance, 2);
  EXPECT_EQ(e1.nohz_idle_balance_abort, 1);
  EXPECT_EQ(e1.ipi_received[kCallFunc], 1);
  EXPECT_EQ(early.k->rq(0).c.wake_polling_no_ipi, 0);
  EXPECT_LT(early.woken_runs.count(), 3000 + full_pass);
  EXPECT_LT(path_ns(e1, KernelPath::NohzIdleBalance), 2 * full_pass);
}
