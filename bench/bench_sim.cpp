// Benchmarks of the simulator itself (not of the modeled kernel).
#include <benchmark/benchmark.h>

#include "sim/event_queue.hpp"

using namespace schedlab::sim;

static void BM_EventQueue(benchmark::State& state) {
  for (auto _ : state) {
    EventQueue q;
    int64_t n = 0;
    for (int i = 0; i < 1000; ++i) q.after(Time::ns(i * 7 % 13), [&n] { ++n; });
    q.run();
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_EventQueue);
