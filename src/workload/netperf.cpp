// netperf -t TCP_RR over loopback: each instance is one client task (netperf) and one server
// task (the netserver child serving the data connection) ping-ponging REQ/RESP-byte messages,
// one transaction in flight. Several concurrent instances (mmtests' NR_PAIRS, AMD's 1..N
// clients) are one command here: --instances=N.
#include "workload/netperf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>

#include "workload/options.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

namespace {

struct Pair {
  Channel to_server, to_client;
  int64_t transactions = 0;  // completed by the client (counted until the end of the test)
  sim::Time launched;        // the shell forked this netperf
  sim::Time started;         // its test began: netserver's child answered the control request
};

// netlib.h: a control message (netperf_request_struct / netperf_response_struct) is two ints
// and MAXSPECDATA (162) ints of test-specific data.
constexpr int64_t kControlMsgBytes = 4 * (2 + 162);

struct Shared {
  bool running = true, finished = false;
  sim::Time t0, t1;
  // netserver's listen socket: control connections not yet accepted, in connect order.
  Channel listen;
  std::vector<Pair*> pending;
  size_t accepted = 0;
};

class RrClient : public Program {
 public:
  RrClient(Pair* p, int64_t req, int64_t resp, ChannelCosts c, Shared* sh)
      : p_(p), req_(req), resp_(resp), c_(c), sh_(sh) {}

 protected:
  void step(Api& k, Task& self) override {
    // establish_control(): connect to netserver and send the test request; the test starts
    // when netserver's child answers it (the data connection's own setup is not charged).
    if (phase_ == 0) {
      if (!write(sh_->listen, kControlMsgBytes, c_, self)) return;
      sh_->pending.push_back(p_);
      phase_ = 1;
      return;
    }
    if (phase_ == 1) {
      if (!read(p_->to_client, c_, self)) return;
      phase_ = 2;
      push([this](Api& k, Task&) { p_->started = k.now(); });
      return;
    }
    (void)k;
    if (!sent_) {
      if (write(p_->to_server, req_, c_, self)) sent_ = true;
      return;
    }
    if (read(p_->to_client, c_, self)) {
      sent_ = false;
      push([this](Api&, Task&) {
        if (sh_->running) ++p_->transactions;
      });
    }
  }

 private:
  Pair* p_;
  int64_t req_, resp_;
  ChannelCosts c_;
  Shared* sh_;
  int phase_ = 0;
  bool sent_ = false;
};

class RrServer : public Program {
 public:
  RrServer(Pair* p, int64_t resp, ChannelCosts c) : p_(p), resp_(resp), c_(c) {}

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (!answered_) {  // the response to the test request (recv_tcp_rr()), then the RR loop
      if (write(p_->to_client, kControlMsgBytes, c_, self)) answered_ = true;
      return;
    }
    if (!have_) {
      if (read(p_->to_server, c_, self)) have_ = true;
      return;
    }
    if (write(p_->to_client, resp_, c_, self)) have_ = false;
  }

 private:
  Pair* p_;
  int64_t resp_;
  ChannelCosts c_;
  bool answered_ = false;
  bool have_ = false;
};

// netserver's accept loop (accept_connection()): each control connection accepted in turn,
// a child fork()ed for it (spawn_child()) that serves the test.
class Netserver : public Program {
 public:
  Netserver(Shared* sh, int64_t resp, ChannelCosts c, int64_t fork_ns, int rcpu)
      : sh_(sh), resp_(resp), c_(c), fork_ns_(fork_ns), rcpu_(rcpu) {}

 protected:
  void step(Api& /*k*/, Task& self) override {
    if (!read(sh_->listen, c_, self)) return;
    push(Action::compute(fork_ns_));
    push([this](Api& k, Task& me) {
      Pair* p = sh_->pending[sh_->accepted++];
      kernel::TaskOptions so;
      if (rcpu_ >= 0) so.cpus = {rcpu_};
      so.fork_cpu = k.task_cpu(me);
      so.start_blocked = true;  // then wake_up_new_task() from here, as rt-app's fork
      then(Action::wake(k.create_task("netserver", std::make_unique<RrServer>(p, resp_, c_), so), false));
    });
  }

 private:
  Shared* sh_;
  int64_t resp_;
  ChannelCosts c_;
  int64_t fork_ns_;
  int rcpu_;
};

// The shell's loop that starts the instances (`for i in ...; do netperf ... & done`): one
// fork() per instance, in order, on the shell's CPU (the exec is not charged).
class Launcher : public Program {
 public:
  Launcher(std::vector<std::unique_ptr<Pair>>* pairs, std::function<Task*(Api&, Pair*, int)> start,
           int64_t fork_ns)
      : pairs_(pairs), start_(std::move(start)), fork_ns_(fork_ns) {}

