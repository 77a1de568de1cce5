// host calibrate: runs the quick microbenchmarks on this machine. Timings are never pass/fail
// here beyond sanity: every value positive, finite and below an absurd bound.
#include <gtest/gtest.h>

#include <cmath>

#include "host/calibrate.hpp"
#include "host/probe.hpp"

using namespace schedlab;

namespace {
host::CalibrationResult quick_run() {
  static host::CalibrationResult cached = [] {
    auto probe = host::probe_sysfs("/");
    host::CalibrateOptions opt;
    opt.quick = true;
    opt.machine = probe.machine;
    opt.model_to_real = probe.model_to_real;
    return host::calibrate(opt);
  }();
  return cached;
}
}  // namespace

TEST(Calibrate, QuickRunGivesSaneValues) {
  auto r = quick_run();
  EXPECT_GT(r.elapsed_s, 0.0);
  EXPECT_LT(r.elapsed_s, 120.0);  // budgets bound a quick run to a few seconds
  for (const char* key : {"syscall_getppid", "syscall_getpid", "futex_wake_nowaiter", "futex_wait_eagain",
                          "pipe_write_1b", "pipe_read_1b", "futex_pingpong_same_cpu_half", "pipe_rtt_same_cpu"})
    EXPECT_NE(r.find(key), nullptr) << key;
  for (auto& m : r.measurements) {
    EXPECT_TRUE(std::isfinite(m.value_ns)) << m.key;
    EXPECT_GT(m.value_ns, 0.0) << m.key;
    EXPECT_LT(m.value_ns, 1e9) << m.key;  // a second per operation would be absurd (fork here: ~10 ms)
    EXPECT_GE(m.cov, 0.0) << m.key;
    EXPECT_GE(m.batches, 1) << m.key;
    EXPECT_LE(m.min_ns, m.value_ns) << m.key;
    EXPECT_GE(m.max_ns, m.value_ns) << m.key;
  }
}

TEST(Calibrate, CrossCpuMeasurementsWhenTwoCpus) {
  auto probe = host::probe_sysfs("/");
  if (probe.machine.topo.nr_cpus() < 2) GTEST_SKIP() << "one CPU only";
  auto r = quick_run();
  bool any_cacheline = false, any_wake = false;
  for (auto& m : r.measurements) {
    any_cacheline |= m.key.rfind("cacheline_", 0) == 0;
    any_wake |= m.key.rfind("wake_latency_", 0) == 0;
  }
  EXPECT_TRUE(any_cacheline);
  EXPECT_TRUE(any_wake);
}

TEST(Calibrate, MapsOntoCosts) {
  auto r = quick_run();
  auto probe = host::probe_sysfs("/");
  machine::Machine m = probe.machine;
  m.costs.schedule_ns = 300;
  m.costs.context_switch_ns = 1;  // will be replaced
  auto updates = host::apply_calibration(m, r);
  EXPECT_FALSE(updates.empty());
  // The switch is derived from two measurements taken at different times; on a loaded machine
  // the syscalls can exceed the whole half round trip, and then (MappingArithmetic checks the
  // rule) the placeholder is kept rather than replaced by a meaningless value.
  bool cs_measured = false;
  for (auto& u : updates) cs_measured |= u.key == "costs.context_switch_ns";
  if (cs_measured)
    EXPECT_GT(m.costs.context_switch_ns, 1);
  else
    EXPECT_EQ(m.costs.context_switch_ns, 1);
  EXPECT_GT(m.costs.futex_wake_ns, 0);
  EXPECT_GT(m.costs.futex_wait_ns, 0);
  EXPECT_GT(m.costs.pipe_write_ns, 0);
  EXPECT_GT(m.costs.pipe_read_ns, 0);
  EXPECT_EQ(m.costs.schedule_ns, 300);  // not measured: stays
  for (auto& u : updates) {
    EXPECT_GE(u.value, 0) << u.key;
    EXPECT_LT(u.value, 1000000000) << u.key;
    EXPECT_EQ(u.key.rfind("costs.", 0), 0u) << u.key;
  }
  auto h = host::calibration_header(r, updates);
  EXPECT_GT(h.size(), updates.size());
}

