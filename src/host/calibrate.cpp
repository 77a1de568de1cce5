#include "host/calibrate.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "host/probe.hpp"
#include "machine/param_api.hpp"
#include "host/procfs.hpp"

namespace schedlab::host {
using machine::Distance;

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
double now_s() { return static_cast<double>(now_ns()) / 1e9; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

long futex(std::atomic<int>* addr, int op, int val) {
  return syscall(SYS_futex, reinterpret_cast<int*>(addr), op, val, nullptr, nullptr, 0);
}
void futex_wait(std::atomic<int>* a, int val) { futex(a, FUTEX_WAIT_PRIVATE, val); }
long futex_wake(std::atomic<int>* a) { return futex(a, FUTEX_WAKE_PRIVATE, 1); }

bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return false;
  sched_yield();  // get onto that CPU now
  return sched_getcpu() == cpu;
}

using Values = std::optional<std::vector<double>>;

// Runs fn on a thread pinned to cpu; returns false (fn not run) if pinning failed.
bool on_cpu(int cpu, const std::function<void()>& fn) {
  bool ok = false;
  std::thread t([&] {
    ok = pin_self(cpu);
    if (ok) fn();
  });
  t.join();
  return ok;
}

// A partner thread pinned to `cpu` running `loop(stop)` until stop is set; started before the
// measuring thread and joined after.
class Partner {
 public:
  Partner(int cpu, std::function<void(std::atomic<bool>&)> loop) : loop_(std::move(loop)) {
    t_ = std::thread([this, cpu] {
      bool ok = pin_self(cpu);
      state_.store(ok ? 1 : -1);
      if (ok) loop_(stop_);
    });
    while (state_.load() == 0) std::this_thread::yield();
  }
  bool ok() const { return state_.load() == 1; }
  // Sets stop and calls `kick` (to unblock the partner) until it has exited.
  void stop(const std::function<void()>& kick) {
    stop_.store(true);
    kick();
    t_.join();
  }
  ~Partner() {
    if (t_.joinable()) t_.join();
  }

 private:
  std::function<void(std::atomic<bool>&)> loop_;
  std::atomic<bool> stop_{false};
  std::atomic<int> state_{0};
  std::thread t_;
};

// ---------------------------------------------------------------- batches

// Operation loops are sized once, on their first batch, to take `target_ns`: ops(n) runs n
// operations. A batch is 5 runs of n/5 operations; its value is the median run, per operation,
// divided by `per_op_div`.
struct OpLoop {
  int64_t target_ns;
  int64_t n = 0;
  double batch(const std::function<void(int64_t)>& ops, double per_op_div = 1.0) {
    if (n == 0) {
      int64_t k = 64;
      for (;;) {  // warm-up doubling until a run takes >= 1/8 of a batch
        int64_t t0 = now_ns();
        ops(k);
        int64_t dt = now_ns() - t0;
        if (dt >= target_ns / 8 || k >= (1 << 24)) {
          double per = static_cast<double>(std::max<int64_t>(dt, 1)) / static_cast<double>(k);
          n = std::clamp<int64_t>(static_cast<int64_t>(static_cast<double>(target_ns) / per), 16, 1 << 24);
          break;
        }
        k *= 2;
      }
    } else {
      ops(std::max<int64_t>(n / 40, 4));  // warm caches and the partner after the other benchmarks
    }
    const int64_t sub = std::max<int64_t>(n / 5, 4);
    std::vector<double> runs;
    for (int k = 0; k < 5; ++k) {
      int64_t t0 = now_ns();
      ops(sub);
      int64_t dt = now_ns() - t0;
      runs.push_back(static_cast<double>(dt) / static_cast<double>(sub) / per_op_div);
    }
    return median_of(runs);
  }
};

// write() then read() of small messages with room and nobody waiting (no blocking, no wakeup):
// the fixed parts of a pipe's and an AF_UNIX stream socket's send and receive. One chunk is
// `count` writes then `count` reads; a batch value is the median chunk's per-op write and read.
Values rw_batch(int wfd, int rfd, size_t size, int64_t count, int chunks) {
  std::vector<char> buf(size, 'x');
  auto chunk = [&](double* w, double* r) {
    int64_t t0 = now_ns();
    for (int64_t i = 0; i < count; ++i)
      if (write(wfd, buf.data(), size) != static_cast<ssize_t>(size)) break;
    int64_t t1 = now_ns();
    for (int64_t i = 0; i < count; ++i)
      if (read(rfd, buf.data(), size) != static_cast<ssize_t>(size)) break;
    int64_t t2 = now_ns();
    *w = static_cast<double>(t1 - t0) / static_cast<double>(count);
    *r = static_cast<double>(t2 - t1) / static_cast<double>(count);
  };
  double w, r;
  chunk(&w, &r);  // warm-up
  std::vector<double> ws, rs;
  for (int k = 0; k < chunks; ++k) {
    chunk(&w, &r);
    ws.push_back(w);
    rs.push_back(r);
  }
  return std::vector<double>{median_of(ws), median_of(rs)};
}

}  // namespace

// The L2-cold read (docs/host.md, "Cold channel reads"): `chans` socketpairs (or pipes) on one
// CPU are filled round-robin with `per_chan` messages of 100 bytes each (each channel stays
// under its buffer: sk_sndbuf, or the 64 KiB pipe), then drained in the same order, so between
// a message's send and its read every other message of the fill was sent or read: a footprint
// of chans x per_chan messages, several times the L2. One chunk = one fill and one drain; the
// result is the median chunk's per-send and per-recv time.
std::optional<std::pair<double, double>> cold_fill_drain(bool unix_socket, int chans, int per_chan, int chunks) {
  constexpr size_t kMsg = 100;  // hackbench's message
  std::vector<std::array<int, 2>> fds;
  auto close_all = [&] {
    for (auto& f : fds) close(f[0]), close(f[1]);
  };
  for (int i = 0; i < chans; ++i) {
    int p[2];
    int rc = unix_socket ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p)
                         : pipe2(p, O_NONBLOCK | O_CLOEXEC);
    if (rc != 0) {
      close_all();
      return std::nullopt;
    }
    // write end, read end
    fds.push_back(unix_socket ? std::array<int, 2>{p[0], p[1]} : std::array<int, 2>{p[1], p[0]});
  }
  std::vector<char> buf(kMsg, 'x');
  bool short_io = false;
  auto chunk = [&](double* w, double* r) {
    const int64_t t0 = now_ns();
    for (int i = 0; i < per_chan; ++i)
      for (auto& f : fds) short_io |= write(f[0], buf.data(), kMsg) != static_cast<ssize_t>(kMsg);
    const int64_t t1 = now_ns();
    for (int i = 0; i < per_chan; ++i)
      for (auto& f : fds) short_io |= read(f[1], buf.data(), kMsg) != static_cast<ssize_t>(kMsg);
    const int64_t t2 = now_ns();
    const double n = static_cast<double>(per_chan) * static_cast<double>(fds.size());
    *w = static_cast<double>(t1 - t0) / n;
    *r = static_cast<double>(t2 - t1) / n;
  };
  double w, r;
  chunk(&w, &r);  // warm-up: the skb slabs and pipe pages allocated once
  std::vector<double> ws, rs;
  for (int k = 0; k < chunks && !short_io; ++k) {
    chunk(&w, &r);
    ws.push_back(w);
    rs.push_back(r);
  }
  close_all();
  if (short_io || ws.empty()) return std::nullopt;  // a channel filled up or a call failed
  return std::make_pair(median_of(ws), median_of(rs));
}

namespace {
constexpr int64_t kColdFootprintL2s = 4, kColdSkbBytes = 896, kDefaultL2 = 2 << 20;
int64_t cold_l2(int64_t l2_bytes) { return l2_bytes > 0 ? l2_bytes : kDefaultL2; }
int64_t cold_msg_footprint(bool unix_socket) { return unix_socket ? kColdSkbBytes : 100; }
}  // namespace

// How many channels of how many messages cold_fill_drain() uses for an L2 of `l2_bytes` (0:
// unknown, then 2 MiB): a footprint of kColdFootprintL2s L2s, counting each AF_UNIX message
// as its skb (kColdSkbBytes, the 100-byte skb's truesize on x86-64 v6.x) and each pipe message
// as its 100 bytes; at most 200 messages per socket (200 x 896 B < the 212992 B default
// sk_sndbuf) and 600 per pipe (< the 640 a 16-page pipe merges).
std::pair<int, int> cold_layout(bool unix_socket, int64_t l2_bytes) {
  const int64_t l2 = cold_l2(l2_bytes);
  const int per = unix_socket ? 200 : 600;
  const int64_t msg = cold_msg_footprint(unix_socket);
  const int64_t chans = (kColdFootprintL2s * l2 + per * msg - 1) / (per * msg);
  return {per, static_cast<int>(std::clamp<int64_t>(chans, 2, 400))};
}

double cold_fill_warm_share(bool unix_socket, int64_t l2_bytes) {
  const auto [per, chans] = cold_layout(unix_socket, l2_bytes);
  const double warm = static_cast<double>(cold_l2(l2_bytes) / cold_msg_footprint(unix_socket) + 1);
  return std::min(1.0, warm / (static_cast<double>(per) * chans));
}

namespace {

// Futex ping-pong between a (measuring) and b: one op = one round trip = two wakeups and two
// blocking waits.
Values futex_pingpong(OpLoop& loop, int a, int b) {
  alignas(64) std::atomic<int> turn{0};  // 0: a's turn, 1: b's turn
  Partner partner(b, [&](std::atomic<bool>& stop) {
    while (!stop.load()) {
      while (turn.load() == 0 && !stop.load()) futex_wait(&turn, 0);
      if (stop.load()) break;
      turn.store(0);
      futex_wake(&turn);
    }
  });
  if (!partner.ok()) return std::nullopt;
  double v = 0;
  bool ok = on_cpu(a, [&] {
    v = loop.batch([&](int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        turn.store(1);
        futex_wake(&turn);
        while (turn.load() == 1) futex_wait(&turn, 1);
      }
    });
  });
  partner.stop([&] {
    turn.store(1);
    futex_wake(&turn);
  });
  if (!ok) return std::nullopt;
  return std::vector<double>{v};
}

