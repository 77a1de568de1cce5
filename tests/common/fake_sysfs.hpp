// A generated sysfs tree of a uniform x86 machine, CPUs numbered as Linux numbers them (SMT
// siblings nr_cores apart): per CPU the package, the core's threads and the L3's shared list;
// one POLL idle state. For the probe's scale test and BM_HostProbe. Thousands of small files,
// so it goes to /dev/shm where that is writable.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "host/probe.hpp"

namespace schedlab::fixture {

inline std::filesystem::path make_uniform_sysfs(const std::string& tag, int sockets, int cores, int threads,
                                                int cores_per_llc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = fs::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                  : fs::temp_directory_path();
  fs::path root = base / ("schedlab-sysfs-" + tag + "-" + std::to_string(getpid()));
  fs::remove_all(root);
  auto put = [](const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  };
  const int total_cores = sockets * cores;
  const fs::path cpu_dir = root / "sys/devices/system/cpu";
  for (int cpu = 0; cpu < total_cores * threads; ++cpu) {
    int core = cpu % total_cores, llc_first = core / cores_per_llc * cores_per_llc;
    fs::path d = cpu_dir / ("cpu" + std::to_string(cpu));
    put(d / "topology/physical_package_id", std::to_string(core / cores));
    std::vector<int> siblings, llc;
    for (int th = 0; th < threads; ++th) {
      siblings.push_back(th * total_cores + core);
      for (int c = llc_first; c < llc_first + cores_per_llc; ++c) llc.push_back(th * total_cores + c);
    }
    put(d / "topology/core_cpus_list", host::format_cpu_list(siblings));
    put(d / "cache/index3/level", "3");
    put(d / "cache/index3/type", "Unified");
    put(d / "cache/index3/shared_cpu_list", host::format_cpu_list(llc));
  }
  put(cpu_dir / "online", "0-" + std::to_string(total_cores * threads - 1));
  put(cpu_dir / "cpuidle/current_driver", "intel_idle");
  put(cpu_dir / "cpuidle/current_governor", "menu");
  put(cpu_dir / "cpu0/cpuidle/state0/name", "POLL");
  put(cpu_dir / "cpu0/cpuidle/state0/latency", "0");
  put(cpu_dir / "cpu0/cpuidle/state0/residency", "0");
  put(root / "proc/sys/kernel/arch", "x86_64");
  return root;
}

}  // namespace schedlab::fixture
