// `host probe` on generated sysfs trees of 1024 and 4096 CPUs (x86 numbering, SMT2, one LLC per
// socket of 256 cores: the layout where the old CPUs x LLC members x CPUs loop was worst).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/probe.hpp"

using namespace schedlab;
namespace fs = std::filesystem;

namespace {

fs::path make_tree(int sockets) {
  const int cores = 256, threads = 2, total_cores = sockets * cores;
  std::error_code ec;
  fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  fs::path root = base / ("schedlab-bench-probe-" + std::to_string(getpid()) + "-" + std::to_string(sockets));
  fs::remove_all(root);
  auto put = [](const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  };
  const fs::path cpu_dir = root / "sys/devices/system/cpu";
  for (int cpu = 0; cpu < total_cores * threads; ++cpu) {
    int core = cpu % total_cores, socket = core / cores;
    fs::path d = cpu_dir / ("cpu" + std::to_string(cpu));
    put(d / "topology/physical_package_id", std::to_string(socket));
    put(d / "topology/core_cpus_list", std::to_string(core) + "," + std::to_string(core + total_cores));
    std::vector<int> llc;
    for (int th = 0; th < threads; ++th)
      for (int c = socket * cores; c < (socket + 1) * cores; ++c) llc.push_back(th * total_cores + c);
    put(d / "cache/index3/level", "3");
    put(d / "cache/index3/type", "Unified");
    put(d / "cache/index3/shared_cpu_list", host::format_cpu_list(llc));
  }
  put(cpu_dir / "cpuidle/current_driver", "intel_idle");
  put(cpu_dir / "cpuidle/current_governor", "menu");
  put(cpu_dir / "cpu0/cpuidle/state0/name", "POLL");
  put(cpu_dir / "cpu0/cpuidle/state0/latency", "0");
  put(cpu_dir / "cpu0/cpuidle/state0/residency", "0");
  put(root / "proc/sys/kernel/arch", "x86_64");
  return root;
}

}  // namespace

static void BM_HostProbe(benchmark::State& state) {
  fs::path root = make_tree(static_cast<int>(state.range(0)) / 512);
  for (auto _ : state) {
    auto r = host::probe_sysfs(root.string());
    benchmark::DoNotOptimize(r.machine.topo);
  }
  fs::remove_all(root);
}
BENCHMARK(BM_HostProbe)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
