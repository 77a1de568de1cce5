#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "machine/machine.hpp"

using namespace schedlab::machine;

namespace {
std::vector<int> range(int lo, int hi) {  // [lo, hi)
  std::vector<int> v(hi - lo);
  std::iota(v.begin(), v.end(), lo);
  return v;
}
std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

TEST(machineTopology, EpycMilanCounts) {
  Topology t = load_profile("epyc-milan-2s").topo;
  EXPECT_EQ(t.nr_cpus(), 256);
  EXPECT_EQ(t.nr_cores(), 128);
  EXPECT_EQ(t.nr_llcs(), 16);  // 64 cores / 8 per CCX = 8 CCX per socket, 2 sockets
  EXPECT_EQ(t.llc_size(), 16);
  std::set<int> socket0_llcs;
  for (int cpu : t.socket_cpus(0)) socket0_llcs.insert(t.llc_of(cpu));
  EXPECT_EQ(socket0_llcs.size(), 8u);
  EXPECT_EQ(t.socket_cpus(1).size(), 128u);
}

TEST(machineTopology, EpycMilanSmtSiblingsAreNrCoresApart) {
  Topology t = load_profile("epyc-milan-2s").topo;
  EXPECT_EQ(t.smt_siblings(0), (std::vector<int>{0, 128}));
  EXPECT_EQ(t.smt_siblings(130), (std::vector<int>{2, 130}));
  EXPECT_EQ(t.smt_siblings(127), (std::vector<int>{127, 255}));
  EXPECT_EQ(t.thread_of(200), 1);
  EXPECT_EQ(t.core_of(200), 72);
  EXPECT_EQ(t.socket_of(63), 0);
  EXPECT_EQ(t.socket_of(64), 1);
  EXPECT_EQ(t.socket_of(128 + 64), 1);
}

TEST(machineTopology, EpycMilanLlcCpus) {
  Topology t = load_profile("epyc-milan-2s").topo;
  EXPECT_EQ(t.llc_cpus(0), concat(range(0, 8), range(128, 136)));
  EXPECT_EQ(t.llc_cpus(8), concat(range(64, 72), range(192, 200)));  // first CCX of socket 1
  EXPECT_EQ(t.llc_of(8), 1);
  EXPECT_EQ(t.llc_of(135), 0);
  EXPECT_EQ(t.llc_of(199), 8);
  // The LLCs partition the CPUs.
  std::vector<int> seen(t.nr_cpus(), 0);
  for (int l = 0; l < t.nr_llcs(); ++l)
    for (int cpu : t.llc_cpus(l)) {
      EXPECT_EQ(t.llc_of(cpu), l);
      seen[cpu]++;
    }
  EXPECT_EQ(seen, std::vector<int>(t.nr_cpus(), 1));
}

TEST(machineTopology, EpycMilanDistanceClasses) {
  Topology t = load_profile("epyc-milan-2s").topo;
  EXPECT_EQ(t.distance(0, 0), Distance::Self);
  EXPECT_EQ(t.distance(0, 128), Distance::Smt);
  EXPECT_EQ(t.distance(0, 7), Distance::Llc);
  EXPECT_EQ(t.distance(0, 135), Distance::Llc);  // sibling thread of a core in the same CCX
  EXPECT_EQ(t.distance(0, 8), Distance::OtherLlc);
  EXPECT_EQ(t.distance(0, 63), Distance::OtherLlc);
  EXPECT_EQ(t.distance(0, 136), Distance::OtherLlc);
  EXPECT_EQ(t.distance(0, 64), Distance::OtherSocket);
  EXPECT_EQ(t.distance(0, 192), Distance::OtherSocket);
  EXPECT_EQ(t.distance(192, 0), Distance::OtherSocket);
  // Class counts seen from CPU 0: 1 sibling, 14 others in the CCX, 112 elsewhere on the socket.
  int counts[5] = {};
  for (int cpu = 0; cpu < t.nr_cpus(); ++cpu) counts[static_cast<int>(t.distance(0, cpu))]++;
  EXPECT_EQ(counts[static_cast<int>(Distance::Self)], 1);
  EXPECT_EQ(counts[static_cast<int>(Distance::Smt)], 1);
  EXPECT_EQ(counts[static_cast<int>(Distance::Llc)], 14);
  EXPECT_EQ(counts[static_cast<int>(Distance::OtherLlc)], 112);
  EXPECT_EQ(counts[static_cast<int>(Distance::OtherSocket)], 128);
}

TEST(machineTopology, SprOneLlcPerSocket) {
  Topology t = load_profile("spr-2s").topo;
  EXPECT_EQ(t.nr_cpus(), 240);
  EXPECT_EQ(t.nr_llcs(), 2);
  EXPECT_EQ(t.llc_size(), 120);
  EXPECT_EQ(t.smt_siblings(5), (std::vector<int>{5, 125}));
  EXPECT_EQ(t.distance(0, 59), Distance::Llc);
  EXPECT_EQ(t.distance(0, 60), Distance::OtherSocket);
  EXPECT_EQ(t.distance(0, 179), Distance::Llc);
  for (int cpu = 0; cpu < t.nr_cpus(); ++cpu) EXPECT_NE(t.distance(0, cpu), Distance::OtherLlc);
}

TEST(machineTopology, EmagNoSmt) {
  Topology t = load_profile("emag-32").topo;
  EXPECT_EQ(t.nr_cpus(), 32);
  EXPECT_EQ(t.nr_llcs(), 1);
  EXPECT_EQ(t.smt_siblings(5), (std::vector<int>{5}));
  EXPECT_EQ(t.llc_cpus(0), range(0, 32));
  EXPECT_EQ(t.distance(3, 31), Distance::Llc);
}

TEST(machineTopology, Tiny4) {
  Topology t = load_profile("tiny-4").topo;
  EXPECT_EQ(t.nr_cpus(), 4);
  EXPECT_EQ(t.smt_siblings(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(t.smt_siblings(3), (std::vector<int>{1, 3}));
  EXPECT_EQ(t.llc_cpus(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.distance(0, 2), Distance::Smt);
  EXPECT_EQ(t.distance(0, 1), Distance::Llc);
  EXPECT_EQ(t.distance(0, 3), Distance::Llc);
}

TEST(machineTopology, DistanceCostsFollowTheProfile) {
  Machine m = load_profile("epyc-milan-2s");
  EXPECT_EQ(m.remote_read_ns(Distance::Self), 0);
  EXPECT_EQ(m.remote_read_ns(Distance::Smt), m.costs.remote_read_smt_ns);
  EXPECT_EQ(m.remote_read_ns(Distance::Llc), m.costs.remote_read_llc_ns);
  EXPECT_EQ(m.remote_read_ns(Distance::OtherLlc), m.costs.remote_read_other_llc_ns);
  EXPECT_EQ(m.remote_read_ns(Distance::OtherSocket), m.costs.remote_read_other_socket_ns);
  EXPECT_EQ(m.ipi_latency_ns(Distance::OtherLlc), m.costs.ipi_latency_other_llc_ns);
  EXPECT_EQ(m.cache_cold_ns(Distance::OtherSocket), m.costs.cache_cold_other_socket_ns);
  EXPECT_EQ(m.tick_period_ns(), 4000000);  // HZ 250
  EXPECT_EQ(load_profile("spr-2s").tick_period_ns(), 1000000);
}
