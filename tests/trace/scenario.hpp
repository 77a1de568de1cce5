// A small synthetic event sequence, as the kernel model would emit it, shared by the writer
// tests. 4 CPUs (1 socket, 2 cores, 2 threads, one LLC), idle states POLL and C1.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "machine/machine.hpp"
#include "trace/sink.hpp"
#include "trace/writers.hpp"

namespace schedlab::trace::test {

using sim::Time;

inline machine::Machine small_machine(int sockets = 1, int cores_per_socket = 2,
                                      int threads = 2, int cores_per_llc = 2) {
  machine::Machine m;
  m.name = "test";
  m.arch = "x86_64";
  m.cpuidle_driver = "intel_idle";
  m.governor = "menu";
  m.topo = machine::Topology{sockets, cores_per_socket, threads, cores_per_llc};
  machine::IdleState poll;
  poll.name = "POLL";
  poll.desc = "CPUIDLE CORE POLL IDLE";
  poll.polling = true;
  machine::IdleState c1;
  c1.name = "C1";
  c1.desc = "MWAIT 0x00";
  c1.exit_latency_ns = 2000;
  c1.target_residency_ns = 2000;
  m.idle_states = {poll, c1};
  return m;
}

inline Time ns(int64_t v) { return Time::ns(v); }

inline const TaskInfo kIdle{0, "swapper", 120};
inline const TaskInfo kPinger{101, "pinger", 120};
inline const TaskInfo kPonger{102, "ponger", 120};
inline const TaskInfo kWorker{55, "kworker/u8:3-events_unbound", 120};  // comm is clipped
inline const TaskInfo kRt{200, "rtprio", 9};

// Drives `s` through a ping-pong between CPU 0 and CPU 1 (IPI wakeup into C1, polling wakeup
// of POLL), a worker on CPU 2 preempted by an RT task that a remote wakeup migrates there
// (reschedule IPI interrupting the worker), and an exit. Returns the number of calls by type.
inline EventCounts drive_scenario(TraceSink& s, const machine::Machine& m) {
  CountingSink c;
  TeeSink t({&s, &c});
  t.begin(m);
  t.cpu_idle(ns(200), 1, 1);
  t.cpu_idle(ns(300), 3, 1);
  t.kernel_slice(0, ns(500), ns(1100), KernelPath::ScheduleIdle);
  t.sched_switch(ns(1000), 0, kIdle, PrevState::Running, kPinger);
  t.kernel_slice(2, ns(2800), ns(3100), KernelPath::ScheduleIdle);
  t.sched_switch(ns(3000), 2, kIdle, PrevState::Running, kWorker);
  // pinger wakes ponger, whose CPU (1) is in C1: queue on its wake list, send an IPI.
  t.kernel_slice(0, ns(5000), ns(5600), KernelPath::Ttwu);
  t.sched_waking(ns(5000), 0, kPonger, 1);
  t.ipi_raise(ns(5300), 0, 1, IpiKind::CallFunctionSingle);
  t.kernel_slice(0, ns(5600), ns(6400), KernelPath::Schedule);
  t.sched_switch(ns(6200), 0, kPinger, PrevState::Sleeping, kIdle);
  t.cpu_idle(ns(6500), 0, 0);
  t.cpu_idle(ns(6300), 1, -1);
  t.kernel_slice(1, ns(6300), ns(6800), KernelPath::IdleExit);
  t.kernel_slice(1, ns(6800), ns(7600), KernelPath::IpiHandler);
  t.ipi_entry(ns(6850), 1, IpiKind::CallFunctionSingle);
  t.kernel_slice(1, ns(6900), ns(7400), KernelPath::TtwuPending);
  t.sched_wakeup(ns(7000), 1, kPonger, 1);
  t.ipi_exit(ns(7550), 1, IpiKind::CallFunctionSingle);
  t.kernel_slice(1, ns(7600), ns(8200), KernelPath::ScheduleIdle);
  t.sched_switch(ns(8100), 1, kIdle, PrevState::Running, kPonger);
  // ponger wakes the RT task, migrating it from CPU 3 to CPU 2 where it preempts the worker.
  t.kernel_slice(1, ns(8200), ns(8350), KernelPath::Ttwu);
  t.sched_waking(ns(8250), 1, kRt, 2);
  t.sched_migrate_task(ns(8260), 1, kRt, 3, 2);
  t.sched_wakeup(ns(8280), 1, kRt, 2);
  t.ipi_raise(ns(8300), 1, 2, IpiKind::Reschedule);
  t.kernel_slice(2, ns(8700), ns(8900), KernelPath::IpiHandler);
  t.ipi_entry(ns(8700), 2, IpiKind::Reschedule);
  t.ipi_exit(ns(8850), 2, IpiKind::Reschedule);
  t.kernel_slice(2, ns(8900), ns(9100), KernelPath::Schedule);
  t.sched_switch(ns(9000), 2, kWorker, PrevState::Preempted, kRt);
  // ponger wakes pinger; CPU 0 polls in POLL: no IPI, the idle loop notices.
  t.kernel_slice(1, ns(12000), ns(12400), KernelPath::Ttwu);
  t.sched_waking(ns(12000), 1, kPinger, 0);
  t.wake_idle_without_ipi(ns(12200), 1, 0);
  t.cpu_idle(ns(12500), 0, -1);
  t.kernel_slice(0, ns(12500), ns(12700), KernelPath::TtwuPending);
  t.sched_wakeup(ns(12600), 0, kPinger, 0);
  t.kernel_slice(0, ns(12700), ns(13300), KernelPath::ScheduleIdle);
  t.sched_switch(ns(13200), 0, kIdle, PrevState::Running, kPinger);
  t.kernel_slice(1, ns(12400), ns(13000), KernelPath::Schedule);
  t.kernel_slice(1, ns(12500), ns(12900), KernelPath::NewidleBalance);
  t.sched_switch(ns(12950), 1, kPonger, PrevState::Sleeping, kIdle);
  t.cpu_idle(ns(13100), 1, 1);
  // pinger exits.
  t.kernel_slice(0, ns(15000), ns(15800), KernelPath::Schedule);
  t.sched_switch(ns(15700), 0, kPinger, PrevState::Dead, kIdle);
  t.cpu_idle(ns(15900), 0, 1);
  t.end(ns(20000));
  return c.counts();
}

// A fresh empty directory for one test's files, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "schedlab-trace-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string golden_path(const std::string& name) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/tests/trace/golden/" + name;
}

// Compares with a golden file; with SCHEDLAB_UPDATE_GOLDEN=1 in the environment, rewrites it.
inline void expect_golden(const std::string& actual, const std::string& name) {
  std::string path = golden_path(name);
  if (const char* u = std::getenv("SCHEDLAB_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::string want = read_file(path);
  ASSERT_FALSE(want.empty()) << "missing golden " << path
                             << " (run with SCHEDLAB_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(actual, want) << "differs from " << path;
}

}  // namespace schedlab::trace::test
