// schbench (2023+ rewrite, github.com/masoncl/schbench): message threads hand requests to
// worker threads with futex wakeups; each request sleeps (usleep), then does a naive matrix
// multiply while holding a per-CPU lock. Records wakeup latency, request latency and RPS in
// schbench's own histogram and prints its percentile blocks. docs/workloads.md, schbench.
#include "workload/schbench.hpp"

#include <fmt/format.h>

#include <cmath>

#include "workload/options.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

// --- the histogram (fio's plat_val_to_idx / plat_idx_to_val / calc_percentiles) ------------

unsigned SchbenchHist::val_to_idx(uint64_t val) {
  unsigned msb = val == 0 ? 0 : 63 - static_cast<unsigned>(__builtin_clzll(val));
  if (msb <= kPlatBits) return static_cast<unsigned>(val);
  unsigned error_bits = msb - kPlatBits;
  unsigned base = (error_bits + 1) << kPlatBits;
  unsigned offset = (kPlatVal - 1) & static_cast<unsigned>(val >> error_bits);
  unsigned idx = base + offset;
  return idx < kPlatNr - 1 ? idx : kPlatNr - 1;
}

unsigned SchbenchHist::idx_to_val(unsigned idx) {
  if (idx < (kPlatVal << 1)) return idx;
  unsigned error_bits = (idx >> kPlatBits) - 1;
  unsigned base = 1u << (error_bits + kPlatBits);
  unsigned k = idx % kPlatVal;
  return base + static_cast<unsigned>((k + 0.5) * (1u << error_bits));
}

void SchbenchHist::add(uint64_t v) {
  plat_[val_to_idx(v)]++;
  nr_++;
  if (min_ == 0 || v < min_) min_ = v;
  if (v > max_) max_ = v;
}

std::vector<std::pair<unsigned, uint64_t>> SchbenchHist::percentiles(
    const std::vector<double>& plist) const {
  std::vector<std::pair<unsigned, uint64_t>> out(plist.size(), {0u, 0u});
  if (plist.empty()) return out;
  uint64_t sum = 0;
  size_t j = 0;
  bool is_last = false;
  for (unsigned i = 0; i < kPlatNr && !is_last; ++i) {
    sum += plat_[i];
    while (static_cast<double>(sum) >= plist[j] / 100.0 * static_cast<double>(nr_)) {
      out[j] = {idx_to_val(i), sum};
      is_last = j == plist.size() - 1;
      if (is_last) break;
      ++j;
    }
  }
  // Cumulative counts -> counts since the previous percentile.
  for (size_t i = out.size(); i-- > 1;) out[i].second -= out[i - 1].second;
  return out;
}

namespace {

// Workload-model constant: simulated time of one inner-loop iteration (one multiply-add) of
// schbench's naive matrix multiply over a cache-resident footprint. 1.5 ns makes the default
// request (-F 256 -n 5: 5 x 104^3 iterations) take about 8.4 ms of CPU, which matches the
// ~8.5 ms p50 request latency of published saturated runs on x86 servers.
constexpr double kMatmulNsPerIteration = 1.5;
// Model granularity of spinning on the per-CPU lock: the spinner re-checks the lock this often
// (it notices a release at most this late). Finer steps cost simulation time.
constexpr int64_t kLockSpinStepNs = 1000;
// RPS mode: a worker with more than this many pending requests is skipped for 100 us.
constexpr size_t kMaxPending = 128;
// USER_HZ: the unit of /proc/stat's times (sysconf(_SC_CLK_TCK), 100 on Linux whatever HZ is).
constexpr uint64_t kUserHz = 100;

struct Stats {
  SchbenchHist wakeup, request, rps;
};

struct Worker;

struct MsgThread {
  kernel::Task* task = nullptr;
  bool futex_blocked = false;
  std::vector<Worker*> list;    // workers waiting to be woken (normal mode)
  std::vector<Worker*> workers;
};

struct Worker {
  kernel::Task* task = nullptr;
  MsgThread* msg = nullptr;
  bool futex_blocked = false;
  sim::Time wake_time;
  sim::Fifo<sim::Time> requests;  // RPS mode: pending requests (creation stamps)
};

struct Shared {
  SchbenchOptions o;
  Stats stats;
  std::vector<bool> lock_held;  // per-CPU locks
  int64_t futex_wake_ns = 0, futex_wait_ns = 0, math_ns = 0;
  int64_t loop_count = 0;       // requests completed since the start (never reset)
  int rps_per_msg = 0;          // schbench's requests_per_sec after its division by -m (-A changes it)
  bool stopping = false, finished = false;
};

// A schbench thread: a Program that can wait on its futex word.
class FutexProgram : public Program {
 protected:
  // fwait(): FUTEX_WAIT while our word says BLOCKED. The syscall entry is charged, then the check
  // and the block happen atomically (as the futex hash-bucket lock makes them).
  void futex_wait(bool* word, int64_t wait_ns) {
    push(Action::compute(wait_ns));
    push([this, word](Api&, Task&) {
      if (*word) then(Action::block());
    });
  }
};

class WorkerProg : public FutexProgram {
 public:
  WorkerProg(Worker* w, Shared* sh) : w_(w), sh_(sh) {}

