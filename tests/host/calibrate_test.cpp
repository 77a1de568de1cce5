// host calibrate: runs the quick microbenchmarks on this machine. Timings are never pass/fail
// here beyond sanity: every value positive, finite and below an absurd bound.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "host/calibrate.hpp"
#include "host/probe.hpp"

using namespace schedlab;

namespace {
host::CalibrationResult quick_run() {
  static host::CalibrationResult cached = [] {
    auto probe = host::probe_sysfs("/");
    host::CalibrateOptions opt;
    opt.quick = true;
    opt.allow_busy = true;  // the suite runs under ctest -j2, beside other builds
    opt.machine = probe.machine;
    opt.model_to_real = probe.model_to_real;
    return host::calibrate(opt);
  }();
  return cached;
}

// A recorded calibration (tests/host/fixtures/selfcheck/NAME.samples.json) as calibrate's result.
host::CalibrationResult recorded(const std::string& name) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/selfcheck/" + name + ".samples.json");
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return in ? host::read_samples_json(text.str(), name) : host::CalibrationResult{};
}
}  // namespace

TEST(Calibrate, QuickRunGivesSaneValues) {
  auto r = quick_run();
  EXPECT_GT(r.elapsed_s, 0.0);
  EXPECT_LT(r.elapsed_s, 120.0);  // budgets bound a quick run to a few seconds
  for (const char* key : {"syscall_getppid", "syscall_getpid", "futex_wake_nowaiter", "futex_wait_eagain",
                          "pipe_write_1b", "pipe_read_1b", "futex_pingpong_same_cpu_half", "pipe_rtt_same_cpu",
                          "msg_unix_send_same_cpu", "msg_unix_recv_same_cpu", "msg_pipe_write_same_cpu",
                          "msg_pipe_read_same_cpu"})
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
  // The message ping-pong across CPUs runs on the llc class's pair when there is one.
  if (r.find("cacheline_llc"))
    for (const char* key : {"msg_unix_send_llc", "msg_unix_recv_llc", "msg_pipe_write_llc", "msg_pipe_read_llc"})
      EXPECT_NE(r.find(key), nullptr) << key;
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
    EXPECT_TRUE(u.key.rfind("costs.", 0) == 0 || (u.key.rfind("guest.", 0) == 0 && m.guest.present) ||
                (u.key == "noise.run_sigma" && r.rounds >= 5 && m.noise.run_sigma == u.fvalue))
        << u.key;
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
  // The idle exit as the model charges it on the wakee's CPU (kernel/idle.cpp): subtracted too.
  m.costs.irq_exit_ns = 70;
  m.costs.cpuidle_exit_ns = 150;
  m.costs.tick_nohz_idle_exit_ns = 90;
  m.costs.nohz_restart_tick_ns = 1100;
  m.idle_states.push_back({"POLL", "", 0, 0, 0, true, false});
  m.idle_states.push_back({"C1", "", 1000, 1000, 400, false, false});  // non-polling, e.g. HLT-like
  host::apply_calibration(m, r);
  EXPECT_EQ(m.costs.context_switch_ns, 2000 - (100 + 120 + 200 + 100 + 100 + 300 + 80));
  EXPECT_EQ(m.costs.remote_read_llc_ns, 60);
  EXPECT_EQ(m.costs.remote_read_other_socket_ns, 200);
  EXPECT_EQ(m.costs.remote_read_smt_ns, 0);  // not measured
  // 10000 - waker 1000 - schedule 300 - pick 80 - context_switch 1000 - wake_cost 400 - ipi_entry 500
  // - irq_exit 70 - enqueue 100 (the wake list's activate) - cpuidle_exit 150 - tick_nohz_idle_exit 90
  // - nohz_restart_tick 1100
  const int64_t exit_path = 100 + 150 + 90 + 1100;
  EXPECT_EQ(m.costs.ipi_latency_llc_ns, 10000 - 1000 - 300 - 80 - 1000 - 400 - 500 - 70 - exit_path);
  EXPECT_EQ(m.costs.polling_wake_ns, 0);
  // Same with the wakee in a polling state: polling_wake_ns instead, no IPI entry.
  r.measurements[5].idle_state = "POLL";
  machine::Machine m2 = m;
  m2.costs.ipi_latency_llc_ns = 0;
  host::apply_calibration(m2, r);
  EXPECT_EQ(m2.costs.ipi_latency_llc_ns, 0);
  EXPECT_EQ(m2.costs.polling_wake_ns, 10000 - 1000 - 300 - 80 - 1000 - 0 - exit_path);
  // When the base's other scheduler costs explain (almost) everything, the remainder is split in
  // the base's proportions and flagged. m2 now has futex_wake 100, futex_wait 120 and the
  // context switch measured above (1000); others = 200+100+100+300+80 = 780.
  m2.costs.context_switch_ns = 1220;
  r.measurements[2].value_ns = 1000;  // rest = 1000 - 220 = 780, v = 0 < 10% of 780
  auto u = host::apply_calibration(m2, r);
  // Every cost of the path is scaled by 780 / (780 + 1220) = 0.39, not the switch alone, so the
  // half round trip rebuilt from them is the measured one (futex 220 + 780 = 1000).
  EXPECT_EQ(m2.costs.context_switch_ns, std::llround(780.0 * 1220 / (780 + 1220)));
  EXPECT_EQ(m2.costs.ttwu_ns, std::llround(200 * 0.39));
  EXPECT_EQ(m2.costs.enqueue_ns, std::llround(100 * 0.39));
  EXPECT_EQ(m2.costs.dequeue_ns, std::llround(100 * 0.39));
  EXPECT_EQ(m2.costs.schedule_ns, std::llround(300 * 0.39));
  EXPECT_EQ(m2.costs.pick_next_task_ns, std::llround(80 * 0.39));
  const auto& c2 = m2.costs;
  EXPECT_NEAR(static_cast<double>(c2.futex_wake_ns + c2.futex_wait_ns + c2.ttwu_ns + c2.enqueue_ns + c2.dequeue_ns +
                                  c2.schedule_ns + c2.pick_next_task_ns + c2.context_switch_ns),
              1000, 3);
  int flagged = 0;
  for (auto& x : u)
    flagged += x.floored && (x.key == "costs.context_switch_ns" || x.key == "costs.ttwu_ns" ||
                             x.key == "costs.enqueue_ns" || x.key == "costs.dequeue_ns" ||
                             x.key == "costs.schedule_ns" || x.key == "costs.pick_next_task_ns");
  EXPECT_EQ(flagged, 6);
  // Syscalls (220) longer than the whole half round trip: nothing is attributable to the switch,
  // so it keeps its value and is not among the updates.
  r.measurements[2].value_ns = 200;
  machine::Machine m3 = m2;
  m3.costs.context_switch_ns = 777;
  auto u3 = host::apply_calibration(m3, r);
  EXPECT_EQ(m3.costs.context_switch_ns, 777);
  for (auto& x : u3) EXPECT_NE(x.key, "costs.context_switch_ns");
}

