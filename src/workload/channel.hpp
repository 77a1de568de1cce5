// A bounded byte/message FIFO between tasks: a pipe, an AF_UNIX stream socket or a loopback TCP
// connection, with wait lists for blocked readers and writers (WF_SYNC wakeups).
//
// Each kind keeps its kernel's buffer accounting and its rule for waking a blocked writer
// (docs/workloads.md, "Pipes and AF_UNIX sockets"):
// - Stream (loopback TCP here): capacity in bytes and/or messages; every freed message wakes
//   every blocked writer.
// - Pipe (fs/pipe.c): a ring of `pipe_slots` pages. A write merges into the last page when the
//   pipe is not empty and the page has room, else takes a free slot; the pipe is full when every
//   slot is taken, and a slot is freed only when its page has been read to the end. A read that
//   began on a full pipe wakes one blocked writer (an exclusive wait, in arrival order), whether
//   or not it freed a slot; a writer that had waited and leaves the pipe not full wakes the next.
// - Unix (net/unix/af_unix.c): the senders' socket charges each message's skb truesize to its
//   send buffer; a send waits while the charge is at least sk_sndbuf, and a freed skb wakes every
//   waiting sender only once the charge is at most a quarter of sk_sndbuf (unix_writable()).
//
// Cache footprint (docs/model.md, "Cold channel reads and sends"): with topology.l2_bytes and a
// cold cost set, each core counts the bytes brought through its L2 by channels (a message's
// buffer footprint: its skb truesize for AF_UNIX, its bytes for a pipe), at every read and at
// every send into a cold buffer; a message remembers its core's count at its send, and a read on
// the CPU it was sent from pays the kind's cold cost when more than the L2 has moved since: its
// lines were evicted. A read frees the message's buffer onto its sending core's free stack
// (SLUB's per-CPU LIFO freelist, the page allocator's per-CPU hot list) with that core's count;
// a send reuses the top of its core's stack, warm when at most the L2 moved since that free,
// else (or with the stack empty) it writes a cold buffer and pays the kind's cold send cost.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/api.hpp"
#include "sim/fifo.hpp"

namespace schedlab::workload {

// Per-core running counts of the bytes moved through channels (see above), shared by one
// workload's channels; off (never counts) unless the machine has an L2 size and a cold cost.
struct CacheFootprint {
  int64_t l2_bytes = 0;
  std::vector<int> core_of_cpu;  // cpu -> core (the CPUs sharing one L2)
  std::vector<int64_t> moved;    // per core
  std::vector<sim::Fifo<int64_t>> freed;  // per core: the count at each free, the newest last
  int64_t reads_cold = 0;        // counter: reads that paid the cold cost
  int64_t reads_checked = 0;     // counter: same-CPU reads the rule looked at
  int64_t sends_cold = 0;        // counter: sends into a cold buffer
  int64_t sends_checked = 0;     // counter: sends the rule looked at
  bool on() const { return l2_bytes > 0; }
  // On for `m` when it has an L2 size and a cold cost (`cold_ns`: the read's plus the send's) > 0.
  void setup(const machine::Machine& m, int64_t cold_ns) {
    if (m.topo.l2_bytes <= 0 || cold_ns <= 0) return;
    l2_bytes = m.topo.l2_bytes;
    for (int c = 0; c < m.topo.nr_cpus(); ++c) core_of_cpu.push_back(m.topo.core_of(c));
    moved.assign(static_cast<size_t>(m.topo.nr_cores()), 0);
    freed.resize(static_cast<size_t>(m.topo.nr_cores()));
  }
  size_t core(int cpu) const { return static_cast<size_t>(core_of_cpu[static_cast<size_t>(cpu)]); }
  // Adds `bytes` moved on `cpu`'s core; returns the count after it.
  int64_t add(int cpu, int64_t bytes) { return moved[core(cpu)] += bytes; }
  int64_t count(int cpu) const { return moved[core(cpu)]; }
  // A buffer freed onto `cpu`'s core's stack (its count now). Frees deeper than one per cache
  // line of the L2 are dropped: a send would find them cold anyway.
  void free_on(int cpu) {
    auto& st = freed[core(cpu)];
    st.push_back(count(cpu));
    if (static_cast<int64_t>(st.size()) > l2_bytes / kLineBytes) st.drop_front();
  }
  // A send on `cpu` takes the newest free of its core: whether that buffer is cold (none, or
  // more than the L2 moved through the core since its free).
  bool take_cold(int cpu) {
    auto& st = freed[core(cpu)];
    ++sends_checked;
    const bool cold = st.empty() || count(cpu) - st.pop_back() > l2_bytes;
    sends_cold += cold;
    return cold;
  }
  static constexpr int64_t kLineBytes = 64;
};

enum class ChannelKind : uint8_t { Stream, Pipe, Unix };

struct Channel {
  ChannelKind kind = ChannelKind::Stream;
  // Stream:
  int64_t cap_bytes = 0;   // 0 = unbounded
  int64_t cap_msgs = 0;    // 0 = unbounded
  int64_t used_bytes = 0;  // reserved by writers (incl. data not yet readable)
  int64_t used_msgs = 0;
  // Pipe: slots of page_bytes; the fill of each occupied page (front: the one read next) and how
  // much of the front page has been read.
  int64_t page_bytes = 0, slots = 0;
  sim::Fifo<int64_t, 16> pages;
  int64_t front_read = 0;
  // Unix: the send buffer's charge (sk_wmem_alloc), its limit and one message's skb truesize.
  int64_t wmem = 0, sndbuf = 0, truesize = 0;

