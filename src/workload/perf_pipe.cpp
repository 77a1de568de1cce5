#include "workload/perf_pipe.hpp"

#include <fmt/format.h>

#include "workload/program.hpp"

namespace schedlab::workload {

namespace {
using Shared = Completion;

// task 0 (the forked child): read p1, write p2. task 1 (the parent): write p1, read p2.
class PipeWorker : public Program {
 public:
  PipeWorker(int id, Channel* in, Channel* out, long long loops, ChannelCosts c, int64_t exit_ns,
             Shared* sh, int64_t token, long long* ops = nullptr)
      : id_(id), in_(in), out_(out), loops_(loops), c_(c), exit_ns_(exit_ns), sh_(sh), token_(token), ops_(ops) {}

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (i_ == loops_) {
      if (done_) return;
      done_ = true;
      exit_after(exit_ns_, [this](Api& k, Task&) { sh_->one_done(k); });
      return;
    }
    if (id_ == 0) {
      if (!have_) {
        if (read(*in_, c_, self)) have_ = true;
        return;
      }
      if (write(*out_, token_, c_, self)) {
        have_ = false;
        ++i_;
      }
    } else {
      if (!sent_) {
        if (write(*out_, token_, c_, self)) sent_ = true;
        return;
      }
      if (read(*in_, c_, self)) {
        sent_ = false;
        ++i_;
        if (ops_) *ops_ = i_;
      }
    }
  }

 private:
  int id_;
  Channel* in_;
  Channel* out_;
  long long loops_;
  ChannelCosts c_;
  int64_t exit_ns_;
  Shared* sh_;
  int64_t token_;
  long long* ops_;  // round trips done, for progress()
  long long i_ = 0;
  bool have_ = false, sent_ = false, done_ = false;
};

}  // namespace

struct PerfPipe::State {
  Shared sh;
  Channel p1, p2;
  CacheFootprint cache;  // docs/model.md, "Cold channel reads and sends"
  long long ops = 0;
};

PerfPipe::PerfPipe(const PerfPipeOptions& o) : o_(o), st_(std::make_unique<State>()) {}
PerfPipe::~PerfPipe() = default;

void PerfPipe::setup(Api& k) {
  const auto& c = k.machine().costs;
  ChannelCosts pc = ChannelCosts::pipe(c);
  pc.use_cache(st_->cache, k.machine());
  const auto& tun = k.machine().tunables;
  st_->p1.make_pipe(tun.pipe_capacity_bytes, tun.pipe_page_bytes);
  st_->p2.make_pipe(tun.pipe_capacity_bytes, tun.pipe_page_bytes);
  st_->sh.t0 = k.now();
  st_->sh.remaining = 2;
  kernel::TaskOptions o;
  if (o_.pin_parent >= 0) o.cpus = {o_.pin_parent}, o.fork_cpu = o_.pin_parent;
  auto* t1 = k.create_task("sched-pipe",
                           std::make_unique<PipeWorker>(1, &st_->p2, &st_->p1, o_.loops, pc,
                                                        c.exit_ns, &st_->sh, o_.token_bytes, &st_->ops),
                           o);
  kernel::TaskOptions o0;
  o0.fork_cpu = k.task_cpu(*t1);
  if (o_.pin_child >= 0) o0.cpus = {o_.pin_child};
  if (o_.threaded) o0.mm = k.task_mm(*t1);  // -T: two threads of one process
  k.create_task("sched-pipe",
                std::make_unique<PipeWorker>(0, &st_->p1, &st_->p2, o_.loops, pc, c.exit_ns,
                                             &st_->sh, o_.token_bytes),
                o0);
}

bool PerfPipe::finished() const { return st_->sh.finished; }

double PerfPipe::progress() const {
  return o_.loops > 0 ? static_cast<double>(st_->ops) / static_cast<double>(o_.loops) : -1;
}

sim::Time PerfPipe::time_limit() const {
  return sim::Time::sec(3600);
}

std::string PerfPipe::report() const {
  double secs = (st_->sh.t1 - st_->sh.t0).seconds();
  double us = secs * 1e6;
  if (o_.simple) return fmt::format("{:.3f}\n", secs);
  std::string out = "# Running 'sched/pipe' benchmark:\n";
  out += fmt::format("# Executed {} pipe operations between two {}\n\n", o_.loops,
                     o_.threaded ? "threads" : "processes");
  out += fmt::format("{:>15}: {:.3f} [sec]\n\n", "Total time", secs);
  out += fmt::format("{:>15.6f} usecs/op\n", us / o_.loops);
  out += fmt::format("{:>15d} ops/sec\n",
                     static_cast<long long>(secs > 0 ? o_.loops / secs : 0));
  return out;
}

std::vector<Metric> PerfPipe::metrics() const {
  double secs = (st_->sh.t1 - st_->sh.t0).seconds();
  return {{"usecs_per_op", "us/op", secs * 1e6 / o_.loops, false},
          {"ops_per_sec", "ops/s", secs > 0 ? o_.loops / secs : 0, true},
          {"total_time", "s", secs, false}};
}

}  // namespace schedlab::workload