// Pipe ping-pong: a writes 1 byte into p1, b reads it and answers through p2. b is a thread of
// this process, or (process = true) a forked child, so each switch also changes the mm.
Values pipe_pingpong(OpLoop& loop, int a, int b, bool process) {
  int p1[2], p2[2];
  if (pipe2(p1, O_CLOEXEC) != 0) return std::nullopt;
  if (pipe2(p2, O_CLOEXEC) != 0) {
    close(p1[0]);
    close(p1[1]);
    return std::nullopt;
  }
  auto echo = [&] {
    char x;
    while (read(p1[0], &x, 1) == 1 && x != 'q')
      if (write(p2[1], &x, 1) != 1) break;
  };
  auto quit = [&] {
    char q = 'q';
    if (write(p1[1], &q, 1) != 1) close(p1[1]);
  };
  double v = 0;
  bool ok = false;
  auto measure = [&] {
    v = loop.batch([&](int64_t n) {
      char x = 'x';
      for (int64_t i = 0; i < n; ++i)
        if (write(p1[1], &x, 1) != 1 || read(p2[0], &x, 1) != 1) break;
    });
  };
  if (process) {
    pid_t pid = fork();
    if (pid == 0) {
      if (pin_self(b)) echo();
      _exit(0);
    }
    if (pid > 0) {
      ok = on_cpu(a, measure);
      quit();
      int st;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    }
  } else {
    Partner partner(b, [&](std::atomic<bool>&) { echo(); });
    ok = partner.ok() && on_cpu(a, measure);
    partner.stop(quit);
  }
  for (int fd : {p1[0], p1[1], p2[0], p2[1]}) close(fd);
  if (!ok) return std::nullopt;
  return std::vector<double>{v};
}

// A message ping-pong through a pipe or an AF_UNIX stream socket with no blocking and no wake-up
// (the method of scripts/variance/crosscpu_msg.cpp): a writes one message of `size` bytes, b
// reads it, then a writes the next. With a == b one thread does both in turn; with a != b, b's
// thread spins until the message is there and a's until it has been read, so every write finds
// the channel last used on b and every read takes a message written on a. Each write and each
// read is timed on its own, less the median cost of an empty clock pair on its CPU. Batch values:
// per-message write and read, each the median of `chunks` chunks of `count` messages.
Values msg_pingpong(int a, int b, bool unix_socket, size_t size, int64_t count, int chunks) {
  int fd[2];
  if (unix_socket ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fd) != 0
                  : pipe2(fd, O_NONBLOCK | O_CLOEXEC) != 0)
    return std::nullopt;
  const int wfd = unix_socket ? fd[0] : fd[1], rfd = unix_socket ? fd[1] : fd[0];
  const int64_t total = count * (chunks + 1);  // chunk 0 warms up
  auto clock_pair = [] {
    std::vector<double> v;
    for (int k = 0; k < 201; ++k) {
      int64_t t0 = now_ns();
      int64_t t1 = now_ns();
      v.push_back(static_cast<double>(t1 - t0));
    }
    return median_of(v);
  };
  // Per-chunk mean of the timed operations, less the clock pair.
  auto chunk_means = [count](const std::vector<int64_t>& sums, double clock) {
    std::vector<double> out;
    for (size_t c = 1; c < sums.size(); ++c)
      out.push_back(std::max(0.0, static_cast<double>(sums[c]) / static_cast<double>(count) - clock));
    return out;
  };
  std::vector<int64_t> wsum(chunks + 1, 0), rsum(chunks + 1, 0);
  std::vector<char> wbuf(size, 'x'), rbuf(size);
  double wclock = 0, rclock = 0;
  bool ok = true;
  auto write_one = [&](int64_t i) {
    int64_t t0 = now_ns();
    ssize_t n = write(wfd, wbuf.data(), size);
    wsum[static_cast<size_t>(i / count)] += now_ns() - t0;
    return n == static_cast<ssize_t>(size);
  };
  auto read_one = [&](int64_t i) {
    int64_t t0 = now_ns();
    ssize_t n = read(rfd, rbuf.data(), size);
    rsum[static_cast<size_t>(i / count)] += now_ns() - t0;
    return n == static_cast<ssize_t>(size);
  };
  if (a == b) {
    ok = on_cpu(a, [&] {
      wclock = rclock = clock_pair();
      for (int64_t i = 0; i < total && ok; ++i) ok = write_one(i) && read_one(i);
    });
  } else {
    alignas(64) std::atomic<int64_t> written{0};
    alignas(64) std::atomic<int64_t> taken{0};
    std::atomic<bool> failed{false};
    Partner reader(b, [&](std::atomic<bool>& stop) {
      rclock = clock_pair();
      for (int64_t i = 0; i < total; ++i) {
        while (written.load(std::memory_order_acquire) <= i)
          if (stop.load() || failed.load()) return;
          else cpu_relax();
        if (!read_one(i)) failed.store(true);
        taken.store(i + 1, std::memory_order_release);
      }
    });
    ok = reader.ok() && on_cpu(a, [&] {
      wclock = clock_pair();
      for (int64_t i = 0; i < total && !failed.load(); ++i) {
        while (taken.load(std::memory_order_acquire) < i)
          if (failed.load()) return;
          else cpu_relax();
        if (!write_one(i)) failed.store(true);
        written.store(i + 1, std::memory_order_release);
      }
      while (taken.load(std::memory_order_acquire) < total && !failed.load()) cpu_relax();
    });
    reader.stop([] {});
    ok = ok && !failed.load();
  }
  close(fd[0]);
  close(fd[1]);
  if (!ok) return std::nullopt;
  return std::vector<double>{median_of(chunk_means(wsum, wclock)), median_of(chunk_means(rsum, rclock))};
}

// Cache-line ping-pong by spinning: each op is one round trip of one line between a and b; the
// batch value is half of it (one transfer). a != b always (spinning on one CPU would stall).
Values cacheline_pingpong(OpLoop& loop, int a, int b) {
  struct alignas(128) Line {
    std::atomic<int> v{0};
  };
  auto line = std::make_unique<Line>();
  std::atomic<int>& flag = line->v;
  Partner partner(b, [&](std::atomic<bool>&) {
    for (;;) {
      int v;
      while ((v = flag.load(std::memory_order_acquire)) == 0) cpu_relax();
      if (v == 2) break;
      flag.store(0, std::memory_order_release);
    }
  });
  if (!partner.ok()) return std::nullopt;
  double v = 0;
  bool ok = on_cpu(a, [&] {
    v = loop.batch(
        [&](int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            flag.store(1, std::memory_order_release);
            while (flag.load(std::memory_order_acquire) != 0) cpu_relax();
          }
        },
        2.0);
  });
  partner.stop([&] { flag.store(2, std::memory_order_release); });
  if (!ok) return std::nullopt;
  return std::vector<double>{v};
}

// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) from a while the only other thread of this
// process sits on b, spinning (b runs our mm: the kernel IPIs it and waits for the handler) or
// blocked (b is idle: no IPI). The difference is an IPI round trip to a running CPU. Each call is
// timed on its own (events); the batch value is their median.
struct EventState {
  std::vector<std::vector<double>> lat_events, wake_events;  // per batch (wake_events: wake-ups only)
  std::map<std::string, long long> idle_delta;               // wake-ups: wakee idle-state usage
};
Values membarrier_batch(int a, int b, bool spinning, int calls, EventState& st) {
  std::atomic<int> go{0};
  Partner partner(b, [&](std::atomic<bool>& stop) {
    if (spinning) {
      while (!stop.load(std::memory_order_relaxed)) cpu_relax();
    } else {
      while (!stop.load()) futex_wait(&go, 0);
    }
  });
  if (!partner.ok()) return std::nullopt;
  std::vector<double> ev;
  bool ok = on_cpu(a, [&] {
    if (!spinning) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let b block
    for (int i = 0; i <= calls; ++i) {  // call 0 warms up
      int64_t t0 = now_ns();
      long rc = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
      int64_t t1 = now_ns();
      if (rc != 0) return;
      if (i > 0) ev.push_back(static_cast<double>(t1 - t0));
    }
  });
  partner.stop([&] {
    go.store(1);
    futex_wake(&go);
  });
  if (!ok || ev.empty()) return std::nullopt;
  double m = median_of(ev);
  st.lat_events.push_back(std::move(ev));
  return std::vector<double>{m};
}

// Reads cpuidle usage counters of one CPU (empty if there are none).
std::vector<std::pair<std::string, long long>> idle_usage(int cpu) {
  std::vector<std::pair<std::string, long long>> out;
  for (int s = 0; s < 32; ++s) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle/state{}/", cpu, s);
    std::ifstream name(dir + "name"), usage(dir + "usage");
    if (!name || !usage) break;
    std::string n;
    long long u = 0;
    std::getline(name, n);
    usage >> u;
    out.emplace_back(n, u);
  }
  return out;
}

// Wake-up latency of a thread blocked in FUTEX_WAIT on an otherwise idle CPU b, woken by a on
// another CPU after `gap_ns` of spinning on a, long enough for b to enter idle. Per event: the
// latency (t0 just before FUTEX_WAKE on a, t1 just after FUTEX_WAIT returns on b) and the waker's
// FUTEX_WAKE duration (syscall incl. ttwu and IPI send). Events where the wakee had not gone to
// sleep (FUTEX_WAKE returned 0) are dropped. Batch values: the medians of both; the events go to
// lat_events / wake_events. Usage counters of b's idle states accumulate into idle_delta.
Values wake_latency(int a, int b, int per_batch, int64_t gap_ns, EventState& st) {
  alignas(64) std::atomic<int> word{0};
  alignas(64) std::atomic<int> ready{-1};  // iteration the wakee is about to wait for
  alignas(64) std::atomic<int64_t> t0{0};
  std::vector<int64_t> lat(per_batch + 1, -1);
  std::atomic<int> iter_done{-1};
  Partner partner(b, [&](std::atomic<bool>& stop) {
    int i = 0;
    while (!stop.load()) {
      ready.store(i);
      while (word.load() == 0 && !stop.load()) futex_wait(&word, 0);
      int64_t t1 = now_ns();
      if (stop.load()) break;
      lat[i % (per_batch + 1)] = t1 - t0.load();
      word.store(0);
      iter_done.store(i);
      ++i;
    }
  });
  if (!partner.ok()) return std::nullopt;
  auto before = idle_usage(b);
  std::vector<double> lats, wakes;
  bool ok = on_cpu(a, [&] {
    for (int i = 0; i <= per_batch; ++i) {  // event 0 warms up
      while (ready.load() != i) cpu_relax();
      int64_t until = now_ns() + gap_ns;  // let b block and its CPU go idle
      while (now_ns() < until) cpu_relax();
      int64_t s = now_ns();
      t0.store(s);
      word.store(1);
      long woken = futex_wake(&word);
      int64_t e = now_ns();
      while (iter_done.load() != i) cpu_relax();
      if (woken == 1 && i > 0) {  // b was asleep: a real wake-up
        lats.push_back(static_cast<double>(lat[i % (per_batch + 1)]));
        wakes.push_back(static_cast<double>(e - s));
      }
    }
  });
  auto after = idle_usage(b);
  partner.stop([&] {
    word.store(1);
    futex_wake(&word);
  });
  if (before.size() == after.size())
    for (size_t s = 0; s < after.size(); ++s) st.idle_delta[after[s].first] += after[s].second - before[s].second;
  if (!ok || lats.size() < 3) return std::nullopt;
  std::vector<double> out{median_of(lats), median_of(wakes)};
  st.lat_events.push_back(std::move(lats));
  st.wake_events.push_back(std::move(wakes));
  return out;
}

