// rt-app on the model, following rt-app.c's thread_body() and run_event(). One task per rt-app
// thread; its program walks the phases' events. The pthread objects are glibc's futex
// protocols in miniature:
//   mutex      0 free, 1 locked, 2 locked with waiters; lock: 0->1 in user space, else swap in
//              2 and FUTEX_WAIT while 2; unlock: swap in 0 and FUTEX_WAKE one if it was 2
//              (no hand-over: the woken thread competes again)
//   condition  a waiter queues itself, unlocks the mutex, FUTEX_WAITs unless already signalled,
//              then relocks the mutex marking it contended (lll_cond_lock); signal/broadcast
//              FUTEX_WAKE one/all queued waiters and cost nothing when none is queued
//   barrier    rt-app's own: a mutex, a condition and a counter started at users - 1
//   semaphore  a count; sem_wait blocks at 0, sem_post wakes one waiter
// Syscalls cost the profile's futex_wait_ns / futex_wake_ns as task time, a blocked thread is an
// Action::block() and a wakeup an Action::wake() from the waker (the kernel's ttwu path).
#include "workload/rtapp.hpp"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stats/stats.hpp"
#include "util/read.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

using rtapp::Config;
using rtapp::Ev;
using rtapp::Policy;
using Row = Rtapp::Row;

namespace {

// kernel/sched/core.c sched_prio_to_weight[]: nice -20..19 -> load weight (NICE_0_LOAD 1024).
constexpr int64_t kNiceToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};
constexpr int kForksLimit = 1024;          // rt-app.c FORKS_LIMIT (per fork target)
constexpr int64_t kRuntimeChunkUs = 32;    // the runtime event works in loadwait(32) pieces
constexpr int64_t kTimingPointBytes = 88;  // sizeof(timing_point_t) on LP64: the log buffer unit
constexpr size_t kCommLen = 15;            // TASK_COMM_LEN - 1: pthread_setname_np() refuses more
// A phase whose events neither run, sleep nor block takes no simulated time (the model does not
// charge rt-app's own bookkeeping); this many such iterations in a row are refused rather than
// spun through at zero cost.
constexpr int kMaxTimelessIterations = 1000;

// rt-app's timespec_to_usec() (lround of ns / 1000) and timespec_to_usec_long() (round).
uint64_t usec(int64_t ns) { return static_cast<uint64_t>(std::llround(static_cast<double>(ns) / 1000.0)); }
int64_t usec_signed(int64_t ns) { return static_cast<int64_t>(std::round(static_cast<double>(ns) / 1000.0)); }

struct Thread;

struct MutexObj {
  int val = 0;
  Thread* owner = nullptr;
  std::deque<Thread*> waiters;  // in FUTEX_WAIT (always blocked)
};
struct CondObj {
  std::deque<Thread*> waiters;  // queued, possibly not blocked yet
};
struct BarrierObj {
  int waiting = -1;
  MutexObj m;
  CondObj c;
};
struct SemObj {
  int64_t value = 0;
  int nwaiters = 0;             // in sem_wait's slow path
  std::deque<Thread*> waiters;  // in FUTEX_WAIT (always blocked)
};
struct TimerObj {
  bool init = false;
  sim::Time t_next;
  bool relative = true;
};

struct Thread {
  int ind = 0;
  std::string name;
  int task = 0;
  bool forked = false;
  kernel::Task* kt = nullptr;
  bool blocked = false;   // in a futex wait that nobody has ended yet
  bool signaled = false;  // condition wait: taken off the list by signal/broadcast
  bool exited = false;
  const rtapp::Event* waiting_for = nullptr;
  sim::Time t_first;
  std::vector<TimerObj> local_timers;
  std::vector<Row> rows;
};

}  // namespace

struct Rtapp::State {
  const Config* cfg = nullptr;
  Api* k = nullptr;
  std::vector<int> default_cpus;  // a thread's CPUs when its task has no "cpus": taskset's, or all
  int64_t ns_per_loop = 0;
  int64_t futex_wait_ns = 0, futex_wake_ns = 0, fork_ns = 0, exit_ns = 0;
  int64_t write_ns = 0, copy_ns_per_kb = 0;
  std::vector<MutexObj> mutex;  // by resource index (only entries of that kind are used)
  std::vector<CondObj> cond;
  std::vector<BarrierObj> barrier;
  std::vector<SemObj> sem;
  std::vector<TimerObj> timer;
  std::vector<int> nforks;  // per task: threads forked from it so far
  std::vector<std::unique_ptr<Thread>> threads;
  int mm = -1;
  int live = 0;
  bool finished = false;
  bool deadlock_noted = false;
  std::vector<std::string> notices;   // rt-app's own stderr lines
  std::vector<std::string> warnings;  // schedlab's notes about the run

