#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "scenario.hpp"

using namespace schedlab::trace;
using namespace schedlab::trace::test;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string write_text(const std::optional<TraceWindow>& w = std::nullopt,
                       EventCounts* calls = nullptr) {
  TempDir d;
  auto m = small_machine();
  auto sink = open_trace(d.file("t.txt"), w);
  EventCounts c = drive_scenario(*sink, m);
  if (calls) *calls = c;
  return read_file(d.file("t.txt"));
}

// trace_print_context(): "%16s-%-7d [%03d] " + lat flags + " %5lu.%06lu: " + "name: " + fields.
const std::regex kLine(
    R"(^([ -~]{16})-(\d+) *\[(\d{3})\] ([dDbX.][Nnp.][ZzHhs.][0-9a-f.][0-9a-f.]) +(\d+)\.(\d{6}): ([a-z_]+): (.*)$)");

// Each event's TP_printk (include/trace/events/sched.h, power.h, ipi.h) as a regex.
const std::map<std::string, std::regex> kFields = {
    {"sched_switch",
     std::regex(R"(^prev_comm=\S{1,15} prev_pid=\d+ prev_prio=\d+ prev_state=(R|S|D|X|R\+) ==> )"
                R"(next_comm=\S{1,15} next_pid=\d+ next_prio=\d+$)")},
    {"sched_waking", std::regex(R"(^comm=\S{1,15} pid=\d+ prio=\d+ target_cpu=\d{3}$)")},
    {"sched_wakeup", std::regex(R"(^comm=\S{1,15} pid=\d+ prio=\d+ target_cpu=\d{3}$)")},
    {"sched_migrate_task",
     std::regex(R"(^comm=\S{1,15} pid=\d+ prio=\d+ orig_cpu=\d+ dest_cpu=\d+$)")},
    {"cpu_idle", std::regex(R"(^state=\d+ cpu_id=\d+$)")},
    {"ipi_raise",
     std::regex(R"(^target_mask=[0-9a-f]{8}(,[0-9a-f]{8})* \((Rescheduling interrupts|Single function call interrupts)\)$)")},
    {"ipi_entry", std::regex(R"(^\((Rescheduling interrupts|Single function call interrupts)\)$)")},
    {"ipi_exit", std::regex(R"(^\((Rescheduling interrupts|Single function call interrupts)\)$)")},
    {"sched_wake_idle_without_ipi", std::regex(R"(^cpu=\d+$)")},
};

}  // namespace

TEST(traceText, HeaderIsWhatCatTracePrints) {
  auto lines = lines_of(write_text());
  ASSERT_GE(lines.size(), 12u);
  EXPECT_EQ(lines[0], "# tracer: nop");
  EXPECT_EQ(lines[1], "#");
  EXPECT_EQ(lines[2], "# entries-in-buffer/entries-written: 29/29   #P:4");
  EXPECT_EQ(lines[3], "#");
  EXPECT_EQ(lines[4], "#                                _-----=> irqs-off/BH-disabled");
  EXPECT_EQ(lines[10], "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION");
  EXPECT_EQ(lines[11], "#              | |         |   |||||     |         |");
}

TEST(traceText, EveryLineMatchesKernelFormats) {
  EventCounts calls;
  auto lines = lines_of(write_text(std::nullopt, &calls));
  std::map<std::string, int64_t> seen;
  int64_t prev_us = -1;
  for (size_t i = 12; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, kLine)) << lines[i];
    std::string event = m[7];
    auto f = kFields.find(event);
    ASSERT_NE(f, kFields.end()) << "unexpected event " << event;
    std::string fields = m[8];
    EXPECT_TRUE(std::regex_match(fields, f->second)) << lines[i];
    int64_t us = std::stoll(m[5]) * 1000000 + std::stoll(m[6]);
    EXPECT_GE(us, prev_us) << "not in time order: " << lines[i];
    prev_us = us;
    ++seen[event];
  }
  for (int i = 0; i < kNumEventTypes; ++i) {
    auto e = static_cast<EventType>(i);
    if (e == EventType::KernelSlice) continue;
    EXPECT_EQ(seen[event_type_name(e)], calls[e]) << event_type_name(e);
  }
}

