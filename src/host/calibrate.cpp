#include "host/calibrate.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <thread>

#include "host/probe.hpp"

namespace schedlab::host {
using machine::Distance;

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Spread of batch values: robust coefficient of variation, 1.4826 * MAD / median (equals the
// CoV for normally distributed values, and is not blown up by one preempted batch).
double cov_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double med = median(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - med));
  return med > 0 ? 1.4826 * median(dev) / med : 0;
}

// Collects batch values until their CoV is small, or the batch or time limit is reached.
struct Converger {
  int min_batches;
  int max_batches;
  double target;
  int64_t deadline;
  std::vector<double> values;
  bool done() const {
    int n = static_cast<int>(values.size());
    if (n >= max_batches) return true;
    if (n >= min_batches && cov_of(values) < target) return true;
    return n >= 1 && now_ns() > deadline;
  }
};

struct Ctx {
  const CalibrateOptions& opt;
  int min_b, max_b;
  int64_t batch_target_ns;  // wall time one batch should take
  CalibrationResult& res;
  Converger conv(double budget_s) const {
    return Converger{min_b, max_b, opt.target_cov,
                     now_ns() + static_cast<int64_t>(budget_s * opt.time_scale * (opt.quick ? 0.1 : 1.0) * 1e9), {}};
  }
};

Measurement finish(const std::string& key, const std::string& what, const Converger& c, std::vector<int> cpus,
                   double target) {
  Measurement m;
  m.key = key;
  m.what = what;
  m.value_ns = median(c.values);
  m.cov = cov_of(c.values);
  m.min_ns = c.values.empty() ? 0 : *std::min_element(c.values.begin(), c.values.end());
  m.max_ns = c.values.empty() ? 0 : *std::max_element(c.values.begin(), c.values.end());
  m.batches = static_cast<int>(c.values.size());
  m.converged = m.batches >= 2 && m.cov < target;
  m.cpus = std::move(cpus);
  return m;
}

// Runs ops(n) (n operations) once to warm up and size the batch, then batch after batch; each
// batch value is ns per operation divided by `per_op_div`.
void measure_ops(const Ctx& ctx, Converger& c, const std::function<void(int64_t)>& ops, double per_op_div = 1.0) {
  int64_t n = 64;
  for (;;) {  // warm-up doubling until a run takes >= 1/8 of a batch
    int64_t t0 = now_ns();
    ops(n);
    int64_t dt = now_ns() - t0;
    if (dt >= ctx.batch_target_ns / 8 || n >= (1 << 24)) {
      double per = static_cast<double>(std::max<int64_t>(dt, 1)) / static_cast<double>(n);
      n = std::clamp<int64_t>(static_cast<int64_t>(static_cast<double>(ctx.batch_target_ns) / per), 16, 1 << 24);
      break;
    }
    n *= 2;
  }
  // A batch is 5 runs of n/5 operations; its value is the median run (per operation).
  const int64_t sub = std::max<int64_t>(n / 5, 4);
  while (!c.done()) {
    std::vector<double> runs;
    for (int k = 0; k < 5; ++k) {
      int64_t t0 = now_ns();
      ops(sub);
      int64_t dt = now_ns() - t0;
      runs.push_back(static_cast<double>(dt) / static_cast<double>(sub) / per_op_div);
    }
    c.values.push_back(median(runs));
  }
}

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

// ---------------------------------------------------------------- single-thread loops