  void notice(const std::string& s) { notices.push_back("[rt-app] <notice> " + s); }
  Thread* create_thread(int task, bool forked, int fork_cpu);
  std::string where(const rtapp::Event& e) const { return fmt::format("{}:{}", cfg->file, e.line); }
  std::string blocked_list() const {
    std::string s;
    for (const auto& t : threads)
      if (!t->exited && t->waiting_for) {
        const auto& e = *t->waiting_for;
        s += fmt::format("{}{} in {} '{}' ({})", s.empty() ? "" : ", ", t->name,
                         rtapp::event_name(e.type), e.ref, where(e));
      }
    return s;
  }
  // Called as a thread is about to block or has exited: if every thread left is blocked, nobody
  // will ever wake anyone.
  void check_deadlock() {
    for (const auto& t : threads)
      if (!t->exited && !t->blocked) return;
    const rtapp::Event* first = nullptr;
    for (const auto& t : threads)
      if (!first && !t->exited) first = t->waiting_for;
    std::string at = first ? where(*first) : cfg->file;
    if (cfg->global.duration_s <= 0)
      throw WorkloadError(fmt::format(
          "{}: deadlock at {:.6f} s: every thread is blocked: {}; global.duration is {}, so rt-app "
          "would hang here until killed",
          at, k->now().seconds(), blocked_list(), cfg->global.duration_s));
    if (!deadlock_noted) {
      deadlock_noted = true;
      warnings.push_back(fmt::format("{}: deadlock at {:.6f} s: every thread is blocked until the end of the run: {}",
                                     at, k->now().seconds(), blocked_list()));
    }
  }
};

namespace {

// One rt-app thread: thread_body()'s loop over phases and their events.
class ThreadProg : public Program {
 public:
  ThreadProg(Rtapp::State* st, Thread* th)
      : st_(st), th_(th), task_(st->cfg->tasks[th->task]), cpus_(&task_.cpus) {}

 protected:
  void step(Api& k, Task&) override {
    switch (state_) {
      case State::Start:
        start();
        state_ = State::Iterate;
        return;
      case State::Iterate:
        if (thread_loop_ == task_.loop) {
          finish();
          state_ = State::Done;
          return;
        }
        set_affinity(k);
        push([this](Api& k, Task&) {
          t_start_ = k.now();
          ld_ = LogData{};
        });
        ev_ = 0;
        state_ = State::Events;
        return;
      case State::Events: {
        const auto& ph = task_.phases[phase_];
        if (ev_ < ph.events.size()) {
          event(ph.events[ev_++]);
          return;
        }
        push([this](Api& k, Task&) { end_iteration(k); });
        state_ = State::Iterate;
        return;
      }
      case State::Done:
        push(Action::exit());
        return;
    }
  }

 private:
  enum class State { Start, Iterate, Events, Done };
  struct LogData {
    uint64_t perf = 0, duration = 0, c_duration = 0, c_period = 0, wu_lat = 0;
    int64_t slack = 0;
    int missed = 0;
  };

  // set_thread_affinity() as each phase starts: sched_setaffinity() when the phase's cpus differ
  // from the thread's current ones (the kernel moves the thread if its CPU leaves the mask).
  void set_affinity(Api& k) {
    const std::vector<int>& want = task_.phases[phase_].cpus;
    if (want == *cpus_) return;
    cpus_ = &want;
    push(Action::set_affinity(k.cpumask(want.empty() ? st_->default_cpus : want)));
  }

  const rtapp::Sched& sched() const { return task_.sched; }
  int64_t slack_ns() const { return sched().policy == Policy::Fifo ? 0 : kTimerSlackNs; }

  void start() {
    push([this](Api& k, Task&) {
      st_->notice(fmt::format("[{}] starting thread ...\n", th_->ind));
      th_->t_first = sim::Time{};  // t_zero: the start of the use case
      if (task_.delay_us > 0) {
        // clock_nanosleep(TIMER_ABSTIME, t_zero + delay) while still SCHED_OTHER (rt-app sets
        // the policy after the delay): the default timer slack applies.
        th_->t_first = th_->t_first + sim::Time::us(task_.delay_us);
        if (k.now() < th_->t_first) sleep_for((th_->t_first - k.now()).count() + kTimerSlackNs);
      }
    });
    push([this](Api&, Task&) {
      st_->notice(fmt::format("[{}] Starting with {} policy with priority {}", th_->ind,
                              rtapp::policy_name(sched().policy), sched().prio));
      if (sched().policy == Policy::Fifo && st_->cfg->global.lock_pages)
        st_->notice(fmt::format("[{}] Locking pages in memory", th_->ind));
    });
  }

  void finish() {
    push([this](Api&, Task&) { st_->notice(fmt::format("[{}] Exiting.", th_->ind)); });
    exit_after(st_->exit_ns, [this](Api& k, Task&) {
      th_->exited = true;
      if (--st_->live == 0) {
        if (st_->cfg->global.duration_s <= 0) {
          st_->finished = true;
          k.stop();
        }
        return;
      }
      st_->check_deadlock();  // the others may all be waiting for something only we could do
    });
  }