TEST(traceText, GoldenLines) {
  auto lines = lines_of(write_text());
  // A few lines checked literally (kernel field order, idle as <idle>-0 / swapper/N, clipped
  // comm, R+ for preemption, 4294967295 for idle exit, irq flags in IPI handlers).
  auto has = [&](const std::string& l) {
    return std::find(lines.begin(), lines.end(), l) != lines.end();
  };
  EXPECT_TRUE(has("          <idle>-0       [000] d..2.     0.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=pinger next_pid=101 next_prio=120"));
  EXPECT_TRUE(has("          pinger-101     [000] d..2.     0.000005: sched_waking: comm=ponger pid=102 prio=120 target_cpu=001"));
  EXPECT_TRUE(has("          <idle>-0       [001] d..1.     0.000006: cpu_idle: state=4294967295 cpu_id=1"));
  EXPECT_TRUE(has("          <idle>-0       [001] d.h1.     0.000007: ipi_entry: (Single function call interrupts)"));
  EXPECT_TRUE(has("          <idle>-0       [001] d.h2.     0.000007: sched_wakeup: comm=ponger pid=102 prio=120 target_cpu=001"));
  EXPECT_TRUE(has("          ponger-102     [001] d..2.     0.000008: ipi_raise: target_mask=00000000,00000004 (Rescheduling interrupts)"));
  EXPECT_TRUE(has(" kworker/u8:3-ev-55      [002] d.h..     0.000009: ipi_exit: (Rescheduling interrupts)"));
  EXPECT_TRUE(has(" kworker/u8:3-ev-55      [002] d..2.     0.000009: sched_switch: prev_comm=kworker/u8:3-ev prev_pid=55 prev_prio=120 prev_state=R+ ==> next_comm=rtprio next_pid=200 next_prio=9"));
  EXPECT_TRUE(has("          ponger-102     [001] d..2.     0.000008: sched_migrate_task: comm=rtprio pid=200 prio=9 orig_cpu=3 dest_cpu=2"));
  EXPECT_TRUE(has("          ponger-102     [001] d..2.     0.000012: sched_wake_idle_without_ipi: cpu=0"));
  EXPECT_TRUE(has("          pinger-101     [000] d..2.     0.000016: sched_switch: prev_comm=pinger prev_pid=101 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120"));
}

TEST(traceText, GoldenFile) { expect_golden(write_text(), "scenario.txt"); }

TEST(traceText, WindowDropsEventsOutside) {
  EventCounts calls;
  TraceWindow w{Time::ns(6000), Time::ns(9000)};
  auto lines = lines_of(write_text(w, &calls));
  CountingSink in_window(w);
  drive_scenario(in_window, small_machine());
  EXPECT_EQ(lines[2], fmt::format("# entries-in-buffer/entries-written: {}/{}   #P:4",
                                  in_window.counts().tracepoints(),
                                  in_window.counts().tracepoints()));
  ASSERT_EQ(static_cast<int64_t>(lines.size()) - 12, in_window.counts().tracepoints());
  for (size_t i = 12; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, kLine)) << lines[i];
    int64_t us = std::stoll(m[5]) * 1000000 + std::stoll(m[6]);
    EXPECT_GE(us, 6);
    EXPECT_LE(us, 9);
  }
  // The context tracked before the window is kept: ponger runs on CPU 1 when it raises the IPI.
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "          ponger-102     [001] d..2.     0.000008: ipi_raise: "
                      "target_mask=00000000,00000004 (Rescheduling interrupts)"),
            lines.end());
}

TEST(traceText, LockWaitIsAContentionBeginEndPair) {
  TempDir d;
  auto m = small_machine();
  auto sink = open_trace(d.file("t.txt"), std::nullopt);
  sink->begin(m);
  sink->lock_contended(Time::us(5), Time::us(7), 1, LockClass::Rq, 0, 3);
  sink->end(Time::us(10));
  sink.reset();
  std::vector<std::string> events;
  for (const std::string& l : lines_of(read_file(d.file("t.txt")))) {
    std::smatch mm;
    if (!std::regex_match(l, mm, kLine)) continue;
    events.push_back(mm[3].str() + " " + mm[5].str() + "." + mm[6].str() + " " + mm[7].str() +
                     ": " + mm[8].str());
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "001 0.000005 contention_begin: lock=rq:0 holder=3 (flags=SPIN)");
  EXPECT_EQ(events[1], "001 0.000007 contention_end: lock=rq:0 (ret=0)");
}