  sim::Fifo<int64_t> ready;  // readable messages (sizes)
  sim::Fifo<int> ready_cpu;  // the CPU each readable message was written on
  sim::Fifo<int64_t> ready_mark;  // its core's CacheFootprint count at its send (only when on)
  int last_cpu = -1;         // the CPU of the last write or read on the channel (-1: none yet)
  std::vector<kernel::Task*> readers;  // blocked in read()
  std::vector<kernel::Task*> writers;  // blocked in write() on a full buffer, in arrival order

  // A pipe of `capacity` bytes in pages of `page` bytes (at least one slot).
  void make_pipe(int64_t capacity, int64_t page) {
    kind = ChannelKind::Pipe;
    page_bytes = page;
    slots = capacity / page > 0 ? capacity / page : 1;
  }
  // An AF_UNIX stream socket pair's sending side: `sndbuf` bytes, `skb_truesize` per message.
  void make_unix(int64_t sndbuf_bytes, int64_t skb_truesize) {
    kind = ChannelKind::Unix;
    sndbuf = sndbuf_bytes;
    truesize = skb_truesize;
  }

  // The bytes of cache one message of `size` occupies: its skb (truesize) for AF_UNIX, else
  // its bytes (pipe pages are filled by consecutive writes).
  int64_t footprint(int64_t size) const { return kind == ChannelKind::Unix ? truesize : size; }

  bool pipe_full() const { return static_cast<int64_t>(pages.size()) >= slots; }
  // Pages a write of `size` bytes needs beyond the room it can merge into.
  int64_t pipe_new_pages(int64_t size) const {
    int64_t room = 0;
    if (!pages.empty() && pages.back() + size <= page_bytes) room = size;  // merges whole
    int64_t rest = size - room;
    return (rest + page_bytes - 1) / page_bytes;
  }

  // Pipe: where a read of `size` bytes from the front ends: the slots it reads to their end
  // (and so frees), and how far into the next page it reads.
  struct PipeReadEnd {
    int64_t freed = 0, front_read = 0;
  };
  PipeReadEnd pipe_read_end(int64_t size) const {
    PipeReadEnd e{0, front_read};
    for (size_t i = 0; i < pages.size() && size > 0; ++i) {
      const int64_t left = pages.at(i) - e.front_read;
      if (size < left) {
        e.front_read += size;
        break;
      }
      size -= left;
      e.front_read = 0;
      ++e.freed;
    }
    return e;
  }
  int64_t pipe_freed_pages(int64_t size) const { return pipe_read_end(size).freed; }

