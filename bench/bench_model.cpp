// Simulator speed: simulated events per second and heap allocations per event, for the
// benchmarks the acceptance figures use (docs/performance.md). Allocations are counted by the
// replaced global operator new (tests/common/alloc_counter.hpp; this binary only).
#include <benchmark/benchmark.h>

#include <chrono>

#include "experiment/run.hpp"

#include "../tests/common/alloc_counter.hpp"

using namespace schedlab;

namespace {

// Runs one simulation per iteration; reports simulated events per second of wall time, heap
// allocations per event over the whole run (setup included), the simulated events, and the
// nanoseconds of wall time per simulated microsecond (ns_per_sim_us: 1000 = real time).
void run_case(benchmark::State& state, const std::string& machine,
              const std::vector<std::string>& cmd) {
  experiment::RunSpec spec;
  spec.machine = machine;
  spec.command = cmd;
  machine::Machine m = experiment::load_machine(spec);
  uint64_t events = 0, allocs = 0;
  int64_t simulated_ns = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    uint64_t a0 = alloc_counter::allocations();
    auto r = experiment::run_one(m, spec);
    allocs += alloc_counter::allocations() - a0;
    events += r.events;
    simulated_ns += r.simulated_ns;
    benchmark::DoNotOptimize(r.metrics);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["allocs_per_event"] =
      events ? static_cast<double>(allocs) / static_cast<double>(events) : 0.0;
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  const double wall_ns = std::chrono::duration<double, std::nano>(
                             std::chrono::steady_clock::now() - t0).count();
  state.counters["ns_per_sim_us"] =
      simulated_ns > 0 ? wall_ns / (static_cast<double>(simulated_ns) / 1e3) : 0.0;
}

void BM_HackbenchEpyc(benchmark::State& state) {
  run_case(state, "epyc-milan-2s",
           {"hackbench", "-g", "4", "-l", std::to_string(state.range(0))});
}
BENCHMARK(BM_HackbenchEpyc)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_TbenchSpr(benchmark::State& state) {
  run_case(state, "spr-2s", {"tbench", "-t", "1", std::to_string(state.range(0))});
}
BENCHMARK(BM_TbenchSpr)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_PerfPipeTiny(benchmark::State& state) {
  run_case(state, "tiny-4", {"perf", "bench", "sched", "pipe", "-l", "100000"});
}
BENCHMARK(BM_PerfPipeTiny)->Unit(benchmark::kMillisecond);

void BM_SchbenchEpyc(benchmark::State& state) {
  run_case(state, "epyc-milan-2s", {"schbench", "-m", "2", "-t", "16", "-r", "1"});
}
BENCHMARK(BM_SchbenchEpyc)->Unit(benchmark::kMillisecond);

}  // namespace