// fork() of a child that exits at once, all on one CPU: the parent's fork() call, and from fork()
// returning in the parent to waitpid() returning (the child runs, exits and is reaped).
Values fork_exit(int cpu, int per_batch) {
  bool failed = false;
  std::vector<double> f, w;
  bool ok = on_cpu(cpu, [&] {
    for (int k = 0; k <= per_batch; ++k) {  // the first fork warms up
      int64_t t0 = now_ns();
      pid_t pid = fork();
      if (pid == 0) _exit(0);
      int64_t t1 = now_ns();
      if (pid < 0) {
        failed = true;
        return;
      }
      int st;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      int64_t t2 = now_ns();
      if (k == 0) continue;
      f.push_back(static_cast<double>(t1 - t0));
      w.push_back(static_cast<double>(t2 - t1));
    }
  });
  if (!ok || failed || f.empty()) return std::nullopt;
  return std::vector<double>{median_of(f), median_of(w)};
}

// Measurement::idle_state when the wakee CPU's cpuidle counters did not move at all.
const char* const kWakeeNotIdle = "none (the CPU stayed busy)";

const char* class_key(Distance d) {
  switch (d) {
    case Distance::Smt: return "smt";
    case Distance::Llc: return "llc";
    case Distance::OtherLlc: return "other_llc";
    case Distance::OtherSocket: return "other_socket";
    default: return "self";
  }
}

// One output of a benchmark: the measurement it becomes.
struct Output {
  std::string key;
  std::string what;
  std::vector<int> cpus;
  std::string group = "";  // cache-line pairs of one class share a group: their estimates are combined
};

struct Spec {
  RoundBench bench;
  std::vector<Output> outputs;
  std::shared_ptr<EventState> events;  // tests that time single events
  int wakee_cpu = -1;
};

CpuSnapshot snapshot() { return cpu_snapshot(true); }

int usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  return std::max(1, CPU_COUNT(&allowed));
}

double loadavg1() {
  std::ifstream la("/proc/loadavg");
  double v = 0;
  la >> v;
  return v;
}

}  // namespace

const Measurement* CalibrationResult::find(const std::string& key) const {
  for (auto& m : measurements)
    if (m.key == key) return &m;
  return nullptr;
}

LoadReading sample_load(double seconds) {
  LoadReading r;
  r.nr_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  {
    std::ifstream in("/proc/stat");
    if (!in) throw HostError("cannot read /proc/stat for the load check");
  }
  CpuSnapshot a = snapshot();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  CpuSnapshot b = snapshot();
  r.other_busy_pct = other_busy_pct(a, b, r.nr_cpus, sysconf(_SC_CLK_TCK));
  r.loadavg1 = loadavg1();
  return r;
}

namespace {

// The steps of calibrate(): the CPUs it may use, the load check, the benchmarks (single-CPU,
// then per distance class), the interleaved rounds, the measurements from them, and the
// background activity.

// Model CPUs mapped to real ones, within this process's affinity mask.
struct CalibCpus {
  cpu_set_t allowed;
  const machine::Topology& topo;
  const std::vector<int>& model_to_real;
  int first = -1;  // first usable model CPU, else the first allowed real CPU
  int cpu0 = -1;   // the real CPU of the single-CPU tests

  int real(int model) const {
    if (model_to_real.empty()) return model;
    return model < static_cast<int>(model_to_real.size()) ? model_to_real[model] : -1;
  }
  bool usable(int model) const {
    int r = real(model);
    return r >= 0 && r < CPU_SETSIZE && CPU_ISSET(r, &allowed);
  }
};

CalibCpus calib_cpus(const CalibrateOptions& opt, CalibrationResult& res) {
  CalibCpus c{{}, opt.machine.topo, opt.model_to_real};
  CPU_ZERO(&c.allowed);
  if (sched_getaffinity(0, sizeof c.allowed, &c.allowed) != 0) throw HostError("sched_getaffinity failed");
  for (int m = 0; m < c.topo.nr_cpus(); ++m)
    if (c.usable(m)) {
      c.first = m;
      break;
    }
  if (c.first < 0) {
    // No probed topology (or none of it usable): fall back to the first allowed CPU.
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &c.allowed)) {
        c.first = cpu;
        break;
      }
    if (c.first < 0) throw HostError("no CPU in this process's affinity mask");
    res.warnings.push_back("the probed topology has no CPU this process may run on; distance classes not measured");
  }
  c.cpu0 = c.usable(c.first) ? c.real(c.first) : c.first;
  return c;
}

// The load check: other work on the machine inflates every timing (waiting for a CPU).
void check_load(const CalibrateOptions& opt, CalibrationResult& res) {
  if (opt.load_reading) {
    res.load_before = *opt.load_reading;
  } else {
    res.load_before = sample_load(opt.quick ? 0.3 : 1.0);
    res.load_before.nr_cpus = usable_cpus();
  }
  res.verdict = judge_load(res.load_before, opt.limits);
  const std::string load_line = describe_load(res.load_before, opt.quick ? 0.3 : 1.0);
  if (res.verdict == LoadVerdict::TooBusy && !opt.allow_busy)
    throw HostError(fmt::format("the machine is too busy to calibrate: {} (limit {:.0f}%); every timing would "
                                "include waiting for a CPU. Calibrate on an otherwise idle machine, or pass "
                                "--allow-busy to calibrate anyway",
                                load_line, opt.limits.refuse_pct));
  if (res.verdict != LoadVerdict::Quiet && res.load_before.other_busy_pct <= opt.limits.warn_pct)
    res.warnings.push_back(fmt::format("{}: the load average is above the CPU count but lags by a minute; the machine "
                                       "was quiet over the sample. Rounds in which others kept more than {:.0f}% busy "
                                       "are left out where possible",
                                       load_line, opt.round_busy_pct));
  else if (res.verdict != LoadVerdict::Quiet)
    res.warnings.push_back(fmt::format("CALIBRATED ON A BUSY MACHINE: {}; timings include waiting for a CPU, rounds "
                                       "in which others kept more than {:.0f}% busy are left out where possible",
                                       load_line, opt.round_busy_pct));
}

// The benchmarks, in the order each round runs them.
struct SpecList {
  int64_t batch_ns;
  std::vector<Spec> specs;

  std::shared_ptr<OpLoop> loop() const { return std::make_shared<OpLoop>(OpLoop{batch_ns}); }
  void add(std::vector<Output> outs, std::function<Values()> fn, std::shared_ptr<EventState> events = nullptr,
           int wakee = -1) {
    Spec s;
    s.bench.name = outs.front().key;
    s.bench.outputs = static_cast<int>(outs.size());
    s.bench.batch = std::move(fn);
    s.outputs = std::move(outs);
    s.events = std::move(events);
    s.wakee_cpu = wakee;
    specs.push_back(std::move(s));
  }
  // n operations of ops in a loop on cpu, timed per operation.
  std::function<Values()> ops_on(int cpu, std::function<void(int64_t)> ops) const {
    auto l = loop();
    return [l, cpu, ops]() -> Values {
      double v = 0;
      if (!on_cpu(cpu, [&] { v = l->batch(ops); })) return std::nullopt;
      return std::vector<double>{v};
    };
  }
};

// Syscalls and file operations on one CPU: no wake-up, no switch.
void add_syscall_specs(SpecList& sl, const CalibrateOptions& opt, int cpu0) {
  const std::vector<int> c0 = {cpu0};
  sl.add({{"syscall_getppid", "getppid() syscall round trip", c0}}, sl.ops_on(cpu0, [](int64_t n) {
           for (int64_t i = 0; i < n; ++i) syscall(SYS_getppid);
         }));
  sl.add({{"syscall_getpid", "syscall(SYS_getpid) round trip", c0}}, sl.ops_on(cpu0, [](int64_t n) {
           for (int64_t i = 0; i < n; ++i) syscall(SYS_getpid);
         }));
  auto word = std::make_shared<std::atomic<int>>(0);
  sl.add({{"futex_wake_nowaiter", "futex(FUTEX_WAKE) with no waiter (syscall + hash bucket, no ttwu)", c0}},
         sl.ops_on(cpu0, [word](int64_t n) {
           for (int64_t i = 0; i < n; ++i) futex_wake(word.get());
         }));
  sl.add({{"futex_wait_eagain", "futex(FUTEX_WAIT) whose value check fails at once (syscall + hash bucket, no sleep)",
           c0}},
         sl.ops_on(cpu0, [word](int64_t n) {
           for (int64_t i = 0; i < n; ++i) futex(word.get(), FUTEX_WAIT_PRIVATE, 1);
         }));
  const int chunks = opt.quick ? 3 : 7;
  sl.add({{"pipe_write_1b", "write() of 1 byte to a pipe with room, no reader waiting", c0},
          {"pipe_read_1b", "read() of 1 byte from a non-empty pipe, no writer waiting", c0}},
         [cpu0, chunks, quick = opt.quick]() -> Values {
           int p[2];
           if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) return std::nullopt;
           Values v;
           // 1-byte writes merge into one page, so a chunk never fills the pipe.
           on_cpu(cpu0, [&] { v = rw_batch(p[1], p[0], 1, quick ? 1024 : 4096, chunks); });
           close(p[0]);
           close(p[1]);
           return v;
         });
  // hackbench's message: 100 bytes over an AF_UNIX stream socketpair. Each send is one skb
  // charged with its truesize, so a chunk stays well inside the default 208 KiB send buffer.
  sl.add({{"unix_send_100b", "send of 100 bytes on an AF_UNIX stream socket with room, no reader waiting", c0},
          {"unix_recv_100b", "recv of 100 bytes from a non-empty AF_UNIX stream socket", c0}},
         [cpu0, chunks]() -> Values {
           int sv[2];
           if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return std::nullopt;
           Values v;
           on_cpu(cpu0, [&] { v = rw_batch(sv[0], sv[1], 100, 64, chunks); });
           close(sv[0]);
           close(sv[1]);
           return v;
         });
  // The same messages read after several L2s of other messages moved through the CPU
  // (cold_fill_drain()): unix_recv_cold_ns and pipe_read_cold_ns are these less the warm read.
  const int64_t l2 = opt.machine.topo.l2_bytes;
  for (bool unix_socket : {true, false}) {
    const auto [per, chans] = cold_layout(unix_socket, l2);
    const std::string what = unix_socket ? "AF_UNIX stream socketpairs" : "64 KiB pipes";
    const std::string fill = fmt::format("{} of 100 bytes while filling {} {} round-robin, {} each",
                                         unix_socket ? "send" : "write()", chans, what, per);
    const std::string drain =
        fmt::format("{} of 100 bytes draining them in the same order (L2-cold: {} L2s moved since its {})",
                    unix_socket ? "recv" : "read()", 4, unix_socket ? "send" : "write");
    sl.add({{unix_socket ? "unix_send_100b_fill" : "pipe_write_100b_fill", fill, c0},
            {unix_socket ? "unix_recv_100b_cold" : "pipe_read_100b_cold", drain, c0}},
           [cpu0, chunks, unix_socket, per = per, chans = chans]() -> Values {
             std::optional<std::pair<double, double>> v;
             on_cpu(cpu0, [&] { v = cold_fill_drain(unix_socket, chans, per, chunks); });
             if (!v) return std::nullopt;
             return std::vector<double>{v->first, v->second};
           });
  }
}