  void end_iteration(Api& k) {
    sim::Time t_end = k.now();
    Row r;
    r.ind = th_->ind;
    r.perf = ld_.perf;
    r.run = ld_.duration;
    r.period = usec((t_end - t_start_).count());
    r.start = usec(t_start_.count());
    r.end = usec(t_end.count());
    r.rel_st = usec(t_start_.count());  // rt-app's t_start (before the threads) is time 0
    r.slack = ld_.slack;
    r.c_duration = ld_.c_duration;
    r.c_period = ld_.c_period;
    r.wu_lat = ld_.wu_lat;
    r.missed = ld_.missed;
    th_->rows.push_back(r);
    timeless_ = t_end == t_start_ ? timeless_ + 1 : 0;
    if (timeless_ >= kMaxTimelessIterations) {
      const auto& ph = task_.phases[phase_];
      throw WorkloadError(fmt::format(
          "{}:{}: tasks.{}: {} iterations of phase '{}' in a row took no time (its events neither run, "
          "sleep nor block): the model would spin here at no cost; add a run or sleep event",
          st_->cfg->file, ph.line, task_.name, timeless_, ph.name));
    }
    if (++phase_loop_ == task_.phases[phase_].loop) {
      phase_loop_ = 0;
      if (++phase_ == task_.phases.size()) {
        phase_ = 0;
        ++thread_loop_;
        if (thread_loop_ < 0) thread_loop_ = 0;
      }
    }
  }

  // ---- primitives (called from inside a queued function: they queue what follows at once) --

  void sleep_for(int64_t ns) {
    then(Action::sleep(ns));
  }
  void block(const rtapp::Event& e) {
    th_->blocked = true;
    th_->waiting_for = &e;
    st_->check_deadlock();
    then(Action::block());
    then([this](Api&, Task&) { th_->waiting_for = nullptr; });
  }
  void wake(Thread* w) {
    if (!w->blocked) return;
    w->blocked = false;
    then(Action::wake(w->kt, false));
  }
  void futex_syscall(int64_t ns) { then(Action::compute(ns)); }
  // FUTEX_WAKE of one: the first thread queued when the syscall gets to the queue, if any.
  void futex_wake_one(std::deque<Thread*>& q) {
    futex_syscall(st_->futex_wake_ns);
    then([this, &q](Api&, Task&) {
      if (q.empty()) return;
      Thread* w = q.front();
      q.pop_front();
      wake(w);
    });
  }

  void lock(MutexObj& m, const rtapp::Event& e) {
    if (m.val == 0) {  // uncontended: a cmpxchg in user space
      m.val = 1;
      m.owner = th_;
      return;
    }
    lock_contended(m, e);
  }
  // Swap in 2; if it was free we own it, else FUTEX_WAIT while it stays 2, then try again.
  void lock_contended(MutexObj& m, const rtapp::Event& e) {
    int old = m.val;
    m.val = 2;
    if (old == 0) {
      m.owner = th_;
      return;
    }
    futex_syscall(st_->futex_wait_ns);
    then([this, &m, &e](Api&, Task&) {
      if (m.val == 2) {
        m.waiters.push_back(th_);
        block(e);
      }
      then([this, &m, &e](Api&, Task&) { lock_contended(m, e); });
    });
  }
  void unlock(MutexObj& m) {
    int old = m.val;
    m.val = 0;
    m.owner = nullptr;
    if (old == 2) futex_wake_one(m.waiters);
  }
  void cond_wait(CondObj& c, MutexObj& m, const rtapp::Event& e) {
    c.waiters.push_back(th_);
    th_->signaled = false;
    unlock(m);
    futex_syscall(st_->futex_wait_ns);
    then([this, &m, &e](Api&, Task&) {
      if (!th_->signaled) block(e);
      then([this, &m, &e](Api&, Task&) { lock_contended(m, e); });  // lll_cond_lock
    });
  }
  void signal(CondObj& c, bool all) {
    if (c.waiters.empty()) return;  // nobody queued: no syscall
    int n = 0;
    do {
      signaled_.push_back(c.waiters.front());
      c.waiters.pop_front();
      signaled_.back()->signaled = true;
      ++n;
    } while (all && !c.waiters.empty());
    futex_syscall(st_->futex_wake_ns);
    then([this, n](Api&, Task&) {
      for (int i = 0; i < n; ++i) wake(signaled_[signaled_head_++]);
      if (signaled_head_ == signaled_.size()) {
        signaled_.clear();
        signaled_head_ = 0;
      }
    });
  }
  // A queued cond_wait() on c with m (both live in the use case's tables for the whole run).
  StepFn cond_wait_fn(CondObj& c, MutexObj& m, const rtapp::Event& e) {
    return [this, &c, &m, &e](Api&, Task&) { cond_wait(c, m, e); };
  }
  void sem_wait(SemObj& s, const rtapp::Event& e, bool first) {
    if (s.value > 0) {
      s.value--;
      if (!first) s.nwaiters--;
      return;
    }
    if (first) s.nwaiters++;
    futex_syscall(st_->futex_wait_ns);
    then([this, &s, &e](Api&, Task&) {
      if (s.value > 0) {
        s.value--;
        s.nwaiters--;
        return;
      }
      s.waiters.push_back(th_);
      block(e);
      then([this, &s, &e](Api&, Task&) { sem_wait(s, e, false); });
    });
  }
  void sem_post(SemObj& s) {
    s.value++;
    if (s.nwaiters > 0) futex_wake_one(s.waiters);
  }

