// hackbench's release: the main task's one write to the wake fd wakes the children polling it,
// newest first (pipe_write() walks the pipe's wait queue from its head; poll_wait() adds each
// poller at the head), as the real kernel does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"
#include "trace/sink.hpp"
#include "workload/workload.hpp"

using namespace schedlab;

namespace {

struct Wakings : trace::TraceSink {
  std::vector<int> pids;
  void sched_waking(sim::Time, int, const trace::TaskInfo& p, int) override {
    if (p.comm == "hackbench") pids.push_back(p.pid);
  }
};

}  // namespace

TEST(Hackbench, ReleaseWakesTheChildrenNewestFirst) {
  Wakings sink;
  auto m = fixture::test_machine(1, 4, 2, 4);
  kernel::Kernel k(m, kernel::Features(), kernel::KernelOptions{1, &sink});
  auto w = workload::parse_workload({"hackbench", "-g", "2", "-f", "3", "-l", "20"}, k.nr_cpus());
  k.set_default_affinity(w->affinity());
  w->setup(k.api());
  k.run(w->time_limit());
  ASSERT_TRUE(w->finished());
  const size_t children = 2 * 2 * 3;
  // The first waking is the main task's own (it starts asleep); then the release.
  ASSERT_GT(sink.pids.size(), children + 1);
  const int main_pid = sink.pids[0];
  for (size_t i = 1; i <= children; ++i) {
    EXPECT_GT(sink.pids[i], main_pid) << i;  // children are created after main
    if (i > 1) EXPECT_LT(sink.pids[i], sink.pids[i - 1]) << i;  // newest first
  }
}
