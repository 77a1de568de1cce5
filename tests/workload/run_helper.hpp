// Runs one benchmark command line on a machine to completion (shared by the workload tests).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "workload/workload.hpp"

namespace schedlab::wltest {

struct Ran {
  std::unique_ptr<kernel::Kernel> k;
  std::unique_ptr<workload::Workload> w;
};

inline Ran run_workload(const machine::Machine& m, const std::vector<std::string>& cmd,
                        const std::string& feats = "", uint64_t seed = 1) {
  kernel::Features f;
  f.apply(feats);
  Ran r;
  r.k = std::make_unique<kernel::Kernel>(m, f, kernel::KernelOptions{seed, nullptr});
  r.w = workload::parse_workload(cmd, r.k->nr_cpus());
  r.k->set_default_affinity(r.w->affinity());
  r.w->setup(r.k->api());
  r.k->run(r.w->time_limit());
  return r;
}

// The WorkloadError message of parsing cmd ("" if it parses).
inline std::string parse_error(const std::vector<std::string>& cmd, int nr_cpus = 4) {
  try {
    workload::parse_workload(cmd, nr_cpus);
  } catch (const workload::WorkloadError& e) {
    std::string msg = e.what();
    return msg.empty() ? "<empty>" : msg;
  }
  return "";
}

inline double metric(const workload::Workload& w, const std::string& name) {
  for (const auto& m : w.metrics())
    if (m.name == name) return m.value;
  return -1;
}

}  // namespace schedlab::wltest
