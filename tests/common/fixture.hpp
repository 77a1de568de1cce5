// A hand-built machine for mechanism tests: the costs are explicit here so each test controls
// exactly what it measures (the shipped profiles are tested separately).
#pragma once
#include "machine/machine.hpp"

namespace schedlab::fixture {

inline machine::Machine test_machine(int sockets = 1, int cores = 2, int threads = 2,
                                     int cores_per_llc = 2) {
  machine::Machine m;
  m.name = "test";
  m.arch = "x86_64";
  m.cpuidle_driver = "intel_idle";
  m.governor = "menu";
  m.topo = {sockets, cores, threads, cores_per_llc};
  m.idle_states = {
      {"POLL", "CPUIDLE CORE POLL IDLE", 0, 0, 0, true, false},
      {"C1", "MWAIT 0x00", 1000, 1000, 100, true, false},
      {"C6", "MWAIT 0x20", 290000, 800000, 40000, true, false},
  };
  auto& c = m.costs;
  c.context_switch_ns = 1200;
  c.switch_mm_ns = 1300;
  c.schedule_ns = 300;
  c.pick_next_task_ns = 200;
  c.enqueue_ns = 150;
  c.dequeue_ns = 150;
  c.ttwu_ns = 300;
  c.remote_read_smt_ns = 10;
  c.remote_read_llc_ns = 50;
  c.remote_read_other_llc_ns = 110;
  c.remote_read_other_socket_ns = 200;
  c.ipi_send_ns = 100;
  c.ipi_latency_llc_ns = 1000;
  c.ipi_latency_other_llc_ns = 1200;
  c.ipi_latency_other_socket_ns = 1500;
  c.ipi_entry_ns = 200;
  c.irq_exit_ns = 100;
  c.polling_wake_ns = 100;
  c.csd_func_ns = 50;
  c.csd_lock_ns = 50;
  c.put_cpu_ns = 10;
  c.cond_resched_ns = 20;
  c.softirq_ns = 150;
  c.tick_ns = 2000;
  c.nohz_stop_tick_ns = 1000;
  c.nohz_restart_tick_ns = 1000;
  c.tick_nohz_idle_enter_ns = 50;
  c.tick_nohz_idle_exit_ns = 100;
  c.cpuidle_select_ns = 200;
  c.cpuidle_enter_ns = 100;
  c.cpuidle_exit_ns = 150;
  c.update_blocked_averages_ns = 1000;
  c.balance_per_cpu_ns = 30;
  c.migrate_task_ns = 500;
  c.cache_cold_llc_ns = 2000;
  c.cache_cold_other_llc_ns = 5000;
  c.cache_cold_other_socket_ns = 10000;
  c.pipe_write_ns = 600;
  c.pipe_read_ns = 500;
  c.pipe_copy_ns_per_kb = 100;
  c.unix_send_ns = 900;
  c.unix_recv_ns = 700;
  c.unix_copy_ns_per_kb = 100;
  c.tcp_send_ns = 3000;
  c.tcp_recv_ns = 1500;
  c.tcp_copy_ns_per_kb = 150;
  c.futex_wake_ns = 500;
  c.futex_wait_ns = 300;
  c.fork_ns = 50000;
  c.exit_ns = 20000;
  c.smt_pair_throughput = 1.2;
  m.tunables.hz = 1000;
  return m;
}

// The machine with POLL disabled and every other state non-polling (HLT / I/O-port style): a
// remote CPU must send an IPI.
inline machine::Machine non_polling(machine::Machine m) {
  for (auto& s : m.idle_states) {
    if (s.name == "POLL") s.disabled = true;
    s.polling = false;
  }
  return m;
}

}  // namespace schedlab::fixture