 protected:
  void step(Api& /*k*/, Task& /*self*/) override {
    if (sh_->stopping) {
      push(Action::block());
      return;
    }
    if (sh_->o.rps > 0) return step_rps();
    switch (phase_) {
      case Post:
        // msg_and_wait(): mark blocked, stamp, queue on the message thread, fpost() it.
        push([this](Api& k, Task&) {
          w_->futex_blocked = true;
          w_->wake_time = k.now();
          w_->msg->list.push_back(w_);
          if (w_->msg->futex_blocked) {
            w_->msg->futex_blocked = false;
            then(Action::compute(sh_->futex_wake_ns));
            then(Action::wake(w_->msg->task, false));
          }
        });
        phase_ = Wait;
        return;
      case Wait:
        if (w_->futex_blocked) {
          futex_wait(&w_->futex_blocked, sh_->futex_wait_ns);
          return;
        }
        push([this](Api& k, Task&) {
          record(sh_->stats.wakeup, k.now() - w_->wake_time);
        });
        start_request();
        return;
      case Lock:
        take_lock();
        return;
      case Math:
        push(Action::compute(sh_->math_ns));
        push([this](Api& k, Task&) { finish_request(k); });
        return;
    }
  }

 private:
  enum Phase { Post, Wait, Lock, Math };

  // gettimeofday() deltas in usec; schbench records only positive ones.
  void record(SchbenchHist& h, sim::Time d) {
    uint64_t us = static_cast<uint64_t>(std::max<int64_t>(0, d.count() / 1000));
    if (!sh_->stopping && us > 0) h.add(us);
  }

  // do_work(): [calibrate: usleep first] stamp, usleep, lock, math, unlock, record.
  void start_request() {
    const auto& o = sh_->o;
    int64_t sleep_ns = o.sleep_usec > 0 ? o.sleep_usec * 1000LL + kTimerSlackNs : 0;
    if (o.calibrate && sleep_ns > 0) push(Action::sleep(sleep_ns));
    push([this](Api& k, Task&) { work_start_ = k.now(); });
    if (!o.calibrate && sleep_ns > 0) push(Action::sleep(sleep_ns));
    phase_ = (o.no_locking || o.calibrate) ? Math : Lock;
    spin_cpu_ = -1;
  }

  // The per-CPU lock: trylock on the lock of the CPU we were on when we started spinning;
  // once we hold it, re-check the CPU (we may have migrated while spinning) and retry if it
  // changed. Spinning is CPU time in kLockSpinStepNs steps, preemptible like any computation.
  void take_lock() {
    push([this](Api& k, Task& self) {
      int cpu = k.task_cpu(self);
      if (spin_cpu_ < 0) spin_cpu_ = cpu;
      if (sh_->lock_held[spin_cpu_]) {
        then(Action::compute(kLockSpinStepNs));
        return;
      }
      if (cpu != spin_cpu_) {  // migrated: this is not our CPU's lock any more
        spin_cpu_ = cpu;
        then(Action::compute(kLockSpinStepNs));
        return;
      }
      sh_->lock_held[spin_cpu_] = true;
      lock_cpu_ = spin_cpu_;
      phase_ = Math;
    });
  }

