#include "machine/machine.hpp"

namespace schedlab::machine {

const char* distance_name(Distance d) {
  switch (d) {
    case Distance::Self: return "self";
    case Distance::Smt: return "smt";
    case Distance::Llc: return "llc";
    case Distance::OtherLlc: return "other_llc";
    case Distance::OtherSocket: return "other_socket";
  }
  return "?";
}

std::vector<int> Topology::smt_siblings(int cpu) const {
  std::vector<int> out;
  int core = core_of(cpu);
  for (int t = 0; t < threads_per_core; ++t) out.push_back(t * nr_cores() + core);
  return out;
}

std::vector<int> Topology::llc_cpus(int llc) const {
  std::vector<int> out;
  for (int t = 0; t < threads_per_core; ++t)
    for (int c = llc * cores_per_llc; c < (llc + 1) * cores_per_llc; ++c)
      out.push_back(t * nr_cores() + c);
  return out;
}

std::vector<int> Topology::socket_cpus(int socket) const {
  std::vector<int> out;
  for (int t = 0; t < threads_per_core; ++t)
    for (int c = socket * cores_per_socket; c < (socket + 1) * cores_per_socket; ++c)
      out.push_back(t * nr_cores() + c);
  return out;
}

Distance Topology::distance(int a, int b) const {
  if (a == b) return Distance::Self;
  if (core_of(a) == core_of(b)) return Distance::Smt;
  if (llc_of(a) == llc_of(b)) return Distance::Llc;
  if (socket_of(a) == socket_of(b)) return Distance::OtherLlc;
  return Distance::OtherSocket;
}

int64_t Machine::remote_read_ns(Distance d) const {
  switch (d) {
    case Distance::Self: return 0;
    case Distance::Smt: return costs.remote_read_smt_ns;
    case Distance::Llc: return costs.remote_read_llc_ns;
    case Distance::OtherLlc: return costs.remote_read_other_llc_ns;
    case Distance::OtherSocket: return costs.remote_read_other_socket_ns;
  }
  return 0;
}

int64_t Machine::ipi_latency_ns(Distance d) const {
  switch (d) {
    case Distance::Self:
    case Distance::Smt:
    case Distance::Llc: return costs.ipi_latency_llc_ns;
    case Distance::OtherLlc: return costs.ipi_latency_other_llc_ns;
    case Distance::OtherSocket: return costs.ipi_latency_other_socket_ns;
  }
  return 0;
}

int64_t Machine::cache_cold_ns(Distance d) const {
  switch (d) {
    case Distance::Self: return 0;
    case Distance::Smt:
    case Distance::Llc: return costs.cache_cold_llc_ns;
    case Distance::OtherLlc: return costs.cache_cold_other_llc_ns;
    case Distance::OtherSocket: return costs.cache_cold_other_socket_ns;
  }
  return 0;
}

const IdleState* Machine::idle_state(const std::string& n) const {
  for (const auto& s : idle_states)
    if (s.name == n) return &s;
  return nullptr;
}

}  // namespace schedlab::machine
