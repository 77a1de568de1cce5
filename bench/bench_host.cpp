// `host probe` on generated sysfs trees of 1024 and 4096 CPUs (x86 numbering, SMT2, one LLC per
// socket of 256 cores: the layout where the old CPUs x LLC members x CPUs loop was worst).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "../tests/common/fake_sysfs.hpp"

using namespace schedlab;
namespace fs = std::filesystem;

static void BM_HostProbe(benchmark::State& state) {
  fs::path root = fixture::make_uniform_sysfs("bench", static_cast<int>(state.range(0)) / 512, 256, 2, 256);
  for (auto _ : state) {
    auto r = host::probe_sysfs(root.string());
    benchmark::DoNotOptimize(r.machine.topo);
  }
  fs::remove_all(root);
}
BENCHMARK(BM_HostProbe)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
