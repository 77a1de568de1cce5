// The haltpoll governor's window arithmetic (haltpoll_governor.cpp), apart for its tests.
#pragma once
#include <cstdint>

namespace schedlab::machine {
struct Machine;
}

namespace schedlab::kernel {

// The haltpoll module parameters (/sys/module/haltpoll/parameters/).
struct HaltpollParams {
  int64_t guest_halt_poll_ns;
  int64_t guest_halt_poll_grow;
  int64_t guest_halt_poll_grow_start;
  int64_t guest_halt_poll_shrink;
  bool guest_halt_poll_allow_shrink;
};
// The kernel's defaults (drivers/cpuidle/governors/haltpoll.c module parameters, v5.4+).
HaltpollParams haltpoll_defaults();
// The profile's [guest] values where recorded, the defaults for the rest.
HaltpollParams haltpoll_params(const machine::Machine& m);

// adjust_poll_limit(): after a halt of block_ns the per-CPU window grows (block_ns above the
// window and within guest_halt_poll_ns: x grow, at least grow_start, at most guest_halt_poll_ns)
// or shrinks (block_ns above guest_halt_poll_ns, when allowed: / shrink, 0 below grow_start or
// with shrink 0). `change` is +1 for a grow, -1 for a shrink, 0 otherwise.
int64_t haltpoll_adjust_poll_limit(int64_t poll_limit_ns, int64_t block_ns, const HaltpollParams& p,
                                   int& change);

}  // namespace schedlab::kernel