  void finish_request(Api& k) {
    if (lock_cpu_ >= 0) sh_->lock_held[lock_cpu_] = false;
    lock_cpu_ = -1;
    if (!sh_->stopping) {
      record(sh_->stats.request, k.now() - work_start_);
      sh_->loop_count++;
    }
    phase_ = Post;
    if (sh_->o.rps > 0) phase_ = Wait;
  }

  // RPS mode: process pending requests back to back; block (and record wakeup latency) only
  // when the list is empty.
  void step_rps() {
    switch (phase_) {
      case Post:
      case Wait:
        if (!w_->requests.empty()) {
          w_->requests.pop_front();
          if (woke_) {
            woke_ = false;
            push([this](Api& k, Task&) {
              record(sh_->stats.wakeup, k.now() - w_->wake_time);
            });
          }
          start_request();
          return;
        }
        // Nothing queued: mark blocked and wait for the generator.
        if (!w_->futex_blocked) {
          push([this](Api&, Task&) {
            if (w_->requests.empty()) w_->futex_blocked = true;
          });
          return;
        }
        woke_ = true;
        futex_wait(&w_->futex_blocked, sh_->futex_wait_ns);
        return;
      case Lock:
        take_lock();
        return;
      case Math:
        push(Action::compute(sh_->math_ns));
        push([this](Api& k, Task&) { finish_request(k); });
        return;
    }
  }

  Worker* w_;
  Shared* sh_;
  Phase phase_ = Post;
  sim::Time work_start_;
  int spin_cpu_ = -1, lock_cpu_ = -1;
  bool woke_ = false;
};

class MsgProg : public FutexProgram {
 public:
  MsgProg(MsgThread* m, Shared* sh) : m_(m), sh_(sh) {}

 protected:
  void step(Api& k, Task& self) override {
    if (sh_->stopping) {
      push(Action::block());
      return;
    }
    if (sh_->o.rps > 0) return step_rps(k);
    if (!waiting_) {
      // Mark blocked, splice the list, one timestamp for the whole batch, wake each worker.
      push([this](Api& k, Task&) {
        m_->futex_blocked = true;
        std::vector<Worker*>& batch = m_->list;
        sim::Time t = k.now();
        // xlist_add() prepends: the splice walks the most recent poster first.
        for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
          Worker* w = *it;
          w->wake_time = t;
          w->futex_blocked = false;
          then(Action::compute(sh_->futex_wake_ns));
          then(Action::wake(w->task, false));
        }
        batch.clear();
      });
      waiting_ = true;
      return;
    }
    if (m_->futex_blocked) {
      futex_wait(&m_->futex_blocked, sh_->futex_wait_ns);
      return;
    }
    waiting_ = false;
    step(k, self);  // woken: start the next batch (a step that queues nothing would exit)
  }

 private:
  // run_rps_thread(): each second, rps/m requests round-robin over our workers; after every
  // 8th request it sleeps 8/(rps/m) s, so requests come in evenly spread batches of 8; then it
  // sleeps for the rest of the second. A worker with more than 128 requests pending is
  // skipped after a 100 us sleep. Each request stamps the worker's wake_time and fposts it.
  void step_rps(Api& k) {
    constexpr int kBatch = 8;
    if (sent_ == 0 && !in_second_) {
      second_start_ = k.now();
      in_second_ = true;
    }
    const int rps_share = sh_->rps_per_msg;  // read each request, as the loop's bound is
    if (sent_ < rps_share) {
      Worker* w = m_->workers[next_ % m_->workers.size()];
      ++next_;
      ++sent_;
      if (w->requests.size() > kMaxPending) {
        push(Action::sleep(100000));
        return;
      }
      push([this, w](Api& k, Task&) {
        w->requests.push_back(k.now());
        w->wake_time = k.now();
        if (w->futex_blocked) {
          w->futex_blocked = false;
          then(Action::compute(sh_->futex_wake_ns));
          then(Action::wake(w->task, false));
        }
      });
      if (sent_ % kBatch == 0) push(Action::sleep(1000000000LL / rps_share * kBatch));
      return;
    }
    sent_ = 0;
    in_second_ = false;
    int64_t rest = (second_start_ + sim::Time::sec(1) - k.now()).count();
    push(Action::sleep(std::max<int64_t>(rest, 1)));
  }

