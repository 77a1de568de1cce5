// No heap allocation per event in steady state: the extra events of a longer run come without
// extra allocations (operator new is counted in this test binary only). And memory and work
// that grow linearly, not faster, with the CPU count (issue 9: at 4096 CPUs each sched domain's
// own span copy made memory per CPU grow with the square of the CPU count).
#include <gtest/gtest.h>

#include <regex>

#include "experiment/run.hpp"

#include "../common/alloc_counter.hpp"

using namespace schedlab;

namespace {

struct Count {
  uint64_t allocs = 0, events = 0;
};

Count run(const std::string& machine, std::vector<std::string> cmd) {
  experiment::RunSpec spec;
  spec.machine = machine;
  spec.command = std::move(cmd);
  machine::Machine m = experiment::load_machine(spec);
  uint64_t a0 = alloc_counter::allocations();
  auto r = experiment::run_one(m, spec);
  return {alloc_counter::allocations() - a0, r.events};
}

// Allocations per event of the events the longer run has beyond the shorter one.
double marginal(const std::string& machine, std::vector<std::string> shorter,
                std::vector<std::string> longer) {
  Count a = run(machine, std::move(shorter)), b = run(machine, std::move(longer));
  EXPECT_GT(b.events, 2 * a.events);
  double extra_allocs = static_cast<double>(b.allocs) - static_cast<double>(a.allocs);
  return extra_allocs / static_cast<double>(b.events - a.events);
}

}  // namespace

TEST(SteadyState, HackbenchAllocatesNothingPerEvent) {
  double per_event = marginal("epyc-milan-2s", {"hackbench", "-g", "2", "-l", "100"},
                              {"hackbench", "-g", "2", "-l", "400"});
  EXPECT_LT(per_event, 0.001) << per_event;
  std::cout << "hackbench marginal allocations per event: " << per_event << "\n";
}

TEST(SteadyState, PipeAndNetperfAllocateNothingPerEvent) {
  EXPECT_LT(marginal("spr-2s", {"perf", "bench", "sched", "pipe", "-l", "2000"},
                     {"perf", "bench", "sched", "pipe", "-l", "20000"}),
            0.001);
  EXPECT_LT(marginal("tiny-4", {"netperf", "-t", "TCP_RR", "-l", "1"},
                     {"netperf", "-t", "TCP_RR", "-l", "3"}),
            0.001);
}

TEST(SteadyState, SchbenchAllocatesNothingPerEvent) {
  EXPECT_LT(marginal("epyc-milan-2s", {"schbench", "-m", "2", "-t", "8", "-r", "1"},
                     {"schbench", "-m", "2", "-t", "8", "-r", "3"}),
            0.001);
}

namespace {

struct Scaled {
  uint64_t bytes = 0, events = 0;
};

// hackbench on scale-4096 cut to `sockets` sockets (512 CPUs each): the bytes the run asks of
// the heap (machine tables, sched domains, tasks, counters) and the events it simulates.
Scaled on_sockets(int sockets, std::vector<std::string> cmd) {
  const machine::Machine full = machine::load_profile("scale-4096");
  std::string toml = std::regex_replace(machine::to_toml(full), std::regex("sockets = [0-9]+"),
                                        "sockets = " + std::to_string(sockets));
  machine::Machine m = machine::parse_profile(toml, "scale-" + std::to_string(512 * sockets) + ".toml");
  EXPECT_EQ(m.topo.nr_cpus(), 512 * sockets);
  experiment::RunSpec spec;
  spec.command = std::move(cmd);
  uint64_t b0 = alloc_counter::bytes();
  auto r = experiment::run_one(m, spec);
  return {alloc_counter::bytes() - b0, r.events};
}

}  // namespace

// The bytes one more CPU costs are the same from 1024 to 2048 CPUs as from 2048 to 4096 (a
// structure of CPUs x CPUs would make the second step's per-CPU cost twice the first's).
TEST(Scale, MemoryPerCpuIsLinearInTheCpuCount) {
  const std::vector<std::string> cmd = {"hackbench", "-g", "1", "-l", "10"};
  Scaled a = on_sockets(2, cmd), b = on_sockets(4, cmd), c = on_sockets(8, cmd);
  double first = static_cast<double>(b.bytes - a.bytes) / 1024;   // per CPU, 1024 -> 2048
  double second = static_cast<double>(c.bytes - b.bytes) / 2048;  // per CPU, 2048 -> 4096
  std::cout << "bytes per CPU: " << first << " (1024 -> 2048), " << second << " (2048 -> 4096)\n";
  EXPECT_GT(first, 0);
  EXPECT_LT(second, 1.25 * first);
  EXPECT_GT(second, 0.8 * first);
}

// The same tasks on four times the CPUs simulate about the same events: no tick per idle CPU
// (an idle CPU's tick is stopped) and no wakeup that visits every CPU. (The NOHZ idle balance
// visits idle CPUs, as the kernel's _nohz_idle_balance() walks nohz.idle_cpus_mask: 77983 events
// at 1024 CPUs, 86462 at 4096, +11 %.)
TEST(Scale, EventsDoNotGrowWithIdleCpus) {
  const std::vector<std::string> cmd = {"hackbench", "-g", "4", "-l", "20"};
  Scaled a = on_sockets(2, cmd), c = on_sockets(8, cmd);
  std::cout << "events: " << a.events << " at 1024 CPUs, " << c.events << " at 4096\n";
  EXPECT_LT(static_cast<double>(c.events), 1.25 * static_cast<double>(a.events));
}
