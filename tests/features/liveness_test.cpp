// Every preset finishes under every feature combination and several seeds (no lost wakeups,
// no task left behind), and time is conserved on every CPU.
#include <gtest/gtest.h>

#include "experiment/run.hpp"

using namespace schedlab;

TEST(Liveness, PresetsFinishUnderAllFeatureCombinations) {
  const std::vector<std::vector<std::string>> cmds = {
      {"hackbench", "-g", "2", "-l", "30"},
      {"hackbench", "-p", "-T", "-g", "3", "-l", "30"},
      {"perf", "bench", "sched", "pipe", "-l", "3000"},
  };
  for (const char* machine : {"tiny-4", "epyc-milan-2s", "emag-32"}) {
    for (const char* f : {"", "SM_IDLE", "IDLE_CPUMASK", "IDLE_SPIN", "SM_IDLE,IDLE_CPUMASK,IDLE_SPIN",
                          "NO_SIS_UTIL,SIS_PROP", "NO_TTWU_QUEUE"}) {
      for (uint64_t seed : {1, 2, 3}) {
        for (const auto& cmd : cmds) {
          experiment::RunSpec s;
          s.machine = machine;
          s.features = f;
          s.seed = seed;
          s.command = cmd;
          s.sets = {"noise.jitter_cov=0.05"};
          experiment::RunResult r;
          ASSERT_NO_THROW(r = experiment::run_one(s)) << machine << " " << f << " seed " << seed;
          for (const auto& c : r.per_cpu)
            ASSERT_EQ(c.busy_ns + kernel::derived::kernel_total_ns(c) + kernel::derived::idle_total_ns(c), r.simulated_ns);
        }
      }
    }
  }
}

TEST(SwitchMm, ProcessesPaySwitchMmThreadsDoNot) {
  experiment::RunSpec s;
  s.machine = "tiny-4";
  s.command = {"hackbench", "-g", "2", "-l", "30"};
  auto procs = experiment::run_one(s);
  s.command = {"hackbench", "-T", "-g", "2", "-l", "30"};
  auto threads = experiment::run_one(s);
  // 80 processes on 4 CPUs switch address space on most context switches; threads of one
  // process load their mm once per CPU at most.
  EXPECT_GT(procs.total.mm_switches, procs.total.context_switches / 4);
  EXPECT_LE(threads.total.mm_switches, 4);
  EXPECT_GT(threads.total.context_switches, 0);
}

TEST(Taskset, PinsEveryTaskOfTheBenchmark) {
  experiment::RunSpec s;
  s.machine = "epyc-milan-2s";
  s.command = {"taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l", "2000"};
  auto pinned = experiment::run_one(s);
  // Both tasks on CPU 0: every round trip is two switches there, nothing elsewhere.
  EXPECT_EQ(pinned.per_cpu[0].context_switches, pinned.total.context_switches);
  EXPECT_GE(pinned.per_cpu[0].context_switches, 4000);
  EXPECT_EQ(pinned.total.migrations, 0);
  EXPECT_GT(pinned.total.mm_switches, 2000);  // processes: each switch changes mm
  s.command = {"taskset", "0x3", "perf", "bench", "sched", "pipe", "-T", "-l", "2000"};
  auto two = experiment::run_one(s);
  for (size_t c = 2; c < two.per_cpu.size(); ++c) EXPECT_EQ(two.per_cpu[c].context_switches, 0);
  EXPECT_LE(two.total.mm_switches, 2);  // threads share one mm
}