TEST(Calibrate, GuestAndSwitchMappingArithmetic) {
  // Synthetic measurements of a KVM guest: the wakee halts (non-polling state), so the waker's
  // FUTEX_WAKE carries the IPI send, and the per-event pairs give the [guest] distributions.
  host::CalibrationResult r;
  auto add = [&](const char* key, double v, std::vector<double> events = {}, std::string state = "") {
    host::Measurement m;
    m.key = key;
    m.value_ns = v;
    m.median_ns = v;
    m.cov = 0.02;
    m.idle_state = state;
    m.events = events;
    r.measurements.push_back(m);
  };
  add("futex_wake_nowaiter", 150);
  add("pipe_rtt_same_cpu", 4000);
  add("pipe_rtt_same_cpu_process", 4600);
  add("wake_latency_llc", 20000, {18000, 20000, 22000, 30000, 20000}, "haltpoll idle");
  add("wake_syscall_llc", 8000, {7000, 8000, 9000, 8000, 8000});
  add("membarrier_noipi_llc", 400);
  add("membarrier_ipi_llc", 6400, {5400, 6400, 7400});
  machine::Machine m;
  m.costs.ttwu_ns = 300;
  m.costs.ipi_entry_ns = 300;
  m.costs.schedule_ns = 200;
  m.costs.pick_next_task_ns = 200;
  m.costs.context_switch_ns = 300;
  m.costs.ipi_send_ns = 100;
  m.idle_states.push_back({"POLL", "", 0, 0, 0, true, false});
  m.idle_states.push_back({"haltpoll idle", "", 1000, 1000, 0, false, false});
  machine::Machine bare = m;
  m.guest.present = true;
  m.guest.hypervisor = {"KVM", "test"};
  auto u = host::apply_calibration(m, r);
  EXPECT_EQ(m.costs.switch_mm_ns, (4600 - 4000) / 2);
  EXPECT_EQ(m.costs.ipi_send_ns, 8000 - 150 - 300);
  // Per event: send = wake - 150 - 300 -> median of {6550, 7550, 8550, 7550, 7550}.
  EXPECT_DOUBLE_EQ(m.guest.ipi_send_ns.value, 7550);
  // Per event: deliver = lat - wake - (ipi_entry + schedule + pick + switch = 1000)
  //   -> {10000, 11000, 12000, 21000, 11000}, median 11000.
  EXPECT_DOUBLE_EQ(m.guest.halted_wake_ns.value, 11000);
  EXPECT_GT(m.guest.halted_wake_sigma.value, 0);
  EXPECT_NE(m.guest.halted_wake_ns.source.find("median over 5 wake-ups"), std::string::npos)
      << m.guest.halted_wake_ns.source;
  // membarrier with the partner running minus without: {5000, 6000, 7000}.
  EXPECT_DOUBLE_EQ(m.guest.running_ipi_ns.value, 6000);
  bool listed = false;
  for (auto& x : u) listed |= x.key == "guest.halted_wake_ns" && x.fvalue == 11000;
  EXPECT_TRUE(listed);
  // The same measurements on bare metal set the costs but nothing under [guest].
  host::apply_calibration(bare, r);
  EXPECT_EQ(bare.costs.ipi_send_ns, 8000 - 150 - 300);
  EXPECT_FALSE(bare.guest.halted_wake_ns.known());
  // A wakee whose CPU never went idle: no IPI cost is derived from it.
  r.measurements[3].idle_state = "none (the CPU stayed busy)";
  machine::Machine busy = bare;
  busy.costs.ipi_send_ns = 100;
  busy.costs.ipi_latency_llc_ns = 777;
  host::apply_calibration(busy, r);
  EXPECT_EQ(busy.costs.ipi_send_ns, 100);
  EXPECT_EQ(busy.costs.ipi_latency_llc_ns, 777);
}

