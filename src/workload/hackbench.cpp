// hackbench (rt-tests) and its task graph: G groups of F senders and F receivers; every sender
// writes `loops` messages of `datasize` bytes to each receiver of its group over pipes or AF_UNIX
// stream sockets. Timed from the release of all tasks until the last one is reaped.
#include <fmt/format.h>

#include "workload/hackbench.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

namespace {

struct Shared {
  kernel::Task* main = nullptr;
  int remaining = 0;  // tasks still running
  sim::Time t0, t1;
  bool finished = false;
};

class Sender : public Program {
 public:
  Sender(std::vector<Channel>* chans, int first, int fds, int loops, int64_t size,
         ChannelCosts costs, int64_t exit_ns, Shared* sh)
      : chans_(chans), first_(first), fds_(fds), loops_(loops), size_(size), costs_(costs),
        exit_ns_(exit_ns), sh_(sh) {}

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (i_ == loops_) {
      if (exited_) return;
      exited_ = true;
      exit_after(exit_ns_, [this](Api&, Task&) {
        if (--sh_->remaining == 0) then(Action::wake(sh_->main, false));
      });
      return;
    }
    Channel& ch = (*chans_)[first_ + j_];
    if (write(ch, size_, costs_, self)) {
      if (++j_ == fds_) {
        j_ = 0;
        ++i_;
      }
    }
  }

 private:
  std::vector<Channel>* chans_;
  int first_, fds_, loops_;
  int64_t size_;
  ChannelCosts costs_;
  int64_t exit_ns_;
  Shared* sh_;
  int i_ = 0, j_ = 0;
  bool exited_ = false;
};

class Receiver : public Program {
 public:
  Receiver(Channel* ch, int64_t total, ChannelCosts costs, int64_t exit_ns, Shared* sh)
      : ch_(ch), total_(total), costs_(costs), exit_ns_(exit_ns), sh_(sh) {}

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (got_ == total_) {
      if (exited_) return;
      exited_ = true;
      exit_after(exit_ns_, [this](Api&, Task&) {
        if (--sh_->remaining == 0) then(Action::wake(sh_->main, false));
      });
      return;
    }
    if (read(*ch_, costs_, self)) ++got_;
  }

 private:
  Channel* ch_;
  int64_t total_;
  ChannelCosts costs_;
  int64_t exit_ns_;
  Shared* sh_;
  int64_t got_ = 0;
  bool exited_ = false;
};

// The main task: one write to the shared wake fd makes every poller runnable; then wait() for
// all children.
class Main : public Program {
 public:
  Main(std::vector<Task*>* children, int64_t write_ns, Shared* sh)
      : children_(children), write_ns_(write_ns), sh_(sh) {}

 protected:
  void step(Api& /*k*/, Task& /*self*/) override {
    switch (phase_) {
      case 0:
        phase_ = 1;
        push([this](Api& k, Task&) { sh_->t0 = k.now(); });
        push(Action::compute(write_ns_));
        // One write to the wake fd: pipe_write() wakes the pollers on the pipe's wait queue
        // from its head, and poll_wait() (add_wait_queue(): list_add) put each at the head:
        // the child that polled last, the last created, is woken first.
        for (auto c = children_->rbegin(); c != children_->rend(); ++c) push(Action::wake(*c, false));
        return;
      case 1:
        if (sh_->remaining > 0) {
          push(Action::block());
          return;
        }
        phase_ = 2;
        push([this](Api& k, Task&) {
          sh_->t1 = k.now();
          sh_->finished = true;
          k.stop();
        });
        push(Action::exit());
        return;
      default:
        return;
    }
  }

 private:
  std::vector<Task*>* children_;
  int64_t write_ns_;
  Shared* sh_;
  int phase_ = 0;
};

// The skb truesize one message of `bytes` charges to the AF_UNIX send buffer: the profile's
// small-skb figure, plus the data beyond the small head's 320 bytes (cache-line aligned) for a
// larger message.
int64_t unix_truesize(const machine::Tunables& t, int64_t bytes) {
  constexpr int64_t kSmallHeadData = 320;  // SKB_SMALL_HEAD_SIZE less skb_shared_info, x86-64 v6.3+
  const int64_t aligned = (bytes + 63) / 64 * 64;
  return t.unix_skb_truesize_bytes + (aligned > kSmallHeadData ? aligned - kSmallHeadData : 0);
}

}  // namespace

struct Hackbench::State {
  Shared sh;
  std::vector<Channel> chans;
  std::vector<Task*> children;
  CacheFootprint cache;  // per-core channel bytes (docs/model.md, "Cold channel reads and sends")
};

