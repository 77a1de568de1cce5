// tbench (dbench 4.00) against tbench_srv over loopback: NPROCS client processes, each with its
// own forked server process, replay the loadfile as synchronous request/response exchanges
// (docs/workloads.md, tbench). The loadfile is a synthetic, seeded op sequence with the op mix
// and size statistics of Debian's client.txt; every client replays the same sequence from its
// start, as every real client replays the same file.
#include "workload/tbench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>

#include "workload/options.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

namespace {

// dbench's op names (as in its result table), in its table order.
enum Op : uint8_t {
  NTCreateX, Close, Rename, Unlink, Deltree, Rmdir, Mkdir, Qpathinfo, Qfileinfo, Qfsinfo,
  Sfileinfo, Find, WriteX, ReadX, LockX, UnlockX, Flush, kNumOps
};
constexpr std::array<const char*, kNumOps> kOpNames = {
    "NTCreateX", "Close",     "Rename", "Unlink", "Deltree", "Rmdir",   "Mkdir",   "Qpathinfo", "Qfileinfo",
    "Qfsinfo",   "Sfileinfo", "Find",   "WriteX", "ReadX",   "LockX",   "UnlockX", "Flush"};

// Lines per op in one pass of client.txt (458,344 lines; Deltree/Mkdir/Rmdir make up the rest).
struct MixEntry { Op op; int lines; };
constexpr std::array<MixEntry, 17> kMix = {{
    {ReadX, 124199}, {NTCreateX, 79230}, {Qpathinfo, 71814}, {Close, 58200}, {WriteX, 39502},
    {Find, 27765}, {Unlink, 16000}, {Qfsinfo, 13168}, {Qfileinfo, 12585}, {Sfileinfo, 6454},
    {Flush, 5553}, {Rename, 3355}, {LockX, 258}, {UnlockX, 258}, {Deltree, 1}, {Mkdir, 1},
    {Rmdir, 1}}};
constexpr int kLoadfileLines = 458344;

struct Line {
  Op op;
  int32_t req;      // request bytes (client -> server)
  int32_t resp;     // response bytes (server -> client)
  int32_t counted;  // bytes counted for MB/sec (ReadX returned, WriteX written)
};

// Request/response sizes per op (dbench 4.00 sockio.c); L = file name length.
Line make_line(Op op, sim::Rng& r) {
  // File name length: dbench paths such as \clients\client1\~dmtmp\PWRPNT\PPTC112.TMP;
  // approximated as uniform 20..60 characters (UTF-16 on the wire: 2 bytes each).
  auto name = [&r] { return 20 + static_cast<int32_t>(r.below(41)); };
  switch (op) {
    case NTCreateX: return {op, 74 + 2 * name(), 87, 0};
    case Close: return {op, 47, 39, 0};
    case ReadX: {
      // ~80 % of reads return at most 4 KB; the rest are large (up to 61,440). The mixture
      // uniform(1..4096) @ 0.8 + uniform(40960..61440) @ 0.2 has mean 11.88 KB (client.txt:
      // 11.84 KB average).
      int32_t n = r.uniform() < 0.8 ? 1 + static_cast<int32_t>(r.below(4096))
                                    : 40960 + static_cast<int32_t>(r.below(20481));
      return {op, 59, 59 + n, n};
    }
    case WriteX: {
      // Mean 25.8 KB, max 65,536: uniform(1..16384) @ 0.57 + uniform(32768..65536) @ 0.43.
      int32_t n = r.uniform() < 0.57 ? 1 + static_cast<int32_t>(r.below(16384))
                                     : 32768 + static_cast<int32_t>(r.below(32769));
      return {op, 59 + n, 55, n};
    }
    case Qpathinfo: return {op, 55 + 2 * name(), 71, 0};
    case Qfileinfo: case Qfsinfo: return {op, 59, 71, 0};
    case Sfileinfo: return {op, 71, 47, 0};
    case Find: {
      // Entries returned: approximated as uniform 1..8.
      int32_t count = 1 + static_cast<int32_t>(r.below(8));
      return {op, 59 + 2 * name(), 39 + 90 * count, 0};
    }
    case Unlink: case Mkdir: case Rmdir: return {op, 43 + 2 * name(), 39, 0};
    case Rename: return {op, 47 + 2 * (name() + name()), 39, 0};
    case Flush: return {op, 41, 39, 0};
    case LockX: case UnlockX: return {op, 51, 39, 0};
    case Deltree: return {op, 0, 0, 0};
    default: return {op, 0, 0, 0};
  }
}

std::vector<Line> make_loadfile(sim::Rng r, int divisor) {
  // A random permutation of exactly the per-op line counts: one pass has the file's op mix.
  std::vector<Op> ops;
  ops.reserve(static_cast<size_t>(kLoadfileLines / divisor + kNumOps));
  for (const auto& m : kMix)
    ops.insert(ops.end(), static_cast<size_t>(std::max(1, m.lines / divisor)), m.op);
  for (size_t i = ops.size(); i > 1; --i) std::swap(ops[i - 1], ops[r.below(i)]);
  std::vector<Line> lines;
  lines.reserve(ops.size());
  for (Op op : ops) lines.push_back(make_line(op, r));
  return lines;
}

struct OpStats {
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
};

struct Shared {
  const std::vector<Line>* lines = nullptr;
  bool finished = false;
  bool warmup = true;
  sim::Time t0, t_exec;   // release, end of warm-up
  sim::Time t_end;
  int64_t bytes = 0;      // counted bytes since the end of warm-up (since t0 while warming up)
  int64_t lines_done = 0; // loadfile lines completed by all clients (whole run)
  int64_t interval_max_ns = 0;
  int64_t max_ns = 0;     // since the end of warm-up
  std::array<OpStats, kNumOps> ops{};
  std::vector<std::string> status;
};

struct Conn {
  Channel to_server, to_client;
  int64_t op_start_ns = -1;  // op in progress (for the status line's latency)
  sim::Time released;        // the parent's wakeup of the client (dbench's start barrier)
  sim::Time started;         // the client's first step, after its release
};

class Client : public Program {
 public:
  Client(Conn* c, ChannelCosts send, ChannelCosts recv, Shared* sh)
      : c_(c), send_(send), recv_(recv), sh_(sh) {}

