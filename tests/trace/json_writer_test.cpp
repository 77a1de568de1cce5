#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "../common/trace_json.hpp"
#include "scenario.hpp"

using namespace schedlab::trace;
using namespace schedlab::trace::test;
using nlohmann::json;
using namespace schedlab::fixture;

namespace {

json write_json(const std::optional<TraceWindow>& w = std::nullopt,
                const schedlab::machine::Machine& m = small_machine(),
                EventCounts* calls = nullptr, std::string* raw = nullptr) {
  TempDir d;
  auto sink = open_trace(d.file("t.json"), w);
  EventCounts c = drive_scenario(*sink, m);
  if (calls) *calls = c;
  std::string text = read_file(d.file("t.json"));
  if (raw) *raw = text;
  return json::parse(text);
}

}  // namespace

TEST(traceJson, TopLevelShapeAndMetadata) {
  json j = write_json();
  EXPECT_EQ(j["displayTimeUnit"], "ns");
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<int, std::string> procs, threads;
  std::map<int, int> sort_index;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] != "M") continue;
    if (ev["name"] == "process_name") procs[ev["pid"]] = ev["args"]["name"];
    if (ev["name"] == "thread_name") threads[ev["tid"]] = ev["args"]["name"];
    if (ev["name"] == "thread_sort_index") sort_index[ev["tid"]] = ev["args"]["sort_index"];
  }
  EXPECT_EQ(procs, (std::map<int, std::string>{{1, "socket 0 / LLC 0"}}));
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_EQ(threads[3], "CPU 3");
  EXPECT_EQ(sort_index[2], 2);
}

TEST(traceJson, ProcessPerLlcGroup) {
  // 2 sockets x 4 cores, 2 cores per LLC, no SMT: LLCs 0..3, CPU 5 is in socket 1 / LLC 2.
  json j = write_json(std::nullopt, small_machine(2, 4, 1, 2));
  std::map<int, std::string> procs;
  std::map<int, int> pid_of_tid;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "process_name") procs[ev["pid"]] = ev["args"]["name"];
    if (ev["ph"] == "M" && ev["name"] == "thread_name") pid_of_tid[ev["tid"]] = ev["pid"];
  }
  EXPECT_EQ(procs.size(), 4u);
  EXPECT_EQ(procs[3], "socket 1 / LLC 2");
  EXPECT_EQ(pid_of_tid[5], 3);
  EXPECT_EQ(pid_of_tid[0], 1);
}

TEST(traceJson, SlicesAreWellNestedPerTrack) { expect_well_nested(write_json()); }

TEST(traceJson, TaskSliceIsSplitAroundIpiHandler) {
  auto tracks = slices_by_track(write_json());
  const auto& cpu2 = tracks[{1, 2}];
  std::vector<std::tuple<int64_t, int64_t, std::string>> got;
  for (const X& s : cpu2) got.emplace_back(s.b, s.e, s.name);
  std::sort(got.begin(), got.end());
  std::vector<std::tuple<int64_t, int64_t, std::string>> want = {
      {2800, 3100, "schedule_idle"},
      {3100, 8700, "kworker/u8:3-ev"},
      {8700, 8900, "ipi_handler"},
      {8900, 9100, "schedule"},
      {9100, 20000, "rtprio"},
  };
  EXPECT_EQ(got, want);
  // CPU 1: idle state C1, nested ipi_handler > sched_ttwu_pending, newidle inside schedule.
  const auto& cpu1 = tracks[{1, 1}];
  auto has = [&](int64_t b, int64_t e, const std::string& n) {
    for (const X& s : cpu1)
      if (s.b == b && s.e == e && s.name == n) return true;
    return false;
  };
  EXPECT_TRUE(has(200, 6300, "C1"));
  EXPECT_TRUE(has(6900, 7400, "sched_ttwu_pending"));
  EXPECT_TRUE(has(12500, 12900, "newidle_balance"));
  EXPECT_TRUE(has(8350, 12000, "ponger"));
  EXPECT_TRUE(has(13100, 20000, "C1"));
}