// The message ping-pong (msg_pingpong) through an AF_UNIX socket and a pipe, 100 bytes (hackbench's
// message), between a and b: what a message costs each side on one CPU ("same_cpu") and when it
// crosses to another CPU of the LLC ("llc"); calibrate maps the difference onto the remote costs.
void add_msg_specs(SpecList& sl, const CalibrateOptions& opt, const std::string& where, int a, int b) {
  const int64_t count = opt.quick ? 200 : 1000;
  const int chunks = opt.quick ? 3 : 7;
  const std::string on = a == b ? "both ends on one CPU" : "the reader on another CPU of the LLC, spinning";
  sl.add({{"msg_unix_send_" + where, "send() of a 100-byte AF_UNIX stream message in a ping-pong, " + on, {a, b}},
          {"msg_unix_recv_" + where, "recv() of that message", {a, b}}},
         [=] { return msg_pingpong(a, b, true, 100, count, chunks); });
  sl.add({{"msg_pipe_write_" + where, "write() of a 100-byte message to a pipe in a ping-pong, " + on, {a, b}},
          {"msg_pipe_read_" + where, "read() of that message", {a, b}}},
         [=] { return msg_pingpong(a, b, false, 100, count, chunks); });
}

// fork/exit and the switches of two threads or processes sharing one CPU.
void add_same_cpu_specs(SpecList& sl, const CalibrateOptions& opt, int cpu0) {
  const std::vector<int> c0 = {cpu0};
  sl.add({{"fork_call", "fork() in the parent, child exits at once (parent and child on one CPU)", c0},
          {"fork_exit_reap",
           "fork() returning to waitpid() returning: child runs, _exit()s, is reaped and the parent woken, all on one "
           "CPU",
           c0}},
         [cpu0, n = opt.quick ? 5 : 15] { return fork_exit(cpu0, n); });
  auto l = sl.loop();
  sl.add({{"futex_pingpong_same_cpu_half",
           "half a futex ping-pong round trip, both threads on one CPU: FUTEX_WAKE + FUTEX_WAIT + one context switch",
           {cpu0, cpu0}}},
         [l, cpu0]() -> Values {
           auto v = futex_pingpong(*l, cpu0, cpu0);
           if (v) (*v)[0] /= 2;  // per switch
           return v;
         });
  auto lt = sl.loop();
  sl.add({{"pipe_rtt_same_cpu",
           "pipe round trip (1 byte each way), two threads on one CPU (reference: `taskset -c N perf bench sched pipe "
           "-T` per op)",
           {cpu0, cpu0}}},
         [lt, cpu0] { return pipe_pingpong(*lt, cpu0, cpu0, false); });
  auto lp = sl.loop();
  sl.add({{"pipe_rtt_same_cpu_process",
           "pipe round trip (1 byte each way), two processes on one CPU: every switch changes the mm (reference: "
           "`taskset -c N perf bench sched pipe` per op)",
           {cpu0, cpu0}}},
         [lp, cpu0] { return pipe_pingpong(*lp, cpu0, cpu0, true); });
  add_msg_specs(sl, opt, "same_cpu", cpu0, cpu0);
}

// The futex wake-up latency of a thread blocked on CPU b, woken from CPU a, `gap` ns after it
// blocked.
void add_wake_spec(SpecList& sl, const std::string& cls, const std::string& suffix, int a, int b, int64_t gap,
                   int events) {
  auto st = std::make_shared<EventState>();
  sl.add({{"wake_latency_" + cls + suffix,
           fmt::format("futex wake-up latency of a thread blocked on an idle CPU at distance {}, {} us after it "
                       "blocked: FUTEX_WAKE on the waker to FUTEX_WAIT returning on the wakee",
                       cls, gap / 1000),
           {a, b}},
          {"wake_syscall_" + cls + suffix,
           "waker's FUTEX_WAKE duration with a sleeping waiter on an idle CPU (syscall + ttwu + IPI send or "
           "polling-flag store)",
           {a, b}}},
         [st, a, b, gap, events] { return wake_latency(a, b, events, gap, *st); }, st, b);
}

// The tests of one distance class, on its pairs of real CPUs.
void add_class_specs(SpecList& sl, const CalibrateOptions& opt, const std::string& cls,
                     std::vector<std::pair<int, int>>& list, int cpu0) {
  // Pairs to measure: all of them on small machines (default mode), else a spread sample.
  size_t want = opt.quick ? 1 : (opt.machine.topo.nr_cpus() <= 8 ? list.size() : std::min<size_t>(list.size(), 4));
  // Prefer pairs involving cpu0 first, so the wake/pipe tests use the same first pair.
  std::stable_sort(list.begin(), list.end(), [&](auto& x, auto& y) { return (x.first == cpu0) > (y.first == cpu0); });
  for (size_t i = 0; i < want; ++i) {
    auto [a, b] = list[i * list.size() / want];
    auto l = sl.loop();
    sl.add({{fmt::format("cacheline_{}#{}", cls, i), "", {a, b}, "cacheline_" + cls}},
           [l, a = a, b = b] { return cacheline_pingpong(*l, a, b); });
  }
  const int a = list.front().first, b = list.front().second;
  const int per_batch = opt.quick ? 40 : 150;
  add_wake_spec(sl, cls, "", a, b, opt.quick ? 30000 : 60000, per_batch);
  if (!opt.quick) {
    // The same at once, after a short and after a long idle gap: a polling idle state (POLL, a
    // haltpoll window) or the polling part of the idle loop shows as fast wake-ups after short
    // gaps only.
    add_wake_spec(sl, cls, "_gap0us", a, b, 0, per_batch);
    add_wake_spec(sl, cls, "_gap5us", a, b, 5000, per_batch);
    add_wake_spec(sl, cls, "_gap500us", a, b, 500000, 20);
  }
  if (cls == "llc") add_msg_specs(sl, opt, "llc", a, b);
  auto l = sl.loop();
  sl.add({{"pipe_rtt_" + cls,
           fmt::format("pipe round trip (1 byte each way), threads on two CPUs at distance {} (reference: perf "
                       "bench sched pipe -T per op)",
                       cls),
           {a, b}}},
         [l, a, b] { return pipe_pingpong(*l, a, b, false); });
  auto ls = std::make_shared<EventState>(), li = std::make_shared<EventState>();
  const int calls = opt.quick ? 50 : 200;
  sl.add({{"membarrier_ipi_" + cls,
           fmt::format("membarrier(PRIVATE_EXPEDITED) while our other thread spins on a CPU at distance {}: syscall + "
                       "IPI round trip to a running CPU",
                       cls),
           {a, b}}},
         [ls, a, b, calls] { return membarrier_batch(a, b, true, calls, *ls); }, ls);
  sl.add({{"membarrier_noipi_" + cls,
           "membarrier(PRIVATE_EXPEDITED) while our other thread is blocked (its CPU idle): the syscall, no IPI",
           {a, b}}},
         [li, a, b, calls] { return membarrier_batch(a, b, false, calls, *li); }, li);
}

// Pairs by distance class, from the model's topology mapped to real CPUs, and their tests.
void add_pair_specs(SpecList& sl, const CalibrateOptions& opt, const CalibCpus& cpus, CalibrationResult& res) {
  std::map<Distance, std::vector<std::pair<int, int>>> pairs;
  const auto& topo = cpus.topo;
  if (cpus.usable(cpus.first)) {
    for (int a = 0; a < topo.nr_cpus(); ++a)
      for (int b = a + 1; b < topo.nr_cpus(); ++b)
        if (cpus.usable(a) && cpus.usable(b)) pairs[topo.distance(a, b)].push_back({cpus.real(a), cpus.real(b)});
  }
  for (auto& [d, list] : pairs) add_class_specs(sl, opt, class_key(d), list, cpus.cpu0);
  if (pairs.empty() && cpus.usable(cpus.first))
    res.warnings.push_back("only one usable CPU: no cross-CPU measurements (cache line, wake-up latency)");
}

RoundPlan round_plan(const CalibrateOptions& opt) {
  RoundPlan plan;
  plan.min_rounds = opt.min_batches > 0 ? opt.min_batches : (opt.quick ? 3 : 8);
  plan.max_rounds = std::max(plan.min_rounds, opt.max_batches > 0 ? opt.max_batches : (opt.quick ? 6 : 30));
  plan.budget_s = opt.budget_s > 0 ? opt.budget_s : (opt.quick ? 3.0 : 20.0);
  plan.target_spread = opt.target_cov;
  plan.round_busy_pct = opt.round_busy_pct;
  return plan;
}

// The interleaved rounds, each followed by the other processes' busy share over it.
RoundsResult run_calibration_rounds(const CalibrateOptions& opt, const std::vector<Spec>& specs,
                                    const RoundPlan& plan, CalibrationResult& res) {
  std::vector<RoundBench> benches;
  for (auto& s : specs) benches.push_back(s.bench);
  const int ncpu = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const long hz = sysconf(_SC_CLK_TCK);
  CpuSnapshot last;
  int round = 0;
  auto round_load = [&]() -> double {
    CpuSnapshot now = snapshot();
    double busy = last.wall_s > 0 ? other_busy_pct(last, now, ncpu, hz) : 0;
    if (last.wall_s > 0 && opt.on_round) opt.on_round(round++, busy);
    last = now;
    return busy;
  };
  RoundsResult rr = run_rounds(benches, plan, now_s, round_load);
  res.round_busy_pct = rr.round_busy_pct;
  res.rounds = rr.rounds;
  res.budget_exhausted = rr.budget_exhausted;
  return rr;
}