 protected:
  void step(Api& k, Task& self) override {
    // Lines without traffic (Deltree: sockio.c's sio_deltree() sends nothing) are passed at
    // once: a step must queue an action, as a step that queues nothing ends the task
    // (Program::next()). The loadfile has traffic lines, so this ends.
    while ((*sh_->lines)[idx_].req == 0) next_line();
    if (c_->started == sim::Time()) c_->started = k.now();
    const Line& l = (*sh_->lines)[idx_];
    if (!sent_) {
      if (c_->op_start_ns < 0) c_->op_start_ns = k.now().count();
      if (write(c_->to_server, l.req, send_, self)) sent_ = true;
      return;
    }
    if (read(c_->to_client, recv_, self)) {
      sent_ = false;
      push([this](Api& k, Task&) {
        const Line& l = (*sh_->lines)[idx_];
        int64_t lat = k.now().count() - c_->op_start_ns;
        c_->op_start_ns = -1;
        auto& s = sh_->ops[l.op];
        s.count++;
        s.total_ns += lat;
        s.max_ns = std::max(s.max_ns, lat);
        sh_->interval_max_ns = std::max(sh_->interval_max_ns, lat);
        sh_->max_ns = std::max(sh_->max_ns, lat);
        sh_->bytes += l.counted;
        next_line();
      });
    }
  }

 private:
  void next_line() {
    sh_->lines_done++;
    // At the end of the file, start again (dbench: gzrewind(), until the parent sets done).
    if (++idx_ == sh_->lines->size()) idx_ = 0;
  }
  Conn* c_;
  ChannelCosts send_, recv_;
  Shared* sh_;
  size_t idx_ = 0;
  bool sent_ = false;
};

// dbench 4.00's parent after the fork loop: every child set up its connection (nb_setup():
// connect to tbench_srv, which forked a server child) and waits on the start barrier, a SysV
// semaphore (semop() waiting for zero). One semop() releases them: the kernel wakes the waiters
// in the order they queued, the fork order, one try_to_wake_up() after another on the
// parent's CPU; then the parent starts its clock (tv_start). It sleeps in waitpid() after.
class Parent : public Program {
 public:
  Parent(std::vector<Task*>* clients, std::vector<std::unique_ptr<Conn>>* conns,
         std::function<void(Api&)> released)
      : clients_(clients), conns_(conns), released_(std::move(released)) {}

 protected:
  void step(Api& /*k*/, Task& /*self*/) override {
    if (done_) {
      push(Action::block());
      return;
    }
    done_ = true;
    for (size_t i = 0; i < clients_->size(); ++i) {
      push([this, i](Api& k, Task&) { (*conns_)[i]->released = k.now(); });
      push(Action::wake((*clients_)[i], false));
    }
    push([this](Api& k, Task&) { released_(k); });
  }

