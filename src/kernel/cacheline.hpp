// Shared cache lines the scheduler's wakeup path reads (docs/model.md "Shared cache lines"): a
// rq's line (nr_running, curr, ttwu_pending: what idle_cpu() reads), an LLC's sd_llc_shared
// line (has_idle_cores, nr_idle_scan, nr_busy_cpus), the IDLE_CPUMASK change's per-LLC mask.
// A line keeps who wrote it last and which CPUs hold a copy since; a read by a CPU without a
// copy pays the line transfer for the distance between the writer and the reader
// (remote_read_*_ns), after any transfer of the same line still in flight (concurrent readers
// of a line that was written serialize on it). A read by a CPU that holds a copy is free.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kernel/base.hpp"
#include "kernel/counters.hpp"
#include "sim/time.hpp"

namespace schedlab::kernel {

// The classes of line counted apart (counters.hpp: line_transfers, ...).
// (counters.hpp: kLineClassKeys, in this order).
enum class LineClass : uint8_t { Rq, LlcShared, IdleCpumask };
static_assert(static_cast<int>(LineClass::IdleCpumask) + 1 == kNumLineClasses);

struct CacheLine {
  int writer = 0;                 // the CPU that wrote the line last (at boot: its home CPU)
  bool shared = false;            // some CPU besides the writer read it since the write
  Time busy_from;                 // the last transfer of the line: [busy_from, free_at)
  Time free_at;
  // CPUs holding a copy since the last write (the writer too), one bit each: inline for up to
  // kInlineCpus CPUs (the wakeup scan reads one line per visited CPU, and a bitmap on the heap
  // was a cache miss each), on the heap beyond.
  static constexpr int kInlineWords = 4;
  static constexpr int kInlineCpus = 64 * kInlineWords;
  uint64_t inline_sharers[kInlineWords] = {};
  int nwords = 0;
  std::vector<uint64_t> heap_sharers;

  // An unwritten line at boot, held by `home` only.
  void init(int nr_cpus, int home);
  uint64_t* sharers() { return nwords <= kInlineWords ? inline_sharers : heap_sharers.data(); }
  const uint64_t* sharers() const {
    return nwords <= kInlineWords ? inline_sharers : heap_sharers.data();
  }
  bool held_by(int cpu) const { return sharers()[cpu >> 6] >> (cpu & 63) & 1; }
};

// `cpu` writes the line: every other copy is invalidated. The write's own cost (the RFO) is the
// caller's (docs/model.md: where it is charged).
void line_write(CacheLine& line, int cpu);
// `cpu` reads the line at `at`: 0 if it holds a copy; else the wait behind the line's transfer
// in flight plus the transfer from the writer, counted on `cpu`'s counters by class.
int64_t line_read(Kernel& k, CacheLine& line, LineClass cls, int cpu, Time at);

// The same read with its counts going to `tally` (line_read() is this and line_read_flush()):
// a loop of many reads by one CPU of one class (select_idle_cpu()'s scan) adds them to the
// reader's counters once at its end. Inline: the scan of a busy LLC reads one line per CPU.
struct LineTally {
  int64_t transfers = 0, transfer_ns = 0, waits = 0, wait_ns = 0;
};
inline int64_t line_read_tallied(const Kernel& k, CacheLine& line, int cpu, Time at,
                                 LineTally& tally) {
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
  tally.transfers++;
  tally.transfer_ns += wait + transfer;
  if (wait > 0) {
    tally.waits++;
    tally.wait_ns += wait;
  }
  return wait + transfer;
}
// Adds a tally to `cpu`'s counters for `cls`.
void line_read_flush(Kernel& k, LineClass cls, int cpu, const LineTally& tally);

}  // namespace schedlab::kernel