// A latency test's events (of the rounds used) and the idle state its wakee used most.
void add_events(const Spec& s, size_t o, const RoundsResult& rr, size_t b, Measurement& m, CalibrationResult& res) {
  const auto& ev = o == 0 ? s.events->lat_events : s.events->wake_events;
  for (size_t k = 0; k < ev.size() && k < rr.loaded[b].size(); ++k)
    if (m.used_loaded || !rr.loaded[b][k]) m.events.insert(m.events.end(), ev[k].begin(), ev[k].end());
  m.dist = distribution(m.events);
  if (o != 0 || s.events->idle_delta.empty()) return;
  long long best = 0;
  for (auto& [name, n] : s.events->idle_delta)
    if (n > best) best = n, m.idle_state = name;
  if (best == 0 && s.wakee_cpu >= 0) {
    m.idle_state = kWakeeNotIdle;
    res.warnings.push_back(fmt::format("{}: cpu{} never entered an idle state (other work ran there): these "
                                       "are not wake-ups from idle, and no IPI cost is derived from them",
                                       m.key, s.wakee_cpu));
  }
}

// Output o of bench b: its estimate over the rounds.
Measurement measurement_of(const Spec& s, size_t o, const RoundsResult& rr, size_t b, const RoundPlan& plan,
                           const CalibrateOptions& opt, CalibrationResult& res) {
  bool used_loaded = false;
  std::vector<double> v = rr.usable(b, o, plan, &used_loaded);
  Estimate e = estimate(v);
  Measurement m;
  m.key = s.outputs[o].key;
  m.what = s.outputs[o].what;
  m.cpus = s.outputs[o].cpus;
  m.value_ns = e.value;
  m.median_ns = e.median;
  m.cov = e.spread;
  m.min_ns = e.min;
  m.max_ns = e.max;
  m.batches = e.n;
  m.used_loaded = used_loaded;
  for (bool l : rr.loaded[b]) m.loaded_batches += l && !used_loaded;
  m.converged = e.n >= 2 && e.spread < opt.target_cov;
  m.batch_values = rr.values[b][o];
  m.batch_loaded = rr.loaded[b];
  if (s.events) add_events(s, o, rr, b, m, res);
  return m;
}

// Cache-line pairs of one class: the class value is the median over pairs.
Measurement combine_pairs(const std::string& key, const std::vector<Measurement>& list) {
  Measurement m;
  m.key = key;
  std::vector<double> vals;
  m.min_ns = 1e300;
  m.converged = true;
  for (auto& p : list) {
    vals.push_back(p.value_ns);
    m.cov = std::max(m.cov, p.cov);
    m.min_ns = std::min(m.min_ns, p.min_ns);
    m.max_ns = std::max(m.max_ns, p.max_ns);
    m.batches += p.batches;
    m.loaded_batches += p.loaded_batches;
    m.converged = m.converged && p.converged;
  }
  m.value_ns = median_of(vals);
  m.median_ns = m.value_ns;
  m.cpus = list.front().cpus;
  m.pairs = static_cast<int>(list.size());
  m.batch_values = list.front().batch_values;  // of the first pair
  m.batch_loaded = list.front().batch_loaded;
  m.what = fmt::format("one cache-line transfer ({} pair(s) at distance {}, half a spinning round trip)", list.size(),
                       key.substr(10));
  return m;
}

// The measurements from the rounds, and the between-round spread of the single-CPU loops.
void collect_measurements(const std::vector<Spec>& specs, const RoundsResult& rr, const RoundPlan& plan,
                          const CalibrateOptions& opt, CalibrationResult& res) {
  std::map<std::string, std::vector<Measurement>> groups;
  for (size_t b = 0; b < specs.size(); ++b) {
    const Spec& s = specs[b];
    if (rr.failed[b] && rr.values[b][0].empty()) {
      res.warnings.push_back(fmt::format("{}: could not run (cpus {}); not measured", s.bench.name,
                                         fmt::join(s.outputs.front().cpus, ",")));
      continue;
    }
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      Measurement m = measurement_of(s, o, rr, b, plan, opt, res);
      if (!s.outputs[o].group.empty())
        groups[s.outputs[o].group].push_back(m);
      else
        res.measurements.push_back(m);
    }
  }
  for (auto& [key, list] : groups) res.measurements.push_back(combine_pairs(key, list));
  std::vector<double> covs;
  for (const char* key : {"syscall_getppid", "syscall_getpid", "futex_wake_nowaiter", "futex_wait_eagain",
                          "pipe_write_1b", "pipe_read_1b", "unix_send_100b", "unix_recv_100b"})
    if (auto m = res.find(key)) covs.push_back(m->cov);
  res.round_spread = covs.empty() ? 0 : median_of(covs);
}

void round_warnings(const RoundsResult& rr, const RoundPlan& plan, const CalibrateOptions& opt,
                    CalibrationResult& res) {
  if (rr.budget_exhausted)
    res.warnings.push_back(fmt::format("time budget ({:.0f} s) spent after {} round(s)", plan.budget_s, rr.rounds));
  int loaded_rounds = 0;
  for (double b : rr.round_busy_pct) loaded_rounds += b > plan.round_busy_pct;
  if (loaded_rounds > 0)
    res.warnings.push_back(fmt::format("{} of {} round(s) had other processes above {:.0f}% busy; their batches are "
                                       "left out of the estimates where at least {} quiet rounds remained",
                                       loaded_rounds, rr.rounds, plan.round_busy_pct, plan.min_quiet_rounds));
  for (auto& m : res.measurements)
    if (!m.converged)
      res.warnings.push_back(fmt::format("{}: spread still {:.1f}% after {} batches (target {:.0f}%)", m.key,
                                         100 * m.cov, m.batches, 100 * opt.target_cov));
}

// Background activity: an idle phase (we sleep), then a gap scan on every usable CPU.
void record_background(const CalibrateOptions& opt, const CalibCpus& cpus, CalibrationResult& res) {
  BackgroundInput in;
  in.tick_period_ns = opt.machine.tunables.hz > 0 ? 1000000000 / opt.machine.tunables.hz : 4000000;
  const double idle_s = opt.background_idle_s > 0 ? opt.background_idle_s : (opt.quick ? 0.5 : 5.0);
  const double scan_s = opt.background_scan_s > 0 ? opt.background_scan_s : (opt.quick ? 0.2 : 2.0);
  CpuSnapshot l0 = snapshot();
  in.idle_before = read_proc_snapshot(getpid());
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
  in.idle_after = read_proc_snapshot(getpid());
  CpuSnapshot l1 = snapshot();
  std::vector<int> scan;
  for (int m = 0; m < cpus.topo.nr_cpus(); ++m)
    if (cpus.usable(m)) scan.push_back(cpus.real(m));
  if (scan.empty()) scan.push_back(cpus.cpu0);
  in.scans = scan_gaps(scan, scan_s);
  res.background = background_from(in);
  for (auto& w : res.background.warnings) res.warnings.push_back(w);
  res.have_background = true;
  const int ncpu = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  double idle_busy = other_busy_pct(l0, l1, ncpu, sysconf(_SC_CLK_TCK));
  res.background.notes.insert(res.background.notes.begin(),
                              fmt::format("idle phase {:.1f} s: other processes {:.1f}% busy, steal {:.2f}%", idle_s,
                                          idle_busy, steal_pct(l0, l1)));
  if (idle_busy > opt.round_busy_pct)
    res.warnings.push_back(fmt::format("background activity recorded while other processes kept {:.0f}% busy: the "
                                       "[[background]] tables describe that load, not an idle machine",
                                       idle_busy));
}

}  // namespace

CalibrationResult calibrate(const CalibrateOptions& opt) {
  CalibrationResult res;
  const int64_t start = now_ns();
  const CalibCpus cpus = calib_cpus(opt, res);
  check_load(opt, res);
  SpecList sl{opt.quick ? 1000000 : 5000000, {}};
  add_syscall_specs(sl, opt, cpus.cpu0);
  add_same_cpu_specs(sl, opt, cpus.cpu0);
  add_pair_specs(sl, opt, cpus, res);
  // membarrier needs registering once per process.
  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
  const RoundPlan plan = round_plan(opt);
  const RoundsResult rr = run_calibration_rounds(opt, sl.specs, plan, res);
  collect_measurements(sl.specs, rr, plan, opt, res);
  if (opt.progress)
    for (auto& m : res.measurements) opt.progress(m);
  round_warnings(rr, plan, opt, res);
  if (opt.record_background) record_background(opt, cpus, res);
  res.elapsed_s = static_cast<double>(now_ns() - start) / 1e9;
  return res;
}

// ---------------------------------------------------------------- mapping onto costs

namespace {

// The steps of apply_calibration(), each mapping some measurements onto costs of m, in the
// order the updates are listed.

// Sets costs and records each update.
struct CostSetter {
  machine::Machine& m;
  const CalibrationResult& r;
  std::vector<CostUpdate>& out;