 private:
  std::vector<Task*>* clients_;
  std::vector<std::unique_ptr<Conn>>* conns_;
  std::function<void(Api&)> released_;
  bool done_ = false;
};

class Server : public Program {
 public:
  Server(Conn* c, ChannelCosts send, ChannelCosts recv, Shared* sh)
      : c_(c), send_(send), recv_(recv), sh_(sh) {
    while ((*sh_->lines)[idx_].req == 0) ++idx_;  // the first line the client sends
  }

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (!have_) {
      if (read(c_->to_server, recv_, self)) have_ = true;
      return;
    }
    // The server answers the op the client sent: the client's current line.
    const Line& l = (*sh_->lines)[idx_];
    if (write(c_->to_client, l.resp, send_, self)) {
      have_ = false;
      do {
        if (++idx_ == sh_->lines->size()) idx_ = 0;
      } while ((*sh_->lines)[idx_].req == 0);
    }
  }

 private:
  Conn* c_;
  ChannelCosts send_, recv_;
  Shared* sh_;
  size_t idx_ = 0;
  bool have_ = false;
};

}  // namespace

TbenchOptions parse_tbench_options(const std::vector<std::string>& args) {
  static const std::vector<OptSpec> specs = {
      {'t', "timelimit", true}, {'c', "loadfile", true}, {'T', "tcp-options", true}};
  TbenchOptions o;
  std::vector<std::string> pos;
  for (const auto& po : getopt("tbench", args, specs, &pos)) {
    switch (po.spec->short_name) {
      case 't': o.timelimit = static_cast<int>(parse_count(po.flag, po.value, 1, 1000000)); break;
      case 'c':
        if (po.value != o.loadfile)
          throw WorkloadError(fmt::format(
              "tbench: {} {}: only the default loadfile ({}) is modeled", po.flag, po.value, o.loadfile));
        break;
      case 'T': break;  // socket options: TCP_NODELAY is what the model does anyway
    }
  }
  if (pos.empty()) throw WorkloadError("tbench: NPROCS (number of clients) is required");
  if (pos.size() > 2) throw WorkloadError(fmt::format("tbench: unexpected argument '{}'", pos[2]));
  o.nprocs = static_cast<int>(parse_count("NPROCS", pos[0], 1, 65536));
  if (pos.size() == 2) o.server = pos[1];
  return o;
}

struct Tbench::State {
  Shared sh;
  std::vector<Line> lines;
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<Task*> clients;  // in fork order
};

Tbench::Tbench(const TbenchOptions& o) : o_(o), st_(std::make_unique<State>()) {}
Tbench::~Tbench() = default;

void Tbench::setup(Api& k) {
  const auto& c = k.machine().costs;
  st_->lines = make_loadfile(k.rng("tbench"), std::max(1, o_.loadfile_divisor));
  auto& sh = st_->sh;
  sh.lines = &st_->lines;
  // Loopback send: the sender's CPU copies the data in and runs the receive softirq.
  ChannelCosts send{c.tcp_send_ns, c.tcp_recv_ns, c.tcp_copy_ns_per_kb};
  // Server: read the 4-byte length, then the rest (two recv calls), copying the request out.
  ChannelCosts srv_recv{c.tcp_send_ns, 2 * c.tcp_recv_ns, c.tcp_copy_ns_per_kb};
  // Client: read the 4-byte header, then the payload with MSG_WAITALL|MSG_TRUNC (discarded by
  // the kernel, not copied to user space).
  ChannelCosts cli_recv{c.tcp_send_ns, 2 * c.tcp_recv_ns, 0};
  // The clients start asleep at the barrier, placed where fork balancing put them; their
  // servers block in their first read. The fork loop and nb_setup() themselves are not run.
  for (int i = 0; i < o_.nprocs; ++i) {
    auto conn = std::make_unique<Conn>();
    kernel::TaskOptions to;
    to.fork_cpu = 0;
    k.create_task("tbench_srv", std::make_unique<Server>(conn.get(), send, srv_recv, &sh), to);
    kernel::TaskOptions co = to;
    co.start_blocked = true;
    st_->clients.push_back(k.create_task("tbench", std::make_unique<Client>(conn.get(), send, cli_recv, &sh), co));
    st_->conns.push_back(std::move(conn));
  }
  kernel::TaskOptions po;
  po.fork_cpu = 0;
  k.create_task("dbench", std::make_unique<Parent>(&st_->clients, &st_->conns, [this](Api& k) { schedule_status(k); }), po);
}

std::vector<std::pair<sim::Time, sim::Time>> Tbench::client_starts() const {
  std::vector<std::pair<sim::Time, sim::Time>> t;
  for (const auto& c : st_->conns) t.emplace_back(c->released, c->started);
  return t;
}

