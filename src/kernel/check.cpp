// The sanity checker (--check): invariants after every event, and the "wasted cores" measure.
#include "kernel/check.hpp"

#include <fmt/format.h>

#include "kernel/cpu.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

Checker::Checker(Kernel& k) : k_(k), wasting_(k.nr_cpus(), 0) {}

Checker::Mark& Checker::mark(const Task* t) {
  if (t->id >= static_cast<int>(marks_.size())) marks_.resize(t->id + 1);
  return marks_[t->id];
}

void Checker::placed(const Task* p) { mark(p).queued = false; }

void Checker::fail(int cpu, const Task* t, const std::string& what) const {
  std::string task = t ? fmt::format(" task={}-{}", t->comm, t->pid) : "";
  throw CheckError(fmt::format("check failed at t={}ns cpu={}{}: {}", k_.now().count(), cpu,
                               task, what));
}

// After every event: a task is on at most one CPU and in at most one place (running, queued,
// or on one wake list); every runnable task is somewhere; queued tasks agree with on_rq, their
// CPU and nr_running; a CPU's time buckets never run backwards. Also accumulates the time each
// CPU sat idle while a runnable task waited on another runqueue of its LLC (wasted_idle_ns).
void Checker::check() {
  Time now = k_.now();
  // Wasted cores: the state held since the previous check.
  int64_t dt = (now - last_check_).count();
  if (dt > 0)
    for (int c = 0; c < k_.nr_cpus(); ++c)
      if (wasting_[c]) k_.rq(c).c.wasted_idle_ns += dt;
  last_check_ = now;

  const uint64_t gen = ++gen_;
  auto place = [&](const Task* t, int cpu, const char* how) {
    Mark& m = mark(t);
    if (m.gen == gen)
      fail(cpu, t, fmt::format("task is {} here but also on cpu {}", how, m.cpu));
    m.gen = gen;
    m.cpu = cpu;
  };
  for (const auto& rq : k_.sched().rqs) {
    int cpu = rq.cpu;
    const Cpu& exec = k_.cpu(cpu);
    if (exec.bucket_start() > now) fail(cpu, nullptr, "accounting clock ahead of time");
    if (rq.curr != rq.idle) {
      mark(rq.curr).queued = false;
      if (rq.curr->state == TaskState::Dead && exec.mode() != Mode::Kernel)
        fail(cpu, rq.curr, "a dead task is running");
      if (rq.curr->cpu != cpu) fail(cpu, rq.curr, "running task's task_cpu differs");
      place(rq.curr, cpu, "running");
    }
    int queued = 0;
    for (const auto* q : {&rq.cfs, &rq.rt})
      for (const Task* t : *q) {
        ++queued;
        if (!t->on_rq) fail(cpu, t, "queued task has on_rq == 0");
        if (t->cpu != cpu) fail(cpu, t, "queued task's task_cpu differs");
        if (t->state == TaskState::Dead) fail(cpu, t, "a dead task is queued");
        place(t, cpu, "queued");
        // A waiting task's virtual runtime only moves while it runs.
        Mark& m = mark(t);
        if (!m.queued) {
          m.queued = true;
          m.vruntime = t->vruntime;
        } else if (t->vruntime != m.vruntime) {
          fail(cpu, t, "vruntime of a queued task changed");
        }
      }
    for (const Task* t : rq.ttwu_inflight) place(t, cpu, "being enqueued from the wake list");
    for (const Task* t : rq.wake_list) {
      if (t->on_rq) fail(cpu, t, "task on a wake list is already enqueued");
      place(t, cpu, "on the wake list");
    }
    int expect = queued + (rq.curr != rq.idle && rq.curr->on_rq ? 1 : 0);
    if (rq.nr_running != expect)
      fail(cpu, nullptr, fmt::format("nr_running {} but {} runnable tasks", rq.nr_running, expect));
  }
  for (const auto& t : k_.tasks()) {
    if (t->pid == 0 || t->state != TaskState::Running) continue;
    if (mark(t.get()).gen != gen) fail(t->cpu, t.get(), "runnable task is nowhere (lost)");
  }
  // Which CPUs are now idle while their LLC has a task waiting on a runqueue.
  for (const auto& l : k_.sched().llcs) {
    bool waiting = false;
    for (int c : l.cpus)
      if (!k_.rq(c).cfs.empty() || !k_.rq(c).rt.empty()) waiting = true;
    for (int c : l.cpus) wasting_[c] = waiting && k_.cpu(c).mode() == Mode::Idle;
  }
}

}  // namespace schedlab::kernel