  // Work: rt-app's loadwait() runs floor(usec * 1000 / pLoad) loops (per second of usec, so
  // long runs lose a little per second) and returns perf = usec / pLoad.
  int64_t work_ns(int64_t us) const {
    int64_t p = st_->ns_per_loop;
    int64_t loops = (us / 1000000) * (1000000000 / p) + (us % 1000000) * 1000 / p;
    return loops * p;
  }

  void runtime_chunk(const rtapp::Event& e, sim::Time t0) {
    int64_t p = st_->ns_per_loop;
    ld_.perf += static_cast<uint64_t>(kRuntimeChunkUs / p);
    then(Action::compute(std::max<int64_t>(kRuntimeChunkUs * 1000 / p, 1) * p));
    then([this, &e, t0](Api& k, Task&) {
      int64_t d = (k.now() - t0).count();
      if (d / 1000 < e.us)
        runtime_chunk(e, t0);
      else
        ld_.duration += usec(d);
    });
  }

  void timer(const rtapp::Event& e, Api& k) {
    TimerObj& t = e.unique ? th_->local_timers[static_cast<size_t>(e.res)]
                           : st_->timer[static_cast<size_t>(e.res)];
    ld_.c_period += static_cast<uint64_t>(e.us);
    if (!t.init) {
      t.init = true;
      t.t_next = th_->t_first;
    }
    t.t_next = t.t_next + sim::Time::us(e.us);
    sim::Time now = k.now();
    int64_t slack = usec_signed((t.t_next - now).count());
    if (st_->cfg->global.cumulative_slack)
      ld_.slack += slack;
    else
      ld_.slack = slack;
    if (now < t.t_next) {
      sleep_for((t.t_next - now).count() + slack_ns());
      then([this, &t](Api& k, Task&) {
        // A shared timer may have been moved on by another thread meanwhile; rt-app's
        // unsigned usec then wraps, schedlab records 0.
        int64_t wu = (k.now() - t.t_next).count();
        ld_.wu_lat += wu > 0 ? usec(wu) : 0;
      });
    } else {
      if (t.relative) t.t_next = now;
      ld_.wu_lat = 0;
      ld_.missed++;
    }
  }

  void fork(const rtapp::Event& e) {
    int target = e.fork_task;
    if (st_->nforks[static_cast<size_t>(target)] >= kForksLimit)
      throw WorkloadError(fmt::format("{}: {}: {} reached its fork limit ({}), as rt-app stops", st_->where(e),
                                      e.key, st_->cfg->tasks[static_cast<size_t>(target)].name, kForksLimit));
    then(Action::compute(st_->fork_ns));  // clone()
    then([this, target](Api& k, Task& self) {
      Thread* child = st_->create_thread(target, true, k.task_cpu(self));
      then(Action::wake(child->kt, false));  // wake_up_new_task()
    });
  }

  // ---- events ----------------------------------------------------------------------------

