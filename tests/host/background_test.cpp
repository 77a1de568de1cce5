// Background activity (host/background.hpp): /proc parsers on files recorded on the KVM dev VM
// (tests/host/fixtures/proc), gap classification and the [[background]] tables on hand-made scans.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "host/background.hpp"
#include "machine/machine.hpp"

using namespace schedlab;
using host::GapScan;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/proc/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const host::IrqLine* line(const std::vector<host::IrqLine>& v, const std::string& name) {
  for (auto& l : v)
    if (l.name == name) return &l;
  return nullptr;
}

// A scan of `seconds` on cpu with a tick every 4 ms at phase 1 ms lasting tick_ns, plus extra gaps.
GapScan scan(int cpu, double seconds, int64_t tick_ns, std::vector<std::pair<int64_t, int64_t>> extra = {}) {
  GapScan g;
  g.cpu = cpu;
  g.seconds = seconds;
  std::vector<std::pair<int64_t, int64_t>> all = extra;
  for (int64_t t = 1000000; t < static_cast<int64_t>(seconds * 1e9); t += 4000000)
    all.push_back({t + (t / 4000000 % 3) * 1000, tick_ns + (t / 4000000 % 5) * 100});
  std::sort(all.begin(), all.end());
  for (auto [s, l] : all) {
    g.start_ns.push_back(s);
    g.length_ns.push_back(l);
  }
  return g;
}

}  // namespace

TEST(Background, ParsesRecordedProcInterrupts) {
  auto irqs = host::parse_interrupts(fixture("interrupts.0"));
  const auto* loc = line(irqs, "LOC");
  ASSERT_NE(loc, nullptr);
  EXPECT_EQ(loc->per_cpu.size(), 2u);
  EXPECT_EQ(loc->desc, "Local timer interrupts");
  const auto* blk = line(irqs, "36");
  ASSERT_NE(blk, nullptr);
  EXPECT_EQ(blk->desc, "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0");
  EXPECT_EQ(line(irqs, "ERR"), nullptr);  // one total, not per CPU
  auto soft = host::parse_softirqs(fixture("softirqs.0"));
  ASSERT_TRUE(soft.count("TIMER"));
  EXPECT_EQ(soft["TIMER"].size(), 2u);
  EXPECT_TRUE(soft.count("RCU"));
}

TEST(Background, ParsesTasks) {
  host::TaskSample k, u;
  ASSERT_TRUE(host::parse_task(fixture("kworker.stat"), fixture("kworker.schedstat"), &k));
  EXPECT_EQ(k.comm, "kworker/1:0H-events_highpri");
  EXPECT_TRUE(k.kthread);
  EXPECT_EQ(k.cpu, 1);
  EXPECT_EQ(k.run_ns, 57756);
  EXPECT_EQ(k.slices, 4);
  ASSERT_TRUE(host::parse_task(fixture("init.stat"), fixture("init.schedstat"), &u));
  EXPECT_FALSE(u.kthread);
  EXPECT_EQ(u.tid, 1);
  EXPECT_FALSE(host::parse_task("garbage", "1 2 3", &u));
  EXPECT_FALSE(host::parse_task(fixture("init.stat"), "", &u));
}

TEST(Background, TickGapsArePhaseLocked) {
  // 2 s at HZ 250 = 500 ticks of ~2 us at phase 1 ms, plus three interrupts and a long gap elsewhere.
  GapScan g = scan(0, 2.0, 2000, {{2500000, 3000}, {7700000, 5000}, {13300000, 4000}, {901700000, 3000000}});
  auto c = host::classify_gaps(g, 4000000);
  EXPECT_EQ(c.tick.size(), 500u);
  EXPECT_EQ(c.other.size(), 4u);
  EXPECT_NEAR(c.tick_phase_ns, 1000000, 40000 + 1);
  // Without a periodic component there is no tick class.
  GapScan few;
  few.start_ns = {100, 5000000, 9000000};
  few.length_ns = {1000, 1000, 1000};
  few.seconds = 2;
  EXPECT_TRUE(host::classify_gaps(few, 4000000).tick.empty());
}

