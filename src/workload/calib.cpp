// The calibration microbenchmarks as task programs (see calib.hpp). Each follows the real one in
// host/calibrate.cpp step by step: the same threads on the same CPUs, the same system calls in the
// same order, the same timestamps. A system call costs what the profile charges for it
// (futex_wake_ns, futex_wait_ns, fork_ns, exit_ns); the scheduler, wakeup, IPI and idle paths
// are the kernel model's.
#include "workload/calib.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "stats/stats.hpp"
#include "workload/options.hpp"
#include "workload/perf_pipe.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

namespace {

// A busy-wait step of a spinning thread (calibrate's cpu_relax() loops): how often it looks.
constexpr int64_t kSpinNs = 100;

// A futex word and the one thread that may wait on it.
struct Futex {
  int word = 0;
  Task* waiter = nullptr;  // blocked in FUTEX_WAIT
};

// stats::mean refuses an empty sample; a run without wake-ups reports 0, as median() does.
double mean(const std::vector<double>& v) { return v.empty() ? 0 : stats::mean(v); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Shared : Completion {
  const machine::Costs* c = nullptr;
  bool stop = false, started = false;
  Futex f;
  std::vector<double> out1, out2;  // per-event results
  int64_t t0 = 0, t1 = 0;          // futex ping-pong: first and last op; wake: this event
  int ready = -1, done = -1;       // wake: the wakee's iteration
  Task* peer = nullptr;            // fork: the parent
  bool exited = false;
};

class CalibProgram : public Program {
 public:
  explicit CalibProgram(Shared* sh) : sh_(sh) {}

 protected:
  // FUTEX_WAIT(f, expected): the syscall, then sleep if the word still holds `expected`.
  void futex_wait(Futex* f, int expected) {
    push(Action::compute(sh_->c->futex_wait_ns));
    push([this, f, expected](Api&, Task& self) {
      if (f->word != expected) return;
      f->waiter = &self;
      then(Action::block());
    });
  }
  // FUTEX_WAKE(f, 1): the syscall, then try_to_wake_up() of the waiter if there is one; *woke
  // says whether there was.
  void futex_wake(Futex* f, bool* woke) {
    push(Action::compute(sh_->c->futex_wake_ns));
    push([this, f, woke](Api&, Task&) {
      if (woke) *woke = f->waiter != nullptr;
      if (!f->waiter) return;
      Task* t = f->waiter;
      f->waiter = nullptr;
      then(Action::wake(t, false));
    });
  }
  void spin() { push(Action::compute(kSpinNs)); }
  void finish() {
    if (finished_) return;
    finished_ = true;
    exit_after(0, [sh = sh_](Api& k, Task&) { sh->one_done(k); });
  }
  Shared* sh_;
  bool finished_ = false;
};

// ---- futex ping-pong, both threads on one CPU (futex_pingpong in calibrate.cpp)
class PingPartner : public CalibProgram {
 public:
  using CalibProgram::CalibProgram;

 protected:
  void step(Api&, Task&) override {
    if (sh_->stop) return finish();
    if (sh_->f.word == 0) return futex_wait(&sh_->f, 0);
    push([sh = sh_](Api&, Task&) { sh->f.word = 0; });
    futex_wake(&sh_->f, nullptr);
  }
};

class PingMeasurer : public CalibProgram {
 public:
  PingMeasurer(Shared* sh, long long ops) : CalibProgram(sh), ops_(ops) {}

 protected:
  void step(Api&, Task&) override {
    if (waiting_) {
      if (sh_->f.word == 1) return futex_wait(&sh_->f, 1);
      waiting_ = false;
      ++i_;
    }
    if (i_ == ops_ + 1) {  // op 0 warms up
      push([sh = sh_](Api& k, Task&) {
        sh->t1 = k.now().count();
        sh->stop = true;
        sh->f.word = 1;
      });
      futex_wake(&sh_->f, nullptr);
      return finish();
    }
    if (i_ == 1) push([sh = sh_](Api& k, Task&) { sh->t0 = k.now().count(); });
    push([sh = sh_](Api&, Task&) { sh->f.word = 1; });
    futex_wake(&sh_->f, nullptr);
    waiting_ = true;
  }

 private:
  long long ops_, i_ = 0;
  bool waiting_ = false;
};

// ---- wake-up latency of a thread blocked on an idle CPU (wake_latency in calibrate.cpp)
class WakeWakee : public CalibProgram {
 public:
  WakeWakee(Shared* sh, long long events) : CalibProgram(sh), events_(events) {}

 protected:
  void step(Api&, Task&) override {
    if (i_ > events_) return finish();
    push([sh = sh_, i = i_](Api&, Task&) { sh->ready = static_cast<int>(i); });
    futex_wait(&sh_->f, 0);
    push([sh = sh_, i = i_](Api& k, Task&) {
      sh->t1 = k.now().count();
      sh->f.word = 0;
      sh->done = static_cast<int>(i);
    });
    ++i_;
  }

 private:
  long long events_, i_ = 0;
};

class WakeWaker : public CalibProgram {
 public:
  WakeWaker(Shared* sh, long long events, int64_t gap_ns) : CalibProgram(sh), events_(events), gap_ns_(gap_ns) {}

 protected:
  void step(Api&, Task&) override {
    if (fired_) {
      if (sh_->done != i_) return spin();
      if (woke_ && i_ > 0) {  // event 0 warms up; a wakee that had not slept is no wake-up
        sh_->out1.push_back(static_cast<double>(sh_->t1 - sh_->t0));
        sh_->out2.push_back(static_cast<double>(end_ - sh_->t0));
      }
      fired_ = false;
      ++i_;
    }
    if (i_ > events_) return finish();
    if (sh_->ready != i_) return spin();
    if (gap_ns_ > 0) push(Action::compute(gap_ns_));  // spinning while the wakee's CPU goes idle
    push([this](Api& k, Task&) {
      sh_->t0 = k.now().count();
      sh_->f.word = 1;
    });
    futex_wake(&sh_->f, &woke_);
    push([this](Api& k, Task&) { end_ = k.now().count(); });
    fired_ = true;
  }

 private:
  long long events_, i_ = 0;
  int64_t gap_ns_, end_ = 0;
  bool fired_ = false, woke_ = false;
};

// ---- membarrier(PRIVATE_EXPEDITED) while the other thread spins (membarrier_batch)
class Spinner : public CalibProgram {
 public:
  using CalibProgram::CalibProgram;

 protected:
  void step(Api&, Task&) override {
    sh_->started = true;
    if (sh_->stop) return finish();
    push(Action::compute(1000));
  }
};

class MembarrierCaller : public CalibProgram {
 public:
  MembarrierCaller(Shared* sh, long long calls, int target) : CalibProgram(sh), calls_(calls), target_(target) {}

 protected:
  void step(Api&, Task&) override {
    if (!sh_->started) return spin();
    if (i_ > calls_) {
      sh_->stop = true;
      return finish();
    }
    push([this](Api& k, Task&) { t0_ = k.now().count(); });
    // The kernel IPIs the CPU running our mm and waits for its handler (an empty function).
    push(Action::call_func(target_, 0, true));
    push([this](Api& k, Task&) {
      if (i_ > 0) sh_->out1.push_back(static_cast<double>(k.now().count() - t0_));
      ++i_;
    });
  }

 private:
  long long calls_, i_ = 0;
  int target_;
  int64_t t0_ = 0;
};

// ---- fork() of a child that exits at once, waitpid() (fork_exit)
class ForkChild : public CalibProgram {
 public:
  using CalibProgram::CalibProgram;

 protected:
  void step(Api&, Task&) override {
    if (finished_) return;
    finished_ = true;
    // do_exit(), then the parent's wake-up in do_notify_parent() (a sync wake-up).
    exit_after(sh_->c->exit_ns, [this](Api&, Task&) {
      sh_->exited = true;
      if (sh_->f.waiter) {
        Task* p = sh_->f.waiter;
        sh_->f.waiter = nullptr;
        then(Action::wake(p, true));
      }
    });
  }
};

class ForkParent : public CalibProgram {
 public:
  ForkParent(Shared* sh, long long n, int cpu) : CalibProgram(sh), n_(n), cpu_(cpu) {}

 protected:
  void step(Api&, Task&) override {
    if (forked_) {
      if (!sh_->exited) {  // waitpid(): sleep until the child has exited
        push([this](Api&, Task& self) {
          if (sh_->exited) return;
          sh_->f.waiter = &self;
          then(Action::block());
        });
        return;
      }
      push([this](Api& k, Task&) {
        if (k_ > 0) {
          sh_->out1.push_back(static_cast<double>(t1_ - t0_));
          sh_->out2.push_back(static_cast<double>(k.now().count() - t1_));
        }
        ++k_;
      });
      forked_ = false;
      return;
    }
    if (k_ > n_) return finish();  // the first fork warms up
    push([this](Api& k, Task&) { t0_ = k.now().count(); });
    push(Action::compute(sh_->c->fork_ns));
    push([this](Api& k, Task&) {
      sh_->exited = false;
      kernel::TaskOptions o;
      o.cpus = {cpu_};
      o.fork_cpu = cpu_;
      k.create_task("calib-child", std::make_unique<ForkChild>(sh_), o);
      t1_ = k.now().count();
    });
    forked_ = true;
  }

 private:
  long long n_, k_ = 0;
  int cpu_;
  int64_t t0_ = 0, t1_ = 0;
  bool forked_ = false;
};

// ---- a message ping-pong through a pipe or an AF_UNIX socket, no blocking (msg_pingpong)
// The message is 100 bytes (hackbench's). Its costs are the channel's (program.hpp), the
// cross-CPU part included: with the ends on two CPUs every write finds the channel last used on
// the other CPU and every read takes a message written there.
constexpr int64_t kMsgBytes = 100;

struct MsgState {
  Channel ch;
  ChannelCosts costs;
  long long n = 0;                      // messages after the first (which warms up)
  long long written = 0, taken = 0;     // messages written / read so far
};

class MsgEnd : public CalibProgram {
 public:
  // writer / reader: which side this task plays (both: one task on one CPU does both in turn).
  MsgEnd(Shared* sh, MsgState* st, bool writer, bool reader) : CalibProgram(sh), st_(st), w_(writer), r_(reader) {}

 protected:
  void step(Api&, Task& self) override {
    const long long i = w_ ? st_->written : st_->taken;
    if (i > st_->n && (!r_ || st_->taken > st_->n)) return finish();
    const bool my_write = w_ && st_->written == st_->taken && st_->written <= st_->n;
    const bool my_read = r_ && st_->taken < st_->written;
    if (!my_write && !my_read) return spin();
    push([this](Api& k, Task&) { t0_ = k.now().count(); });
    if (my_write) {
      write(st_->ch, kMsgBytes, st_->costs, self);  // never full: one message at a time
    } else {
      read(st_->ch, st_->costs, self);  // never empty: the message is there
    }
    push([this, my_write](Api& k, Task&) {
      long long& count = my_write ? st_->written : st_->taken;
      if (count > 0) (my_write ? sh_->out1 : sh_->out2).push_back(static_cast<double>(k.now().count() - t0_));
      ++count;
    });
  }

 private:
  MsgState* st_;
  bool w_, r_;
  int64_t t0_ = 0;
};

// ---- the L2-cold fill and drain (cold_fill_drain in calibrate.cpp): `chans` channels on one
// CPU filled round-robin with `per` messages of 100 bytes each, then drained in the same order;
// a warm-up chunk, then `chunks` chunks, each timed as a whole. The channels' cache footprint
// rule (channel.hpp) is on when the machine has an L2 size and a cold cost.
struct ColdState {
  std::vector<Channel> chans;
  ChannelCosts costs;
  CacheFootprint cache;
  int per = 0;
  long long chunks = 0;
};

class ColdFillDrain : public CalibProgram {
 public:
  ColdFillDrain(Shared* sh, ColdState* st) : CalibProgram(sh), st_(st) {}

 protected:
  void step(Api&, Task& self) override {
    if (chunk_ > st_->chunks) return finish();
    if (filling_ && i_ == 0) push([this](Api& k, Task&) { t0_ = k.now().count(); });
    for (Channel& ch : st_->chans) {
      if (filling_ && !write(ch, kMsgBytes, st_->costs, self))
        throw std::logic_error("calib coldmsg: a channel filled up (setup checks its capacity)");
      if (!filling_) read(ch, st_->costs, self);  // never empty: the fill wrote `per` to each
    }
    if (++i_ < st_->per) return;
    i_ = 0;
    const bool fill = filling_;
    filling_ = !filling_;
    if (fill) {
      push([this](Api& k, Task&) { t1_ = k.now().count(); });
      return;
    }
    push([this](Api& k, Task&) {
      const double n = static_cast<double>(st_->per) * static_cast<double>(st_->chans.size());
      if (chunk_ > 0) {  // chunk 0 warms up
        sh_->out1.push_back(static_cast<double>(t1_ - t0_) / n);
        sh_->out2.push_back(static_cast<double>(k.now().count() - t1_) / n);
      }
      ++chunk_;
    });
  }

 private:
  ColdState* st_;
  bool filling_ = true;
  int i_ = 0;  // messages per channel so far in this half
  long long chunk_ = 0;
  int64_t t0_ = 0, t1_ = 0;  // this chunk's start, the fill's end
};

class Calib : public Workload {
 public:
  explicit Calib(const CalibOptions& o) : o_(o) {}
  void setup(Api& k) override;
  bool finished() const override { return sh_.finished; }
  std::string report() const override;
  std::vector<Metric> metrics() const override;
  Footprint footprint() const override { return {3, static_cast<int64_t>(sizeof(*this))}; }

 private:
  // `ch` as the -u choice makes it (an AF_UNIX socket pair's sending side, with 100 B messages
  // at the small-skb truesize, or a pipe), from the machine's tunables; returns its costs.
  ChannelCosts make_channel(Channel& ch, const machine::Machine& m) const {
    const auto& tun = m.tunables;
    if (o_.unix_socket) {
      ch.make_unix(tun.unix_sndbuf_bytes, tun.unix_skb_truesize_bytes);
      return ChannelCosts::unix_socket(m.costs);
    }
    ch.make_pipe(tun.pipe_capacity_bytes, tun.pipe_page_bytes);
    return ChannelCosts::pipe(m.costs);
  }
  kernel::TaskOptions on(int cpu, int mm) const {
    kernel::TaskOptions t;
    t.cpus = {cpu};
    t.fork_cpu = cpu;
    t.mm = mm;
    return t;
  }
  CalibOptions o_;
  Shared sh_;
  MsgState msg_;
  ColdState cold_;
};

void Calib::setup(Api& k) {
  sh_.c = &k.machine().costs;
  sh_.t0 = 0;
  sh_.Completion::t0 = k.now();
  const std::string& b = o_.bench;
  if (b == "fork") {
    sh_.remaining = 1;
    k.create_task("calib-fork", std::make_unique<ForkParent>(&sh_, o_.n > 0 ? o_.n : 15, o_.a), on(o_.a, -1));
    return;
  }
  if (b == "coldmsg") {
    cold_.chans.resize(static_cast<size_t>(o_.chans));
    for (Channel& ch : cold_.chans) cold_.costs = make_channel(ch, k.machine());
    Channel probe = cold_.chans.front();  // each channel must hold its messages unread
    for (int i = 0; i < o_.per_chan; ++i) {
      if (!probe.can_write(kMsgBytes))
        throw WorkloadError(fmt::format("calib coldmsg: -m {}: a {} holds only {} messages of {} bytes", o_.per_chan,
                                        o_.unix_socket ? "socket's send buffer" : "pipe", i, kMsgBytes));
      probe.reserve(kMsgBytes);
    }
    cold_.costs.use_cache(cold_.cache, k.machine());
    cold_.per = o_.per_chan;
    cold_.chunks = o_.n > 0 ? o_.n : 3;
    sh_.remaining = 1;
    k.create_task("calib-coldmsg", std::make_unique<ColdFillDrain>(&sh_, &cold_), on(o_.a, -1));
    return;
  }
  if (b == "msg") {
    msg_.costs = make_channel(msg_.ch, k.machine());
    msg_.n = o_.n > 0 ? o_.n : 2000;
    if (o_.a == o_.b) {
      sh_.remaining = 1;
      k.create_task("calib-msg", std::make_unique<MsgEnd>(&sh_, &msg_, true, true), on(o_.a, -1));
      return;
    }
    sh_.remaining = 2;
    Task* w = k.create_task("calib-msg-w", std::make_unique<MsgEnd>(&sh_, &msg_, true, false), on(o_.a, -1));
    k.create_task("calib-msg-r", std::make_unique<MsgEnd>(&sh_, &msg_, false, true), on(o_.b, k.task_mm(*w)));
    return;
  }
  sh_.remaining = 2;
  // Two threads of one process: the second shares the first one's mm.
  auto second = [&](Task* first, const char* comm, std::unique_ptr<kernel::Behavior> p, int cpu) {
    k.create_task(comm, std::move(p), on(cpu, k.task_mm(*first)));
  };
  if (b == "futex-pingpong") {
    Task* m = k.create_task("calib-ping", std::make_unique<PingMeasurer>(&sh_, o_.n > 0 ? o_.n : 2000), on(o_.a, -1));
    second(m, "calib-pong", std::make_unique<PingPartner>(&sh_), o_.a);
  } else if (b == "wake") {
    long long n = o_.n > 0 ? o_.n : 150;
    Task* w = k.create_task("calib-waker", std::make_unique<WakeWaker>(&sh_, n, o_.gap_us * 1000), on(o_.a, -1));
    second(w, "calib-wakee", std::make_unique<WakeWakee>(&sh_, n), o_.b);
  } else {  // membarrier
    Task* s = k.create_task("calib-spin", std::make_unique<Spinner>(&sh_), on(o_.b, -1));
    second(s, "calib-membarrier", std::make_unique<MembarrierCaller>(&sh_, o_.n > 0 ? o_.n : 200, o_.b), o_.a);
  }
}

std::vector<Metric> Calib::metrics() const {
  const std::string& b = o_.bench;
  if (b == "fork") return {{"fork_call", "ns", median(sh_.out1), false}, {"fork_exit_reap", "ns", median(sh_.out2), false}};
  if (b == "futex-pingpong") {
    double ops = static_cast<double>(o_.n > 0 ? o_.n : 2000);
    return {{"futex_pingpong_same_cpu_half", "ns", static_cast<double>(sh_.t1 - sh_.t0) / ops / 2, false}};
  }
  if (b == "msg") return {{"msg_send", "ns", median(sh_.out1), false}, {"msg_recv", "ns", median(sh_.out2), false}};
  if (b == "coldmsg")
    return {{"msg_send", "ns", median(sh_.out1), false},
            {"msg_recv", "ns", median(sh_.out2), false},
            {"msg_sends_cold", "sends", static_cast<double>(cold_.cache.sends_cold), false},
            {"msg_reads_cold", "reads", static_cast<double>(cold_.cache.reads_cold), false}};
  if (b == "wake")
    return {{"wake_latency", "ns", median(sh_.out1), false},
            {"wake_syscall", "ns", median(sh_.out2), false},
            {"wakeups", "", static_cast<double>(sh_.out1.size()), true},
            // A published figure that is the mean over its run (machines --check, statistic = "mean").
            {"wake_latency_mean", "ns", mean(sh_.out1), false},
            {"wake_syscall_mean", "ns", mean(sh_.out2), false}};
  return {{"membarrier_ipi", "ns", median(sh_.out1), false}};
}

std::string Calib::report() const {
  std::string out = fmt::format("# calib {} (the microbenchmark of schedlab host calibrate; docs/host.md)\n", o_.bench);
  for (const auto& m : metrics()) out += fmt::format("{:>30}: {:.1f} {}\n", m.name, m.value, m.unit);
  return out;
}

}  // namespace

std::unique_ptr<Workload> parse_calib(const std::vector<std::string>& args, int nr_cpus) {
  static const std::vector<std::string> benches = {"futex-pingpong", "wake", "membarrier", "fork", "pipe", "msg", "coldmsg"};
  if (args.empty() || std::find(benches.begin(), benches.end(), args[0]) == benches.end())
    throw WorkloadError(fmt::format("calib: the first argument is one of {} (got '{}')", fmt::join(benches, ", "),
                                    args.empty() ? "" : args[0]));
  CalibOptions o;
  o.bench = args[0];
  bool processes = false;
  std::vector<int> cpus;
  static const std::vector<OptSpec> specs = {{'c', "cpus", true}, {'n', "ops", true}, {'g', "gap", true},
                                             {'P', "processes", false}, {'u', "unix", false},
                                             {'k', "channels", true},   {'m', "messages", true}};
  for (const auto& po : getopt("calib", {args.begin() + 1, args.end()}, specs, nullptr)) {
    char f = po.spec->short_name;
    if (f == 'n') o.n = parse_count(po.flag, po.value, 1, 100000000LL);
    if (f == 'g') o.gap_us = parse_count(po.flag, po.value, 0, 10000000LL);
    if (f == 'P') processes = true;
    if (f == 'u') o.unix_socket = true;
    if (f == 'k') o.chans = static_cast<int>(parse_count(po.flag, po.value, 1, 4096));
    if (f == 'm') o.per_chan = static_cast<int>(parse_count(po.flag, po.value, 1, 100000));
    if (f == 'c') {
      cpus.clear();
      size_t at = 0;
      for (size_t comma; at <= po.value.size(); at = comma + 1) {
        comma = std::min(po.value.find(',', at), po.value.size());
        cpus.push_back(static_cast<int>(parse_count(po.flag, po.value.substr(at, comma - at), 0, nr_cpus - 1)));
      }
      if (cpus.empty() || cpus.size() > 2) throw WorkloadError(fmt::format("{}: give A or A,B", po.flag));
    }
  }
  if (!cpus.empty()) o.a = cpus[0], o.b = cpus.size() > 1 ? cpus[1] : cpus[0];
  bool two = o.bench == "wake" || o.bench == "membarrier";
  if (cpus.empty() && !two) o.b = o.a;
  if (two && (o.a == o.b || nr_cpus < 2))
    throw WorkloadError(fmt::format("calib {}: needs two different CPUs (-c A,B)", o.bench));
  if (o.bench == "pipe") {
    PerfPipeOptions p;
    p.loops = o.n > 0 ? o.n : 2000;
    p.threaded = !processes;
    p.token_bytes = 1;
    p.pin_parent = o.a;
    p.pin_child = o.b;
    return std::make_unique<PerfPipe>(p);
  }
  return std::make_unique<Calib>(o);
}

}  // namespace schedlab::workload