  MsgThread* m_;
  Shared* sh_;
  bool waiting_ = false;
  int sent_ = 0;
  bool in_second_ = false;
  size_t next_ = 0;
  sim::Time second_start_;
};

// schbench's plist and the masks of what each block prints.
const std::vector<double> kPlist = {20.0, 50.0, 90.0, 99.0, 99.9};
constexpr unsigned kPlistForLat = 0b11110;  // 50, 90, 99, 99.9
constexpr unsigned kPlistForRps = 0b00111;  // 20, 50, 90
constexpr unsigned kStar99 = 1u << 3, kStar50 = 1u << 1;

// show_latencies()
void print_block(std::string& out, const SchbenchHist& h, const char* label, const char* units,
                 long long runtime, unsigned mask, unsigned star) {
  auto p = h.percentiles(kPlist);
  out += fmt::format("{} percentiles ({}) runtime {} (s) ({} total samples)\n", label, units,
                     runtime, h.samples());
  for (size_t i = 0; i < p.size(); ++i) {
    unsigned bit = 1u << i;
    if (!(mask & bit)) continue;
    out += fmt::format("\t{}{:2.1f}th: {:<10d} ({} samples)\n", bit == star ? "* " : "  ",
                       kPlist[i], p[i].first, p[i].second);
  }
  out += fmt::format("\t  min={}, max={}\n", h.min(), h.max());
}

}  // namespace

SchbenchOptions parse_schbench_options(const std::vector<std::string>& args, int nr_cpus) {
  static const std::vector<OptSpec> specs = {
      {'m', "message-threads", true}, {'t', "threads", true},     {'r', "runtime", true},
      {'s', "sleep_usec", true},      {'n', "operations", true},  {'F', nullptr, true},
      {'L', "no-locking", false},     {'C', "calibrate", false},  {'R', "rps", true},
      {'w', "warmuptime", true},      {'i', "intervaltime", true}, {'z', "zerotime", true},
      {'M', "message-cpus", true},    {'W', "worker-cpus", true},
      {'A', "auto-rps", true},
      // Recognised but not modeled.
      {'p', "pipe", true},            {0, "split", true},
      {'j', "json", true},            {'J', "jobname", true},
  };
  SchbenchOptions o;
  bool warmup_given = false;  // -w wins over -A's warmuptime = 0 whatever the order (found_warmuptime)
  for (const auto& po : getopt("schbench", args, specs, nullptr)) {
    auto num = [&](long long lo, long long hi) {
      return static_cast<int>(parse_count(po.flag, po.value, lo, hi));
    };
    switch (po.spec->short_name) {
      case 'm': o.message_threads = num(1, 4096); break;
      case 't': o.threads = num(1, 65536); break;
      case 'r': o.runtime = num(1, 1000000); break;
      case 's': o.sleep_usec = num(0, 100000000); break;
      case 'n': o.operations = num(0, 1000000); break;
      case 'F': o.footprint_kb = num(1, 1 << 20); break;
      case 'L': o.no_locking = true; break;
      case 'C': o.calibrate = true; break;
      case 'R': o.rps = num(0, 100000000); break;
      case 'w':
        o.warmuptime = num(0, 1000000);
        warmup_given = true;
        break;
      case 'A':  // atoi(): a percentage of busy CPU time
        o.auto_rps = num(0, 100);
        if (!warmup_given) o.warmuptime = 0;
        if (o.rps == 0) o.rps = 10;
        break;
      case 'i': o.intervaltime = num(0, 1000000); break;
      case 'z': o.zerotime = num(0, 1000000); break;
      case 'M':
      case 'W':
        if (po.value == "auto") {
          o.auto_pin = true;
        } else {
          (po.spec->short_name == 'M' ? o.message_cpus : o.worker_cpus) = parse_cpulist(po.flag, po.value, nr_cpus);
        }
        break;
      default:
        throw WorkloadError(fmt::format("schbench: option '{}' is not modeled", po.flag));
    }
  }
  if (o.threads == 0) {
    o.threads = (nr_cpus + o.message_threads - 1) / o.message_threads;
    o.threads_auto = true;
  }
  // thread_auto_pin() (after all options, so it wins over a list): message thread i gets CPU i;
  // the workers were meant to get the others, but its second loop restarts at CPU 0 (the first
  // loop's counter shadows the outer one), so they get every CPU, as here.
  if (o.auto_pin) {
    if (o.message_threads > nr_cpus)
      throw WorkloadError(fmt::format("schbench -M auto: {} message threads need CPUs 0-{}, beyond the machine ({} CPUs; "
                                      "schbench: \"unable to set CPU affinity\")",
                                      o.message_threads, o.message_threads - 1, nr_cpus));
    o.message_cpus.clear();
    o.worker_cpus.clear();
    for (int c = 0; c < o.message_threads; ++c) o.message_cpus.push_back(c);
    for (int c = 0; c < nr_cpus; ++c) o.worker_cpus.push_back(c);
  }
  if (o.runtime < 30) o.warmuptime = 0;
  return o;
}

