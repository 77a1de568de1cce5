// Traces of real runs agree with the run's counters; every preset passes --check.
#include <gtest/gtest.h>

#include "../common/process.hpp"
#include "../common/trace_json.hpp"
#include "experiment/run.hpp"
#include "trace/writers.hpp"

using namespace schedlab;
using trace::EventType;

namespace {
const std::vector<std::vector<std::string>> kPresets = {
    {"hackbench", "-g", "2", "-l", "30"},
    {"hackbench", "-p", "-T", "-g", "2", "-l", "30"},
    {"perf", "bench", "sched", "pipe", "-l", "2000"},
    {"perf", "bench", "sched", "pipe", "-T", "-l", "2000"},
};
}

TEST(Integration, TraceEventCountsEqualCounters) {
  for (const char* machine : {"tiny-4", "epyc-milan-2s"}) {
    for (const auto& cmd : kPresets) {
      trace::CountingSink counts;
      experiment::RunSpec s;
      s.machine = machine;
      s.command = cmd;
      s.sink = &counts;
      auto r = experiment::run_one(s);
      const auto& n = counts.counts();
      const auto& c = r.total;
      int64_t idle_entries = 0;
      for (auto u : c.idle_usage) idle_entries += u;
      EXPECT_EQ(n[EventType::SchedSwitch], c.context_switches);
      EXPECT_EQ(n[EventType::IpiRaise], c.ipi_sent[0] + c.ipi_sent[1]);
      EXPECT_EQ(n[EventType::IpiEntry], c.ipi_received[0] + c.ipi_received[1]);
      EXPECT_EQ(n[EventType::WakeIdleWithoutIpi], c.wake_polling_no_ipi);
      EXPECT_EQ(n[EventType::SchedMigrateTask], c.migrations);
      // cpu_idle: one event per state entry plus one per exit (the last may still be open).
      EXPECT_GE(n[EventType::CpuIdle], 2 * idle_entries - r.nr_cpus);
      EXPECT_LE(n[EventType::CpuIdle], 2 * idle_entries);
    }
  }
}

TEST(Integration, EveryPresetPassesCheck) {
  auto presets = kPresets;
  presets.push_back({"ipistorm", "numipi=500", "single=1", "offset=1", "cpulist=0-1", "wait=1"});
  // Benchmarks that run for whole seconds of simulated time are checked on the small machine.
  const std::vector<std::vector<std::string>> long_presets = {
      {"tbench", "-t", "1", "2"},
      {"schbench", "-m", "1", "-t", "2", "-r", "1"},
      {"netperf", "-t", "TCP_RR", "-l", "1", "--instances=3", "--", "-r", "100,200"},
  };
  for (const char* machine : {"tiny-4", "spr-2s", "epyc-milan-2s", "emag-32"}) {
    for (const char* f : {"", "SM_IDLE,IDLE_CPUMASK,IDLE_SPIN"}) {
      auto all = presets;
      if (std::string(machine) == "tiny-4") all.insert(all.end(), long_presets.begin(), long_presets.end());
      for (const auto& cmd : all) {
        experiment::RunSpec s;
        s.machine = machine;
        s.features = f;
        s.command = cmd;
        s.check = true;
        EXPECT_NO_THROW(experiment::run_one(s)) << machine << " " << f << " " << cmd[0];
      }
    }
  }
}

TEST(Integration, TraceFilesFromTheCli) {
  std::string base = "/tmp/schedlab_it_" + std::to_string(::getpid());
  for (const char* ext : {".txt", ".json", ".dat"}) {
    std::string path = base + ext;
    std::remove(path.c_str());
    auto r = fixture::run_schedlab("run --machine tiny-4 --trace " + path +
                                   " --trace-window 0.001s,0.002s -- perf bench sched pipe -l 1000");
    ASSERT_EQ(r.status, 0) << r.err;
    std::string content = fixture::slurp(path);
    EXPECT_FALSE(content.empty()) << ext;
    if (std::string(ext) == ".txt") {
      EXPECT_NE(content.find("# tracer: nop"), std::string::npos);
      EXPECT_NE(content.find(": sched_switch: prev_comm="), std::string::npos);
    }
    std::remove(path.c_str());
  }
  auto bad = fixture::run_schedlab("run --trace " + base + ".xyz -- hackbench -g 1 -l 1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_FALSE(fixture::file_exists(base + ".xyz"));
  auto badw = fixture::run_schedlab("run --trace " + base + ".txt --trace-window 2s,1s -- hackbench -g 1 -l 1");
  EXPECT_EQ(badw.status, 2) << badw.err;
  EXPECT_FALSE(fixture::file_exists(base + ".txt"));
}

TEST(Integration, PerfettoJsonOfRealRunsIsWellNested) {
  std::string path = "/tmp/schedlab_it_nest_" + std::to_string(::getpid()) + ".json";
  for (const char* f : {"", "IDLE_SPIN", "SM_IDLE"}) {
    for (const auto& cmd : kPresets) {
      experiment::RunSpec s;
      s.machine = "tiny-4";
      s.features = f;
      s.command = cmd;
      s.trace_path = path;
      experiment::run_one(s);
      auto j = nlohmann::json::parse(fixture::slurp(path));
      ASSERT_GT(j["traceEvents"].size(), 100u);
      fixture::expect_well_nested(j);
      std::remove(path.c_str());
    }
  }
}