  bool can_write(int64_t size) const {
    switch (kind) {
      case ChannelKind::Pipe: return static_cast<int64_t>(pages.size()) + pipe_new_pages(size) <= slots;
      case ChannelKind::Unix: return wmem < sndbuf;
      case ChannelKind::Stream: break;
    }
    if (cap_bytes > 0 && used_bytes + size > cap_bytes && used_bytes > 0) return false;
    if (cap_msgs > 0 && used_msgs + 1 > cap_msgs) return false;
    return true;
  }
  void reserve(int64_t size) {
    switch (kind) {
      case ChannelKind::Pipe: {
        int64_t n = pipe_new_pages(size);
        if (n == 0) {
          pages.back() += size;
          return;
        }
        for (int64_t rest = size; rest > 0; rest -= page_bytes) pages.push_back(rest < page_bytes ? rest : page_bytes);
        return;
      }
      case ChannelKind::Unix: wmem += truesize; return;
      case ChannelKind::Stream: break;
    }
    used_bytes += size;
    used_msgs += 1;
  }
  void publish(int64_t size, int cpu) {
    ready.push_back(size);
    ready_cpu.push_back(cpu);
  }
  bool can_read() const { return !ready.empty(); }
  // The next message's size; `from` gets the CPU it was written on.
  int64_t take(int& from) {
    from = ready_cpu.pop_front();
    return ready.pop_front();
  }
  // The read of `size` bytes has copied them out: frees their buffer space. Returns whether
  // blocked writers may be woken now (the kind's rule; `was_full`: the pipe was full when the
  // read began) and whether all of them (else the first one only).
  struct Wake {
    bool any = false, all = false;
  };
  Wake release(int64_t size, bool was_full) {
    switch (kind) {
      case ChannelKind::Pipe:
        // The kernel's read holds pipe->mutex from its start to the wakeup, so no writer can
        // fill the pipe and sleep in between; here writers run during the read's copy, so a
        // pipe that filled up meanwhile counts as full at the read, or that writer would sleep
        // with no one to wake it.
        was_full = was_full || pipe_full();
        {
          const PipeReadEnd e = pipe_read_end(size);
          for (int64_t i = 0; i < e.freed; ++i) pages.drop_front();
          front_read = e.front_read;
        }
        return {was_full, false};
      case ChannelKind::Unix:
        wmem -= truesize;
        return {wmem * 4 <= sndbuf, true};
      case ChannelKind::Stream: break;
    }
    used_bytes -= size;
    used_msgs -= 1;
    return {true, true};
  }
};

// Per-channel-kind costs, from the machine profile. The remote parts are paid by a message that
// crosses CPUs (docs/workloads.md, "Messages that cross CPUs"): a write when the channel was
// last used (written or read) on another CPU, a read of a message written on another CPU.
struct ChannelCosts {
  int64_t send_ns = 0;
  int64_t recv_ns = 0;
  int64_t copy_ns_per_kb = 0;
  int64_t send_remote_ns = 0;
  int64_t recv_remote_ns = 0;
  int64_t recv_cold_ns = 0;         // a read after more than the L2 moved since the send
  CacheFootprint* cache = nullptr;  // the workload's per-core counts (nullptr or off: no rule)
  int64_t send_cold_ns = 0;         // a send into a cold buffer (CacheFootprint::take_cold())
  // Pipes (fs/pipe.c): a write that cannot merge into the last page takes a new slot (the anon
  // page path: tmp_page or a fresh page, the buffer set up), per new slot; a read that reads a
  // page to its end releases it (pipe_buf_release()), per released slot.
  int64_t send_newbuf_ns = 0;
  int64_t recv_release_ns = 0;
  // Counts bytes in `f`, set up for `m`: the rule is on when the machine has an L2 size and
  // either cold cost is set.
  void use_cache(CacheFootprint& f, const machine::Machine& m) {
    f.setup(m, recv_cold_ns + send_cold_ns);
    cache = &f;
  }
  int64_t send(int64_t bytes) const { return send_ns + copy_ns_per_kb * bytes / 1024; }
  int64_t recv(int64_t bytes) const { return recv_ns + copy_ns_per_kb * bytes / 1024; }
  // A pipe's and an AF_UNIX stream socket's costs, the remote parts included.
  static ChannelCosts pipe(const machine::Costs& c) {
    return {c.pipe_write_ns, c.pipe_read_ns, c.pipe_copy_ns_per_kb, c.pipe_write_remote_ns, c.pipe_read_remote_ns,
            c.pipe_read_cold_ns, nullptr, c.pipe_write_cold_ns, c.pipe_write_newbuf_ns, c.pipe_read_release_ns};
  }
  static ChannelCosts unix_socket(const machine::Costs& c) {
    return {c.unix_send_ns, c.unix_recv_ns, c.unix_copy_ns_per_kb, c.unix_send_remote_ns, c.unix_recv_remote_ns,
            c.unix_recv_cold_ns, nullptr, c.unix_send_cold_ns};
  }
};

}  // namespace schedlab::workload
