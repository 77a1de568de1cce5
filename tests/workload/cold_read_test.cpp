// The cache-footprint rule for channel messages (workload/channel.hpp, docs/model.md "Cold
// channel reads"): a read on the core a message was sent from pays costs.unix_recv_cold_ns (or
// pipe_read_cold_ns) when more than topology.l2_bytes moved through channels on that core since
// the send. A hand-built writer and reader on one CPU: the writer sends N messages, then wakes
// the reader, which reads them all.
#include <gtest/gtest.h>

#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"
#include "machine/param_api.hpp"
#include "workload/program.hpp"

using namespace schedlab;
using workload::CacheFootprint;
using workload::Channel;
using workload::ChannelCosts;
using kernel::Action;

namespace {

struct Shared {
  Channel ch;
  CacheFootprint cache;
  ChannelCosts costs;
  kernel::Task* reader = nullptr;
  int n = 0;
  sim::Time end;
};

class Writer final : public workload::Program {
 public:
  explicit Writer(Shared* s) : s_(s) {}

 protected:
  void step(kernel::Api&, kernel::Task& self) override {
    if (i_ == s_->n) {
      if (done_) return;
      done_ = true;
      push(Action::wake(s_->reader, false));
      push(Action::exit());
      return;
    }
    if (write(s_->ch, 100, s_->costs, self)) ++i_;
  }

 private:
  Shared* s_;
  int i_ = 0;
  bool done_ = false;
};

class Reader final : public workload::Program {
 public:
  explicit Reader(Shared* s) : s_(s) {}

 protected:
  void step(kernel::Api&, kernel::Task& self) override {
    if (got_ == s_->n) {
      if (done_) return;
      done_ = true;
      Shared* s = s_;
      push([s](kernel::Api& k, kernel::Task&) {
        s->end = k.now();
        k.stop();
      });
      push(Action::exit());
      return;
    }
    if (read(s_->ch, s_->costs, self)) ++got_;
  }

 private:
  Shared* s_;
  int got_ = 0;
  bool done_ = false;
};

constexpr int64_t kTruesize = 896;
constexpr int64_t kL2 = 16384;  // 18 skbs of 896 bytes
constexpr int64_t kColdNs = 5000;

// N messages through one AF_UNIX channel on a one-CPU machine with a kL2-byte L2.
Shared run(int n, int64_t cold_ns, int64_t l2_bytes = kL2) {
  machine::Machine m = fixture::test_machine(1, 1, 1, 1);
  m.topo.l2_bytes = static_cast<int>(l2_bytes);
  machine::set_param(m, "costs.unix_recv_ns", 1000);
  machine::set_param(m, "costs.unix_recv_cold_ns", cold_ns);
  Shared s;
  s.n = n;
  s.ch.make_unix(1 << 20, kTruesize);  // room for every message: the writer never waits
  s.costs = ChannelCosts::unix_socket(m.costs);
  s.cache.setup(m, s.costs.recv_cold_ns);
  s.costs.cache = &s.cache;
  kernel::Kernel k(m, kernel::Features(), kernel::KernelOptions{1, nullptr});
  kernel::TaskOptions ro;
  ro.start_blocked = true;
  s.reader = k.api().create_task("reader", std::make_unique<Reader>(&s), ro);
  k.api().create_task("writer", std::make_unique<Writer>(&s), {});
  k.run(sim::Time::ms(1000));
  return s;
}

}  // namespace

// 100 messages in the queue: 99 x 896 bytes moved on the core between each one's send and its
// read (the later sends, the earlier reads), more than the 16 KiB L2: every read is cold.
TEST(ColdRead, ADeepQueuePaysTheColdCost) {
  Shared s = run(100, kColdNs);
  EXPECT_EQ(s.cache.reads_checked, 100);
  EXPECT_EQ(s.cache.reads_cold, 100);
}

// 3 messages: 2 x 896 bytes between send and read, within the L2: no read is cold.
TEST(ColdRead, AShallowQueueDoesNot) {
  Shared s = run(3, kColdNs);
  EXPECT_EQ(s.cache.reads_checked, 3);
  EXPECT_EQ(s.cache.reads_cold, 0);
}

// The threshold is "more than the L2": with the L2 exactly 99 skbs, the deep queue is warm.
TEST(ColdRead, TheThresholdIsMoreThanTheL2) {
  EXPECT_EQ(run(100, kColdNs, 99 * kTruesize).cache.reads_cold, 0);
  EXPECT_EQ(run(100, kColdNs, 99 * kTruesize - 1).cache.reads_cold, 100);
}

// The cold reads cost exactly their extra: the run is 100 x kColdNs longer than with the rule
// off (cold cost 0, or no L2 size), and with the rule off nothing is counted.
TEST(ColdRead, ColdReadsAddTheirCostAndTheRuleIsOffByDefault) {
  Shared cold = run(100, kColdNs), off = run(100, 0), no_l2 = run(100, kColdNs, 0);
  EXPECT_FALSE(off.cache.on());
  EXPECT_EQ(off.cache.reads_checked, 0);
  EXPECT_EQ(no_l2.cache.reads_checked, 0);
  EXPECT_EQ((cold.end - off.end).count(), 100 * kColdNs);
  EXPECT_EQ(off.end, no_l2.end);
}