int64_t Schbench::math_ns(int footprint_kb, int operations) {
  // Three square matrices of unsigned long in the footprint (schbench's matrix_size).
  int64_t side = static_cast<int64_t>(std::sqrt(footprint_kb * 1024.0 / 3 / sizeof(unsigned long)));
  return static_cast<int64_t>(static_cast<double>(side * side * side) * operations *
                              kMatmulNsPerIteration);
}

struct Schbench::State {
  kernel::Api* api = nullptr;  // for the tasks' schedstats in the report
  Shared sh;
  std::vector<std::unique_ptr<MsgThread>> msgs;
  std::vector<std::unique_ptr<Worker>> workers;
  std::string out;          // what schbench has printed so far (stderr)
  bool warmup_done = false;
  int zero_time = 0, last_calc = 0, last_rps_calc = 0;
  // -A: /proc/stat's summary line at the last read (USER_HZ ticks; total 0: not read yet), and
  // whether the target was reached (from then on RPS samples count).
  uint64_t stat_total = 0, stat_idle = 0;
  bool auto_rps_target_hit = false;
  int64_t last_loop_count = 0;
};

Schbench::Schbench(const SchbenchOptions& o) : o_(o), st_(std::make_unique<State>()) {}
Schbench::~Schbench() = default;

void Schbench::setup(Api& k) {
  st_->api = &k;
  auto& sh = st_->sh;
  sh.o = o_;
  sh.lock_held.assign(static_cast<size_t>(k.nr_cpus()), false);
  sh.futex_wake_ns = k.machine().costs.futex_wake_ns;
  sh.futex_wait_ns = k.machine().costs.futex_wait_ns;
  sh.math_ns = math_ns(o_.footprint_kb, o_.operations);
  sh.rps_per_msg = o_.rps / o_.message_threads;
  kernel::TaskOptions to;
  to.fork_cpu = 0;
  for (int m = 0; m < o_.message_threads; ++m) {
    auto mt = std::make_unique<MsgThread>();
    // pin_message_cpu(): the thread pins itself as it starts (modeled as created pinned).
    if (!o_.message_cpus.empty()) {
      int cpu = o_.message_cpus[static_cast<size_t>(m) % o_.message_cpus.size()];
      to.cpus = {cpu};
      st_->out += fmt::format("Pinning to message thread index {} cpu {}\n", m, cpu);
    }
    mt->task = k.create_task("schbench-msg", std::make_unique<MsgProg>(mt.get(), &sh), to);
    to.mm = k.task_mm(*mt->task);  // every schbench thread lives in one process
    for (int t = 0; t < o_.threads; ++t) {
      auto w = std::make_unique<Worker>();
      w->msg = mt.get();
      mt->workers.push_back(w.get());
      kernel::TaskOptions wo;
      wo.fork_cpu = k.task_cpu(*mt->task);
      wo.mm = k.task_mm(*mt->task);
      wo.cpus = o_.worker_cpus;  // pin_worker_cpus()
      w->task = k.create_task("schbench-worker", std::make_unique<WorkerProg>(w.get(), &sh), wo);
      st_->workers.push_back(std::move(w));
    }
    st_->msgs.push_back(std::move(mt));
  }
  // sleep_for_runtime(): the main thread wakes at 0, 1, 2, ... s (modeled without CPU cost;
  // its real sleep(1) overshoots slightly, so "more than N s" tests pass at N s here).
  for (int s = 0; s <= o_.runtime; ++s)
    k.at(k.now() + sim::Time::sec(s), [this, &k, s] { main_tick(k, s); });
}