  void event(const rtapp::Event& e) {
    auto& S = *st_;
    auto r = static_cast<size_t>(e.res);
    auto d = static_cast<size_t>(e.dep);
    switch (e.type) {
      case Ev::Run:
        push([this, &e](Api& k, Task&) {
          ld_.c_duration += static_cast<uint64_t>(e.us);
          ld_.perf += static_cast<uint64_t>(e.us / st_->ns_per_loop);
          sim::Time t0 = k.now();
          then(Action::compute(work_ns(e.us)));
          then([this, t0](Api& k, Task&) { ld_.duration += usec((k.now() - t0).count()); });
        });
        return;
      case Ev::Runtime:
        push([this, &e](Api& k, Task&) {
          ld_.c_duration += static_cast<uint64_t>(e.us);
          runtime_chunk(e, k.now());
        });
        return;
      case Ev::Sleep:
        push([this, &e](Api&, Task&) { sleep_for(e.us * 1000 + slack_ns()); });
        return;
      case Ev::Timer:
        push([this, &e](Api& k, Task&) { timer(e, k); });
        return;
      case Ev::Lock:
        push([this, &e, &S, r](Api&, Task&) { lock(S.mutex[r], e); });
        return;
      case Ev::Unlock:
        push([this, &S, r](Api&, Task&) { unlock(S.mutex[r]); });
        return;
      case Ev::Wait:
        push(cond_wait_fn(S.cond[r], S.mutex[d], e));
        return;
      case Ev::Signal:
      case Ev::Broad:
        push([this, &e, &S, r](Api&, Task&) { signal(S.cond[r], e.type == Ev::Broad); });
        return;
      case Ev::Sync:
        push([this, &S, r](Api&, Task&) { signal(S.cond[r], false); });
        push(cond_wait_fn(S.cond[r], S.mutex[d], e));
        return;
      case Ev::Barrier: {
        BarrierObj& b = S.barrier[r];
        push([this, &e, &b](Api&, Task&) { lock(b.m, e); });
        push([this, &e, &b](Api&, Task&) {
          if (b.waiting == 0) {  // the last one in: release the others
            signal(b.c, true);
            return;
          }
          b.waiting--;
          cond_wait(b.c, b.m, e);
          then([&b](Api&, Task&) { b.waiting++; });
        });
        push([this, &b](Api&, Task&) { unlock(b.m); });
        return;
      }
      case Ev::Suspend:
        push([this, &e, &S, d](Api&, Task&) { lock(S.mutex[d], e); });
        push(cond_wait_fn(S.cond[r], S.mutex[d], e));
        push([this, &S, d](Api&, Task&) { unlock(S.mutex[d]); });
        return;
      case Ev::Resume:
        push([this, &e, &S, d](Api&, Task&) { lock(S.mutex[d], e); });
        push([this, &S, r](Api&, Task&) { signal(S.cond[r], true); });
        push([this, &S, d](Api&, Task&) { unlock(S.mutex[d]); });
        return;
      case Ev::Yield:
        push(Action::yield());
        return;
      case Ev::Fork:
        push([this, &e](Api&, Task&) { fork(e); });
        return;
      case Ev::Mem:
        // memset() of the per-thread buffer, chunk by chunk: memory bandwidth approximated by
        // the profile's copy cost per KiB.
        push(Action::compute(e.bytes * S.copy_ns_per_kb / 1024));
        return;
      case Ev::Iorun: {
        // write() of the per-thread buffer to io_device until `bytes` are written: one write()
        // fixed cost per buffer-sized piece; a file (not /dev/null) also copies into the page
        // cache. Writeback and I/O waits are not modeled.
        int64_t buf = S.cfg->global.mem_buffer_size;
        int64_t writes = (e.bytes + buf - 1) / buf;
        int64_t copy = S.cfg->global.io_device == "/dev/null" ? 0 : e.bytes * S.copy_ns_per_kb / 1024;
        push(Action::compute(writes * S.write_ns + copy));
        return;
      }
      case Ev::SemPost:
        push([this, &S, r](Api&, Task&) { sem_post(S.sem[r]); });
        return;
      case Ev::SemWait:
        push([this, &e, &S, r](Api&, Task&) { sem_wait(S.sem[r], e, true); });
        return;
    }
  }

  Rtapp::State* st_;
  Thread* th_;
  // Taken off a condition by signal(), woken in order by its queued step; [head, end) pending.
  std::vector<Thread*> signaled_;
  size_t signaled_head_ = 0;
  const rtapp::Task& task_;
  State state_ = State::Start;
  size_t phase_ = 0;
  int64_t phase_loop_ = 0;
  const std::vector<int>* cpus_;  // the affinity now: the thread's from its creation, then a phase's
  int64_t thread_loop_ = 0;
  size_t ev_ = 0;
  sim::Time t_start_;
  LogData ld_;
  int timeless_ = 0;  // iterations in a row that took no simulated time
};

}  // namespace

namespace {
// rt-app's name of a thread created at start: "<task>-<index among all threads>".
std::string initial_thread_name(const rtapp::Task& t, int ind) { return fmt::format("{}-{}", t.name, ind); }

// "<logdir>/<name>" without rt-app's doubled slash (its default logdir is "./"): a path in the
// current directory is written "./name".
std::string in_logdir(const rtapp::Global& g, const std::string& name) {
  std::filesystem::path p = (std::filesystem::path(g.logdir) / name).lexically_normal();
  std::string s = p.string();
  return p.is_relative() && s.find('/') == std::string::npos ? "./" + s : s;
}

std::string log_path(const rtapp::Global& g, const std::string& thread) {
  return in_logdir(g, fmt::format("{}-{}.log", g.log_basename, thread));
}
}  // namespace

// The kernel-facing part: a thread is a task of the use case's one process, created with the
// task's policy, nice weight, custom slice and affinity. Initial threads are woken by the
// harness at time 0; a forked one by its parent (the caller queues the wakeup).
Thread* Rtapp::State::create_thread(int task, bool forked, int fork_cpu) {
  const rtapp::Task& t = cfg->tasks[static_cast<size_t>(task)];
  auto th = std::make_unique<Thread>();
  th->ind = static_cast<int>(threads.size());
  th->task = task;
  th->forked = forked;
  th->name = forked ? fmt::format("{}-{}-{:04d}", t.name, th->ind, nforks[static_cast<size_t>(task)]++)
                    : initial_thread_name(t, th->ind);
  for (const auto& lt : t.local_timers) th->local_timers.push_back(TimerObj{false, {}, lt.relative});
  notice(fmt::format("thread_data_set_unique_name {} {}", th->ind, th->name));
  kernel::TaskOptions o;
  o.policy = t.sched.policy == Policy::Fifo ? kernel::Policy::Fifo : kernel::Policy::Normal;
  o.rt_prio = t.sched.policy == Policy::Fifo ? t.sched.prio : 0;
  o.cpus = t.cpus;
  o.fork_cpu = fork_cpu;
  o.mm = mm;
  o.start_blocked = true;
  std::string comm = th->name.size() <= kCommLen ? th->name : "rt-app";
  if (t.sched.policy == Policy::Other) {
    o.weight = kNiceToWeight[t.sched.prio + 20];
    if (t.sched.slice_ns > 0) o.slice_ns = t.sched.slice_ns;
  }
  th->kt = k->create_task(comm, std::make_unique<ThreadProg>(this, th.get()), o);
  if (mm < 0) mm = k->task_mm(*th->kt);  // every thread lives in the first one's process
  if (!forked) k->wake_up(th->kt, k->task_cpu(*th->kt));
  live++;
  threads.push_back(std::move(th));
  return threads.back().get();
}

