// kernel/sched/rt.c, simplified: SCHED_FIFO tasks in one queue, the highest rt_prio first (the
// first queued among equals); a preempted RT task goes back to the head. Left out: RR slices,
// push/pull between runqueues, RT throttling.
#include <algorithm>

#include "kernel/sched.hpp"

namespace schedlab::kernel {

namespace {

void enqueue_task_rt(Kernel&, Rq& rq, Task* p) { rq.rt.push_back(p); }
void dequeue_task_rt(Kernel&, Rq&, Task*) {}
// A preempted RT task stays at the head of its queue; one that yielded goes to the tail.
void put_prev_task_rt(Kernel&, Rq& rq, Task* prev) {
  if (rq.yield_to_tail)
    rq.rt.push_back(prev);
  else
    rq.rt.insert(rq.rt.begin(), prev);
}

Task* pick_task_rt(Kernel&, Rq& rq) {
  if (rq.rt.empty()) return nullptr;
  auto best = rq.rt.begin();
  for (auto it = rq.rt.begin(); it != rq.rt.end(); ++it)
    if ((*it)->rt_prio > (*best)->rt_prio) best = it;
  Task* next = *best;
  rq.rt.erase(best);
  return next;
}

int64_t set_next_task_rt(Kernel& k, Rq&, Task* p) {
  p->exec_start = k.now();
  return 0;
}

// wakeup_preempt_rt(): a higher priority preempts.
bool wakeup_preempt_rt(Kernel&, Rq& rq, Task* p) { return p->rt_prio > rq.curr->rt_prio; }

// select_task_rq_rt(), simplified: stay on the task's CPU.
int select_task_rq_rt(Kernel&, int, Task*, Task* p, bool, int64_t&) { return p->cpu; }

void task_tick_rt(Kernel&, Rq&, Task*) {}

// yield_task_rt(): requeue_task_rt() to the tail of its priority, behind equal-priority tasks.
void yield_task_rt(Kernel&, Rq& rq) { rq.yield_to_tail = true; }

}  // namespace

const SchedClass rt_sched_class = {
    .name = "rt",
    .rank = 2,
    .enqueue_task = enqueue_task_rt,
    .dequeue_task = dequeue_task_rt,
    .put_prev_task = put_prev_task_rt,
    .pick_task = pick_task_rt,
    .set_next_task = set_next_task_rt,
    .wakeup_preempt = wakeup_preempt_rt,
    .select_task_rq = select_task_rq_rt,
    .task_tick = task_tick_rt,
    .yield_task = yield_task_rt,
};

}  // namespace schedlab::kernel