// A process round trip measured no slower than the thread one (host-1811, host-2123 on the dev
// VM: 4361.3 vs 4362.1, 3989.5 vs 4012.2 ns) sets switch_mm_ns to 0, flagged, instead of keeping
// the base profile's 1300 ns (the self-check's process round trip was then +50..+59 %).
TEST(Calibrate, SwitchMmIsZeroWhenProcessesSwitchAsFastAsThreads) {
  host::CalibrationResult r;
  for (auto [key, v] : {std::pair<const char*, double>{"pipe_rtt_same_cpu", 4012.2}, {"pipe_rtt_same_cpu_process", 3989.5}}) {
    host::Measurement x;
    x.key = key;
    x.value_ns = x.median_ns = v;
    r.measurements.push_back(x);
  }
  machine::Machine m;
  m.costs.switch_mm_ns = 1300;
  bool floored = false;
  for (const auto& u : host::apply_calibration(m, r))
    if (u.key == "costs.switch_mm_ns") floored = u.floored;
  EXPECT_EQ(m.costs.switch_mm_ns, 0);
  EXPECT_TRUE(floored);
}

TEST(Calibrate, RefusesOnABusyMachineUnlessAllowed) {
  auto probe = host::probe_sysfs("/");
  host::CalibrateOptions opt;
  opt.quick = true;
  opt.machine = probe.machine;
  opt.model_to_real = probe.model_to_real;
  opt.load_reading = host::LoadReading{60.0, 3.2, 2};  // what the dev VM showed during others' builds
  try {
    host::calibrate(opt);
    FAIL() << "calibrated on a busy machine";
  } catch (const host::HostError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("too busy to calibrate: other processes kept 60.0% of 2 CPU(s) busy"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("--allow-busy"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  opt.allow_busy = true;
  opt.budget_s = 0.2;
  auto r = host::calibrate(opt);
  EXPECT_EQ(r.verdict, host::LoadVerdict::TooBusy);
  bool loud = false;
  for (auto& w : r.warnings) loud |= w.rfind("CALIBRATED ON A BUSY MACHINE", 0) == 0;
  EXPECT_TRUE(loud);
  EXPECT_LT(r.elapsed_s, 30.0);  // the budget bounds the rounds (a batch may overrun it)
}

TEST(Calibrate, PerRunNoiseFromTheBetweenRoundSpread) {
  // docs/variance.md S1/S4: the spread between rounds becomes noise.run_sigma (enough rounds to
  // tell), and every calibrated profile starts its runs at a random tick phase.
  host::CalibrationResult r;
  r.rounds = 30;
  r.round_spread = 0.0183;
  machine::Machine m;
  auto u = host::apply_calibration(m, r);
  EXPECT_DOUBLE_EQ(m.noise.run_sigma, 0.018);
  EXPECT_TRUE(m.noise.tick_phase);
  bool listed = false;
  for (auto& x : u) listed |= x.key == "noise.run_sigma" && x.fvalue == 0.018;
  EXPECT_TRUE(listed);
  r.rounds = 3;  // a quick calibration: too few rounds for a spread
  machine::Machine q;
  host::apply_calibration(q, r);
  EXPECT_EQ(q.noise.run_sigma, 0);
}

TEST(Calibrate, RemoteMessageCostsFromTheRecordedPingPong) {
  // Recorded on the dev VM (tests/host/fixtures/selfcheck/msg-1150.samples.json): each remote
  // cost is what the message ping-pong costs that side across CPUs of the LLC less on one CPU.
  host::CalibrationResult r = recorded("msg-1150");
  ASSERT_FALSE(r.measurements.empty());
  machine::Machine m;
  auto updates = host::apply_calibration(m, r);
  EXPECT_EQ(m.costs.unix_send_remote_ns, 400);  // 723.9 - 323.9
  EXPECT_EQ(m.costs.unix_recv_remote_ns, 795);  // 1138.2 - 343.6
  EXPECT_EQ(m.costs.pipe_write_remote_ns, 255);  // 437.1 - 182.6
  EXPECT_EQ(m.costs.pipe_read_remote_ns, 257);   // 426.9 - 170.4
  // The same-CPU pipe ping-pong against the merging 1-byte writes and reads: one slot each.
  EXPECT_EQ(m.costs.pipe_write_newbuf_ns, 28);  // 182.6 - 155 (pipe_write_ns) - 0 (copy)
  EXPECT_EQ(m.costs.pipe_read_release_ns, 16);  // 170.4 - 154 (pipe_read_ns) - 0 (copy)
  int remote = 0;
  for (const auto& u : updates)
    if (u.key.find("_remote_ns") != std::string::npos) {
      ++remote;
      EXPECT_FALSE(u.floored) << u.key;
      EXPECT_NE(u.formula.find("_llc ("), std::string::npos) << u.formula;
    }
  EXPECT_EQ(remote, 4);
  // A crossing measured cheaper than the same message on one CPU (noise) gives 0, flagged; a
  // side measured on one CPU only sets nothing.
  for (auto& x : r.measurements)
    if (x.key == "msg_pipe_read_llc") x.value_ns = 100;
  r.measurements.erase(std::remove_if(r.measurements.begin(), r.measurements.end(),
                                      [](const host::Measurement& x) { return x.key == "msg_unix_send_llc"; }),
                       r.measurements.end());
  machine::Machine m2;
  m2.costs.unix_send_remote_ns = 0;
  bool floored = false, unix_send = false;
  for (const auto& u : host::apply_calibration(m2, r)) {
    if (u.key == "costs.pipe_read_remote_ns") floored = u.floored && u.value == 0;
    unix_send |= u.key == "costs.unix_send_remote_ns";
  }
  EXPECT_TRUE(floored);
  EXPECT_FALSE(unix_send);
  EXPECT_EQ(m2.costs.unix_send_remote_ns, 0);
}

TEST(Calibrate, ColdReadCostsFromTheRecordedFillAndDrain) {
  // Recorded on the dev VM (tests/host/fixtures/selfcheck/cold-1612.samples.json): the cold cost
  // is the drain's per-read time less the model's warm read of the same 100 bytes.
  host::CalibrationResult r = recorded("cold-1612");
  ASSERT_FALSE(r.measurements.empty());
  machine::Machine m;
  m.costs.unix_copy_ns_per_kb = 0;
  m.costs.pipe_copy_ns_per_kb = 0;
  auto updates = host::apply_calibration(m, r);
  EXPECT_EQ(m.costs.unix_recv_ns, 337);
  EXPECT_EQ(m.costs.unix_recv_cold_ns, 193);  // 529.5 - 337, rounded
  EXPECT_EQ(m.costs.pipe_read_ns, 127);
  EXPECT_EQ(m.costs.pipe_read_cold_ns, 194);  // 321.0 - 127
  // The cold sends: the fill's per-send time less the warm send, over the share of the fill's
  // sends the model finds no warm buffer for: all but the first 2 MiB / 896 + 1 = 2341 of
  // 47 x 200 sockets' sends, all but 2 MiB / 100 + 1 = 20972 of 140 x 600 pipes' writes.
  EXPECT_NEAR(host::cold_fill_warm_share(true, 0), 2341.0 / 9400, 1e-12);
  EXPECT_NEAR(host::cold_fill_warm_share(false, 0), 20972.0 / 84000, 1e-12);
  EXPECT_EQ(m.costs.unix_send_ns, 301);
  EXPECT_EQ(m.costs.unix_send_cold_ns, 197);  // (448.6 - 301) / (1 - 2341 / 9400) = 196.6
  EXPECT_EQ(m.costs.pipe_write_ns, 128);
  EXPECT_EQ(m.costs.pipe_write_cold_ns, 164);  // (250.9 - 128) / (1 - 20972 / 84000) = 163.8
  int cold = 0, fill = 0;
  for (const auto& u : updates)
    if (u.key.find("_cold_ns") != std::string::npos) {
      ++cold;
      EXPECT_FALSE(u.floored) << u.key;
      fill += u.formula.find("_100b_fill (") != std::string::npos;
      if (u.key.find("_send_") == std::string::npos && u.key.find("_write_") == std::string::npos)
        EXPECT_NE(u.formula.find("_100b_cold ("), std::string::npos) << u.formula;
    }
  EXPECT_EQ(cold, 4);
  EXPECT_EQ(fill, 2);
  // A drain measured faster than the warm read (noise) gives 0, flagged; without the warm
  // reference nothing is set.
  for (auto& x : r.measurements)
    if (x.key == "unix_recv_100b_cold") x.value_ns = 300;
  r.measurements.erase(std::remove_if(r.measurements.begin(), r.measurements.end(),
                                      [](const host::Measurement& x) { return x.key == "pipe_read_1b"; }),
                       r.measurements.end());
  machine::Machine m2;
  bool floored = false, pipe_cold = false;
  for (const auto& u : host::apply_calibration(m2, r)) {
    if (u.key == "costs.unix_recv_cold_ns") floored = u.floored && u.value == 0;
    pipe_cold |= u.key == "costs.pipe_read_cold_ns";
  }
  EXPECT_TRUE(floored);
  EXPECT_FALSE(pipe_cold);
}

TEST(Calibrate, ColdLayoutKeepsEachChannelUnderItsBuffer) {
  // Four L2s of footprint; a socket's 200 skbs x 896 B stay under the default 212992 B sk_sndbuf,
  // a pipe's 600 x 100 B under the 640 messages a 16-page pipe merges.
  auto [per_u, chans_u] = host::cold_layout(true, 2 << 20);
  EXPECT_EQ(per_u, 200);
  EXPECT_EQ(chans_u, 47);  // ceil(8 MiB / 179200 B)
  EXPECT_LT(per_u * 896, 212992);
  auto [per_p, chans_p] = host::cold_layout(false, 2 << 20);
  EXPECT_EQ(per_p, 600);
  EXPECT_EQ(chans_p, 140);
  EXPECT_EQ(host::cold_layout(true, 0), host::cold_layout(true, 2 << 20));  // unknown L2: 2 MiB
}