  const Measurement* get(const std::string& key) const { return r.find(key); }
  // Sets costs.<key> to value (at least floor), within what the profile loader accepts, through
  // the machine's parameter API.
  void set(const std::string& key, double value, double floor, const std::string& formula, double cov) {
    CostUpdate u;
    u.key = "costs." + key;
    u.formula = formula;
    u.cov = cov;
    if (!std::isfinite(value) || value < floor) {
      u.floored = true;
      value = floor;
    }
    // Keep within what the profile loader accepts (params(): 0 .. 100 ms for costs).
    if (auto pi = machine::find_param(u.key); pi && (value < pi->min || value > pi->max)) {
      value = std::clamp(value, pi->min, pi->max);
      u.floored = true;
      u.formula += fmt::format("; clamped to [{}, {}]", pi->min, pi->max);
    }
    u.value = std::max<int64_t>(0, std::llround(value));
    machine::set_param(m, u.key, static_cast<double>(u.value));
    out.push_back(u);
  }
  // A cost measured directly by one test.
  void direct(const std::string& test, const std::string& key) {
    if (auto x = get(test)) set(key, x->value_ns, 0, test, x->cov);
  }
};

// The idle state the wakee of a wake-up test used: the measured one, else the shallowest
// enabled state.
const machine::IdleState* wakee_state(const machine::Machine& m, const Measurement& lat) {
  const machine::IdleState* st = lat.idle_state.empty() ? nullptr : m.idle_state(lat.idle_state);
  if (!st)
    for (auto& s : m.idle_states)
      if (!s.disabled) return &s;
  return st;
}

// The share of the cold fill's pipe writes that take a new slot (and of its reads that free one):
// each pipe gets `per` 100-byte messages, a slot per page_bytes of them.
double pipe_slot_share(const machine::Machine& m) {
  const int per = cold_layout(false, m.topo.l2_bytes).first;
  const int64_t page = std::max<int64_t>(1, m.tunables.pipe_page_bytes);
  if (per <= 0) return 0;
  const int64_t pages = (static_cast<int64_t>(per) * 100 + page - 1) / page;
  return static_cast<double>(pages) / per;
}

void apply_syscalls(CostSetter& cs) {
  cs.direct("futex_wake_nowaiter", "futex_wake_ns");
  cs.direct("futex_wait_eagain", "futex_wait_ns");
  cs.direct("pipe_write_1b", "pipe_write_ns");
  cs.direct("pipe_read_1b", "pipe_read_ns");
  cs.direct("unix_send_100b", "unix_send_ns");
  cs.direct("unix_recv_100b", "unix_recv_ns");
  // A pipe's slots (fs/pipe.c): pipe_write_1b's writes merge into one page and its reads free it
  // once per page; the message ping-pong's 100-byte write goes into an empty pipe, so it takes a
  // new slot, and its read frees that slot. The difference, less the copy, is the slot's cost.
  const auto& k = cs.m.costs;
  static const struct {
    const char *msg, *base, *cost, *base_cost;
    int64_t machine::Costs::*base_ns;
  } slots[] = {{"msg_pipe_write_same_cpu", "pipe_write_1b", "pipe_write_newbuf_ns", "pipe_write_ns",
                &machine::Costs::pipe_write_ns},
               {"msg_pipe_read_same_cpu", "pipe_read_1b", "pipe_read_release_ns", "pipe_read_ns",
                &machine::Costs::pipe_read_ns}};
  for (const auto& sl : slots) {
    auto x = cs.get(sl.msg);
    if (!x || !cs.get(sl.base)) continue;
    const double base = static_cast<double>(k.*sl.base_ns + k.pipe_copy_ns_per_kb * 100 / 1024);
    cs.set(sl.cost, x->value_ns - base, 0,
           fmt::format("{} ({:.0f}) - {} - 100 B x pipe_copy_ns_per_kb ({:.0f}): one slot per message", sl.msg,
                       x->value_ns, sl.base_cost, base),
           x->cov);
  }
  // The L2-cold reads: the cold drain's per-read time less the model's warm read of 100 bytes
  // (with its share of slot releases: a page per page_bytes of the drain).
  const double slot_share = pipe_slot_share(cs.m);
  if (auto x = cs.get("unix_recv_100b_cold"); x && cs.get("unix_recv_100b")) {
    const double warm = static_cast<double>(k.unix_recv_ns + k.unix_copy_ns_per_kb * 100 / 1024);
    cs.set("unix_recv_cold_ns", x->value_ns - warm, 0,
           fmt::format("unix_recv_100b_cold ({:.0f}) - unix_recv_ns - 100 B x unix_copy_ns_per_kb ({:.0f})", x->value_ns,
                       warm),
           x->cov);
  }
  if (auto x = cs.get("pipe_read_100b_cold"); x && cs.get("pipe_read_1b")) {
    const double warm = static_cast<double>(k.pipe_read_ns + k.pipe_copy_ns_per_kb * 100 / 1024) +
                        slot_share * static_cast<double>(k.pipe_read_release_ns);
    cs.set("pipe_read_cold_ns", x->value_ns - warm, 0,
           fmt::format("pipe_read_100b_cold ({:.0f}) - pipe_read_ns - 100 B x pipe_copy_ns_per_kb - {:.3f} x "
                       "pipe_read_release_ns ({:.0f})",
                       x->value_ns, slot_share, warm),
           x->cov);
  }
  // The cold sends: the fill's per-send time less the warm send, over the share of the fill's
  // sends that write a cold buffer in the model (cold_fill_warm_share()).
  for (bool unix_socket : {true, false}) {
    auto x = cs.get(unix_socket ? "unix_send_100b_fill" : "pipe_write_100b_fill");
    if (!x || !cs.get(unix_socket ? "unix_send_100b" : "pipe_write_1b")) continue;
    const double warm =
        unix_socket ? static_cast<double>(k.unix_send_ns + k.unix_copy_ns_per_kb * 100 / 1024)
                    : static_cast<double>(k.pipe_write_ns + k.pipe_copy_ns_per_kb * 100 / 1024) +
                          slot_share * static_cast<double>(k.pipe_write_newbuf_ns);
    const double cold_share = 1 - cold_fill_warm_share(unix_socket, cs.m.topo.l2_bytes);
    if (cold_share <= 0) continue;
    cs.set(unix_socket ? "unix_send_cold_ns" : "pipe_write_cold_ns", (x->value_ns - warm) / cold_share, 0,
           fmt::format("({} ({:.0f}) - {} - 100 B x {} ({:.0f})) / {:.3f} (the fill's sends that write a cold buffer)",
                       unix_socket ? "unix_send_100b_fill" : "pipe_write_100b_fill", x->value_ns,
                       unix_socket ? "unix_send_ns" : "pipe_write_ns",
                       unix_socket ? "unix_copy_ns_per_kb" : "pipe_copy_ns_per_kb", warm, cold_share),
           x->cov);
  }
}

void apply_context_switch(CostSetter& cs) {
  const auto& k = cs.m.costs;  // read only: costs are set through cs.set
  auto x = cs.get("futex_pingpong_same_cpu_half");
  // The syscalls alone took longer than the whole half round trip (noisy or loaded machine):
  // nothing is left to attribute to the switch, so context_switch_ns keeps its default.
  if (!x || x->value_ns - static_cast<double>(k.futex_wake_ns + k.futex_wait_ns) <= 0) return;
  // Half a same-CPU futex ping-pong = FUTEX_WAKE + FUTEX_WAIT syscalls (measured above) plus the
  // scheduler path ttwu + enqueue + dequeue + schedule + pick_next_task + context_switch. The
  // first five come from the base profile. If they already explain over 90% of what is left,
  // the base is too slow for this machine: split the remainder in the base's proportions.
  const double base_cs = static_cast<double>(k.context_switch_ns);
  const double others = static_cast<double>(k.ttwu_ns + k.enqueue_ns + k.dequeue_ns + k.schedule_ns +
                                             k.pick_next_task_ns);
  const double rest = x->value_ns - static_cast<double>(k.futex_wake_ns + k.futex_wait_ns);
  double v = rest - others;
  std::string formula = fmt::format(
      "futex_pingpong_same_cpu_half ({:.0f}) - futex_wake - futex_wait ({:.0f} left) - ttwu - enqueue - dequeue - "
      "schedule - pick_next_task ({:.0f})",
      x->value_ns, rest, others);
  if (v >= 0.1 * rest || others + base_cs <= 0) {
    cs.set("context_switch_ns", v, 0, formula, x->cov);
    return;
  }
  // Every cost of the path is then scaled by the same factor, so that the half round trip the
  // model rebuilds from them is the one measured (scaling the switch alone left the base's
  // others in place: the self-check's same-CPU ping-pongs came out about twice as slow).
  const double scale = std::max(0.0, rest) / (others + base_cs);
  struct Part {
    const char* key;
    int64_t base;
  };
  const Part parts[] = {{"context_switch_ns", k.context_switch_ns}, {"ttwu_ns", k.ttwu_ns},
                        {"enqueue_ns", k.enqueue_ns},               {"dequeue_ns", k.dequeue_ns},
                        {"schedule_ns", k.schedule_ns},             {"pick_next_task_ns", k.pick_next_task_ns}};
  for (const Part& part : parts) {
    const double base = static_cast<double>(part.base);
    cs.set(part.key, base * scale, 0,
           fmt::format("{}; under 10% of what is left, so SCALED with ttwu, enqueue, dequeue, schedule, "
                       "pick_next_task and context_switch: base {:.0f} x {:.3f} ({:.0f} left / their base sum {:.0f})",
                       formula, base, scale, std::max(0.0, rest), others + base_cs),
           x->cov);
    cs.out.back().floored = true;
  }
}

void apply_fork_exit(CostSetter& cs) {
  const auto& k = cs.m.costs;  // read only: costs are set through cs.set
  cs.direct("fork_call", "fork_ns");
  if (auto x = cs.get("fork_exit_reap")) {
    // The parent blocks in waitpid, the child runs and exits, the parent is woken: two passes
    // through the scheduler (schedule + pick_next_task + context_switch) plus a local wakeup.
    double sched = 2.0 * static_cast<double>(k.schedule_ns + k.pick_next_task_ns + k.context_switch_ns) +
                   static_cast<double>(k.ttwu_ns + k.enqueue_ns + k.dequeue_ns);
    cs.set("exit_ns", x->value_ns - sched, 0.1 * x->value_ns,
           fmt::format("fork_exit_reap ({:.0f}) - 2 x (schedule + pick_next_task + context_switch) - ttwu - enqueue - "
                       "dequeue ({:.0f}); floor 10%",
                       x->value_ns, sched),
           x->cov);
  }
}

void apply_remote_reads(CostSetter& cs) {
  for (const char* cls : {"smt", "llc", "other_llc", "other_socket"})
    cs.direct(std::string("cacheline_") + cls, std::string("remote_read_") + cls + "_ns");
}

// What the model charges on the wakee's idle CPU between the IPI's arrival (non-polling state) or
// the polling flag's store (polling state) and the woken task running, besides the IPI latency
// (or polling_wake_ns) itself, as kernel/idle.cpp and kernel/smp.cpp charge it: interrupt entry
// and exit (IPI only), the wake list's ttwu_do_activate() (sched_ttwu_pending: enqueue), the
// cpuidle exit, tick_nohz_idle_exit() with the tick's restart (after the idle gap the idle loop
// has stopped it), schedule_idle() (schedule + pick_next_task), the switch, the state's
// wake_cost. All of it is inside a measured wake-up latency, so all of it is subtracted.
struct TargetPath {
  double ns = 0;
  std::string formula;
};
TargetPath target_path(const machine::Costs& k, const machine::IdleState* st, bool ipi) {
  double v = static_cast<double>(k.enqueue_ns + k.cpuidle_exit_ns + k.tick_nohz_idle_exit_ns + k.nohz_restart_tick_ns +
                                 k.schedule_ns + k.pick_next_task_ns + k.context_switch_ns) +
             (st ? static_cast<double>(st->wake_cost_ns) : 0) +
             (ipi ? static_cast<double>(k.ipi_entry_ns + k.irq_exit_ns) : 0);
  return {v, fmt::format("{}enqueue - cpuidle_exit - tick_nohz_idle_exit - nohz_restart_tick - schedule - "
                         "pick_next_task - context_switch - wake_cost of {} ({:.0f})",
                         ipi ? "ipi_entry - irq_exit - " : "", st ? st->name : "?", v)};
}

// Wake-up latency -> IPI latency (non-polling idle) or polling_wake_ns (polling idle).
void apply_wake_latencies(CostSetter& cs) {
  const auto& k = cs.m.costs;  // read only: costs are set through cs.set
  bool polling_done = false;
  for (const char* cls : {"llc", "other_llc", "other_socket"}) {
    const Measurement* lat = cs.get(std::string("wake_latency_") + cls);
    std::string used = std::string("wake_latency_") + cls;
    if (!lat && std::string(cls) == "llc") {  // SMT-only machines: the sibling class stands in
      lat = cs.get("wake_latency_smt");
      used = "wake_latency_smt";
    }
    if (!lat || lat->idle_state == kWakeeNotIdle) continue;
    const Measurement* w = cs.get("wake_syscall_" + used.substr(13));
    double waker = w ? w->value_ns : 0;
    const machine::IdleState* st = wakee_state(cs.m, *lat);
    bool polling = (st && st->polling) || cs.m.tunables.idle_poll;
    if (polling && polling_done) continue;
    polling_done = polling_done || polling;
    TargetPath path = target_path(k, st, !polling);
    cs.set(polling ? std::string("polling_wake_ns") : std::string("ipi_latency_") + cls + "_ns",
           lat->value_ns - waker - path.ns, 0.1 * lat->value_ns,
           fmt::format("{} ({:.0f}) - waker FUTEX_WAKE ({:.0f}) - {} ({}); floor 10%", used, lat->value_ns, waker,
                       path.formula, polling ? "polling idle: no IPI" : "non-polling idle: IPI"),
           lat->cov);
  }
}

// Background activity and the tick as a running task loses it; the per-run factor
// (docs/variance.md S1): the spread of the single-CPU loops between rounds is what changes from
// one run to the next but not within one; and a run starts at a random phase of the tick (S4).
void apply_background_and_noise(CostSetter& cs) {
  auto& m = cs.m;
  const auto& r = cs.r;
  if (r.have_background) {
    m.background = r.background.activities;
    if (r.background.tick_gaps >= 10 && r.background.tick_ns > 0)
      cs.set("tick_ns", r.background.tick_ns, 0,
             fmt::format("median of {} tick gaps of the gap scan (phase-locked at 1/HZ; lognormal sigma {:.2f}): "
                         "interrupt entry, the tick, the timer re-arm and exit as a spinning task loses them",
                         r.background.tick_gaps, r.background.tick_sigma),
             r.background.tick_sigma);
  }
  if (r.rounds >= 5 && r.round_spread > 0) {
    double sigma = std::round(r.round_spread * 1000) / 1000;  // for small spreads CoV = sigma
    m.noise.run_sigma = sigma;
    CostUpdate u;
    u.key = "noise.run_sigma";
    u.fvalue = sigma;
    u.formula = fmt::format("between-round spread of the single-CPU loops over {} rounds (median robust CoV)",
                            r.rounds);
    cs.out.push_back(u);
  }
  m.noise.tick_phase = true;
}

// The cross-CPU message costs (optional costs, machine.hpp): what a message crossing CPUs of the
// LLC costs each side beyond the same message on one CPU, from the same ping-pong both ways.
void apply_remote_messages(CostSetter& cs) {
  static const std::pair<const char*, const char*> sides[] = {{"unix_send", "unix_send_remote_ns"},
                                                               {"unix_recv", "unix_recv_remote_ns"},
                                                               {"pipe_write", "pipe_write_remote_ns"},
                                                               {"pipe_read", "pipe_read_remote_ns"}};
  for (const auto& [side, cost] : sides) {
    auto same = cs.get(fmt::format("msg_{}_same_cpu", side)), llc = cs.get(fmt::format("msg_{}_llc", side));
    if (!same || !llc) continue;
    cs.set(cost, llc->value_ns - same->value_ns, 0,
           fmt::format("msg_{}_llc ({:.0f}) - msg_{}_same_cpu ({:.0f})", side, llc->value_ns, side, same->value_ns),
           llc->cov);
  }
}

// switch_mm: two processes pay it on every switch, two threads never.
void apply_switch_mm(CostSetter& cs) {
  if (auto pr = cs.get("pipe_rtt_same_cpu_process"), th = cs.get("pipe_rtt_same_cpu"); pr && th) {
    // A process round trip measured no slower than the thread one says the mm switch costs
    // nothing measurable here (PCID keeps the TLB): 0, flagged, not the base profile's figure.
    const double v = (pr->value_ns - th->value_ns) / 2;
    cs.set("switch_mm_ns", v, 0,
           fmt::format("(pipe_rtt_same_cpu_process ({:.0f}) - pipe_rtt_same_cpu ({:.0f})) / 2: two switches per "
                       "round trip, each to another mm",
                       pr->value_ns, th->value_ns),
           pr->cov);
  }
}

// The wake-up test behind the waker's side of a wakeup IPI (the llc class, else smt).
struct WakeIpi {
  const Measurement *lat = nullptr, *wk = nullptr, *nowaiter = nullptr;
  const machine::IdleState* st = nullptr;
  std::string cls = "llc";
  bool halted = false;  // the wakee halted (not polling): the FUTEX_WAKE sent an IPI
};

WakeIpi wake_ipi(const CostSetter& cs) {
  WakeIpi w;
  w.lat = cs.get("wake_latency_llc");
  w.wk = cs.get("wake_syscall_llc");
  if (!w.lat) w.lat = cs.get("wake_latency_smt"), w.wk = cs.get("wake_syscall_smt"), w.cls = "smt";
  if (w.lat && w.lat->idle_state == kWakeeNotIdle) w.lat = nullptr;
  w.nowaiter = cs.get("futex_wake_nowaiter");
  w.st = w.lat ? wakee_state(cs.m, *w.lat) : nullptr;
  w.halted = w.lat && w.wk && w.nowaiter && !(w.st && w.st->polling) && !cs.m.tunables.idle_poll;
  return w;
}

void apply_ipi_send(CostSetter& cs, const WakeIpi& w) {
  if (!w.halted) return;
  double v = w.wk->value_ns - w.nowaiter->value_ns - static_cast<double>(cs.m.costs.ttwu_ns);
  if (v > 0)
    cs.set("ipi_send_ns", v, 0,
           fmt::format("wake_syscall_{} ({:.0f}) - futex_wake_nowaiter ({:.0f}) - ttwu: the rest of a FUTEX_WAKE that "
                       "wakes a thread on a halted CPU is the IPI send",
                       w.cls, w.wk->value_ns, w.nowaiter->value_ns),
           w.wk->cov);
}

// Sets guest.<key> (a Recorded value of [guest]) and records the update.
void set_guest(CostSetter& cs, const char* key, machine::Recorded& field, double value, const std::string& formula,
               double cov) {
  if (!std::isfinite(value) || value < 0) return;
  field = machine::Recorded{value, "schedlab host calibrate: " + formula};
  CostUpdate u;
  u.key = std::string("guest.") + key;
  u.value = std::llround(value);
  u.fvalue = value;
  u.formula = formula;
  u.cov = cov;
  cs.out.push_back(u);
}

std::vector<double> shifted(const std::vector<double>& a, const std::vector<double>* b, double minus) {
  std::vector<double> v;
  for (size_t i = 0; i < a.size(); ++i) v.push_back(a[i] - (b && i < b->size() ? (*b)[i] : 0) - minus);
  return v;
}

double round3(double x) { return std::round(x * 1000) / 1000; }

// One wake-up test pair (wake_latency_X, wake_syscall_X) split into the waker's exit
// (wake_syscall - futex_wake_nowaiter - ttwu) and the halted vCPU's wake-up (wake_latency -
// wake_syscall - the wakee-side path the model charges): over the events pairwise, or, `events`
// false, over the medians of the batch values (then only the p50s are set and n is 0).
struct HaltedWakeSplit {
  Distribution send, deliver;
};
HaltedWakeSplit split_halted_wake(const Measurement& lat, const Measurement& wk, const Measurement& nowaiter,
                                  int64_t ttwu_ns, double path_ns, bool events) {
  HaltedWakeSplit s;
  if (!events) {
    s.send.p50 = wk.median_ns - nowaiter.value_ns - static_cast<double>(ttwu_ns);
    s.deliver.p50 = lat.median_ns - wk.median_ns - path_ns;
    return s;
  }
  s.send = distribution(shifted(wk.events, nullptr, nowaiter.value_ns + static_cast<double>(ttwu_ns)));
  s.deliver = distribution(shifted(lat.events, &wk.events, path_ns));
  return s;
}

// On a guest: the distributions of the IPI send and of the halted vCPU's wake-up, per wake-up.
void apply_guest_halted_wake(CostSetter& cs, const WakeIpi& w) {
  if (!w.halted) return;
  const auto& k = cs.m.costs;
  auto& g = cs.m.guest;
  TargetPath path = target_path(k, w.st, true);
  if (w.lat->events.empty() && w.wk->events.empty()) {
    // Measurements without their events (a samples file that kept only the estimates, as the
    // self-check's fixture): the medians of the batch values; the shapes stay as they are.
    const auto m = split_halted_wake(*w.lat, *w.wk, *w.nowaiter, k.ttwu_ns, path.ns, false);
    set_guest(cs, "ipi_send_ns", g.ipi_send_ns, std::round(m.send.p50),
              fmt::format("median wake_syscall_{} - futex_wake_nowaiter - ttwu (no events recorded)", w.cls),
              w.wk->cov);
    set_guest(cs, "halted_wake_ns", g.halted_wake_ns, std::round(m.deliver.p50),
              fmt::format("median wake_latency_{} - median wake_syscall_{} - {} (no events recorded)", w.cls, w.cls,
                          path.formula),
              w.lat->cov);
    return;
  }
  if (w.lat->events.empty() || w.wk->events.size() != w.lat->events.size()) return;
  const auto [ds, dd] = split_halted_wake(*w.lat, *w.wk, *w.nowaiter, k.ttwu_ns, path.ns, true);
  set_guest(cs, "ipi_send_ns", g.ipi_send_ns, std::round(ds.p50),
            fmt::format("median over {} wake-ups of (wake_syscall_{} - futex_wake_nowaiter - ttwu) (p10 {:.0f}, p90 "
                        "{:.0f} ns)",
                        ds.n, w.cls, ds.p10, ds.p90),
            w.wk->cov);
  set_guest(cs, "ipi_send_sigma", g.ipi_send_sigma, round3(ds.sigma),
            "lognormal sigma = (ln p90 - ln p10) / 2.563 of the same", w.wk->cov);
  set_guest(cs, "halted_wake_ns", g.halted_wake_ns, std::round(dd.p50),
            fmt::format("median over {} wake-ups of (wake_latency_{} - wake_syscall_{}) - {} (p10 {:.0f}, p90 "
                        "{:.0f}, p99 {:.0f} ns)",
                        dd.n, w.cls, w.cls, path.formula, dd.p10, dd.p90, dd.p99),
            w.lat->cov);
  set_guest(cs, "halted_wake_sigma", g.halted_wake_sigma, round3(dd.sigma),
            "lognormal sigma = (ln p90 - ln p10) / 2.563 of the same", w.lat->cov);
}

// On a guest: the same two medians after the 5 and 500 us gaps (wake_latency_<class>_gapNus and
// wake_syscall_<class>_gapNus, split_halted_wake() as for the 60 us point), where the wakee halted
// there too; the model runs through them by the time a vCPU has been halted (kernel/guest.cpp
// median_after()).
void apply_guest_halted_wake_gaps(CostSetter& cs, const WakeIpi& w) {
  if (!w.halted) return;
  const auto& k = cs.m.costs;
  auto& g = cs.m.guest;
  const TargetPath path = target_path(k, w.st, true);
  struct Gap {
    const char* suffix;
    machine::Recorded *send, *wake;
    const char *send_key, *wake_key;
  };
  const Gap gaps[] = {
      {"_gap5us", &g.ipi_send_gap5us_ns, &g.halted_wake_gap5us_ns, "ipi_send_gap5us_ns", "halted_wake_gap5us_ns"},
      {"_gap500us", &g.ipi_send_gap500us_ns, &g.halted_wake_gap500us_ns, "ipi_send_gap500us_ns",
       "halted_wake_gap500us_ns"},
  };
  for (const Gap& gap : gaps) {
    const Measurement* lat = cs.get("wake_latency_" + w.cls + gap.suffix);
    const Measurement* wk = cs.get("wake_syscall_" + w.cls + gap.suffix);
    if (!lat || !wk || lat->idle_state == kWakeeNotIdle) continue;
    const machine::IdleState* st = wakee_state(cs.m, *lat);
    if ((st && st->polling) || st != w.st) continue;  // it polled, or halted in another state
    const std::string name = w.cls + gap.suffix;
    const bool events = !lat->events.empty() && wk->events.size() == lat->events.size();
    const auto [ds, dd] = split_halted_wake(*lat, *wk, *w.nowaiter, k.ttwu_ns, path.ns, events);
    if (!events) {
      set_guest(cs, gap.send_key, *gap.send, std::round(ds.p50),
                fmt::format("median wake_syscall_{} - futex_wake_nowaiter - ttwu (no events recorded)", name), wk->cov);
      set_guest(cs, gap.wake_key, *gap.wake, std::round(dd.p50),
                fmt::format("median wake_latency_{} - median wake_syscall_{} - {} (no events recorded)", name, name,
                            path.formula),
                lat->cov);
      continue;
    }
    set_guest(cs, gap.send_key, *gap.send, std::round(ds.p50),
              fmt::format("median over {} wake-ups of (wake_syscall_{} - futex_wake_nowaiter - ttwu)", ds.n, name),
              wk->cov);
    set_guest(cs, gap.wake_key, *gap.wake, std::round(dd.p50),
              fmt::format("median over {} wake-ups of (wake_latency_{} - wake_syscall_{}) - {}", dd.n, name, name,
                          path.formula),
              lat->cov);
  }
}

// On a guest: an IPI to a running vCPU, from membarrier with and without one.
void apply_guest_running_ipi(CostSetter& cs, const std::string& cls) {
  const Measurement *ipi = cs.get("membarrier_ipi_" + cls), *noipi = cs.get("membarrier_noipi_" + cls);
  if (!ipi || !noipi || ipi->events.empty()) return;
  auto rt = shifted(ipi->events, nullptr, noipi->median_ns);
  auto d = distribution(rt);
  set_guest(cs, "running_ipi_ns", cs.m.guest.running_ipi_ns, std::round(d.p50),
            fmt::format("median over {} calls of membarrier_ipi_{} - median membarrier_noipi_{} ({:.0f}) (p10 {:.0f}, "
                        "p90 {:.0f} ns)",
                        d.n, cls, cls, noipi->median_ns, d.p10, d.p90),
            ipi->cov);
  set_guest(cs, "running_ipi_sigma", cs.m.guest.running_ipi_sigma, round3(d.sigma),
            "lognormal sigma = (ln p90 - ln p10) / 2.563 of the same", ipi->cov);
}

}  // namespace