namespace {

// The rows of every thread of each task (instances and forks), for the metrics and the summary.
struct GroupStats {
  size_t threads = 0, rows = 0;
  int64_t missed = 0;
  std::vector<double> wu_lat, slack, period;  // wu_lat and slack: rows of phases with a timer
};

double pct(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  return stats::quantile(v, q, stats::QuantileMethod::InvertedCdf);
}

std::vector<GroupStats> group_stats(const Config& cfg, const Rtapp::State& st) {
  std::vector<GroupStats> g(cfg.tasks.size());
  for (const auto& t : st.threads) {
    auto& s = g[static_cast<size_t>(t->task)];
    s.threads++;
    for (const auto& r : t->rows) {
      s.rows++;
      s.missed += r.missed;
      s.period.push_back(static_cast<double>(r.period));
      if (r.c_period == 0) continue;
      s.wu_lat.push_back(static_cast<double>(r.wu_lat));
      s.slack.push_back(static_cast<double>(r.slack));
    }
  }
  return g;
}
}  // namespace

Rtapp::Rtapp(rtapp::Config cfg) : cfg_(std::move(cfg)), st_(std::make_unique<State>()) {}
Rtapp::~Rtapp() = default;

void Rtapp::setup(kernel::Api& k) {
  auto& s = *st_;
  s.cfg = &cfg_;
  s.k = &k;
  s.default_cpus = affinity();
  if (s.default_cpus.empty())
    for (int c = 0; c < k.nr_cpus(); ++c) s.default_cpus.push_back(c);
  const auto& c = k.machine().costs;
  s.futex_wait_ns = c.futex_wait_ns;
  s.futex_wake_ns = c.futex_wake_ns;
  s.fork_ns = c.fork_ns;
  s.exit_ns = c.exit_ns;
  s.write_ns = c.pipe_write_ns;
  s.copy_ns_per_kb = c.pipe_copy_ns_per_kb;
  size_t nr = cfg_.resources.size();
  s.mutex.resize(nr);
  s.cond.resize(nr);
  s.barrier.resize(nr);
  s.sem.resize(nr);
  s.timer.resize(nr);
  for (size_t i = 0; i < nr; ++i) {
    s.barrier[i].waiting = cfg_.resources[i].barrier_users - 1;
    s.timer[i].relative = cfg_.resources[i].relative;
  }
  s.nforks.assign(cfg_.tasks.size(), 0);
  const auto& g = cfg_.global;
  if (g.log == rtapp::LogMode::Buffer)
    s.notice(fmt::format("Log buffer size fixed to {}MB per threads", g.log_buffer_bytes >> 20));
  if (g.present && !g.calibration_set) s.notices.push_back("[rt-app] <error> missing calibration setting force CPU0");
  if (g.ns_per_loop > 0) {
    s.ns_per_loop = g.ns_per_loop;
    s.notice(fmt::format("pLoad = {}ns", s.ns_per_loop));
  } else {
    s.ns_per_loop = kRtappModelNsPerLoop;
    s.notice("Calibrate ns per loop");
    s.notice(fmt::format("pLoad = {}ns : calib_cpu {}", s.ns_per_loop, g.calib_cpu));
  }
  for (size_t t = 0; t < cfg_.tasks.size(); ++t)
    for (int i = 0; i < cfg_.tasks[t].instances; ++i) s.create_thread(static_cast<int>(t), false, 0);
  if (g.duration_s > 0)
    k.at(sim::Time::sec(g.duration_s), [this, &k] {
      st_->finished = true;
      k.stop();
    });
}

bool Rtapp::finished() const { return st_->finished; }

sim::Time Rtapp::time_limit() const {
  return cfg_.global.duration_s > 0 ? sim::Time::sec(cfg_.global.duration_s + 1) : Workload::time_limit();
}

std::string Rtapp::log_header() {
  return fmt::format("{} {:>8} {:>8} {:>8} {:>15} {:>15} {:>15} {:>10} {:>10} {:>10} {:>10}\n", "#idx",
                     "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration",
                     "c_period", "wu_lat");
}

