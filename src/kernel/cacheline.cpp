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

int64_t line_read(Kernel& k, CacheLine& line, LineClass cls, int cpu, Time at) {
  if (line.held_by(cpu)) return 0;
  line.sharers()[cpu >> 6] |= uint64_t{1} << (cpu & 63);
  line.shared = true;
  const int64_t transfer = k.remote_read(line.writer, cpu);
  // A read during the line's last transfer waits for its end; one that comes after it books
  // the line from `at`. Reads are decided ahead of time (`at` is now plus the caller's work so
  // far), so a read can be decided after a later one: it does not wait for that later transfer
  // and leaves its booking as it is (the two may overlap by less than a transfer).
  const bool in_flight = at >= line.busy_from && at < line.free_at;
  const Time start = in_flight ? line.free_at : at;
  const int64_t wait = (start - at).count();
  if (start >= line.free_at) {
    line.busy_from = start;
    line.free_at = start + Time::ns(transfer);
  }
  CpuCounters& c = k.rq(cpu).c;
  const int i = static_cast<int>(cls);
  c.line_transfers[i]++;
  c.line_transfer_ns[i] += wait + transfer;
  if (wait > 0) {
    c.line_waits[i]++;
    c.line_wait_ns[i] += wait;
  }
  return wait + transfer;
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