TEST(Background, TablesFromSnapshotsAndScans) {
  host::BackgroundInput in;
  in.tick_period_ns = 4000000;
  auto& a = in.idle_before;
  auto& b = in.idle_after;
  a.wall_s = 100;
  b.wall_s = 110;  // a 10 s idle phase
  a.nr_cpus = b.nr_cpus = 2;
  a.irqs = host::parse_interrupts(fixture("interrupts.0"));
  b.irqs = a.irqs;
  for (auto& l : b.irqs) {
    if (l.name == "LOC") l.per_cpu = {l.per_cpu[0] + 30, l.per_cpu[1] + 50};  // 4 Hz per CPU
    if (l.name == "36") l.per_cpu[1] += 20;                                     // 2 Hz, one device
  }
  host::TaskSample kw0{10, 10, "kworker/0:1-events", true, 0, 1000000, 0, 100};
  host::TaskSample kw1{11, 11, "kworker/1:1-mm_percpu_wq", true, 1, 2000000, 0, 200};
  host::TaskSample rcu{12, 12, "rcu_preempt", true, 0, 500000, 0, 50};
  host::TaskSample sshd{300, 300, "sshd", false, 1, 0, 0, 0};
  a.tasks = {kw0, kw1, rcu, sshd};
  for (auto t : a.tasks) {
    t.slices += t.kthread ? 100 : 0;
    t.run_ns += t.kthread ? 1000000 : 0;
    b.tasks.push_back(t);
  }
  host::TaskSample sshd2 = sshd;
  sshd2.slices = 5;
  sshd2.run_ns = 250000;
  b.tasks.back() = sshd2;
  // Two CPUs, 2 s each: ticks of 2 us, ten 3-us interrupts, two 2-ms gaps of which one was a
  // preemption of the scanning thread (involuntary switch) and one the host.
  std::vector<std::pair<int64_t, int64_t>> extra;
  for (int i = 0; i < 10; ++i) extra.push_back({2500000 + i * 100000000LL, 3000});
  in.scans.push_back(scan(0, 2.0, 2000, extra));
  // cpu1 has counts: 500 ticks + 3 other interrupts, 1 involuntary switch; its 5 non-tick gaps are
  // then 3 interrupts (the shortest), 1 preemption, 1 steal (the longest).
  auto s1 = scan(1, 2.0, 2000,
                 {{10500000, 4000}, {20500000, 3000}, {30500000, 3500}, {52500000, 2000000}, {152500000, 2100000}});
  s1.involuntary_switches = 1;
  s1.irqs = 503;
  in.scans.push_back(s1);

  auto r = host::background_from(in);
  EXPECT_EQ(r.tick_gaps, 1000);
  EXPECT_NEAR(r.tick_ns, 2200, 101);
  // Ticks that preempt the scan for another task's 4-ms slice are not tick costs: with a quarter
  // of them preempted the estimate stays; with most of them there is none.
  {
    host::BackgroundInput busy = in;
    for (auto& g : busy.scans)
      for (size_t i = 0; i < g.length_ns.size(); i += 4)
        if (g.length_ns[i] < 10000) g.length_ns[i] = 4000000;
    auto rb = host::background_from(busy);
    EXPECT_NEAR(rb.tick_ns, 2200, 101);
    EXPECT_LT(rb.tick_gaps, 800);
    for (auto& g : busy.scans)
      for (size_t i = 0; i < g.length_ns.size(); ++i)
        if (i % 4 != 3 && g.length_ns[i] < 10000) g.length_ns[i] = 4000000;
    auto rm = host::background_from(busy);
    EXPECT_EQ(rm.tick_ns, 0);
    EXPECT_EQ(rm.tick_gaps, 0);
  }
  std::map<std::string, machine::BackgroundActivity> by;
  for (auto& x : r.activities) by[x.name] = x;
  ASSERT_TRUE(by.count("LOC"));
  EXPECT_EQ(by["LOC"].scope, "per_cpu");
  EXPECT_DOUBLE_EQ(by["LOC"].rate_hz.value, 4.0);  // 80 in 10 s on 2 CPUs
  // The interrupt gaps: cpu0's ten 3-us gaps (no counts: by length) and cpu1's 3, 3.5, 4 us.
  EXPECT_DOUBLE_EQ(by["LOC"].duration_ns.value, 3000);
  EXPECT_NE(by["LOC"].duration_ns.source.find("median of the 13 interrupt gaps"), std::string::npos)
      << by["LOC"].duration_ns.source;
  ASSERT_TRUE(by.count("virtio1-req.0"));
  EXPECT_EQ(by["virtio1-req.0"].scope, "system");
  EXPECT_DOUBLE_EQ(by["virtio1-req.0"].rate_hz.value, 2.0);
  // Two per-CPU kworkers of 100 runs each in 10 s = 10 Hz per CPU, 10 us per run.
  ASSERT_TRUE(by.count("kworker/N:N"));
  EXPECT_EQ(by["kworker/N:N"].kind, "kthread");
  EXPECT_EQ(by["kworker/N:N"].scope, "per_cpu");
  EXPECT_DOUBLE_EQ(by["kworker/N:N"].rate_hz.value, 10.0);
  EXPECT_DOUBLE_EQ(by["kworker/N:N"].duration_ns.value, 10000);
  ASSERT_TRUE(by.count("rcu_preempt"));
  EXPECT_EQ(by["rcu_preempt"].scope, "system");
  EXPECT_DOUBLE_EQ(by["rcu_preempt"].rate_hz.value, 10.0);
  // A task that ran longer per slice than any profile accepts is recorded at the bound, saying so.
  {
    host::BackgroundInput hog = in;
    host::TaskSample h{400, 400, "hog", false, 1, 0, 0, 0};
    hog.idle_before.tasks.push_back(h);
    h.slices = 2;
    h.run_ns = 1040000000;  // two slices of 520 ms
    hog.idle_after.tasks.push_back(h);
    std::map<std::string, machine::BackgroundActivity> hb;
    for (auto& x : host::background_from(hog).activities) hb[x.name] = x;
    ASSERT_TRUE(hb.count("hog"));
    EXPECT_DOUBLE_EQ(hb["hog"].duration_ns.value, 1e8);
    EXPECT_NE(hb["hog"].duration_ns.source.find("520000000 ns capped at the profile's maximum"), std::string::npos)
        << hb["hog"].duration_ns.source;
  }
  ASSERT_TRUE(by.count("sshd"));
  EXPECT_EQ(by["sshd"].kind, "task");
  EXPECT_DOUBLE_EQ(by["sshd"].rate_hz.value, 0.5);
  EXPECT_DOUBLE_EQ(by["sshd"].duration_ns.value, 50000);
  // The longer of the two 2-ms gaps is left after the interrupts and the one involuntary switch.
  ASSERT_TRUE(by.count("steal"));
  EXPECT_DOUBLE_EQ(by["steal"].rate_hz.value, 0.25);  // 1 in 4 CPU-s
  EXPECT_DOUBLE_EQ(by["steal"].duration_ns.value, 2100000);
  // Every value has a source, and the tables load back from a profile.
  machine::Machine m = machine::load_profile("tiny-4");
  m.background = r.activities;
  for (auto& x : m.background) {
    EXPECT_FALSE(x.rate_hz.source.empty()) << x.name;
    EXPECT_FALSE(x.duration_ns.source.empty()) << x.name;
  }
  auto back = machine::parse_profile(machine::to_toml(m), "bg.toml");
  EXPECT_EQ(back.background, m.background);
}