std::string Rtapp::format_row(const Row& r) {
  return fmt::format("{:4d} {:8d} {:8d} {:8d} {:15d} {:15d} {:15d} {:10d} {:10d} {:10d} {:10d}\n", r.ind,
                     r.perf, r.run, r.period, r.start, r.end, r.rel_st, r.slack, r.c_duration,
                     r.c_period, r.wu_lat);
}

std::vector<Rtapp::ThreadLog> Rtapp::thread_logs() const {
  std::vector<ThreadLog> out;
  for (const auto& t : st_->threads) out.push_back({t->name, t->task, t->rows});
  return out;
}

// rt-app writes "<logdir>/<log_basename>-<thread>.log": in "file" mode every row as it ends
// (none after the end of `duration`); with a buffer (log_size N) the last N MB worth of rows
// when the thread exits, and nothing if it is still running when `duration` ends (rt-app
// cancels it before it flushes).
std::vector<OutputFile> Rtapp::output_files() const {
  std::vector<OutputFile> out;
  const auto& g = cfg_.global;
  if (g.log == rtapp::LogMode::Disabled) return out;
  size_t cap = static_cast<size_t>(g.log_buffer_bytes / kTimingPointBytes);
  for (const auto& t : st_->threads) {
    OutputFile f;
    f.path = log_path(g, t->name);
    f.content = log_header();
    size_t first = 0;
    if (g.log == rtapp::LogMode::Buffer) {
      if (!t->exited) first = t->rows.size();
      else if (t->rows.size() > cap) first = t->rows.size() - cap;
    }
    for (size_t i = first; i < t->rows.size(); ++i) f.content += format_row(t->rows[i]);
    out.push_back(std::move(f));
  }
  return out;
}

// Initial threads are created task by task, instance by instance (setup()); forked threads'
// logs get names only when they are forked.
std::vector<std::string> Rtapp::output_paths() const {
  std::vector<std::string> out;
  if (cfg_.global.log == rtapp::LogMode::Disabled) return out;
  int ind = 0;
  for (const auto& t : cfg_.tasks)
    for (int i = 0; i < t.instances; ++i) out.push_back(log_path(cfg_.global, initial_thread_name(t, ind++)));
  return out;
}

std::vector<std::string> Rtapp::warnings() const {
  std::vector<std::string> w = cfg_.warnings;
  w.insert(w.end(), st_->warnings.begin(), st_->warnings.end());
  if (cfg_.global.log == rtapp::LogMode::Buffer && cfg_.global.duration_s > 0)
    for (const auto& t : st_->threads)
      if (!t->exited && !t->rows.empty()) {
        w.push_back(fmt::format("{}: global.log_size: thread {} was still running at the end of the "
                                "duration and loses its {} buffered rows, as in rt-app (use \"file\")",
                                cfg_.file, t->name, t->rows.size()));
        break;
      }
  return w;
}

std::vector<Metric> Rtapp::metrics() const {
  auto g = group_stats(cfg_, *st_);
  std::vector<Metric> m;
  std::vector<double> all_wu;
  int64_t all_missed = 0;
  bool any_timer = false;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!cfg_.tasks[i].has_timer) continue;
    any_timer = true;
    all_wu.insert(all_wu.end(), g[i].wu_lat.begin(), g[i].wu_lat.end());
    all_missed += g[i].missed;
  }
  if (any_timer) {
    m.push_back({"wu_lat_p99", "us", pct(all_wu, 0.99), false});
    m.push_back({"missed", "count", static_cast<double>(all_missed), false});
  }
  for (size_t i = 0; i < g.size(); ++i) {
    const auto& t = cfg_.tasks[i];
    if (t.instances == 0 && !t.forked) continue;
    const auto& s = g[i];
    if (t.has_timer) {
      m.push_back({t.name + ".wu_lat_p50", "us", pct(s.wu_lat, 0.50), false});
      m.push_back({t.name + ".wu_lat_p99", "us", pct(s.wu_lat, 0.99), false});
      m.push_back({t.name + ".slack_p50", "us", pct(s.slack, 0.50), true});
      m.push_back({t.name + ".slack_p1", "us", pct(s.slack, 0.01), true});
      m.push_back({t.name + ".missed", "count", static_cast<double>(s.missed), false});
    } else {
      m.push_back({t.name + ".period_p50", "us", pct(s.period, 0.50), false});
      m.push_back({t.name + ".period_p99", "us", pct(s.period, 0.99), false});
    }
  }
  return m;
}

