// Contention on shared state: the shared cache lines of the wakeup path (cacheline.hpp) and a
// core's resources under SMT (a polling sibling keeps them split). Hand-built machines; each
// test asserts a cost or a speed the model must give and the counters that show it.
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::CacheLine;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::LineClass;
using sim::Time;

namespace {

constexpr int kRq = static_cast<int>(LineClass::Rq);

// 2 sockets x 2 cores x 2 threads, one LLC per core: CPU 0's sibling is 4 (threads last), CPU
// 1 is in another LLC of socket 0, CPUs 2, 3 are on socket 1.
machine::Machine all_distances() { return test_machine(2, 2, 2, 1); }

std::unique_ptr<Kernel> boot(const machine::Machine& m, const std::string& features = "") {
  Features f;
  f.apply(features);
  return std::make_unique<Kernel>(m, f, KernelOptions{1, nullptr});
}

// When a task that computes `work_ns` on CPU 0 (its core's sibling CPU 1 idle) finishes.
int64_t compute_time(const machine::Machine& m, int64_t work_ns, int64_t* beside_poll_ns) {
  Kernel k(m, Features(), KernelOptions{1, nullptr});
  int64_t start = -1, end = -1;
  k.create_task("w", lambda([&](Api& a, Task&, int n) {
                  if (n == 0) {
                    start = a.now().count();
                    return Action::compute(work_ns);
                  }
                  if (n == 1) end = a.now().count();
                  return Action::exit();
                }),
                pinned(0));
  k.run(Time::ms(20));
  if (beside_poll_ns) *beside_poll_ns = k.rq(0).c.smt_beside_poll_ns;
  return end - start;
}

}  // namespace

// --- shared cache lines -----------------------------------------------------------------------

TEST(SharedLines, ARemoteReadAfterAWritePaysTheTransferForItsDistance) {
  auto m = all_distances();
  auto k = boot(m);
  ASSERT_EQ(k->topo.distance(0, 4), machine::Distance::Smt);
  ASSERT_EQ(k->topo.distance(0, 1), machine::Distance::OtherLlc);
  ASSERT_EQ(k->topo.distance(0, 2), machine::Distance::OtherSocket);
  CacheLine line;
  line.init(k->nr_cpus(), 0);
  const Time t = Time::us(1);
  // The writer's own read is local: free, and nothing is counted.
  kernel::line_write(line, 0);
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::Rq, 0, t), 0);
  EXPECT_EQ(k->rq(0).c.line_transfers[kRq], 0);
  // Each remote reader pays the transfer for its distance from the writer (far apart in time,
  // so no one waits), once: its second read hits its copy.
  int64_t at = 1;
  for (int reader : {4, 1, 2}) {
    kernel::line_write(line, 0);
    const int64_t want = k->remote_read(0, reader);
    EXPECT_EQ(kernel::line_read(*k, line, LineClass::Rq, reader, Time::us(at)), want) << reader;
    EXPECT_EQ(kernel::line_read(*k, line, LineClass::Rq, reader, Time::us(at + 1)), 0) << reader;
    EXPECT_EQ(k->rq(reader).c.line_transfers[kRq], 1) << reader;
    EXPECT_EQ(k->rq(reader).c.line_transfer_ns[kRq], want) << reader;
    at += 10;
  }
  EXPECT_EQ(m.costs.remote_read_smt_ns, k->remote_read(0, 4));  // the profile's costs, unscaled
  EXPECT_EQ(m.costs.remote_read_other_socket_ns, k->remote_read(0, 2));
  // A write by another CPU invalidates the copies: the next read pays from the new writer.
  kernel::line_write(line, 2);
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::Rq, 4, Time::us(at)), k->remote_read(2, 4));
}

TEST(SharedLines, ConcurrentReadersOfAWrittenLineSerialize) {
  auto k = boot(test_machine(1, 4, 1, 4));  // one LLC of 4 CPUs
  const int64_t x = k->remote_read(0, 1);
  CacheLine line;
  line.init(k->nr_cpus(), 0);
  kernel::line_write(line, 0);
  const Time t = Time::us(5);
  // Three readers at the same instant: the second waits for the first transfer, the third for
  // both.
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::LlcShared, 1, t), x);
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::LlcShared, 2, t), 2 * x);
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::LlcShared, 3, t + Time::ns(x)), 2 * x);
  const int ls = static_cast<int>(LineClass::LlcShared);
  EXPECT_EQ(k->rq(1).c.line_waits[ls], 0);
  EXPECT_EQ(k->rq(2).c.line_waits[ls], 1);
  EXPECT_EQ(k->rq(2).c.line_wait_ns[ls], x);
  EXPECT_EQ(k->rq(3).c.line_wait_ns[ls], x);
  // A reader after the transfers are done waits for none.
  kernel::line_write(line, 0);
  EXPECT_EQ(kernel::line_read(*k, line, LineClass::LlcShared, 1, t + Time::us(10)), x);
}