 protected:
  void step(Api& /*k*/, Task& /*self*/) override {
    if (next_ == pairs_->size()) return;  // nothing queued: the shell exits
    Pair* p = (*pairs_)[next_].get();
    push(Action::compute(fork_ns_));
    push([this, p](Api& k, Task& me) {
      p->launched = k.now();
      then(Action::wake(start_(k, p, k.task_cpu(me)), false));
    });
    ++next_;
  }

 private:
  std::vector<std::unique_ptr<Pair>>* pairs_;
  std::function<Task*(Api&, Pair*, int)> start_;
  int64_t fork_ns_;
  size_t next_ = 0;
};

// netperf's -r sizespec: "A" sets both, "A," only the request, ",B" only the response.
void parse_sizes(const std::string& flag, const std::string& v, int64_t& req, int64_t& resp) {
  auto comma = v.find(',');
  if (comma == std::string::npos) {
    req = resp = parse_count(flag, v, 1, 1 << 26);
    return;
  }
  std::string a = v.substr(0, comma), b = v.substr(comma + 1);
  if (a.empty() && b.empty()) throw WorkloadError(fmt::format("{}: empty size '{}'", flag, v));
  if (!a.empty()) req = parse_count(flag, a, 1, 1 << 26);
  if (!b.empty()) resp = parse_count(flag, b, 1, 1 << 26);
}

}  // namespace

NetperfOptions parse_netperf_options(const std::vector<std::string>& args, int nr_cpus) {
  NetperfOptions o;
  std::vector<std::string> global, test;
  auto dd = std::find(args.begin(), args.end(), "--");
  global.assign(args.begin(), dd);
  if (dd != args.end()) test.assign(dd + 1, args.end());
  static const std::vector<OptSpec> gspecs = {
      {'t', "testname", true}, {'l', "length", true},    {'H', "host", true},
      {'L', "local", true},    {'T', "cpu-binding", true}, {'P', "print-headers", true},
      {0, "instances", true},
  };
  bool test_given = false;
  for (const auto& po : getopt("netperf", global, gspecs, nullptr)) {
    switch (po.spec->short_name) {
      case 't': {
        std::string name = po.value;  // netperf compares test names case-insensitively
        for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (name != "TCP_RR")
          throw WorkloadError(fmt::format("netperf: -t {}: only TCP_RR is modeled", po.value));
        o.test = name;
        test_given = true;
        break;
      }
      case 'l': {
        long long l = parse_count(po.flag, po.value, -1000000000LL, 100000);
        if (l <= 0)
          throw WorkloadError(fmt::format(
              "netperf: {} {}: only a positive test length in seconds is modeled", po.flag, po.value));
        o.seconds = static_cast<int>(l);
        break;
      }
      case 'H': o.host = po.value; break;
      case 'L': break;  // local address: the model is loopback anyway
      case 'T': {
        // -T lcpu,rcpu ("N" binds both, "N," only local, ",M" only remote).
        auto comma = po.value.find(',');
        std::string a = po.value.substr(0, comma);
        std::string b = comma == std::string::npos ? a : po.value.substr(comma + 1);
        if (!a.empty()) o.lcpu = static_cast<int>(parse_count(po.flag, a, 0, nr_cpus - 1));
        if (!b.empty()) o.rcpu = static_cast<int>(parse_count(po.flag, b, 0, nr_cpus - 1));
        break;
      }
      case 'P': o.banner = parse_count(po.flag, po.value, 0, 1) != 0; break;
      case 0: o.instances = static_cast<int>(parse_count(po.flag, po.value, 1, 65536)); break;
    }
  }
  if (!test_given)
    throw WorkloadError("netperf: without -t, netperf runs TCP_STREAM, which is not modeled; give -t TCP_RR");
  static const std::vector<OptSpec> tspecs = {{'r', "request-response", true}, {'D', nullptr, false}};
  for (const auto& po : getopt("netperf TCP_RR", test, tspecs, nullptr)) {
    if (po.spec->short_name == 'r') parse_sizes(po.flag, po.value, o.req, o.resp);
    // -D (TCP_NODELAY): the model sends every message at once anyway.
  }
  return o;
}

struct Netperf::State {
  Shared sh;
  std::vector<std::unique_ptr<Pair>> pairs;
};

Netperf::Netperf(const NetperfOptions& o) : o_(o), st_(std::make_unique<State>()) {}
Netperf::~Netperf() = default;