void single_thread_loops(Ctx& ctx, int cpu) {
  auto run = [&](const char* key, const char* what, double budget, const std::function<void(int64_t)>& ops) {
    Converger c = ctx.conv(budget);
    if (!on_cpu(cpu, [&] { measure_ops(ctx, c, ops); })) {
      ctx.res.warnings.push_back(fmt::format("cannot pin a thread to cpu{}; {} not measured", cpu, key));
      return;
    }
    ctx.res.measurements.push_back(finish(key, what, c, {cpu}, ctx.opt.target_cov));
    if (ctx.opt.progress) ctx.opt.progress(ctx.res.measurements.back());
  };
  run("syscall_getppid", "getppid() syscall round trip", 1.0, [](int64_t n) {
    for (int64_t i = 0; i < n; ++i) syscall(SYS_getppid);
  });
  run("syscall_getpid", "syscall(SYS_getpid) round trip", 1.0, [](int64_t n) {
    for (int64_t i = 0; i < n; ++i) syscall(SYS_getpid);
  });
  std::atomic<int> word{0};
  run("futex_wake_nowaiter", "futex(FUTEX_WAKE) with no waiter (syscall + hash bucket, no ttwu)", 1.0,
      [&](int64_t n) {
        for (int64_t i = 0; i < n; ++i) futex_wake(&word);
      });
  run("futex_wait_eagain", "futex(FUTEX_WAIT) whose value check fails at once (syscall + hash bucket, no sleep)",
      1.0, [&](int64_t n) {
        for (int64_t i = 0; i < n; ++i) futex(&word, FUTEX_WAIT_PRIVATE, 1);
      });
  // write() then read() of small messages with room and nobody waiting (no blocking, no
  // wakeup): the fixed parts of a pipe's and an AF_UNIX stream socket's send and receive.
  auto measure_rw = [&](int wfd, int rfd, size_t size, int64_t count, const char* wkey, const char* wwhat,
                        const char* rkey, const char* rwhat) {
    std::vector<char> buf(size, 'x');
    // One chunk: `count` writes, then `count` reads; per-op ns of each.
    auto chunk = [&](double* w, double* r) {
      int64_t t0 = now_ns();
      for (int64_t i = 0; i < count; ++i)
        if (write(wfd, buf.data(), size) != static_cast<ssize_t>(size)) break;
      int64_t t1 = now_ns();
      for (int64_t i = 0; i < count; ++i)
        if (read(rfd, buf.data(), size) != static_cast<ssize_t>(size)) break;
      int64_t t2 = now_ns();
      *w = static_cast<double>(t1 - t0) / count;
      *r = static_cast<double>(t2 - t1) / count;
    };
    // A batch is several chunks; its values are the median chunk's per-op write and read times.
    Converger cw = ctx.conv(1.0), cr = ctx.conv(1.0);
    bool ok = on_cpu(cpu, [&] {
      double w, r;
      chunk(&w, &r);  // warm-up
      while (!(cw.done() && cr.done())) {
        std::vector<double> ws, rs;
        for (int k = 0; k < (ctx.opt.quick ? 3 : 7); ++k) {
          chunk(&w, &r);
          ws.push_back(w);
          rs.push_back(r);
        }
        cw.values.push_back(median(ws));
        cr.values.push_back(median(rs));
      }
    });
    if (!ok) return;
    ctx.res.measurements.push_back(finish(wkey, wwhat, cw, {cpu}, ctx.opt.target_cov));
    if (ctx.opt.progress) ctx.opt.progress(ctx.res.measurements.back());
    ctx.res.measurements.push_back(finish(rkey, rwhat, cr, {cpu}, ctx.opt.target_cov));
    if (ctx.opt.progress) ctx.opt.progress(ctx.res.measurements.back());
  };
  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
    ctx.res.warnings.push_back("pipe2 failed; pipe costs not measured");
  } else {
    // 1-byte writes merge into one page, so a chunk never fills the pipe.
    measure_rw(p[1], p[0], 1, ctx.opt.quick ? 1024 : 4096, "pipe_write_1b",
               "write() of 1 byte to a pipe with room, no reader waiting", "pipe_read_1b",
               "read() of 1 byte from a non-empty pipe, no writer waiting");
    close(p[0]);
    close(p[1]);
  }
  // hackbench's message: 100 bytes over an AF_UNIX stream socketpair. Each send is one skb
  // charged with its truesize, so a chunk stays well inside the default 208 KiB send buffer.
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    ctx.res.warnings.push_back("socketpair failed; AF_UNIX costs not measured");
  } else {
    measure_rw(sv[0], sv[1], 100, 64, "unix_send_100b",
               "send of 100 bytes on an AF_UNIX stream socket with room, no reader waiting",
               "unix_recv_100b", "recv of 100 bytes from a non-empty AF_UNIX stream socket");
    close(sv[0]);
    close(sv[1]);
  }
}