TEST(SharedLines, TheScanPaysOnlyForRqLinesWrittenSinceItsLastRead) {
  // 4 CPUs, one LLC, no SMT, all busy: select_idle_cpu() from CPU 0 probes 1, 2, 3 and itself
  // (its own line is local).
  auto k = boot(test_machine(1, 4, 1, 4), "NO_SIS_UTIL,NO_SIS_PROP");
  const int64_t x = k->remote_read(0, 1);
  std::vector<Task*> curr;
  for (int c : {0, 1, 2, 3}) {
    kernel::TaskOptions o;
    o.pin_cpu = c;
    o.start_blocked = true;
    Task* t = k->create_task("t", lambda([](Api&, Task&, int) { return Action::exit(); }), o);
    k->rq(c).curr = t;
    kernel::add_nr_running(*k, k->rq(c), 1);  // writes CPU c's rq line
  }
  kernel::TaskOptions o;
  o.pin_cpu = 0;
  o.start_blocked = true;
  Task* p = k->create_task("p", lambda([](Api&, Task&, int) { return Action::exit(); }), o);
  int64_t cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(*k, 0, p, 0, false, cost), -1);
  EXPECT_EQ(k->rq(0).c.select_idle_cpu_scanned, 4);
  EXPECT_EQ(cost, 3 * x);  // each remote line was written since: three transfers
  EXPECT_EQ(k->rq(0).c.line_transfers[kRq], 3);
  // Nothing written since: the same scan hits its copies.
  cost = 0;
  EXPECT_EQ(kernel::select_idle_cpu(*k, 0, p, 0, false, cost), -1);
  EXPECT_EQ(cost, 0);
  // CPU 2's nr_running changes: only its line is transferred again. (The scan starts 1 us into
  // the caller's work: simulated time does not move here, and the first scan's transfer of the
  // line ended x ns after t = 0; earlier, this read would wait for it.)
  kernel::add_nr_running(*k, k->rq(2), 1);
  cost = 1000;
  EXPECT_EQ(kernel::select_idle_cpu(*k, 0, p, 0, false, cost), -1);
  EXPECT_EQ(cost, 1000 + x);
  EXPECT_EQ(k->rq(0).c.line_transfers[kRq], 4);
}

// --- a core's resources ------------------------------------------------------------------------

TEST(SmtResources, ABusyCpuBesideAPollingSiblingRunsAtCoRunSpeed) {
  // One core, two threads. idle=poll: the idle sibling spins in cpu_idle_poll() all along.
  auto m = test_machine(1, 1, 2, 1);
  m.tunables.idle_poll = true;
  const int64_t work = 1000000;
  int64_t beside = 0;
  const int64_t t = compute_time(m, work, &beside);
  const double co_run = work / (m.costs.smt_pair_throughput / 2);  // 1.2 / 2: 1.667 ms
  EXPECT_GE(t, static_cast<int64_t>(co_run));
  EXPECT_LT(t, static_cast<int64_t>(co_run) + 30000);  // + the ticks' handlers on CPU 0
  // Nearly all of the segment ran beside the polling sibling (its ticks are kernel work).
  EXPECT_GT(beside, static_cast<int64_t>(0.95 * co_run));
  EXPECT_LE(beside, t);
}

TEST(SmtResources, ABusyCpuBesideAHaltedSiblingRunsAtSoloSpeed) {
  // The same core with POLL disabled: the idle sibling halts in MWAIT (C1 / C6).
  auto m = test_machine(1, 1, 2, 1);
  machine::disable_idle_states(m, {"POLL"});
  const int64_t work = 1000000;
  int64_t beside = -1;
  const int64_t t = compute_time(m, work, &beside);
  EXPECT_GE(t, work);
  EXPECT_LT(t, work + 30000);
  EXPECT_EQ(beside, 0);
}
