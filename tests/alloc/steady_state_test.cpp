// No heap allocation per event in steady state: the extra events of a longer run come without
// extra allocations (operator new is counted in this test binary only).
#include <gtest/gtest.h>

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