void Netperf::setup(Api& k) {
  const auto& c = k.machine().costs;
  ChannelCosts tcp{c.tcp_send_ns, c.tcp_recv_ns, c.tcp_copy_ns_per_kb};
  st_->sh.t0 = k.now();
  for (int i = 0; i < o_.instances; ++i) st_->pairs.push_back(std::make_unique<Pair>());
  // netserver (already running, asleep in accept()) and the shell start on CPU 0; the netperfs
  // the shell forks and the children netserver forks are placed by fork balancing unless -T
  // binds them.
  kernel::TaskOptions no;
  no.fork_cpu = 0;
  k.create_task("netserver", std::make_unique<Netserver>(&st_->sh, o_.resp, tcp, c.fork_ns, o_.rcpu), no);
  auto start = [this, tcp](Api& k, Pair* p, int cpu) {
    kernel::TaskOptions co;
    if (o_.lcpu >= 0) co.cpus = {o_.lcpu};
    co.fork_cpu = cpu;
    co.start_blocked = true;  // the Launcher wakes it (wake_up_new_task())
    return k.create_task("netperf", std::make_unique<RrClient>(p, o_.req, o_.resp, tcp, &st_->sh), co);
  };
  k.create_task("sh", std::make_unique<Launcher>(&st_->pairs, start, c.fork_ns), no);
  Shared* sh = &st_->sh;
  k.after(sim::Time::sec(o_.seconds), [sh, &k] {
    sh->running = false;
    sh->finished = true;
    sh->t1 = k.now();
    k.stop();
  });
}

bool Netperf::finished() const { return st_->sh.finished; }

sim::Time Netperf::time_limit() const { return sim::Time::sec(o_.seconds + 1); }

// Each netperf divides its transactions by its own test's elapsed time (from its start).
std::vector<double> Netperf::rates() const {
  std::vector<double> r;
  for (const auto& p : st_->pairs) {
    double secs = p->started == sim::Time() ? 0 : (st_->sh.t1 - p->started).seconds();
    r.push_back(secs > 0 ? static_cast<double>(p->transactions) / secs : 0);
  }
  return r;
}

std::vector<std::pair<sim::Time, sim::Time>> Netperf::starts() const {
  std::vector<std::pair<sim::Time, sim::Time>> t;
  for (const auto& p : st_->pairs) t.emplace_back(p->launched, p->started);
  return t;
}

std::string Netperf::report() const {
  // Socket sizes: what getsockopt() reports for a fresh loopback socket under Linux's default
  // tcp_wmem/tcp_rmem (16384 / 131072).
  constexpr int kSndBuf = 16384, kRcvBuf = 131072;
  // netperf prints the resolved address in parentheses for a name, nothing for a literal.
  bool literal = o_.host.find_first_not_of("0123456789.:") == std::string::npos;
  std::string ip = literal ? "" : o_.host == "localhost" ? "127.0.0.1" : o_.host;
  std::string bind = (o_.lcpu >= 0 || o_.rcpu >= 0) ? " : cpu bind" : "";
  std::string out;
  double secs = (st_->sh.t1 - st_->sh.t0).seconds();
  auto r = rates();
  for (size_t i = 0; i < r.size(); ++i) {
    if (o_.banner) {
      out += fmt::format(
          "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to {} ({}) "
          "port 0 AF_INET : first burst 0{}\n",
          o_.host, ip, bind);
      out += "Local /Remote\n";
      out += "Socket Size   Request  Resp.   Elapsed  Trans.\n";
      out += "Send   Recv   Size     Size    Time     Rate         \n";
      out += "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
    }
    out += fmt::format("{:<6d} {:<6d} {:<6d}   {:<6d}  {:<6.2f}   {:7.2f}   \n", kSndBuf, kRcvBuf,
                       o_.req, o_.resp, secs, r[i]);
    out += fmt::format("{:<6d} {:<6d}\n", kSndBuf, kRcvBuf);
    if (o_.banner) out += "\n";
  }
  if (r.size() > 1) {
    double total = std::accumulate(r.begin(), r.end(), 0.0);
    out += fmt::format("# schedlab: {} instances: total {:.2f} Trans/s, per instance {:.2f} (min {:.2f}, max {:.2f})\n",
                       r.size(), total, total / r.size(), *std::min_element(r.begin(), r.end()),
                       *std::max_element(r.begin(), r.end()));
  }
  return out;
}

std::vector<Metric> Netperf::metrics() const {
  auto r = rates();
  double total = std::accumulate(r.begin(), r.end(), 0.0);
  double mn = r.empty() ? 0 : *std::min_element(r.begin(), r.end());
  return {{"trans_rate", "trans/s", total, true},
          {"trans_rate_per_instance", "trans/s", r.empty() ? 0 : total / r.size(), true},
          {"trans_rate_min_instance", "trans/s", mn, true}};
}

}  // namespace schedlab::workload