std::vector<CostUpdate> apply_calibration(machine::Machine& m, const CalibrationResult& r) {
  std::vector<CostUpdate> out;
  CostSetter cs{m, r, out};
  apply_syscalls(cs);
  apply_context_switch(cs);
  apply_fork_exit(cs);
  apply_remote_reads(cs);
  apply_wake_latencies(cs);
  apply_background_and_noise(cs);
  apply_switch_mm(cs);
  apply_remote_messages(cs);
  // The waker's side of a wakeup IPI, and on a guest the distributions behind it.
  const WakeIpi w = wake_ipi(cs);
  apply_ipi_send(cs, w);
  if (m.guest.present) {
    apply_guest_halted_wake(cs, w);
    apply_guest_halted_wake_gaps(cs, w);
    apply_guest_running_ipi(cs, w.cls);
  }
  return out;
}

std::string samples_json(const CalibrationResult& r) {
  nlohmann::ordered_json j;
  j["elapsed_s"] = r.elapsed_s;
  j["rounds"] = r.rounds;
  j["round_other_busy_pct"] = r.round_busy_pct;
  j["load_before"] = {{"other_busy_pct", r.load_before.other_busy_pct}, {"loadavg1", r.load_before.loadavg1},
                      {"cpus", r.load_before.nr_cpus}};
  auto& ms = j["measurements"] = nlohmann::ordered_json::array();
  for (const auto& m : r.measurements) {
    nlohmann::ordered_json x;
    x["key"] = m.key;
    x["what"] = m.what;
    x["cpus"] = m.cpus;
    x["estimate_ns"] = m.value_ns;
    x["median_ns"] = m.median_ns;
    x["spread"] = m.cov;
    x["idle_state"] = m.idle_state;
    x["batch_values_ns"] = m.batch_values;
    x["batch_loaded"] = m.batch_loaded;
    x["events_ns"] = m.events;
    ms.push_back(x);
  }
  return j.dump(1) + "\n";
}