TEST(traceJson, InstantsAndFlowsMatchCalls) {
  EventCounts calls;
  json j = write_json(std::nullopt, small_machine(), &calls);
  std::map<std::string, int64_t> instants;
  std::map<int64_t, json> starts, finishes;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "i") {
      EXPECT_EQ(ev["s"], "t");
      ++instants[ev["name"]];
    }
    if (ev["ph"] == "s") starts[ev["id"]] = ev;
    if (ev["ph"] == "f") {
      EXPECT_EQ(ev["bp"], "e");
      finishes[ev["id"]] = ev;
    }
  }
  EXPECT_EQ(instants["sched_waking"], calls[EventType::SchedWaking]);
  EXPECT_EQ(instants["sched_wakeup"], calls[EventType::SchedWakeup]);
  EXPECT_EQ(instants["sched_migrate_task"], calls[EventType::SchedMigrateTask]);
  EXPECT_EQ(instants["ipi_raise"], calls[EventType::IpiRaise]);
  EXPECT_EQ(instants["sched_wake_idle_without_ipi"], calls[EventType::WakeIdleWithoutIpi]);
  // One wakeup arrow per waking whose task ran later, one IPI arrow per IPI delivered.
  int wake = 0, ipi = 0;
  auto tracks = slices_by_track(j);
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "flow " << id << " has no end";
    const json& f = finishes[id];
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_LE(ns_of(s["ts"]), ns_of(f["ts"]));
    (s["name"] == "wakeup" ? wake : ipi)++;
    // Both ends lie strictly inside a slice on their track, so that they bind to it.
    for (const json* e : {&s, &f}) {
      int64_t t = ns_of((*e)["ts"]);
      bool inside = false;
      for (const X& x : tracks[{(*e)["pid"].get<int>(), (*e)["tid"].get<int>()}])
        inside |= x.b < t && t < x.e;
      EXPECT_TRUE(inside) << (*e).dump();
    }
  }
  EXPECT_EQ(wake, calls[EventType::SchedWaking]);
  EXPECT_EQ(ipi, calls[EventType::IpiEntry]);
  // The ponger wakeup arrow goes from CPU 0 (in ttwu) to ponger's first slice on CPU 1.
  bool found = false;
  for (const auto& [id, s] : starts) {
    const json& f = finishes[id];
    if (s["name"] == "wakeup" && s["tid"] == 0 && f["tid"] == 1) {
      found = true;
      EXPECT_EQ(ns_of(s["ts"]), 5001);
      EXPECT_EQ(ns_of(f["ts"]), 8351);  // ttwu runs 8200..8350 first
    }
  }
  EXPECT_TRUE(found);
}

TEST(traceJson, WindowClipsSlicesAndDropsEvents) {
  TraceWindow w{Time::ns(6000), Time::ns(9000)};
  json j = write_json(w);
  expect_well_nested(j);
  int n = 0;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "M") continue;
    int64_t t = ns_of(ev["ts"]);
    EXPECT_GE(t, 6000) << ev.dump();
    EXPECT_LE(t + (ev.contains("dur") ? ns_of(ev["dur"]) : 0), 9000) << ev.dump();
    ++n;
  }
  EXPECT_GT(n, 5);
  auto tracks = slices_by_track(j);
  bool clipped = false;  // the worker ran from 3000: its slice starts at the window
  for (const X& s : tracks[{1, 2}]) clipped |= s.name == "kworker/u8:3-ev" && s.b == 6000;
  EXPECT_TRUE(clipped);
}

TEST(traceJson, GoldenFile) {
  std::string raw;
  write_json(std::nullopt, small_machine(), nullptr, &raw);
  expect_golden(raw, "scenario.json");
}

TEST(traceJson, RandomEventsStayWellNested) {
  // Overlapping and partially overlapping kernel slices, switches inside them, idle periods:
  // whatever the model emits, every track must nest.
  TempDir d;
  auto m = small_machine();
  auto sink = open_trace(d.file("r.json"), TraceWindow{Time::ns(50'000), Time::ns(900'000)});
  sink->begin(m);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto rnd = [&](int64_t n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<int64_t>(x % static_cast<uint64_t>(n));
  };
  const TaskInfo tasks[] = {{0, "swapper", 120}, {11, "a", 120}, {12, "b", 120}, {13, "c", 100}};
  std::vector<int> cur(4, 0);
  int64_t t = 0;
  for (int i = 0; i < 4000; ++i) {
    t += 1 + rnd(500);
    int cpu = static_cast<int>(rnd(4));
    switch (rnd(6)) {
      case 0: {
        int next = static_cast<int>(rnd(4));
        sink->sched_switch(Time::ns(t), cpu, tasks[cur[cpu]], PrevState::Sleeping, tasks[next]);
        cur[cpu] = next;
        break;
      }
      case 1: sink->cpu_idle(Time::ns(t), cpu, static_cast<int>(rnd(3)) - 1); break;
      case 2: sink->sched_waking(Time::ns(t), cpu, tasks[1 + rnd(3)], static_cast<int>(rnd(4))); break;
      case 3: sink->ipi_raise(Time::ns(t), cpu, static_cast<int>(rnd(4)), IpiKind::Reschedule); break;
      case 4: sink->ipi_entry(Time::ns(t), cpu, IpiKind::Reschedule); break;
      default:
        sink->kernel_slice(cpu, Time::ns(t - rnd(800)), Time::ns(t + rnd(1500)),
                           static_cast<KernelPath>(rnd(13)));
    }
  }
  sink->end(Time::ns(t + 10));
  json j = json::parse(read_file(d.file("r.json")));
  expect_well_nested(j);
  size_t xs = 0;
  for (const auto& ev : j["traceEvents"]) xs += ev["ph"] == "X";
  EXPECT_GT(xs, 500u);
}