std::string Rtapp::report() const {
  std::string out;
  for (const auto& n : st_->notices) out += n + "\n";
  // rt-app prints no summary; this one is schedlab's, from the same rows as the logs.
  auto g = group_stats(cfg_, *st_);
  out += fmt::format("# schedlab: rt-app {}: {} threads, pLoad {} ns{}\n", cfg_.file, st_->threads.size(),
                     st_->ns_per_loop,
                     cfg_.global.duration_s > 0 ? fmt::format(", duration {} s", cfg_.global.duration_s) : "");
  out += fmt::format("# schedlab: {:<16} {:>7} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "task",
                     "threads", "rows", "missed", "wu_lat_p50", "wu_lat_p99", "wu_lat_max", "slack_p50",
                     "slack_p1", "period_p50");
  for (size_t i = 0; i < g.size(); ++i) {
    const auto& s = g[i];
    if (s.threads == 0) continue;
    double wmax = s.wu_lat.empty() ? 0 : *std::max_element(s.wu_lat.begin(), s.wu_lat.end());
    bool timer = cfg_.tasks[i].has_timer;
    auto col = [&](double v) { return timer ? fmt::format("{:.0f}", v) : std::string("-"); };
    out += fmt::format("# schedlab: {:<16} {:>7} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10.0f}\n",
                       cfg_.tasks[i].name, s.threads, s.rows, timer ? std::to_string(s.missed) : "-",
                       col(pct(s.wu_lat, 0.5)), col(pct(s.wu_lat, 0.99)), col(wmax), col(pct(s.slack, 0.5)),
                       col(pct(s.slack, 0.01)), pct(s.period, 0.5));
  }
  auto files = output_files();
  if (!files.empty())
    out += fmt::format("# schedlab: logs: {} ({} files)\n", in_logdir(cfg_.global, cfg_.global.log_basename + "-*.log"),
                       files.size());
  return out;
}

// --- parsing ------------------------------------------------------------------------------

// The initial threads (forked ones come later): each a Thread and its program. The log rows
// that grow with the run's length are not counted.
Footprint Rtapp::footprint() const {
  const int64_t threads = cfg_.initial_threads();
  Footprint f;
  f.tasks = threads;
  f.bytes = threads * (heap_bytes(sizeof(Thread)) + heap_bytes(sizeof(ThreadProg)) + 2 * static_cast<int64_t>(sizeof(void*)));
  return f;
}

rtapp::Config parse_rtapp(const std::string& text, const std::string& file_name, int nr_cpus, int64_t duration_s) {
  return rtapp::parse_config(text, file_name, nr_cpus, duration_s);
}

std::unique_ptr<Workload> parse_rtapp_command(const std::vector<std::string>& args, int nr_cpus) {
  std::string file;
  bool log_level = false;  // the verbosity of rt-app's own messages: not modeled
  int64_t duration_s = 0;  // --duration: schedlab's, for global.duration
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--duration") {
      if (i + 1 >= args.size()) throw WorkloadError("rt-app: option '--duration' needs a value (seconds)");
      duration_s = parse_count(a, args[++i], 1, 1000000);
    } else if (a.rfind("--duration=", 0) == 0) {
      duration_s = parse_count("--duration", a.substr(11), 1, 1000000);
    } else if (a == "-l" || a == "--log") {
      if (i + 1 >= args.size()) throw WorkloadError(fmt::format("rt-app: option '{}' needs a value", a));
      parse_count(a, args[++i], 0, 1000);
      log_level = true;
    } else if (a.rfind("--log=", 0) == 0) {
      parse_count("--log", a.substr(6), 0, 1000);
      log_level = true;
    } else if (a == "-") {
      throw WorkloadError("rt-app: reading the use case from stdin ('-') is not supported: give a file");
    } else if (a.size() > 1 && a[0] == '-') {
      throw WorkloadError(fmt::format("rt-app: unknown option '{}' (usage: rt-app [-l LEVEL] [--duration SECONDS] FILE.json)", a));
    } else if (!file.empty()) {
      throw WorkloadError(fmt::format("rt-app: unexpected argument '{}' (usage: rt-app [-l LEVEL] [--duration SECONDS] FILE.json)", a));
    } else {
      file = a;
    }
  }
  if (file.empty()) throw WorkloadError("rt-app: no use case file (usage: rt-app [-l LEVEL] [--duration SECONDS] FILE.json)");
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(file, ec))
    throw WorkloadError(fmt::format("rt-app: cannot read '{}'", file));
  // /dev/zero or a mistyped multi-GB file: one clear error at the cap, not bad_alloc.
  auto text = util::read_capped(in);
  if (in.bad()) throw WorkloadError(fmt::format("rt-app: cannot read '{}'", file));
  if (!text)
    throw WorkloadError(fmt::format("rt-app: '{}' is larger than {}, the limit for a use case file", file,
                                    util::kMaxInputText));
  rtapp::Config cfg = parse_rtapp(*text, file, nr_cpus, duration_s);
  if (log_level)
    cfg.warnings.push_back("rt-app -l: rt-app's log level is not modeled; the report shows its notice lines");
  if (!std::filesystem::is_directory(cfg.global.logdir, ec))
    throw WorkloadError(fmt::format("{}: global.logdir: log directory '{}' does not exist (rt-app: \"Log directory {} "
                                    "not existing!\")",
                                    file, cfg.global.logdir, cfg.global.logdir));
  return std::make_unique<Rtapp>(std::move(cfg));
}

}  // namespace schedlab::workload
