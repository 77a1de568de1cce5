#include "experiment/selfcheck.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "experiment/run.hpp"

namespace schedlab::experiment {

namespace {

using machine::Distance;

// Model CPU pair for a distance class: 0 and the first CPU at that distance from it.
int partner(const machine::Machine& m, const std::string& cls) {
  static const std::map<std::string, Distance> d = {{"smt", Distance::Smt},
                                                    {"llc", Distance::Llc},
                                                    {"other_llc", Distance::OtherLlc},
                                                    {"other_socket", Distance::OtherSocket}};
  auto it = d.find(cls);
  if (it == d.end()) return -1;
  for (int b = 1; b < m.topo.nr_cpus(); ++b)
    if (m.topo.distance(0, b) == it->second) return b;
  return -1;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// wake_latency_<class>[_gapNus] / wake_syscall_<class>[_gapNus].
const std::regex& wake_key_re() {
  static const std::regex re("(wake_latency|wake_syscall)_(smt|llc|other_llc|other_socket)(_gap([0-9]+)us)?");
  return re;
}

constexpr const char* kNoPair = "no CPU pair at that distance on this machine";

// The runs of `calib ...` on the machine, each made once.
class Runner {
 public:
  explicit Runner(const machine::Machine& m) : m_(m) {}
  // The metric `name` of the run of `cmd` (ns; usecs_per_op is converted); < 0 if none.
  double metric(const std::string& cmd, const std::string& name) {
    auto it = runs_.find(cmd);
    if (it == runs_.end()) {
      RunSpec spec;
      std::istringstream in(cmd);
      for (std::string w; in >> w;) spec.command.push_back(w);
      spec.seed = 1;
      it = runs_.emplace(cmd, run_one(m_, spec).metrics).first;
    }
    double wakeups = 1;
    for (const auto& x : it->second)
      if (x.name == "wakeups") wakeups = x.value;
    for (const auto& x : it->second)
      if (x.name == name) return wakeups > 0 ? (name == "usecs_per_op" ? x.value * 1000 : x.value) : -1;
    return -1;
  }

 private:
  const machine::Machine& m_;
  std::map<std::string, std::vector<workload::Metric>> runs_;
};

// The direct mappings: the cost a measurement is copied into (with the copy of its bytes).
bool direct_row(const machine::Machine& m, const std::string& key, CheckRow& row) {
  const auto& c = m.costs;
  static const std::map<std::string, std::pair<const char*, int64_t machine::Costs::*>> map = {
      {"futex_wake_nowaiter", {"costs.futex_wake_ns", &machine::Costs::futex_wake_ns}},
      {"futex_wait_eagain", {"costs.futex_wait_ns", &machine::Costs::futex_wait_ns}},
      {"pipe_write_1b", {"costs.pipe_write_ns", &machine::Costs::pipe_write_ns}},
      {"pipe_read_1b", {"costs.pipe_read_ns", &machine::Costs::pipe_read_ns}},
      {"unix_send_100b", {"costs.unix_send_ns + 100 B x unix_copy_ns_per_kb", &machine::Costs::unix_send_ns}},
      {"unix_recv_100b", {"costs.unix_recv_ns + 100 B x unix_copy_ns_per_kb", &machine::Costs::unix_recv_ns}},
  };
  if (auto it = map.find(key); it != map.end()) {
    row.kind = "direct";
    row.how = it->second.first;
    row.model_ns = static_cast<double>(c.*(it->second.second));
    if (starts(key, "unix_")) row.model_ns += static_cast<double>(c.unix_copy_ns_per_kb * 100 / 1024);
    return true;
  }
  if (starts(key, "idle_exit_")) {
    for (const auto& st : m.idle_states)
      if (st.name == key.substr(10)) {
        row.kind = "direct";
        row.how = "idle_state." + st.name + ".wake_cost_ns";
        row.model_ns = static_cast<double>(st.wake_cost_ns);
        return true;
      }
    row.how = "no idle state " + key.substr(10) + " on this machine";
    return false;
  }
  if (starts(key, "cacheline_")) {
    std::string cls = key.substr(10);
    int b = partner(m, cls);
    if (b < 0) {
      row.how = kNoPair;
      return false;
    }
    row.kind = "direct";
    row.how = "costs.remote_read_" + cls + "_ns";
    row.model_ns = static_cast<double>(m.remote_read_ns(m.topo.distance(0, b)));
    return true;
  }
  return false;
}

// wake_latency_<class>[_gapNus] / wake_syscall_<class>[_gapNus] -> the calib wake run.
bool wake_row(const machine::Machine& m, const std::string& key, int gap_us, const RunShape& shape, Runner& run,
              CheckRow& row) {
  std::smatch s;
  if (!std::regex_match(key, s, wake_key_re())) return false;
  int b = partner(m, s[2]);
  if (b < 0) {
    row.how = kNoPair;
    return false;
  }
  std::string gap = s[4].matched ? std::string(s[4]) : std::to_string(gap_us);
  row.kind = "simulated";
  row.how = fmt::format("calib wake -c 0,{} -g {}", b, gap);
  if (shape.iterations > 0) row.how += fmt::format(" -n {}", shape.iterations);
  row.model_ns = run.metric(row.how, shape.mean ? std::string(s[1]) + "_mean" : std::string(s[1]));
  if (shape.mean) row.how += " (mean)";
  if (row.model_ns < 0) row.how += " (no wake-up: the wakee never slept)";
  return true;
}

// On a guest, calibrate sets the wake-up's costs from medians (halted_wake_ns, ipi_send_ns:
// wake_latency_/wake_syscall_<class>; running_ipi_ns: membarrier_ipi_<class>; see
// apply_guest_halted_wake()): of the events where they were recorded, else of the batch values.
// The model's calib wake and membarrier metrics are medians of their events too. Those rows compare
// that median, not the estimate (the 25th percentile of the batch values, which a wake-up cost that
// drifts within the run puts below the median: validation-data/2026-12-04, steady21-notes.md).
struct Statistic {
  double ns = 0;
  std::string what;  // empty: the estimate
};
Statistic measured_statistic(const machine::Machine& m, const host::Measurement& x) {
  if (!m.guest.present || !(is_wake_key(x.key) || starts(x.key, "membarrier_ipi_")) || x.median_ns <= 0)
    return {x.value_ns, ""};
  if (x.dist.n > 0) return {x.dist.p50, fmt::format("median of {} events", x.dist.n)};
  return {x.median_ns, "median of the batch values"};
}

CheckRow row_of(const machine::Machine& m, const host::CalibrationResult& r, const host::Measurement& x,
                int gap_us, const RunShape& shape, Runner& run) {
  CheckRow row;
  row.key = x.key;
  const Statistic stat = measured_statistic(m, x);
  row.measured_ns = stat.ns;
  row.kind = "not modeled";
  row.how = "no model cost";
  if (direct_row(m, x.key, row)) return row;
  if (wake_row(m, x.key, gap_us, shape, run, row)) {
    if (!stat.what.empty()) row.how += " (measured: " + stat.what + ")";
    return row;
  }
  auto sim = [&](const std::string& cmd, const std::string& metric) {
    row.kind = "simulated";
    row.how = cmd;
    row.model_ns = run.metric(cmd, metric);
  };
  if (x.key == "fork_call" || x.key == "fork_exit_reap") {
    sim("calib fork -c 0", x.key);
  } else if (x.key == "futex_pingpong_same_cpu_half") {
    sim("calib futex-pingpong -c 0", x.key);
  } else if (x.key == "pipe_rtt_same_cpu") {
    sim("calib pipe -c 0", "usecs_per_op");
  } else if (x.key == "pipe_rtt_same_cpu_process") {
    sim("calib pipe -c 0 -P", "usecs_per_op");
  } else if (starts(x.key, "pipe_rtt_")) {
    if (int b = partner(m, x.key.substr(9)); b > 0) sim(fmt::format("calib pipe -c 0,{}", b), "usecs_per_op");
    else row.how = kNoPair;
  } else if (std::smatch s; std::regex_match(x.key, s, std::regex("msg_(unix|pipe)_(send|recv|write|read)_(.+)"))) {
    // The message ping-pong: one side's cost per message, on one CPU or across a distance class.
    const bool unix_socket = s[1] == "unix", write_side = s[2] == "send" || s[2] == "write";
    const std::string where = s[3];
    const int b = where == "same_cpu" ? 0 : partner(m, where);
    if (b < 0) row.how = kNoPair;
    else sim(fmt::format("calib msg -c {}{}", b == 0 ? "0" : fmt::format("0,{}", b), unix_socket ? " -u" : ""),
             write_side ? "msg_send" : "msg_recv");
  } else if (std::smatch c; std::regex_match(x.key, c, std::regex("(unix|pipe)_(send|write|recv|read)_100b_(fill|cold)"))) {
    // The L2-cold fill and drain (host/calibrate.cpp cold_fill_drain()) in the layout calibrate
    // used for this machine's L2.
    const bool unix_socket = c[1] == "unix";
    const auto [per, chans] = host::cold_layout(unix_socket, m.topo.l2_bytes);
    sim(fmt::format("calib coldmsg -c 0 -k {} -m {}{}", chans, per, unix_socket ? " -u" : ""),
        c[3] == "fill" ? "msg_send" : "msg_recv");
  } else if (starts(x.key, "membarrier_ipi_")) {
    std::string cls = x.key.substr(15);
    // The IPI round trip: the call with an IPI less the call without one.
    auto* no = r.find("membarrier_noipi_" + cls);
    // (calibrate takes membarrier_noipi's batch median off each membarrier_ipi event)
    if (no) row.measured_ns = stat.ns - (stat.what.empty() ? no->value_ns : no->median_ns);
    if (int b = partner(m, cls); b > 0) sim(fmt::format("calib membarrier -c 0,{}", b), "membarrier_ipi");
    else row.how = kNoPair;
    if (no && !stat.what.empty())
      row.how += " (measured: " + stat.what + " of membarrier_ipi - median of membarrier_noipi)";
    else if (no)
      row.how += " (measured: membarrier_ipi - membarrier_noipi)";
  } else if (starts(x.key, "syscall_")) {
    row.how = "no model cost (a syscall's entry and exit are inside each call's cost)";
  }
  return row;
}

std::string num(double v) { return v < 0 ? "-" : fmt::format("{:.1f}", v); }
bool within(const CheckRow& r, double threshold_pct) { return std::abs(r.error_pct()) <= threshold_pct; }

}  // namespace

bool is_wake_key(const std::string& key) { return std::regex_match(key, wake_key_re()); }

std::vector<CheckRow> self_check(const machine::Machine& m, const host::CalibrationResult& r, int gap_us,
                                 const std::map<std::string, RunShape>* shapes) {
  std::vector<CheckRow> rows;
  // The profile's own costs, without the per-run factor lognormal(0, noise.run_sigma): that factor
  // is the run-to-run spread validate's runs draw one each of, and seed 1's draw scaled every
  // simulated row alike (+6.3 % on the run_sigma 0.036 of validation-data/2026-12-04/host-2136).
  machine::Machine central = m;
  central.noise.run_sigma = 0;
  Runner run(central);
  for (const auto& x : r.measurements) {
    if (starts(x.key, "membarrier_noipi_")) continue;
    RunShape shape;
    if (shapes)
      if (auto it = shapes->find(x.key); it != shapes->end()) shape = it->second;
    rows.push_back(row_of(m, r, x, gap_us, shape, run));
  }
  return rows;
}

std::string check_table(const std::vector<CheckRow>& rows, const std::string& profile, double threshold_pct,
                        const std::string& title) {
  std::string out = title.empty() ? fmt::format(
                                        "# self-check of {}: each calibration microbenchmark simulated on the profile "
                                        "(schedlab host check; docs/host.md)\n",
                                        profile)
                                  : "# " + title + "\n";
  out += fmt::format("{:<32} {:<11} {:>12} {:>12} {:>8}  {}\n", "key", "kind", "model_ns", "measured_ns", "error_%",
                     "how");
  int with = 0, n_within = 0;
  for (const auto& r : rows) {
    std::string err = r.has_error() ? fmt::format("{:+.1f}", r.error_pct()) : "-";
    if (r.has_error()) ++with, n_within += within(r, threshold_pct) ? 1 : 0;
    out += fmt::format("{:<32} {:<11} {:>12} {:>12} {:>8}  {}{}\n", r.key, r.kind == "not modeled" ? "none" : r.kind,
                       num(r.model_ns), num(r.measured_ns), err, r.how, r.source.empty() ? "" : " [" + r.source + "]");
  }
  out += fmt::format("# {} of {} within {} %\n", n_within, with, threshold_pct);
  return out;
}

nlohmann::ordered_json check_json(const std::vector<CheckRow>& rows, const std::string& profile,
                                  double threshold_pct) {
  nlohmann::ordered_json j;
  j["profile"] = profile;
  auto& a = j["rows"] = nlohmann::ordered_json::array();
  int with = 0, n_within = 0;
  for (const auto& r : rows) {
    nlohmann::ordered_json x;
    x["key"] = r.key;
    x["kind"] = r.kind;
    x["model_ns"] = r.model_ns < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(r.model_ns);
    x["measured_ns"] = r.measured_ns;
    x["error_pct"] = r.has_error() ? nlohmann::ordered_json(r.error_pct()) : nlohmann::ordered_json();
    x["how"] = r.how;
    if (!r.source.empty()) x["source"] = r.source;
    if (r.has_error()) ++with, n_within += within(r, threshold_pct) ? 1 : 0;
    a.push_back(x);
  }
  j[fmt::format("within_{}pct", threshold_pct)] = n_within;
  j["compared"] = with;
  return j;
}

host::CalibrationResult read_profile_measurements(const std::string& text, const std::string& where) {
  // "#   KEY   VALUE ns  median M  spread S%  [..]  N batches ... cpus A,B[  wakee idle state NAME][  events ...]"
  static const std::regex re(
      R"(^#   ([a-z0-9_]+) +([0-9.]+) ns  median ([0-9.]+)  spread +([0-9.]+)%.*?  cpus ([0-9,]+)(?: \(\+[0-9]+ more pairs\))?(?:  wakee idle state (.+?))?(?:  events ([0-9]+) p10/p50/p90/p99 ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) sigma ([0-9.]+))?$)");
  host::CalibrationResult r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') break;  // the header ends where the TOML begins
    std::smatch s;
    if (!std::regex_match(line, s, re)) continue;
    host::Measurement m;
    m.key = s[1];
    m.value_ns = std::stod(s[2]);
    m.median_ns = std::stod(s[3]);
    m.cov = std::stod(s[4]) / 100;
    if (s[6].matched) m.idle_state = s[6];
    if (s[7].matched) {
      m.dist.n = std::stoi(s[7]);
      m.dist.p10 = std::stod(s[8]), m.dist.p50 = std::stod(s[9]), m.dist.p90 = std::stod(s[10]);
      m.dist.p99 = std::stod(s[11]), m.dist.sigma = std::stod(s[12]);
    }
    r.measurements.push_back(m);
  }
  if (r.measurements.empty())
    throw std::runtime_error(fmt::format(
        "{}: its header lists no measurements (not written by `schedlab host calibrate`?); pass --samples FILE",
        where));
  return r;
}

}  // namespace schedlab::experiment