void Schbench::main_tick(Api& k, int s) {
  auto& sh = st_->sh;
  auto& st = *st_;
  bool done = s >= o_.runtime;
  auto reset = [&] {
    sh.stats.wakeup.reset();
    sh.stats.request.reset();
    sh.stats.rps.reset();
  };
  if (o_.rps == 0 && o_.warmuptime > 0 && !st.warmup_done && s >= o_.warmuptime) {
    st.warmup_done = true;
    st.out += "warmup done, zeroing stats\n";
    st.zero_time = s;
    reset();
  } else {
    // RPS since the last sample (at 0 s: 0/0, which schbench's cast turns into 0).
    int dt = s - st.last_rps_calc;
    double rps = dt > 0 ? static_cast<double>(sh.loop_count - st.last_loop_count) / dt : 0;
    st.last_loop_count = sh.loop_count;
    st.last_rps_calc = s;
    if (o_.auto_rps == 0 || st.auto_rps_target_hit) sh.stats.rps.add(static_cast<uint64_t>(rps));
    if (s - st.last_calc >= o_.intervaltime) {
      st.last_calc = s;
      print_block(st.out, sh.stats.wakeup, "Wakeup Latencies", "usec", s, kPlistForLat, kStar99);
      print_block(st.out, sh.stats.request, "Request Latencies", "usec", s, kPlistForLat, kStar99);
      print_block(st.out, sh.stats.rps, "RPS", "requests", s, kPlistForRps, kStar50);
      st.out += fmt::format("current rps: {:.2f}\n", rps);
    }
  }
  if (o_.zerotime > 0 && s - st.zero_time >= o_.zerotime) {
    st.zero_time = s;
    reset();
  }
  if (o_.auto_rps > 0) auto_scale_rps(k);
  if (done) {
    sh.stopping = true;
    sh.finished = true;
    k.stop();
  }
}

// -m message threads, each with -t workers: their state and programs, the pointers to them.
Footprint Schbench::footprint() const {
  const int64_t msgs = o_.message_threads, workers = msgs * o_.threads;
  Footprint f;
  f.tasks = msgs + workers;
  f.bytes = msgs * (heap_bytes(sizeof(MsgThread)) + heap_bytes(sizeof(MsgProg)) + 2 * static_cast<int64_t>(sizeof(void*))) +
            workers * (heap_bytes(sizeof(Worker)) + heap_bytes(sizeof(WorkerProg)) + 3 * static_cast<int64_t>(sizeof(void*)));
  return f;
}

// read_busy(): /proc/stat's "cpu" line as the kernel prints it: each column the sum over CPUs in
// ns, converted to USER_HZ ticks (nsec_to_clock_t()); the model has two columns, idle and the
// rest (user + system + irq as one). The busy percentage since the last read, in float as
// schbench computes it; the first read only records (0).
float Schbench::read_busy(Api& k) {
  auto& st = *st_;
  uint64_t idle_ns = 0, total_ns = 0;
  for (int c = 0; c < k.nr_cpus(); ++c) {
    idle_ns += static_cast<uint64_t>(k.cpu_idle_ns(c));
    total_ns += static_cast<uint64_t>(k.now().count());
  }
  const uint64_t ns_per_tick = 1000000000ULL / kUserHz;
  uint64_t idle = idle_ns / ns_per_tick, total = idle + (total_ns - idle_ns) / ns_per_tick;
  if (st.stat_total == 0) {
    st.stat_total = total;
    st.stat_idle = idle;
    return 0.0f;
  }
  uint64_t delta = total - st.stat_total, delta_idle = idle - st.stat_idle;
  st.stat_total = total;
  st.stat_idle = idle;
  return static_cast<float>(100.00 - (static_cast<float>(delta_idle) / static_cast<float>(delta)) * 100.00);
}

