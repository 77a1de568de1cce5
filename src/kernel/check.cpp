// The sanity checker (--check): invariants after every event, and the "wasted cores" measure.
#include <fmt/format.h>


#include "kernel/kernel.hpp"

namespace schedlab::kernel {

void Kernel::check_fail(int cpu, const Task* t, const std::string& what) const {
  std::string task = t ? fmt::format(" task={}-{}", t->comm, t->pid) : "";
  throw CheckError(fmt::format("check failed at t={}ns cpu={}{}: {}", ev_.now().count(), cpu,
                               task, what));
}

// After every event: a task is on at most one CPU and in at most one place (running, queued,
// or on one wake list); every runnable task is somewhere; queued tasks agree with on_rq, their
// CPU and nr_running; a CPU's time buckets never run backwards. Also accumulates the time each
// CPU sat idle while a runnable task waited on another runqueue of its LLC (wasted_idle_ns).
void Kernel::check_invariants() {
  Time now = ev_.now();
  // Wasted cores: the state held since the previous check.
  int64_t dt = (now - last_check_).count();
  if (dt > 0)
    for (int c = 0; c < nr_cpus(); ++c)
      if (wasting_[c]) rqs_[c].c.wasted_idle_ns += dt;
  last_check_ = now;

  const uint64_t gen = ++check_gen_;
  auto place = [&](const Task* t, int cpu, const char* how) {
    Task* m = const_cast<Task*>(t);  // checker bookkeeping only
    if (m->check_gen == gen)
      check_fail(cpu, t, fmt::format("task is {} here but also on cpu {}", how, m->check_cpu));
    m->check_gen = gen;
    m->check_cpu = cpu;
  };
  for (const auto& rq : rqs_) {
    int cpu = rq.cpu;
    if (rq.bucket_start > now) check_fail(cpu, nullptr, "accounting clock ahead of time");
    if (rq.curr != rq.idle) {
      rq.curr->check_queued = false;
      if (rq.curr->state == TaskState::Dead && rq.mode != Mode::Kernel)
        check_fail(cpu, rq.curr, "a dead task is running");
      if (rq.curr->cpu != cpu) check_fail(cpu, rq.curr, "running task's task_cpu differs");
      place(rq.curr, cpu, "running");
    }
    int queued = 0;
    for (const auto* q : {&rq.cfs, &rq.rt})
      for (const Task* t : *q) {
        ++queued;
        if (!t->on_rq) check_fail(cpu, t, "queued task has on_rq == 0");
        if (t->cpu != cpu) check_fail(cpu, t, "queued task's task_cpu differs");
        if (t->state == TaskState::Dead) check_fail(cpu, t, "a dead task is queued");
        place(t, cpu, "queued");
        // A waiting task's virtual runtime only moves while it runs.
        Task* m = const_cast<Task*>(t);
        if (!m->check_queued) {
          m->check_queued = true;
          m->check_vruntime = t->vruntime;
        } else if (t->vruntime != m->check_vruntime) {
          check_fail(cpu, t, "vruntime of a queued task changed");
        }
      }
    for (const Task* t : rq.ttwu_inflight) place(t, cpu, "being enqueued from the wake list");
    for (const Task* t : rq.wake_list) {
      if (t->on_rq) check_fail(cpu, t, "task on a wake list is already enqueued");
      place(t, cpu, "on the wake list");
    }
    int expect = queued + (rq.curr != rq.idle && rq.curr->on_rq ? 1 : 0);
    if (rq.nr_running != expect)
      check_fail(cpu, nullptr, fmt::format("nr_running {} but {} runnable tasks", rq.nr_running,
                                           expect));
  }
  for (const auto& t : tasks_) {
    if (t->pid == 0 || t->state != TaskState::Running) continue;
    if (t->check_gen != gen) check_fail(t->cpu, t.get(), "runnable task is nowhere (lost)");
  }
  // Which CPUs are now idle while their LLC has a task waiting on a runqueue.
  for (const auto& l : llcs_) {
    bool waiting = false;
    for (int c : l.cpus)
      if (!rqs_[c].cfs.empty() || !rqs_[c].rt.empty()) waiting = true;
    for (int c : l.cpus) wasting_[c] = waiting && rqs_[c].mode == Mode::Idle;
  }
}

}  // namespace schedlab::kernel
