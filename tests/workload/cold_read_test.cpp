// The cache-footprint rule for channel messages (workload/channel.hpp, docs/model.md "Cold
// channel reads and sends"): a read on the core a message was sent from pays
// costs.unix_recv_cold_ns (or pipe_read_cold_ns) when more than topology.l2_bytes moved through
// channels on that core since the send; a send reuses the buffer freed last on its core, and pays
// costs.unix_send_cold_ns when there is none or more than the L2 moved since its free. A
// hand-built writer and reader on one CPU: the writer sends N messages, then wakes the reader,
// which reads them all; and one task that runs a script of fills and drains.
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
  s.costs.use_cache(s.cache, m);
  kernel::Kernel k(m, kernel::Features(), kernel::KernelOptions{1, nullptr});
  kernel::TaskOptions ro;
  ro.start_blocked = true;
  s.reader = k.api().create_task("reader", std::make_unique<Reader>(&s), ro);
  k.api().create_task("writer", std::make_unique<Writer>(&s), {});
  k.run(sim::Time::ms(1000));
  return s;
}

constexpr int64_t kSendColdNs = 3000;

// One task on a one-CPU machine with a kL2-byte L2 running `script`: +N sends N messages into
// one AF_UNIX channel, -N reads N of them.
struct Scripted {
  CacheFootprint cache;
  sim::Time end;
};

class Script final : public workload::Program {
 public:
  Script(std::vector<int> ops, Channel* ch, ChannelCosts c, Scripted* out) : ops_(std::move(ops)), ch_(ch), c_(c), out_(out) {}

 protected:
  void step(kernel::Api&, kernel::Task& self) override {
    if (at_ == ops_.size()) {
      if (done_) return;
      done_ = true;
      Scripted* o = out_;
      push([o](kernel::Api& k, kernel::Task&) {
        o->end = k.now();
        k.stop();
      });
      push(Action::exit());
      return;
    }
    const int op = ops_[at_];
    if (op > 0) write(*ch_, 100, c_, self);
    else read(*ch_, c_, self);
    if (++done_in_op_ == std::abs(op)) ++at_, done_in_op_ = 0;
  }

 private:
  std::vector<int> ops_;
  Channel* ch_;
  ChannelCosts c_;
  Scripted* out_;
  size_t at_ = 0;
  int done_in_op_ = 0;
  bool done_ = false;
};

Scripted run_script(std::vector<int> ops, int64_t send_cold_ns = kSendColdNs, int64_t l2_bytes = kL2,
                    int64_t recv_cold_ns = 0) {
  machine::Machine m = fixture::test_machine(1, 1, 1, 1);
  m.topo.l2_bytes = static_cast<int>(l2_bytes);
  machine::set_param(m, "costs.unix_send_ns", 1000);
  machine::set_param(m, "costs.unix_send_cold_ns", send_cold_ns);
  machine::set_param(m, "costs.unix_recv_cold_ns", recv_cold_ns);
  Scripted out;
  Channel ch;
  ch.make_unix(1 << 20, kTruesize);
  ChannelCosts c = ChannelCosts::unix_socket(m.costs);
  c.use_cache(out.cache, m);
  kernel::Kernel k(m, kernel::Features(), kernel::KernelOptions{1, nullptr});
  k.api().create_task("script", std::make_unique<Script>(std::move(ops), &ch, c, &out), {});
  k.run(sim::Time::ms(1000));
  return out;
}

}  // namespace

// A send with nothing freed on its core writes a cold buffer: a fill of 10 is 10 cold sends.
TEST(ColdSend, NothingFreedIsCold) {
  Scripted s = run_script({10, -10});
  EXPECT_EQ(s.cache.sends_checked, 10);
  EXPECT_EQ(s.cache.sends_cold, 10);
}

// Send one, read it, send the next: each send after the first reuses the buffer just freed.
TEST(ColdSend, TheBufferJustFreedIsReusedWarm) {
  std::vector<int> ops;
  for (int i = 0; i < 50; ++i) ops.push_back(1), ops.push_back(-1);
  Scripted s = run_script(ops);
  EXPECT_EQ(s.cache.sends_checked, 50);
  EXPECT_EQ(s.cache.sends_cold, 1);
}

// Fill 100, drain 100, fill 100 again: the second fill takes the frees newest first; the k-th
// of them (k = 0..) finds k x 896 bytes moved since its free (the reads after it), so the first
// kL2 / 896 + 1 = 19 are warm and the other 81 are cold (the cold ones move bytes too).
TEST(ColdSend, FreesOlderThanTheL2AreCold) {
  Scripted s = run_script({100, -100, 100, -100});
  EXPECT_EQ(s.cache.sends_checked, 200);
  EXPECT_EQ(s.cache.sends_cold, 100 + (100 - (kL2 / kTruesize + 1)));
  // With the L2 as large as the whole drain every send of the second fill is warm.
  EXPECT_EQ(run_script({100, -100, 100, -100}, kSendColdNs, 100 * kTruesize).cache.sends_cold, 100);
}

// A cold send costs exactly its extra, and without the cost (or an L2 size) nothing is counted.
TEST(ColdSend, ColdSendsAddTheirCostAndTheRuleIsOffByDefault) {
  Scripted cold = run_script({100, -100, 100, -100}), off = run_script({100, -100, 100, -100}, 0),
           no_l2 = run_script({100, -100, 100, -100}, kSendColdNs, 0);
  EXPECT_EQ(off.cache.sends_checked, 0);
  EXPECT_EQ(no_l2.cache.sends_checked, 0);
  EXPECT_EQ((cold.end - off.end).count(), cold.cache.sends_cold * kSendColdNs);
  EXPECT_EQ(off.end, no_l2.end);
}

// A warm send moves no bytes through the L2 (its buffer was counted at its free): ten messages
// kept in flight, each read followed by a send into the buffer it freed, use ten buffers; a
// message then finds at most ten reads between its send and its read, within an L2 of 15 skbs,
// and no read is cold (were the reused buffers counted again, 9 sends + 9 reads would be).
TEST(ColdSend, AWarmSendDoesNotCountItsBytesAgain) {
  std::vector<int> ops = {10};
  for (int i = 0; i < 30; ++i) ops.push_back(-1), ops.push_back(1);
  ops.push_back(-10);
  Scripted s = run_script(ops, kSendColdNs, 15 * kTruesize, kColdNs);
  EXPECT_EQ(s.cache.sends_cold, 10);  // the first fill
  EXPECT_EQ(s.cache.reads_checked, 40);
  EXPECT_EQ(s.cache.reads_cold, 0);
}

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
