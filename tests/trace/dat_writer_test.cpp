#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cstring>
#include <regex>
#include <sstream>
#include <vector>

#include "scenario.hpp"

using namespace schedlab::trace;
using namespace schedlab::trace::test;

namespace {

bool have_trace_cmd() {
  static const bool have = std::system("trace-cmd --version >/dev/null 2>&1") == 0 ||
                           std::system("command -v trace-cmd >/dev/null 2>&1") == 0;
  return have;
}

#define REQUIRE_TRACE_CMD()                                                               \
  if (!have_trace_cmd())                                                                  \
  GTEST_SKIP() << "trace-cmd is not installed (scripts/setup.sh installs it); .dat output " \
                  "not checked with trace-cmd report"

// Runs a command, returns its stdout; fails the test on a non-zero exit.
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << " failed:\n" << out;
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "<ts>: <event>: <fields>" with the event-name padding trace-cmd adds removed, from either a
// `trace-cmd report` line or an ftrace text line.
std::string event_part(const std::string& line) {
  static const std::regex re(R"(^.*\] +(?:[^ 0-9][^ ]* +)?([0-9]+\.[0-9]{6}): ([a-z_]+): +(.*)$)");
  std::smatch m;
  if (!std::regex_match(line, m, re)) return "UNPARSED: " + line;
  return std::string(m[1]) + " " + std::string(m[2]) + ": " + std::string(m[3]);
}

std::vector<std::string> events_of_report(const std::string& report) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(report))
    if (l.find("cpus=") != 0 && l.find("version =") != 0) out.push_back(event_part(l));
  return out;
}

std::vector<std::string> events_of_text(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(text))
    if (!l.empty() && l[0] != '#') out.push_back(event_part(l));
  return out;
}

// Writes the same calls as .dat and .txt.
template <class Drive>
void write_both(const TempDir& d, const std::optional<TraceWindow>& w, Drive drive) {
  auto dat = open_trace(d.file("t.dat"), w);
  auto txt = open_trace(d.file("t.txt"), w);
  TeeSink tee({dat.get(), txt.get()});
  drive(tee);
}

}  // namespace

TEST(traceDat, FileHeader) {
  TempDir d;
  auto w = open_trace(d.file("t.dat"), std::nullopt);
  drive_scenario(*w, small_machine());
  std::string f = read_file(d.file("t.dat"));
  ASSERT_GT(f.size(), 4096u);
  EXPECT_EQ(f.substr(0, 13), std::string("\x17\x08\x44tracing" "6\0", 12) + std::string(1, '\0'));
  EXPECT_EQ(f[13], 8);  // sizeof(long)
  uint32_t page;
  std::memcpy(&page, f.data() + 14, 4);
  EXPECT_EQ(page, 4096u);
  EXPECT_EQ(f.compare(18, 12, std::string("header_page\0", 12)), 0);
  EXPECT_EQ(f.size() % 4096, 0u);  // CPU data is whole pages, page aligned
  EXPECT_NE(f.find("flyrecord"), std::string::npos);
  EXPECT_NE(f.find("name: sched_waking\nID: "), std::string::npos);
  EXPECT_NE(f.find("\"Rescheduling interrupts\""), std::string::npos);
  EXPECT_NE(f.find("\n102 ponger\n"), std::string::npos);  // saved cmdlines
}

TEST(traceDat, TraceCmdReportGolden) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  auto w = open_trace(d.file("t.dat"), std::nullopt);
  drive_scenario(*w, small_machine());
  // -N: no plugins, so the output is the kernel's print fmt whatever plugins are installed.
  expect_golden(run("trace-cmd report -N " + d.file("t.dat")), "scenario.dat.report");
  // -l: latency format, shows the flags / preempt count recorded.
  expect_golden(run("trace-cmd report -N -l " + d.file("t.dat")), "scenario.dat.report-l");
}

TEST(traceDat, TraceCmdReportEqualsTextWriter) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  EventCounts calls;
  write_both(d, std::nullopt, [&](TraceSink& s) { calls = drive_scenario(s, small_machine()); });
  auto rep = events_of_report(run("trace-cmd report -N " + d.file("t.dat")));
  auto txt = events_of_text(read_file(d.file("t.txt")));
  EXPECT_EQ(static_cast<int64_t>(rep.size()), calls.tracepoints());
  EXPECT_EQ(rep, txt);
}