// Futex ping-pong between a (measuring) and b: one op = one round trip = two wakeups and two
// blocking waits. Returns false if a CPU could not be pinned.
bool futex_pingpong(const Ctx& ctx, int a, int b, Converger& c) {
  alignas(64) std::atomic<int> turn{0};  // 0: a's turn, 1: b's turn
  Partner partner(b, [&](std::atomic<bool>& stop) {
    while (!stop.load()) {
      while (turn.load() == 0 && !stop.load()) futex_wait(&turn, 0);
      if (stop.load()) break;
      turn.store(0);
      futex_wake(&turn);
    }
  });
  if (!partner.ok()) return false;
  bool ok = on_cpu(a, [&] {
    measure_ops(ctx, c, [&](int64_t n) {
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
  return ok;
}

// Pipe ping-pong: a writes 1 byte into p1, b reads it and answers through p2.
bool pipe_pingpong(const Ctx& ctx, int a, int b, Converger& c) {
  int p1[2], p2[2];
  if (pipe2(p1, O_CLOEXEC) != 0) return false;
  if (pipe2(p2, O_CLOEXEC) != 0) {
    close(p1[0]);
    close(p1[1]);
    return false;
  }
  Partner partner(b, [&](std::atomic<bool>&) {
    char x;
    while (read(p1[0], &x, 1) == 1 && x != 'q') {
      if (write(p2[1], &x, 1) != 1) break;
    }
  });
  bool ok = partner.ok() && on_cpu(a, [&] {
    measure_ops(ctx, c, [&](int64_t n) {
      char x = 'x';
      for (int64_t i = 0; i < n; ++i) {
        if (write(p1[1], &x, 1) != 1 || read(p2[0], &x, 1) != 1) break;
      }
    });
  });
  partner.stop([&] {
    char q = 'q';
    if (write(p1[1], &q, 1) != 1) close(p1[1]);
  });
  for (int fd : {p1[0], p1[1], p2[0], p2[1]}) close(fd);
  return ok;
}

// Cache-line ping-pong by spinning: each op is one round trip of one line between a and b; the
// batch value is half of it (one transfer). a != b always (spinning on one CPU would stall).
bool cacheline_pingpong(const Ctx& ctx, int a, int b, Converger& c) {
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
  if (!partner.ok()) return false;
  bool ok = on_cpu(a, [&] {
    measure_ops(
        ctx, c,
        [&](int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            flag.store(1, std::memory_order_release);
            while (flag.load(std::memory_order_acquire) != 0) cpu_relax();
          }
        },
        2.0);
  });
  partner.stop([&] { flag.store(2, std::memory_order_release); });
  return ok;
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
    name >> n;
    usage >> u;
    out.emplace_back(n, u);
  }
  return out;
}

// Wake-up latency of a thread blocked in FUTEX_WAIT on an otherwise idle CPU b, woken by a on
// another CPU after a gap long enough for b to enter idle. Batch value: median latency (t0 just
// before FUTEX_WAKE on a, t1 just after FUTEX_WAIT returns on b). Also collects the waker's
// FUTEX_WAKE duration (syscall incl. ttwu and IPI send) into `waker`.
bool wake_latency(const Ctx& ctx, int a, int b, Converger& c, Converger& waker, std::string* idle_state) {
  const int per_batch = ctx.opt.quick ? 40 : 150;
  const int64_t gap_ns = ctx.opt.quick ? 30000 : 60000;
  alignas(64) std::atomic<int> word{0};
  alignas(64) std::atomic<int> ready{-1};     // iteration the wakee is about to wait for
  alignas(64) std::atomic<int64_t> t0{0};
  std::vector<int64_t> lat(per_batch, -1);
  std::atomic<int> iter_done{-1};
  Partner partner(b, [&](std::atomic<bool>& stop) {
    int i = 0;
    while (!stop.load()) {
      ready.store(i);
      while (word.load() == 0 && !stop.load()) futex_wait(&word, 0);
      int64_t t1 = now_ns();
      if (stop.load()) break;
      lat[i % per_batch] = t1 - t0.load();
      word.store(0);
      iter_done.store(i);
      ++i;
    }
  });
  if (!partner.ok()) return false;
  auto before = idle_usage(b);
  bool ok = on_cpu(a, [&] {
    int i = 0;
    bool warm = true;
    while (!c.done()) {
      std::vector<double> batch, wake_ns;
      for (int k = 0; k < per_batch; ++k, ++i) {
        while (ready.load() != i) cpu_relax();
        int64_t until = now_ns() + gap_ns;  // let b block and its CPU go idle
        while (now_ns() < until) cpu_relax();
        int64_t s = now_ns();
        t0.store(s);
        word.store(1);
        long woken = futex_wake(&word);
        int64_t e = now_ns();
        while (iter_done.load() != i) cpu_relax();
        if (woken == 1) {  // b was asleep: a real wake-up
          batch.push_back(static_cast<double>(lat[i % per_batch]));
          wake_ns.push_back(static_cast<double>(e - s));
        }
      }
      if (warm) {
        warm = false;
        continue;
      }
      if (batch.size() >= 3) {
        c.values.push_back(median(batch));
        waker.values.push_back(median(wake_ns));
      } else if (now_ns() > c.deadline) {
        break;
      }
    }
  });
  auto after = idle_usage(b);
  partner.stop([&] {
    word.store(1);
    futex_wake(&word);
  });
  if (idle_state && before.size() == after.size()) {
    long long best = 0;
    for (size_t s = 0; s < after.size(); ++s)
      if (after[s].second - before[s].second > best) best = after[s].second - before[s].second, *idle_state = after[s].first;
  }
  return ok && !c.values.empty();
}

// fork() of a child that exits at once, all on one CPU: the parent's fork() call (fork_ns), and
// from fork() returning in the parent to waitpid() returning (the child runs, exits and is reaped).
bool fork_exit(const Ctx& ctx, int cpu, Converger& fork_c, Converger& reap_c) {
  bool failed = false;
  bool ok = on_cpu(cpu, [&] {
    const int per_batch = ctx.opt.quick ? 5 : 15;
    bool warm = true;
    while (!fork_c.done() || !reap_c.done()) {
      std::vector<double> f, w;
      for (int k = 0; k < per_batch; ++k) {
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
        f.push_back(static_cast<double>(t1 - t0));
        w.push_back(static_cast<double>(t2 - t1));
      }
      if (warm) {
        warm = false;
        continue;
      }
      fork_c.values.push_back(median(f));
      reap_c.values.push_back(median(w));
    }
  });
  return ok && !failed;
}

const char* class_key(Distance d) {
  switch (d) {
    case Distance::Smt: return "smt";
    case Distance::Llc: return "llc";
    case Distance::OtherLlc: return "other_llc";
    case Distance::OtherSocket: return "other_socket";
    default: return "self";
  }
}

}  // namespace

const Measurement* CalibrationResult::find(const std::string& key) const {
  for (auto& m : measurements)
    if (m.key == key) return &m;
  return nullptr;
}

CalibrationResult calibrate(const CalibrateOptions& opt) {
  CalibrationResult res;
  const int64_t start = now_ns();
  Ctx ctx{opt, opt.min_batches > 0 ? opt.min_batches : (opt.quick ? 3 : 5),
          opt.max_batches > 0 ? opt.max_batches : (opt.quick ? 6 : 25), opt.quick ? 1000000 : 5000000, res};
  auto report = [&] {
    if (opt.progress) opt.progress(res.measurements.back());
  };

  // CPUs we may use: model CPUs mapped to real ones, within our affinity mask.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) throw HostError("sched_getaffinity failed");
  const auto& topo = opt.machine.topo;
  auto real = [&](int model) -> int {
    if (opt.model_to_real.empty()) return model;
    return model < static_cast<int>(opt.model_to_real.size()) ? opt.model_to_real[model] : -1;
  };
  auto usable = [&](int model) {
    int r = real(model);
    return r >= 0 && r < CPU_SETSIZE && CPU_ISSET(r, &allowed);
  };
  int first = -1;
  for (int m = 0; m < topo.nr_cpus(); ++m)
    if (usable(m)) {
      first = m;
      break;
    }
  if (first < 0) {
    // No probed topology (or none of it usable): fall back to the first allowed CPU.
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) {
        first = c;
        break;
      }
    if (first < 0) throw HostError("no CPU in this process's affinity mask");
    res.warnings.push_back("the probed topology has no CPU this process may run on; distance classes not measured");
  }
  const int cpu0 = usable(first) ? real(first) : first;

  // Other work on the machine inflates every timing (waiting for a CPU): say so.
  {
    std::ifstream la("/proc/loadavg");
    double load1 = 0;
    if (la >> load1 && load1 > 0.5 * CPU_COUNT(&allowed))
      res.warnings.push_back(fmt::format("the machine is busy (load average {:.2f} on {} usable CPUs): timings include "
                                         "waiting for a CPU; calibrate on an otherwise idle machine",
                                         load1, CPU_COUNT(&allowed)));
  }

  single_thread_loops(ctx, cpu0);

  {
    Converger f = ctx.conv(1.5), w = ctx.conv(1.5);
    if (fork_exit(ctx, cpu0, f, w)) {
      res.measurements.push_back(finish("fork_call", "fork() in the parent, child exits at once (parent and child on one CPU)",
                                        f, {cpu0}, opt.target_cov));
      report();
      res.measurements.push_back(finish("fork_exit_reap",
                                        "fork() returning to waitpid() returning: child runs, _exit()s, is reaped "
                                        "and the parent woken, all on one CPU",
                                        w, {cpu0}, opt.target_cov));
      report();
    } else {
      res.warnings.push_back("fork() failed; fork and exit costs not measured");
    }
  }

  // Same-CPU ping-pongs: context switch path.
  {
    Converger c = ctx.conv(2.0);
    if (futex_pingpong(ctx, cpu0, cpu0, c)) {
      for (auto& v : c.values) v /= 2;  // per switch
      res.measurements.push_back(finish("futex_pingpong_same_cpu_half",
                                        "half a futex ping-pong round trip, both threads on one CPU: "
                                        "FUTEX_WAKE + FUTEX_WAIT + one context switch",
                                        c, {cpu0, cpu0}, opt.target_cov));
      report();
    } else {
      res.warnings.push_back("cannot pin two threads to one CPU; context switch not measured");
    }
    Converger p = ctx.conv(1.0);
    if (pipe_pingpong(ctx, cpu0, cpu0, p)) {
      res.measurements.push_back(finish("pipe_rtt_same_cpu",
                                        "pipe round trip (1 byte each way), both threads on one CPU (reference: "
                                        "`taskset -c N perf bench sched pipe -T` per op)",
                                        p, {cpu0, cpu0}, opt.target_cov));
      report();
    }
  }

  // Pairs by distance class, from the model's topology mapped to real CPUs.
  std::map<Distance, std::vector<std::pair<int, int>>> pairs;
  if (usable(first)) {
    for (int a = 0; a < topo.nr_cpus(); ++a)
      for (int b = a + 1; b < topo.nr_cpus(); ++b)
        if (usable(a) && usable(b)) pairs[topo.distance(a, b)].push_back({real(a), real(b)});
  }
  for (auto& [d, list] : pairs) {
    const std::string cls = class_key(d);
    // Pairs to measure: all of them on small machines (default mode), else a spread sample.
    size_t want = opt.quick ? 1 : (topo.nr_cpus() <= 8 ? list.size() : std::min<size_t>(list.size(), 4));
    // Prefer pairs involving cpu0 first, so the wake/pipe tests use the same first pair.
    std::stable_sort(list.begin(), list.end(), [&](auto& x, auto& y) { return (x.first == cpu0) > (y.first == cpu0); });
    std::vector<std::pair<int, int>> chosen;
    for (size_t i = 0; i < want; ++i) chosen.push_back(list[i * list.size() / want]);

    std::vector<double> pair_values, pair_covs;
    double pair_min = 1e300, pair_max = 0;  // over all batches of all pairs
    int nb = 0;
    bool all_conv = true;
    for (auto [a, b] : chosen) {
      Converger c = ctx.conv(topo.nr_cpus() <= 8 ? 1.0 : 0.5);
      if (!cacheline_pingpong(ctx, a, b, c)) {
        res.warnings.push_back(fmt::format("cannot pin threads to cpu{} and cpu{}; pair skipped", a, b));
        continue;
      }
      Measurement pm = finish("", "", c, {a, b}, opt.target_cov);
      pair_values.push_back(pm.value_ns);
      pair_covs.push_back(pm.cov);
      pair_min = std::min(pair_min, pm.min_ns);
      pair_max = std::max(pair_max, pm.max_ns);
      nb += pm.batches;
      all_conv = all_conv && pm.converged;
    }
    if (!pair_values.empty()) {
      Measurement m;
      m.key = "cacheline_" + cls;
      m.what = fmt::format("one cache-line transfer ({} pair(s) at distance {}, half a spinning round trip)",
                           pair_values.size(), cls);
      m.value_ns = median(pair_values);
      m.cov = *std::max_element(pair_covs.begin(), pair_covs.end());
      m.min_ns = std::min(pair_min, *std::min_element(pair_values.begin(), pair_values.end()));
      m.max_ns = std::max(pair_max, *std::max_element(pair_values.begin(), pair_values.end()));
      m.batches = nb;
      m.converged = all_conv;
      m.cpus = {chosen.front().first, chosen.front().second};
      m.pairs = static_cast<int>(pair_values.size());
      res.measurements.push_back(m);
      report();
    }

    auto [a, b] = list.front();
    {
      Converger c = ctx.conv(2.0), w = ctx.conv(2.0);
      std::string state;
      if (wake_latency(ctx, a, b, c, w, &state)) {
        auto m = finish("wake_latency_" + cls,
                        fmt::format("futex wake-up latency of a thread blocked on an idle CPU at distance {}: "
                                    "FUTEX_WAKE on the waker to FUTEX_WAIT returning on the wakee",
                                    cls),
                        c, {a, b}, opt.target_cov);
        m.idle_state = state;
        res.measurements.push_back(m);
        report();
        res.measurements.push_back(finish("wake_syscall_" + cls,
                                          "waker's FUTEX_WAKE duration with a sleeping waiter on an idle CPU "
                                          "(syscall + ttwu + IPI send or polling-flag store)",
                                          w, {a, b}, opt.target_cov));
        report();
      } else {
        res.warnings.push_back(fmt::format("wake latency at distance {} not measured (cpu{} -> cpu{})", cls, a, b));
      }
    }
    {
      Converger c = ctx.conv(1.0);
      if (pipe_pingpong(ctx, a, b, c)) {
        res.measurements.push_back(finish("pipe_rtt_" + cls,
                                          fmt::format("pipe round trip (1 byte each way), threads on two CPUs at "
                                                      "distance {} (reference: perf bench sched pipe -T per op)",
                                                      cls),
                                          c, {a, b}, opt.target_cov));
        report();
      }
    }
  }
  if (pairs.empty() && usable(first))
    res.warnings.push_back("only one usable CPU: no cross-CPU measurements (cache line, wake-up latency)");
  for (auto& m : res.measurements)
    if (!m.converged)
      res.warnings.push_back(fmt::format("{}: spread still {:.1f}% after {} batches (target {:.0f}%)", m.key,
                                         100 * m.cov, m.batches, 100 * opt.target_cov));
  res.elapsed_s = static_cast<double>(now_ns() - start) / 1e9;
  return res;
}

