// The shared cache lines' states (cacheline.hpp).
#include "kernel/cacheline.hpp"

#include <algorithm>
#include <iterator>

#include "kernel/sched.hpp"

namespace schedlab::kernel {

void CacheLine::init(int nr_cpus, int home) {
  writer = home;
  busy_from = free_at = Time{};
  shared = false;
  nwords = (nr_cpus + 63) / 64;
  std::fill(std::begin(inline_sharers), std::end(inline_sharers), 0);
  heap_sharers.assign(nwords <= kInlineWords ? 0 : static_cast<size_t>(nwords), 0);
  sharers()[home >> 6] |= uint64_t{1} << (home & 63);
}

void line_write(CacheLine& line, int cpu) {
  if (line.shared || line.writer != cpu) {
    uint64_t* w = line.sharers();
    std::fill(w, w + line.nwords, 0);
    w[cpu >> 6] |= uint64_t{1} << (cpu & 63);
    line.shared = false;
  }
  line.writer = cpu;
}

// One read is a tally of one, flushed at once (no counter moves for a line the reader holds).
int64_t line_read(Kernel& k, CacheLine& line, LineClass cls, int cpu, Time at) {
  LineTally tally;
  const int64_t c = line_read_tallied(k, line, cpu, at, tally);
  if (tally.transfers > 0) line_read_flush(k, cls, cpu, tally);
  return c;
}

void line_read_flush(Kernel& k, LineClass cls, int cpu, const LineTally& tally) {
  CpuCounters& c = k.rq(cpu).c;
  const int i = static_cast<int>(cls);
  c.line_transfers[i] += tally.transfers;
  c.line_transfer_ns[i] += tally.transfer_ns;
  c.line_waits[i] += tally.waits;
  c.line_wait_ns[i] += tally.wait_ns;
}

}  // namespace schedlab::kernel