TEST(traceDat, WindowDropsEventsOutside) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  TraceWindow w{Time::ns(6000), Time::ns(9000)};
  write_both(d, w, [&](TraceSink& s) { drive_scenario(s, small_machine()); });
  CountingSink in_window(w);
  drive_scenario(in_window, small_machine());
  auto rep = events_of_report(run("trace-cmd report -N " + d.file("t.dat")));
  EXPECT_EQ(static_cast<int64_t>(rep.size()), in_window.counts().tracepoints());
  for (const auto& e : rep) {
    double ts = std::stod(e);
    EXPECT_GE(ts, 0.000006) << e;
    EXPECT_LE(ts, 0.000009) << e;
  }
  EXPECT_EQ(rep, events_of_text(read_file(d.file("t.txt"))));
}

TEST(traceDat, ManyPagesAndLongGaps) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  // ~3000 events per CPU (many pages), gaps from 1 ns to 3 s (time-extend records), 130 CPUs
  // (a three-long cpumask).
  auto m = small_machine(1, 65, 2, 5);
  int64_t n_calls = 0;
  write_both(d, std::nullopt, [&](TraceSink& s) {
    s.begin(m);
    int64_t t = 1000;
    const TaskInfo a{1000, "a", 120}, b{1001, "b", 120};
    for (int i = 0; i < 3000; ++i) {
      int64_t gap = (i % 7 == 0) ? 3'000'000'000ll + i : (i % 3 == 0 ? 150'000'000 : 1 + i);
      t += gap;
      int cpu = i % 2 ? 129 : 0;
      s.sched_switch(Time::ns(t), cpu, i % 4 < 2 ? a : b, PrevState::Sleeping,
                     i % 4 < 2 ? b : a);
      s.sched_waking(Time::ns(t + 1), cpu, a, 128);
      s.ipi_raise(Time::ns(t + 2), cpu, 128 - (i % 3) * 60, IpiKind::Reschedule);
      n_calls += 3;
    }
    s.end(Time::ns(t + 10));
  });
  auto rep = events_of_report(run("trace-cmd report -N " + d.file("t.dat")));
  auto txt = events_of_text(read_file(d.file("t.txt")));
  EXPECT_EQ(static_cast<int64_t>(rep.size()), n_calls);
  ASSERT_EQ(rep.size(), txt.size());
  for (size_t i = 0; i < rep.size(); ++i) ASSERT_EQ(rep[i], txt[i]) << "event " << i;
}

TEST(traceDat, EqualTimestampsMergeLikeTraceCmd) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  // Same nanosecond on several CPUs, called highest CPU first, plus an event recorded for a
  // later time before an earlier one on the same CPU (the model reports polling kicks ahead).
  write_both(d, std::nullopt, [&](TraceSink& s) {
    s.begin(small_machine());
    for (int cpu = 3; cpu >= 0; --cpu) s.cpu_idle(Time::ns(5000), cpu, 1);
    s.wake_idle_without_ipi(Time::ns(7000), 2, 0);
    s.sched_waking(Time::ns(6000), 2, kPinger, 0);
    for (int cpu = 0; cpu < 4; ++cpu) s.cpu_idle(Time::ns(8000), 3 - cpu, -1);
    s.end(Time::ns(9000));
  });
  auto rep = events_of_report(run("trace-cmd report -N " + d.file("t.dat")));
  auto txt = events_of_text(read_file(d.file("t.txt")));
  EXPECT_EQ(rep.size(), 10u);
  EXPECT_EQ(rep, txt);
  auto lines = lines_of(read_file(d.file("t.txt")));
  ASSERT_EQ(lines.size(), 22u);
  EXPECT_NE(lines[12].find("[000]"), std::string::npos) << lines[12];
  EXPECT_NE(lines[15].find("[003]"), std::string::npos) << lines[15];
  EXPECT_NE(lines[16].find("sched_waking"), std::string::npos) << lines[16];
}

TEST(traceDat, LongRecordsOnHugeMachines) {
  REQUIRE_TRACE_CMD();
  TempDir d;
  // 1000 CPUs: ipi_raise carries a 16-long cpumask, too long for the 5-bit type_len, so the
  // record stores its length in the next word.
  auto m = small_machine(1, 500, 2, 10);
  write_both(d, std::nullopt, [&](TraceSink& s) {
    s.begin(m);
    s.ipi_raise(Time::ns(100), 3, 999, IpiKind::Reschedule);
    s.ipi_raise(Time::ns(200), 999, 0, IpiKind::CallFunctionSingle);
    s.sched_switch(Time::ns(300), 999, kIdle, PrevState::Running, kPinger);
    s.end(Time::ns(400));
  });
  auto rep = events_of_report(run("trace-cmd report -N " + d.file("t.dat")));
  auto txt = events_of_text(read_file(d.file("t.txt")));
  ASSERT_EQ(rep.size(), 3u);
  EXPECT_EQ(rep, txt);
  EXPECT_NE(rep[0].find("target_mask=00000080,00000000,"), std::string::npos) << rep[0];
}