// ---------------------------------------------------------------- mapping onto costs

std::vector<CostUpdate> apply_calibration(machine::Machine& m, const CalibrationResult& r) {
  std::vector<CostUpdate> out;
  auto& k = m.costs;
  auto set = [&](const std::string& key, int64_t& field, double value, double floor, const std::string& formula,
                 double cov) {
    CostUpdate u;
    u.key = "costs." + key;
    u.formula = formula;
    u.cov = cov;
    if (!std::isfinite(value) || value < floor) {
      u.floored = true;
      value = floor;
    }
    // Keep within what the profile loader accepts (params(): 0 .. 10 s for costs).
    for (const auto& pi : machine::params())
      if (pi.key == u.key && (value < pi.min || value > pi.max)) {
        value = std::clamp(value, pi.min, pi.max);
        u.floored = true;
        u.formula += fmt::format("; clamped to [{}, {}]", pi.min, pi.max);
      }
    u.value = std::max<int64_t>(0, std::llround(value));
    field = u.value;
    out.push_back(u);
  };
  auto get = [&](const std::string& key) { return r.find(key); };

  if (auto x = get("futex_wake_nowaiter")) set("futex_wake_ns", k.futex_wake_ns, x->value_ns, 0, "futex_wake_nowaiter", x->cov);
  if (auto x = get("futex_wait_eagain")) set("futex_wait_ns", k.futex_wait_ns, x->value_ns, 0, "futex_wait_eagain", x->cov);
  if (auto x = get("pipe_write_1b")) set("pipe_write_ns", k.pipe_write_ns, x->value_ns, 0, "pipe_write_1b", x->cov);
  if (auto x = get("pipe_read_1b")) set("pipe_read_ns", k.pipe_read_ns, x->value_ns, 0, "pipe_read_1b", x->cov);
  if (auto x = get("unix_send_100b")) set("unix_send_ns", k.unix_send_ns, x->value_ns, 0, "unix_send_100b", x->cov);
  if (auto x = get("unix_recv_100b")) set("unix_recv_ns", k.unix_recv_ns, x->value_ns, 0, "unix_recv_100b", x->cov);

  auto pp = get("futex_pingpong_same_cpu_half");
  if (pp && pp->value_ns - static_cast<double>(k.futex_wake_ns + k.futex_wait_ns) <= 0) {
    // The syscalls alone took longer than the whole half round trip (noisy or loaded machine):
    // nothing is left to attribute to the switch, so context_switch_ns keeps its default.
    pp = nullptr;
  }
  if (auto x = pp) {
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
    bool scaled = false;
    if (v < 0.1 * rest && others + base_cs > 0) {
      v = std::max(0.0, rest) * base_cs / (others + base_cs);
      scaled = true;
      formula += fmt::format("; under 10% of what is left, so SCALED: {:.0f} x base share {:.2f}", std::max(0.0, rest),
                             base_cs / (others + base_cs));
    }
    set("context_switch_ns", k.context_switch_ns, v, 0, formula, x->cov);
    out.back().floored = out.back().floored || scaled;
  }
  if (auto x = get("fork_call")) set("fork_ns", k.fork_ns, x->value_ns, 0, "fork_call", x->cov);
  if (auto x = get("fork_exit_reap")) {
    // The parent blocks in waitpid, the child runs and exits, the parent is woken: two passes
    // through the scheduler (schedule + pick_next_task + context_switch) plus a local wakeup.
    double sched = 2.0 * static_cast<double>(k.schedule_ns + k.pick_next_task_ns + k.context_switch_ns) +
                   static_cast<double>(k.ttwu_ns + k.enqueue_ns + k.dequeue_ns);
    set("exit_ns", k.exit_ns, x->value_ns - sched, 0.1 * x->value_ns,
        fmt::format("fork_exit_reap ({:.0f}) - 2 x (schedule + pick_next_task + context_switch) - ttwu - enqueue - "
                    "dequeue ({:.0f}); floor 10%",
                    x->value_ns, sched),
        x->cov);
  }

  const std::pair<const char*, int64_t*> reads[] = {{"smt", &k.remote_read_smt_ns},
                                                     {"llc", &k.remote_read_llc_ns},
                                                     {"other_llc", &k.remote_read_other_llc_ns},
                                                     {"other_socket", &k.remote_read_other_socket_ns}};
  for (auto& [cls, field] : reads)
    if (auto x = get(std::string("cacheline_") + cls))
      set(std::string("remote_read_") + cls + "_ns", *field, x->value_ns, 0, std::string("cacheline_") + cls, x->cov);

  // Wake-up latency -> IPI latency (non-polling idle) or polling_wake_ns (polling idle).
  const std::pair<const char*, int64_t*> ipis[] = {{"llc", &k.ipi_latency_llc_ns},
                                                    {"other_llc", &k.ipi_latency_other_llc_ns},
                                                    {"other_socket", &k.ipi_latency_other_socket_ns}};
  bool polling_done = false;
  for (auto& [cls, field] : ipis) {
    const Measurement* lat = get(std::string("wake_latency_") + cls);
    std::string used = std::string("wake_latency_") + cls;
    if (!lat && std::string(cls) == "llc") {  // SMT-only machines: the sibling class stands in
      lat = get("wake_latency_smt");
      used = "wake_latency_smt";
    }
    if (!lat) continue;
    const Measurement* w = get("wake_syscall_" + used.substr(13));
    double waker = w ? w->value_ns : 0;
    // Which idle state the wakee used: the measured one, else the shallowest enabled state.
    const machine::IdleState* st = lat->idle_state.empty() ? nullptr : m.idle_state(lat->idle_state);
    if (!st)
      for (auto& s : m.idle_states)
        if (!s.disabled) {
          st = &s;
          break;
        }
    bool polling = (st && st->polling) || m.tunables.idle_poll;
    double wake_cost = st ? static_cast<double>(st->wake_cost_ns) : 0;
    double common = waker + static_cast<double>(k.schedule_ns + k.pick_next_task_ns + k.context_switch_ns) + wake_cost;
    if (polling) {
      if (polling_done) continue;
      polling_done = true;
      set("polling_wake_ns", k.polling_wake_ns, lat->value_ns - common, 0.1 * lat->value_ns,
          fmt::format("{} ({:.0f}) - waker FUTEX_WAKE ({:.0f}) - schedule - pick_next_task - context_switch - "
                      "wake_cost of {} (polling idle: no IPI); floor 10%",
                      used, lat->value_ns, waker, st ? st->name : "?"),
          lat->cov);
    } else {
      double v = lat->value_ns - common - static_cast<double>(k.ipi_entry_ns + k.irq_exit_ns);
      set(std::string("ipi_latency_") + cls + "_ns", *field, v, 0.1 * lat->value_ns,
          fmt::format("{} ({:.0f}) - waker FUTEX_WAKE ({:.0f}) - ipi_entry - irq_exit - schedule - pick_next_task - "
                      "context_switch - wake_cost of {} (non-polling idle: IPI); floor 10%",
                      used, lat->value_ns, waker, st ? st->name : "?"),
          lat->cov);
    }
  }
  return out;
}