// From the release on (tv_start): the parent's once-a-second status lines, the end of the
// warm-up and of the run.
void Tbench::schedule_status(Api& k) {
  auto& sh = st_->sh;
  sh.t0 = k.now();
  int warmup = o_.warmup();
  int total = warmup + o_.timelimit;
  int nclients = o_.nprocs;
  // The parent's once-a-second status line (SIGALRM); it does no work the model charges.
  for (int s = 1; s <= total; ++s) {
    k.at(sh.t0 + sim::Time::sec(s), [this, &k, s, warmup, total, nclients] {
      auto& sh = st_->sh;
      // Latency of an op still in progress counts too.
      int64_t lat = sh.interval_max_ns;
      for (const auto& cn : st_->conns)
        if (cn->op_start_ns >= 0) lat = std::max(lat, k.now().count() - cn->op_start_ns);
      sh.interval_max_ns = 0;
      if (s < warmup) {
        double mbs = sh.bytes * 1e-6 / (k.now() - sh.t0).seconds();
        sh.status.push_back(fmt::format("{:4d}  {:8d}  {:7.2f} MB/sec  warmup {:3d} sec  latency {:.03f} ms",
                                        nclients, sh.lines_done / nclients, mbs, s, lat * 1e-6));
      } else if (s == warmup) {
        sh.warmup = false;
        sh.t_exec = k.now();
        sh.bytes = 0;
        sh.max_ns = 0;
        sh.ops = {};
      } else if (s < total) {
        double mbs = sh.bytes * 1e-6 / (k.now() - sh.t_exec).seconds();
        sh.status.push_back(fmt::format("{:4d}  {:8d}  {:7.2f} MB/sec  execute {:3d} sec  latency {:.03f} ms",
                                        nclients, sh.lines_done / nclients, mbs, s - warmup, lat * 1e-6));
      } else {
        sh.t_end = k.now();
        sh.finished = true;
        sh.status.push_back(fmt::format("{:4d}  cleanup {:3d} sec", nclients, s - warmup));
        sh.status.push_back(fmt::format("{:4d}  cleanup {:3d} sec", 0, s - warmup));
        k.stop();
      }
    });
  }
  if (warmup == 0) {
    sh.warmup = false;
    sh.t_exec = sh.t0;
  }
}

bool Tbench::finished() const { return st_->sh.finished; }

sim::Time Tbench::time_limit() const {
  return sim::Time::sec(o_.warmup() + o_.timelimit + 1);
}

double Tbench::throughput_mbs() const {
  const auto& sh = st_->sh;
  double secs = (sh.t_end - sh.t_exec).seconds();
  return secs > 0 ? sh.bytes * 1e-6 / secs : 0;
}

std::string Tbench::report() const {
  const auto& sh = st_->sh;
  std::string out = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n";
  out += fmt::format("Running for {} seconds with load '{}' and minimum warmup {} secs\n",
                     o_.timelimit, o_.loadfile, o_.warmup());
  out += fmt::format("0 of {} processes prepared for launch   0 sec\n", o_.nprocs);
  out += fmt::format("{} of {} processes prepared for launch   0 sec\n", o_.nprocs, o_.nprocs);
  out += "releasing clients\n";
  for (const auto& s : sh.status) out += s + "\n";
  out += "\n Operation      Count    AvgLat    MaxLat\n";
  out += " ----------------------------------------\n";
  for (int i = 0; i < kNumOps; ++i) {
    const auto& s = sh.ops[i];
    if (s.count == 0) continue;
    out += fmt::format(" {:<10s}{:10d} {:9.3f} {:9.3f}\n", kOpNames[i], s.count,
                       s.total_ns * 1e-6 / s.count, s.max_ns * 1e-6);
  }
  out += "\n";
  out += fmt::format("Throughput {:g} MB/sec  {} clients  {} procs  max_latency={:.3f} ms\n",
                     throughput_mbs(), o_.nprocs, o_.nprocs, sh.max_ns * 1e-6);
  return out;
}

std::vector<Metric> Tbench::metrics() const {
  const auto& sh = st_->sh;
  double secs = (sh.t_end - sh.t_exec).seconds();
  int64_t ops = 0;
  for (const auto& s : sh.ops) ops += s.count;
  return {{"throughput", "MB/s", throughput_mbs(), true},
          {"max_latency", "ms", sh.max_ns * 1e-6, false},
          {"ops_per_sec_per_client", "ops/s", secs > 0 ? ops / secs / o_.nprocs : 0, true}};
}

}  // namespace schedlab::workload