// auto_scale_rps(), once a second after the first: the RPS goal (per message thread) times
// target/busy, the step clamped to [0.3, 3] and damped near the target (1/8 of the way within
// 20 % above or 10 % below, 1/4 within 50 % / 20 %); within 5 % of the target (or on it) the
// target counts as hit, once: the RPS histogram starts over then.
void Schbench::auto_scale_rps(Api& k) {
  auto& st = *st_;
  auto& sh = st.sh;
  const bool first_run = st.stat_total == 0;
  float busy = read_busy(k);
  if (first_run) return;
  const int goal = o_.auto_rps;
  auto hit = [&] {
    if (st.auto_rps_target_hit) return;
    st.auto_rps_target_hit = true;
    sh.stats.rps.reset();
  };
  float target = static_cast<float>(sh.rps_per_msg);
  if (busy < static_cast<float>(goal)) {
    float delta = static_cast<float>(goal) / busy;  // busy 0: +inf, clamped to 3
    if (delta > 3) {
      delta = 3;
    } else if (delta < 1.2) {
      delta = 1 + (delta - 1) / 8;
      if (delta < 1.05) hit();
    } else if (delta < 1.5) {
      delta = 1 + (delta - 1) / 4;
    }
    target = std::ceil(static_cast<float>(sh.rps_per_msg) * delta);
    if (target >= static_cast<float>(1ULL << 31)) target = static_cast<float>(sh.rps_per_msg);
  } else if (busy > static_cast<float>(goal)) {
    float delta = static_cast<float>(goal) / busy;
    if (delta < 0.3) {
      delta = 0.3f;  // (C: a double 0.3 stored in the float)
    } else if (delta > .9) {
      delta += (1 - delta) / 8;
      if (delta > .95) hit();
    } else if (delta > .8) {
      delta += (1 - delta) / 4;
    }
    target = std::floor(static_cast<float>(sh.rps_per_msg) * delta);
    if (target <= 0) target = 0;
  } else {
    hit();
  }
  sh.rps_per_msg = static_cast<int>(target);
}

bool Schbench::finished() const { return st_->sh.finished; }

sim::Time Schbench::time_limit() const { return sim::Time::sec(o_.runtime + 1); }

std::string Schbench::report() const {
  const auto& sh = st_->sh;
  std::string out;
  if (o_.auto_pin) out += "auto pinning message and worker threads\n";  // parse_options()
  if (o_.threads_auto) out += fmt::format("setting worker threads to {}\n", o_.threads);
  out += st_->out;
  print_block(out, sh.stats.wakeup, "Wakeup Latencies", "usec", o_.runtime, kPlistForLat, kStar99);
  print_block(out, sh.stats.request, "Request Latencies", "usec", o_.runtime, kPlistForLat, kStar99);
  print_block(out, sh.stats.rps, "RPS", "requests", o_.runtime, kPlistForRps, kStar50);
  if (o_.auto_rps == 0)
    out += fmt::format("average rps: {:.2f}\n", average_rps());
  else
    out += fmt::format("final rps goal was {}\n", sh.rps_per_msg * o_.message_threads);
  // /proc/<tid>/schedstat: run delay / timeslices, averaged over each kind of thread.
  auto delay = [this](const auto& v) {
    double sum = 0;
    for (const auto& x : v) {
      kernel::TaskStat t = st_->api->stat(*x->task);
      if (t.nr_switches_in > 0)
        sum += static_cast<double>(t.run_delay_ns) / t.nr_switches_in / 1000.0;
    }
    return v.empty() ? 0.0 : sum / v.size();
  };
  out += fmt::format("sched delay: message {:.0f} (usec) worker {:.0f} (usec)\n", delay(st_->msgs),
                     delay(st_->workers));
  return out;
}

double Schbench::average_rps() const {
  return static_cast<double>(st_->sh.loop_count) / o_.runtime;
}

std::vector<Metric> Schbench::metrics() const {
  const auto& sh = st_->sh;
  auto p99 = [](const SchbenchHist& h) { return static_cast<double>(h.percentiles(kPlist)[3].first); };
  auto p50 = [](const SchbenchHist& h) { return static_cast<double>(h.percentiles(kPlist)[1].first); };
  return {{"wakeup_p99", "us", p99(sh.stats.wakeup), false},
          {"wakeup_p50", "us", p50(sh.stats.wakeup), false},
          {"request_p99", "us", p99(sh.stats.request), false},
          {"request_p50", "us", p50(sh.stats.request), false},
          {"average_rps", "req/s", average_rps(), true}};
}

}  // namespace schedlab::workload