CalibrationResult read_samples_json(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not JSON: {}", where, e.what()));
  }
  if (!j.is_object() || !j.contains("measurements") || !j["measurements"].is_array())
    throw std::runtime_error(fmt::format("{}: no 'measurements' array (is it a calibrate --samples file?)", where));
  CalibrationResult r;
  size_t i = 0;
  for (const auto& x : j["measurements"]) {
    if (!x.is_object() || !x.contains("key") || !x["key"].is_string() || !x.contains("estimate_ns") ||
        !x["estimate_ns"].is_number())
      throw std::runtime_error(fmt::format("{}: measurements[{}]: needs a string 'key' and a number 'estimate_ns'",
                                           where, i));
    Measurement m;
    m.key = x["key"];
    m.value_ns = x["estimate_ns"];
    m.median_ns = x.value("median_ns", m.value_ns);
    m.cov = x.value("spread", 0.0);
    m.what = x.value("what", std::string());
    m.idle_state = x.value("idle_state", std::string());
    if (x.contains("cpus") && x["cpus"].is_array())
      for (const auto& c : x["cpus"])
        if (c.is_number_integer()) m.cpus.push_back(c);
    r.measurements.push_back(m);
    ++i;
  }
  return r;
}

std::vector<std::string> calibration_header(const CalibrationResult& r, const std::vector<CostUpdate>& updates) {
  std::vector<std::string> h;
  h.push_back(fmt::format("Calibrated by `schedlab host calibrate` in {:.1f} s: {} interleaved round(s) of "
                          "microbenchmarks with pinned threads{} (see docs/host.md).",
                          r.elapsed_s, r.rounds, r.budget_exhausted ? ", stopped by the time budget" : ""));
  h.push_back(fmt::format("Load check before: {} -> {}.", describe_load(r.load_before, 1.0),
                          r.verdict == LoadVerdict::Quiet  ? "quiet"
                          : r.verdict == LoadVerdict::Busy ? "BUSY"
                                                           : "TOO BUSY (--allow-busy)"));
  std::string busy;
  for (double b : r.round_busy_pct) busy += fmt::format(" {:.0f}", b);
  h.push_back("Other processes' busy share per round (%):" + busy);
  h.push_back(fmt::format("Between-round spread of the single-CPU loops (median robust CoV): {:.1f}% (the per-run "
                          "factor of docs/variance.md S1)",
                          100 * r.round_spread));
  h.push_back("Measurements: estimate = p25 of the batch values (one per round), median, spread = robust CoV "
              "(1.4826 MAD / median), min..max; latency tests also p10/p50/p90/p99 of all events:");
  for (auto& m : r.measurements) {
    std::string cpus = fmt::format("{}", fmt::join(m.cpus, ","));
    std::string dist =
        m.dist.n > 0 ? fmt::format("  events {} p10/p50/p90/p99 {:.0f}/{:.0f}/{:.0f}/{:.0f} sigma {:.2f}", m.dist.n,
                                   m.dist.p10, m.dist.p50, m.dist.p90, m.dist.p99, m.dist.sigma)
                     : "";
    h.push_back(fmt::format("  {:<30} {:>10.1f} ns  median {:.1f}  spread {:5.1f}%  [{:.1f}..{:.1f}]  {} batches{}{}"
                            "  cpus {}{}{}{}",
                            m.key, m.value_ns, m.median_ns, 100 * m.cov, m.min_ns, m.max_ns, m.batches,
                            m.loaded_batches ? fmt::format(" (+{} loaded left out)", m.loaded_batches) : "",
                            m.used_loaded ? " (incl. loaded rounds)" : "", cpus,
                            m.pairs > 1 ? fmt::format(" (+{} more pairs)", m.pairs - 1) : "",
                            m.idle_state.empty() ? "" : fmt::format("  wakee idle state {}", m.idle_state), dist));
  }
  h.push_back("Costs MEASURED (all other costs keep the base profile's defaults; guest.* are in [guest]):");
  for (auto& u : updates)
    h.push_back(fmt::format("  {} = {}  (spread {:.1f}%){}  <- {}", u.key,
                            u.key.rfind("guest.", 0) == 0 || u.key.rfind("noise.", 0) == 0 ? fmt::format("{}", u.fvalue)
                                                                                 : std::to_string(u.value),
                            100 * u.cov, u.floored ? " ADJUSTED" : "", u.formula));
  if (r.have_background) {
    h.push_back(fmt::format("Background activity ({} [[background]] table(s) below; docs/variance.md):",
                            r.background.activities.size()));
    for (auto& n : r.background.notes) h.push_back("  " + n);
  }
  for (auto& w : r.warnings) h.push_back("warning: " + w);
  return h;
}

}  // namespace schedlab::host
