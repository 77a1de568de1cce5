// The machine's topology as the scheduler reads it: per-CPU ids and shared CPU spans, computed
// once (as the kernel's cpu_smt_mask(), cpu_coregroup_mask(), sd_llc_id). Memory is linear in
// the number of CPUs: every span is stored once and shared by the CPUs (and sched domains) it
// covers; a lookup is O(1).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::kernel {

using machine::Distance;
using CpuSpan = std::span<const int>;  // ascending CPU ids

class CpuTopology {
 public:
  explicit CpuTopology(const machine::Topology& t);

  int nr_cpus() const { return static_cast<int>(core_id_.size()); }
  int nr_cores() const { return static_cast<int>(core_cpus_.size()); }
  int nr_llcs() const { return static_cast<int>(llc_cpus_.size()); }
  int nr_sockets() const { return static_cast<int>(socket_cpus_.size()); }
  int threads_per_core() const { return threads_per_core_; }
  int llc_size() const { return llc_size_; }  // CPUs per LLC (sd_llc_size)

  int core_of(int cpu) const { return core_id_[cpu]; }
  int llc_of(int cpu) const { return llc_id_[cpu]; }    // sd_llc_id
  int socket_of(int cpu) const { return socket_id_[cpu]; }
  bool share_llc(int a, int b) const { return llc_id_[a] == llc_id_[b]; }  // cpus_share_cache()

  CpuSpan smt_mask(int cpu) const { return core_cpus_[core_id_[cpu]]; }  // includes cpu
  CpuSpan core_cpus(int core) const { return core_cpus_[core]; }
  CpuSpan llc_cpus(int llc) const { return llc_cpus_[llc]; }
  CpuSpan socket_cpus(int socket) const { return socket_cpus_[socket]; }
  CpuSpan all_cpus() const { return all_cpus_; }

  Distance distance(int a, int b) const {
    if (a == b) return Distance::Self;
    if (core_id_[a] == core_id_[b]) return Distance::Smt;
    if (llc_id_[a] == llc_id_[b]) return Distance::Llc;
    if (socket_id_[a] == socket_id_[b]) return Distance::OtherLlc;
    return Distance::OtherSocket;
  }

 private:
  int threads_per_core_ = 1;
  int llc_size_ = 1;
  std::vector<int> core_id_, llc_id_, socket_id_;
  std::vector<std::vector<int>> core_cpus_, llc_cpus_, socket_cpus_;
  std::vector<int> all_cpus_;
};

}  // namespace schedlab::kernel