TEST(Calibrate, MappingArithmetic) {
  // Synthetic measurements: check the documented formulas, independent of this machine.
  host::CalibrationResult r;
  auto add = [&](const char* key, double v, std::string state = "") {
    host::Measurement m;
    m.key = key;
    m.value_ns = v;
    m.cov = 0.01;
    m.idle_state = state;
    r.measurements.push_back(m);
  };
  add("futex_wake_nowaiter", 100);
  add("futex_wait_eagain", 120);
  add("futex_pingpong_same_cpu_half", 2000);
  add("cacheline_llc", 60);
  add("cacheline_other_socket", 200);
  add("wake_latency_llc", 10000, "C1");
  add("wake_syscall_llc", 1000);
  machine::Machine m;
  m.costs.ttwu_ns = 200;
  m.costs.enqueue_ns = 100;
  m.costs.dequeue_ns = 100;
  m.costs.schedule_ns = 300;
  m.costs.pick_next_task_ns = 80;
  m.costs.ipi_entry_ns = 500;
  m.idle_states.push_back({"POLL", "", 0, 0, 0, true, false});
  m.idle_states.push_back({"C1", "", 1000, 1000, 400, false, false});  // non-polling, e.g. HLT-like
  host::apply_calibration(m, r);
  EXPECT_EQ(m.costs.context_switch_ns, 2000 - (100 + 120 + 200 + 100 + 100 + 300 + 80));
  EXPECT_EQ(m.costs.remote_read_llc_ns, 60);
  EXPECT_EQ(m.costs.remote_read_other_socket_ns, 200);
  EXPECT_EQ(m.costs.remote_read_smt_ns, 0);  // not measured
  // 10000 - waker 1000 - schedule 300 - pick 80 - context_switch 1000 - wake_cost 400 - ipi_entry 500
  EXPECT_EQ(m.costs.ipi_latency_llc_ns, 10000 - 1000 - 300 - 80 - 1000 - 400 - 500);
  EXPECT_EQ(m.costs.polling_wake_ns, 0);
  // Same with the wakee in a polling state: polling_wake_ns instead, no IPI entry.
  r.measurements[5].idle_state = "POLL";
  machine::Machine m2 = m;
  m2.costs.ipi_latency_llc_ns = 0;
  host::apply_calibration(m2, r);
  EXPECT_EQ(m2.costs.ipi_latency_llc_ns, 0);
  EXPECT_EQ(m2.costs.polling_wake_ns, 10000 - 1000 - 300 - 80 - 1000 - 0);
  // When the base's other scheduler costs explain (almost) everything, the remainder is split in
  // the base's proportions and flagged. m2 now has futex_wake 100, futex_wait 120 and the
  // context switch measured above (1000); others = 200+100+100+300+80 = 780.
  m2.costs.context_switch_ns = 1220;
  r.measurements[2].value_ns = 1000;  // rest = 1000 - 220 = 780, v = 0 < 10% of 780
  auto u = host::apply_calibration(m2, r);
  EXPECT_EQ(m2.costs.context_switch_ns, std::llround(780.0 * 1220 / (780 + 1220)));
  bool floored = false;
  for (auto& x : u) floored |= x.key == "costs.context_switch_ns" && x.floored;
  EXPECT_TRUE(floored);
  // Syscalls (220) longer than the whole half round trip: nothing is attributable to the switch,
  // so it keeps its value and is not among the updates.
  r.measurements[2].value_ns = 200;
  machine::Machine m3 = m2;
  m3.costs.context_switch_ns = 777;
  auto u3 = host::apply_calibration(m3, r);
  EXPECT_EQ(m3.costs.context_switch_ns, 777);
  for (auto& x : u3) EXPECT_NE(x.key, "costs.context_switch_ns");
}
