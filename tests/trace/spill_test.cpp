// Traces stream to disk (issue 25): the writers keep their events in SpillSorters, which hold
// at most their memory limit in memory and merge sorted runs from a temporary file at the end.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "trace/spill.hpp"

using namespace schedlab::trace;
using namespace schedlab::trace::test;
using schedlab::trace::detail::SpillSorter;

namespace {

struct Rec {
  SpillSorter::Key key;
  std::string payload;
};

std::vector<Rec> drain(SpillSorter& s) {
  std::vector<Rec> out;
  s.finish();
  for (; s.valid(); s.next()) out.push_back({s.key(), std::string(s.payload())});
  return out;
}

// Few distinct keys, so that many records tie: the order among ties is what stability is about.
std::vector<Rec> random_records(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Rec> v;
  for (int i = 0; i < n; ++i) {
    SpillSorter::Key k{static_cast<int64_t>(rng() % 4), static_cast<int64_t>(rng() % 50) - 25,
                       0, 0};
    v.push_back({k, fmt::format("record {} {}", i, std::string(rng() % 40, 'x'))});
  }
  return v;
}

}  // namespace

TEST(SpillSorter, SortsStablyAcrossRunsOnDisk) {
  auto in = random_records(20000, 7);
  SpillSorter s(4096);  // far less than the records: many runs
  for (const auto& r : in) s.add(r.key, r.payload);
  auto out = drain(s);
  EXPECT_GT(s.runs(), 10);
  auto want = in;
  std::stable_sort(want.begin(), want.end(), [](const Rec& a, const Rec& b) { return a.key < b.key; });
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i].key, want[i].key) << i;
    ASSERT_EQ(out[i].payload, want[i].payload) << i;
  }
}

TEST(SpillSorter, InMemoryWhenUnderTheLimit) {
  auto in = random_records(500, 3);
  SpillSorter s(size_t{1} << 24);
  for (const auto& r : in) s.add(r.key, r.payload);
  auto out = drain(s);
  EXPECT_EQ(s.runs(), 0);
  auto want = in;
  std::stable_sort(want.begin(), want.end(), [](const Rec& a, const Rec& b) { return a.key < b.key; });
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].payload, want[i].payload) << i;
}

TEST(SpillSorter, MemoryStaysBoundedAndInOrderInputIsOneRun) {
  constexpr size_t kLimit = 8192;
  SpillSorter s(kLimit);
  std::string payload(100, 'p');
  for (int64_t i = 0; i < 100000; ++i) s.add({i / 3, 0, 0, 0}, payload);  // ~10 MB in all
  EXPECT_EQ(s.runs(), 1);  // each spilled run continues the last one
  EXPECT_LE(s.peak_buffered_bytes(), kLimit + payload.size() + 64);
  auto out = drain(s);
  ASSERT_EQ(out.size(), 100000u);
  EXPECT_EQ(out.back().key[0], 99999 / 3);
}

namespace {

// `cycles` rounds of a ping-pong between CPU 0 and CPU 1 with IPI wakeups and kernel slices,
// 20 us apart: a trace that grows with `cycles`.
void drive_long(TraceSink& t, const schedlab::machine::Machine& m, int cycles) {
  t.begin(m);
  for (int i = 0; i < cycles; ++i) {
    int64_t o = int64_t{20000} * i;
    t.kernel_slice(0, ns(o + 500), ns(o + 1100), KernelPath::ScheduleIdle);
    t.sched_switch(ns(o + 1000), 0, kIdle, PrevState::Running, kPinger);
    t.sched_waking(ns(o + 5000), 0, kPonger, 1);
    t.ipi_raise(ns(o + 5300), 0, 1, IpiKind::CallFunctionSingle);
    t.kernel_slice(0, ns(o + 5000), ns(o + 5600), KernelPath::Ttwu);  // ends after its events
    t.sched_switch(ns(o + 6200), 0, kPinger, PrevState::Sleeping, kIdle);
    t.cpu_idle(ns(o + 6500), 0, 0);
    t.cpu_idle(ns(o + 6300), 1, -1);
    t.ipi_entry(ns(o + 6850), 1, IpiKind::CallFunctionSingle);
    t.sched_wakeup(ns(o + 7000), 1, kPonger, 1);
    t.ipi_exit(ns(o + 7550), 1, IpiKind::CallFunctionSingle);
    t.kernel_slice(1, ns(o + 6800), ns(o + 7600), KernelPath::IpiHandler);
    t.sched_switch(ns(o + 8100), 1, kIdle, PrevState::Running, kPonger);
    t.sched_switch(ns(o + 12950), 1, kPonger, PrevState::Sleeping, kIdle);
    t.cpu_idle(ns(o + 13100), 1, 1);
    t.cpu_idle(ns(o + 19000), 0, -1);
  }
  t.end(ns(int64_t{20000} * cycles));
}

std::string write_long(const std::string& ext, const char* limit, int cycles) {
  if (limit) setenv("SCHEDLAB_TRACE_BUFFER_BYTES", limit, 1);
  else unsetenv("SCHEDLAB_TRACE_BUFFER_BYTES");
  TempDir d;
  auto m = small_machine();
  auto sink = open_trace(d.file("t" + ext));
  unsetenv("SCHEDLAB_TRACE_BUFFER_BYTES");
  drive_long(*sink, m, cycles);
  return read_file(d.file("t" + ext));
}

class TraceStreams : public ::testing::TestWithParam<const char*> {};

}  // namespace

// A writer with a 16 KiB limit holds no more than that of a 3000-cycle trace (tens of MB of
// records for .json) in any sorter, and writes the same bytes as one that sorted in memory.
TEST_P(TraceStreams, MemoryDoesNotGrowWithTheTraceAndBytesAreTheSame) {
  std::string ext = GetParam();
  std::string in_memory = write_long(ext, nullptr, 3000);
  detail::reset_spill_stats();
  std::string streamed = write_long(ext, "16384", 3000);
  auto st = detail::spill_stats();
  EXPECT_GT(st.records_spilled, 30000u);
  EXPECT_LE(st.peak_buffered_bytes, size_t{16384} + 1024);
  EXPECT_GT(streamed.size(), size_t{20} * 16384);
  EXPECT_TRUE(streamed == in_memory) << ext << ": " << streamed.size() << " vs " << in_memory.size();
}

INSTANTIATE_TEST_SUITE_P(Formats, TraceStreams, ::testing::Values(".txt", ".dat", ".json"),
                         [](const auto& info) { return std::string(info.param + 1); });