namespace {
std::string proc_idle(const std::string& which) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/tests/host/fixtures/proc-idle/" + which;
}
std::map<std::string, machine::BackgroundActivity> by_name(const host::BackgroundResult& r) {
  std::map<std::string, machine::BackgroundActivity> by;
  for (auto& x : r.activities) by[x.name] = x;
  return by;
}
}  // namespace

// A kworker's comm names its current workqueue: matched by comm, a kworker that ran another
// workqueue between the snapshots counted its whole lifetime (the host-1253 profile's kworker/N:N
// at 3308 runs/s per CPU, 5.7 ms of background per hackbench run where the real kernel has 0.2-1).
TEST(Background, TasksAreMatchedByTidAndStarttimeNotComm) {
  host::BackgroundInput in;
  in.idle_before = host::read_proc_snapshot(-1, proc_idle("before"));
  in.idle_after = host::read_proc_snapshot(-1, proc_idle("after"));
  in.idle_before.wall_s = 0;
  in.idle_after.wall_s = 6.5;
  in.idle_before.nr_cpus = in.idle_after.nr_cpus = 2;
  ASSERT_EQ(in.idle_before.tasks.size(), 71u);
  // The fixture's point: tid 15703 changed its comm between the snapshots, not its starttime.
  const host::TaskSample *b0 = nullptr, *b1 = nullptr;
  for (auto& t : in.idle_before.tasks)
    if (t.tid == 15703) b0 = &t;
  for (auto& t : in.idle_after.tasks)
    if (t.tid == 15703) b1 = &t;
  ASSERT_TRUE(b0 && b1);
  EXPECT_NE(b0->comm, b1->comm);
  EXPECT_EQ(b0->start_ticks, b1->start_ticks);
  EXPECT_GT(b0->start_ticks, 0);

  auto r = host::background_from(in);
  auto by = by_name(r);
  ASSERT_TRUE(by.count("kworker/N:N"));
  EXPECT_EQ(by["kworker/N:N"].scope, "per_cpu");
  EXPECT_NEAR(by["kworker/N:N"].rate_hz.value, 148 / 6.5 / 2, 0.001);  // not 8718 runs
  EXPECT_DOUBLE_EQ(by["kworker/N:N"].duration_ns.value, 16609);       // 2458186 ns / 148
  ASSERT_TRUE(by.count("kworker/uN:N"));
  EXPECT_NEAR(by["kworker/uN:N"].rate_hz.value, 81 / 6.5, 0.001);  // not 17525 runs
  EXPECT_DOUBLE_EQ(by["kworker/uN:N"].duration_ns.value, 195913);  // 15868988 ns / 81
  double task_ms_per_s = 0;
  for (auto& [name, a] : by)
    if (a.kind == "task" || a.kind == "kthread")
      task_ms_per_s += a.rate_hz.value * a.duration_ns.value * (a.scope == "per_cpu" ? 2 : 1) / 1e6;
  EXPECT_NEAR(task_ms_per_s, 150.34 / 6.5, 0.1);
  EXPECT_TRUE(r.warnings.empty());
  bool noted = false;
  for (auto& n : r.notes) noted |= n.find("tasks other than ours ran 150.3 ms in the idle phase") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A tid seen again with another starttime is a new task (the tid was reused): all its time is
// the phase's. Task time beyond what /proc/stat counted busy is warned about.
TEST(Background, ReusedTidIsANewTaskAndTaskTimeIsCheckedAgainstProcStat) {
  host::BackgroundInput in;
  auto& a = in.idle_before;
  auto& b = in.idle_after;
  a.wall_s = 0;
  b.wall_s = 1;
  a.nr_cpus = b.nr_cpus = 2;
  host::TaskSample old{50, 50, "worker", false, 0, 900000000, 0, 1000, 100};
  host::TaskSample reused{50, 50, "worker", false, 0, 2000000, 0, 10, 5000};
  a.tasks = {old};
  b.tasks = {reused};
  a.busy_s = 10;
  b.busy_s = 10.5;
  auto r = host::background_from(in);
  auto by = by_name(r);
  ASSERT_TRUE(by.count("worker"));
  EXPECT_DOUBLE_EQ(by["worker"].rate_hz.value, 10);
  EXPECT_DOUBLE_EQ(by["worker"].duration_ns.value, 200000);
  EXPECT_TRUE(r.warnings.empty());
  b.busy_s = 10.001;  // 1 ms busy, 2 ms of task time, within the slack of 2 ticks per CPU
  EXPECT_TRUE(host::background_from(in).warnings.empty());
  b.tasks[0].run_ns = 200000000;  // 200 ms of task time against 1 ms busy
  auto w = host::background_from(in).warnings;
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("exceeds what /proc/stat counted busy"), std::string::npos) << w[0];
}