Hackbench::Hackbench(const HackbenchOptions& o) : o_(o), st_(std::make_unique<State>()) {}
Hackbench::~Hackbench() = default;

void Hackbench::setup(Api& k) {
  const auto& c = k.machine().costs;
  const auto& tun = k.machine().tunables;
  ChannelCosts costs = o_.pipe ? ChannelCosts::pipe(c) : ChannelCosts::unix_socket(c);
  costs.use_cache(st_->cache, k.machine());
  int64_t exit_ns = c.exit_ns;
  auto& sh = st_->sh;
  st_->chans.resize(static_cast<size_t>(o_.groups) * o_.fds);
  for (auto& ch : st_->chans) {
    if (o_.pipe)
      ch.make_pipe(tun.pipe_capacity_bytes, tun.pipe_page_bytes);
    else
      ch.make_unix(tun.unix_sndbuf_bytes, unix_truesize(tun, o_.datasize));
  }
  kernel::TaskOptions mo;
  mo.start_blocked = true;
  sh.main = k.create_task("hackbench", std::make_unique<Main>(&st_->children, c.pipe_write_ns, &sh), mo);
  for (int g = 0; g < o_.groups; ++g) {
    int first = g * o_.fds;
    kernel::TaskOptions to;
    to.start_blocked = true;
    to.fork_cpu = k.task_cpu(*sh.main);
    if (o_.threads) to.mm = k.task_mm(*sh.main);  // -T: threads of one process; else fork()ed children
    for (int r = 0; r < o_.fds; ++r) {
      auto t = k.create_task("hackbench",
                             std::make_unique<Receiver>(&st_->chans[first + r],
                                                        static_cast<int64_t>(o_.fds) * o_.loops,
                                                        costs, exit_ns, &sh),
                             to);
      st_->children.push_back(t);
    }
    for (int s = 0; s < o_.fds; ++s) {
      auto t = k.create_task("hackbench",
                             std::make_unique<Sender>(&st_->chans, first, o_.fds, o_.loops,
                                                      o_.datasize, costs, exit_ns, &sh),
                             to);
      st_->children.push_back(t);
    }
  }
  sh.remaining = static_cast<int>(st_->children.size());
  k.wake_up(sh.main, k.task_cpu(*sh.main));
}

// The main task, and per group F receivers, F senders and F channels; the children's pointers
// and the main task's queue of their wakeups (a power-of-two ring, so up to twice their number).
Footprint Hackbench::footprint() const {
  const int64_t pairs = static_cast<int64_t>(o_.groups) * o_.fds, children = 2 * pairs;
  Footprint f;
  f.tasks = 1 + children;
  f.bytes = heap_bytes(sizeof(Main)) + pairs * (heap_bytes(sizeof(Receiver)) + heap_bytes(sizeof(Sender))) +
            pairs * static_cast<int64_t>(sizeof(Channel)) + children * static_cast<int64_t>(sizeof(Task*)) +
            2 * (children + 2) * static_cast<int64_t>(Program::queue_item_bytes());
  return f;
}

bool Hackbench::finished() const { return st_->sh.finished; }

double Hackbench::seconds() const { return (st_->sh.t1 - st_->sh.t0).seconds(); }

std::string Hackbench::report() const {
  int tasks = 2 * o_.fds * o_.groups;
  std::string out = fmt::format(
      "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n",
      o_.threads ? "threaded" : "process", o_.groups, 2 * o_.fds, tasks);
  out += fmt::format("Each sender will pass {} messages of {} bytes\n", o_.loops, o_.datasize);
  out += fmt::format("Time: {:.3f}\n", seconds());
  return out;
}

std::vector<Metric> Hackbench::metrics() const {
  std::vector<Metric> out = {{"time", "s", seconds(), false}};
  // With the cold rule on (docs/model.md, "Cold channel reads and sends"; off by default, and
  // then the output is as before): how many reads paid the cold cost, of the same-CPU reads, and
  // how many sends wrote a cold buffer, of all.
  if (st_->cache.on()) {
    out.push_back({"msg_reads_cold", "reads", static_cast<double>(st_->cache.reads_cold), false});
    out.push_back({"msg_reads_same_cpu", "reads", static_cast<double>(st_->cache.reads_checked), false});
    out.push_back({"msg_sends_cold", "sends", static_cast<double>(st_->cache.sends_cold), false});
    out.push_back({"msg_sends_checked", "sends", static_cast<double>(st_->cache.sends_checked), false});
  }
  return out;
}

}  // namespace schedlab::workload
