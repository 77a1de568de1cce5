// Simulator speed: simulated events per second for hackbench on epyc-milan-2s.
#include <benchmark/benchmark.h>

#include "experiment/run.hpp"

using namespace schedlab;

static void BM_HackbenchEpyc(benchmark::State& state) {
  experiment::RunSpec spec;
  spec.machine = "epyc-milan-2s";
  spec.command = {"hackbench", "-g", "4", "-l", std::to_string(state.range(0))};
  machine::Machine m = experiment::load_machine(spec);
  uint64_t events = 0;
  for (auto _ : state) {
    auto r = experiment::run_one(m, spec);
    events += r.events;
    benchmark::DoNotOptimize(r.metrics);
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events),
                                                      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HackbenchEpyc)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

static void BM_PerfPipeTiny(benchmark::State& state) {
  experiment::RunSpec spec;
  spec.machine = "tiny-4";
  spec.command = {"perf", "bench", "sched", "pipe", "-l", "100000"};
  machine::Machine m = experiment::load_machine(spec);
  uint64_t events = 0;
  for (auto _ : state) {
    auto r = experiment::run_one(m, spec);
    events += r.events;
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events),
                                                      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PerfPipeTiny)->Unit(benchmark::kMillisecond);