std::vector<std::string> calibration_header(const CalibrationResult& r, const std::vector<CostUpdate>& updates) {
  std::vector<std::string> h;
  h.push_back(fmt::format("Calibrated by `schedlab host calibrate` in {:.1f} s (microbenchmarks with pinned threads; "
                          "see docs/host.md).",
                          r.elapsed_s));
  h.push_back("Measurements (median of batch values; spread = CoV of batch values, min..max of batches):");
  for (auto& m : r.measurements) {
    std::string cpus = fmt::format("{}", fmt::join(m.cpus, ","));
    h.push_back(fmt::format("  {:<30} {:>10.1f} ns  spread {:5.1f}%  [{:.1f}..{:.1f}]  {} batches{}  cpus {}{}{}",
                            m.key, m.value_ns, 100 * m.cov, m.min_ns, m.max_ns, m.batches,
                            m.converged ? "" : " (not converged)", cpus,
                            m.pairs > 1 ? fmt::format(" (+{} more pairs)", m.pairs - 1) : "",
                            m.idle_state.empty() ? "" : fmt::format("  wakee idle state {}", m.idle_state)));
  }
  h.push_back("Costs MEASURED (all other costs keep the base profile's defaults):");
  for (auto& u : updates)
    h.push_back(fmt::format("  {} = {}  (spread {:.1f}%){}  <- {}", u.key, u.value, 100 * u.cov,
                            u.floored ? " ADJUSTED" : "", u.formula));
  for (auto& w : r.warnings) h.push_back("warning: " + w);
  return h;
}

}  // namespace schedlab::host
