#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "scenario.hpp"

using namespace schedlab::trace;
using namespace schedlab::trace::test;
using ::testing::HasSubstr;

TEST(traceWindow, ParsesUnits) {
  EXPECT_EQ(parse_trace_window("0.5s,0.6s"), (TraceWindow{Time::ms(500), Time::ms(600)}));
  EXPECT_EQ(parse_trace_window("100ms,200ms"), (TraceWindow{Time::ms(100), Time::ms(200)}));
  EXPECT_EQ(parse_trace_window("1500us,2000us"), (TraceWindow{Time::us(1500), Time::us(2000)}));
  EXPECT_EQ(parse_trace_window("250000ns,1ms"), (TraceWindow{Time::us(250), Time::ms(1)}));
  EXPECT_EQ(parse_trace_window("1,2"), (TraceWindow{Time::sec(1), Time::sec(2)}));
  EXPECT_EQ(parse_trace_window(" 0.1 , .2s"), (TraceWindow{Time::ms(100), Time::ms(200)}));
  EXPECT_EQ(parse_trace_window("0.000000001s,1.5us"), (TraceWindow{Time::ns(1), Time::ns(1500)}));
}

TEST(traceWindow, RejectsBadInput) {
  for (const char* bad : {"", "0.5s", "1s,2s,3s", "a,b", "1s,", ",1s", "1x,2s", "-1s,2s",
                          "2s,1s", "1s,1s", "1.5ns,2ns", "1e3,2e3"}) {
    try {
      parse_trace_window(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      EXPECT_THAT(msg, HasSubstr("--trace-window")) << bad;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "multi-line message: " << msg;
    }
  }
  EXPECT_THROW(parse_trace_window("2s,1s"), std::invalid_argument);
  // Times beyond int64_t nanoseconds (the trace_window fuzzer's 10000000001s overflowed).
  for (const char* big : {"10000000001s,2", "0,1000000000", "0,999999999999999999999ns"})
    EXPECT_THROW(parse_trace_window(big), TraceError) << big;
  EXPECT_EQ(parse_trace_window("0,999999999").second, Time::sec(999999999));
  EXPECT_EQ(parse_trace_window("0,000000000000000000001s").second, Time::sec(1));
  try {
    parse_trace_window("1s,2fortnights");
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown unit 'fortnights'"));
  }
}

TEST(traceOpen, UnknownExtensionIsAClearError) {
  TempDir d;
  for (const char* name : {"trace.csv", "trace", "trace.dat.gz", "dir.json/trace"}) {
    try {
      open_trace(d.file(name), std::nullopt);
      ADD_FAILURE() << "accepted " << name;
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      EXPECT_THAT(msg, HasSubstr("unknown trace format")) << msg;
      EXPECT_THAT(msg, HasSubstr(".dat")) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(d.path()));
}

TEST(traceOpen, PicksWriterByExtension) {
  TempDir d;
  auto m = small_machine();
  for (const char* name : {"a.txt", "b.json", "c.dat", "D.TXT"}) {
    auto w = open_trace(d.file(name), std::nullopt);
    ASSERT_NE(w, nullptr) << name;
    drive_scenario(*w, m);
    EXPECT_TRUE(std::filesystem::exists(d.file(name))) << name;
  }
  EXPECT_EQ(read_file(d.file("a.txt")).rfind("# tracer: nop\n", 0), 0u);
  EXPECT_EQ(read_file(d.file("b.json")).find("{\"traceEvents\":"), 0u);
  EXPECT_EQ(read_file(d.file("c.dat")).substr(0, 10), std::string("\x17\x08\x44tracing"));
}

TEST(traceOpen, NothingIsWrittenBeforeEnd) {
  TempDir d;
  auto m = small_machine();
  for (const char* name : {"a.txt", "b.json", "c.dat"}) {
    auto w = open_trace(d.file(name), std::nullopt);
    w->begin(m);
    w->sched_switch(Time::ns(10), 0, kIdle, PrevState::Running, kPinger);
    w->cpu_idle(Time::ns(20), 1, 0);
    w.reset();  // a run that fails never calls end()
  }
  EXPECT_TRUE(std::filesystem::is_empty(d.path()));
}

TEST(traceOpen, UnwritableDirectoryFailsAtOpen) {
  EXPECT_THROW(open_trace("/nonexistent-dir/x.txt", std::nullopt), std::runtime_error);
  EXPECT_THROW(open_trace("/nonexistent-dir/x.dat", std::nullopt), std::runtime_error);
  EXPECT_THROW(open_trace("/nonexistent-dir/x.json", std::nullopt), std::runtime_error);
}

TEST(traceCountingSink, CountsCallsAndHonoursWindow) {
  auto m = small_machine();
  CountingSink all;
  EventCounts calls = drive_scenario(all, m);
  EXPECT_EQ(all.counts(), calls);
  EXPECT_EQ(calls[EventType::SchedSwitch], 8);
  EXPECT_EQ(calls[EventType::SchedWaking], 3);
  EXPECT_EQ(calls[EventType::SchedWakeup], 3);
  EXPECT_EQ(calls[EventType::SchedMigrateTask], 1);
  EXPECT_EQ(calls[EventType::CpuIdle], 7);
  EXPECT_EQ(calls[EventType::IpiRaise], 2);
  EXPECT_EQ(calls[EventType::IpiEntry], 2);
  EXPECT_EQ(calls[EventType::IpiExit], 2);
  EXPECT_EQ(calls[EventType::WakeIdleWithoutIpi], 1);
  EXPECT_EQ(calls[EventType::KernelSlice], 17);
  EXPECT_EQ(calls.tracepoints(), 29);

  CountingSink win(TraceWindow{Time::ns(6000), Time::ns(9000)});
  drive_scenario(win, m);
  EXPECT_EQ(win.counts()[EventType::SchedSwitch], 2);  // 6200, 8100 (9000 excluded)
  EXPECT_EQ(win.counts()[EventType::CpuIdle], 2);      // 6500, 6300
  EXPECT_EQ(win.counts()[EventType::KernelSlice], 8);
}
