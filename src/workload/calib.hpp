// The microbenchmarks of `schedlab host calibrate` (host/calibrate.cpp) as model workloads: the
// same steps as the real ones, so that the model can be checked against the measurements its
// costs come from (`schedlab host check`, docs/host.md "Self-check"). Command line:
//   calib futex-pingpong [-c A] [-n OPS]       futex_pingpong_same_cpu_half
//   calib wake [-c A,B] [-g GAP_US] [-n N]     wake_latency_<class>, wake_syscall_<class>
//                                              (medians; wake_latency_mean, wake_syscall_mean:
//                                              the means, for a published figure that is one)
//   calib membarrier [-c A,B] [-n CALLS]       membarrier_ipi_<class> (IPI round trip)
//   calib fork [-c A] [-n N]                   fork_call, fork_exit_reap
//   calib pipe [-c A,B] [-P] [-n OPS]          pipe_rtt_* (perf bench sched pipe's workload,
//                                              1-byte tokens, each task pinned; -P: processes)
//   calib msg [-c A[,B]] [-u] [-n MSGS]        msg_{pipe_write,pipe_read}_<where> (-u:
//                                              msg_{unix_send,unix_recv}_<where>): a 100-byte
//                                              message ping-pong without blocking, both ends on
//                                              A (where = same_cpu) or A writing, B reading
//   calib coldmsg [-c A] [-u] [-k CHANS] [-m MSGS] [-n CHUNKS]
//                                              {pipe_write,unix_send}_100b_fill and
//                                              {pipe_read,unix_recv}_100b_cold: CHANS pipes
//                                              (-u: socketpairs) on A filled round-robin with
//                                              MSGS 100-byte messages each, then drained in order
// Every metric is in ns, per operation as the calibration key defines it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace schedlab::workload {

struct CalibOptions {
  std::string bench;      // futex-pingpong, wake, membarrier, fork, msg, coldmsg (pipe is a PerfPipe)
  int a = 0, b = 1;       // -c A[,B]: the measuring CPU and its partner's
  long long n = 0;        // -n: operations / events (0: the calibration's default)
  long long gap_us = 60;  // -g: wake: idle gap before each FUTEX_WAKE
  bool unix_socket = false;  // -u: msg, coldmsg: AF_UNIX stream sockets instead of pipes
  int chans = 47;            // -k: coldmsg: channels (calibrate's AF_UNIX layout for a 2 MiB L2)
  int per_chan = 200;        // -m: coldmsg: messages per channel
};

std::unique_ptr<Workload> parse_calib(const std::vector<std::string>& args, int nr_cpus);

}  // namespace schedlab::workload
