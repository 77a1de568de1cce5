// A bounded byte/message FIFO between tasks: a pipe, an AF_UNIX stream socket or a loopback TCP
// connection, with wait lists for blocked readers and writers (WF_SYNC wakeups).
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/api.hpp"
#include "sim/fifo.hpp"

namespace schedlab::workload {

struct Channel {
  int64_t cap_bytes = 0;   // 0 = unbounded
  int64_t cap_msgs = 0;    // 0 = unbounded
  int64_t used_bytes = 0;  // reserved by writers (incl. data not yet readable)
  int64_t used_msgs = 0;
  sim::Fifo<int64_t> ready;  // readable messages (sizes)
  std::vector<kernel::Task*> readers;  // blocked in read()
  std::vector<kernel::Task*> writers;  // blocked in write() on a full buffer

  bool can_write(int64_t size) const {
    if (cap_bytes > 0 && used_bytes + size > cap_bytes && used_bytes > 0) return false;
    if (cap_msgs > 0 && used_msgs + 1 > cap_msgs) return false;
    return true;
  }
  void reserve(int64_t size) {
    used_bytes += size;
    used_msgs += 1;
  }
  void publish(int64_t size) { ready.push_back(size); }
  bool can_read() const { return !ready.empty(); }
  int64_t take() { return ready.pop_front(); }
  void release(int64_t size) {
    used_bytes -= size;
    used_msgs -= 1;
  }
};

// Per-channel-kind costs, from the machine profile.
struct ChannelCosts {
  int64_t send_ns = 0;
  int64_t recv_ns = 0;
  int64_t copy_ns_per_kb = 0;
  int64_t send(int64_t bytes) const { return send_ns + copy_ns_per_kb * bytes / 1024; }
  int64_t recv(int64_t bytes) const { return recv_ns + copy_ns_per_kb * bytes / 1024; }
};

}  // namespace schedlab::workload
