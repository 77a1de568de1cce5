// /proc/stat's idle time per CPU (Api::cpu_idle_ns()).
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Features;
using kernel::Kernel;
using kernel::KernelOptions;
using sim::Time;

// Two CPUs on two cores (no SMT).
static machine::Machine two_cpus() { return test_machine(1, 2, 1, 2); }

TEST(CpuIdleNs, CountsIdleStatesUpToNowOnEachCpu) {
  Kernel k(two_cpus(), Features(), KernelOptions{1, nullptr});
  // CPU 0 computes for 4 ms from the start; CPU 1 has nothing to do.
  k.create_task("busy", lambda([](Api&, Task&, int n) { return n == 0 ? Action::compute(4000000) : Action::exit(); }),
                pinned(0));
  int64_t idle0_at2 = -1, idle1_at2 = -1, idle1_at5 = -1, idle0_at8 = -1;
  k.api().at(Time::ms(2), [&] {
    idle0_at2 = k.api().cpu_idle_ns(0);
    idle1_at2 = k.api().cpu_idle_ns(1);
  });
  k.api().at(Time::ms(5), [&] { idle1_at5 = k.api().cpu_idle_ns(1); });
  k.api().at(Time::ms(8), [&] { idle0_at8 = k.api().cpu_idle_ns(0); });
  k.run(Time::ms(10));
  EXPECT_LT(idle0_at2, 100000);  // busy from the start
  // CPU 1: idle but for the idle entry's own kernel work; the interval it is in counts.
  EXPECT_GT(idle1_at2, 1800000);
  EXPECT_LE(idle1_at2, 2000000);
  EXPECT_GT(idle1_at5 - idle1_at2, 2900000);
  EXPECT_LE(idle1_at5 - idle1_at2, 3000000);
  // CPU 0 went idle once the task exited, at about 4 ms.
  EXPECT_GT(idle0_at8, 3000000);
  EXPECT_LE(idle0_at8, 4000000);
}
