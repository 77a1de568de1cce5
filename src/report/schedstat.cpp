// /proc/schedstat v17 snapshots and `perf sched stats` reports (see schedstat.hpp).
#include "report/schedstat.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace schedlab::report::schedstat {

namespace {

// The fields as perf's v17 table describes them (the row labels of its reports).
struct CpuDesc {
  const char* desc;
  int pct_of;  // -1: no percentage
};
constexpr CpuDesc kCpu[kCpuFields] = {
    {"sched_yield() count", -1},
    {"Legacy counter can be ignored", -1},
    {"schedule() called", -1},
    {"schedule() left the processor idle", kSchedCount},
    {"try_to_wake_up() was called", -1},
    {"try_to_wake_up() was called to wake up the local cpu", kTtwuCount},
    {"total runtime by tasks on this processor (in jiffies)", -1},
    {"total waittime by tasks on this processor (in jiffies)", kRqCpuTime},
    {"total timeslices run on this cpu", -1},
};
struct LbDesc {
  const char* fmt;  // {} is the idle type
  bool jiffies;     // followed by the mean jiffies between two events
};
constexpr LbDesc kLb[kLbFields] = {
    {"load_balance() count on cpu {}", true},
    {"load_balance() found balanced on cpu {}", true},
    {"load_balance() move task failed on cpu {}", true},
    {"imbalance in load on cpu {}", false},
    {"imbalance in utilization on cpu {}", false},
    {"imbalance in number of tasks on cpu {}", false},
    {"imbalance in misfit tasks on cpu {}", false},
    {"pull_task() count on cpu {}", false},
    {"pull_task() when target task was cache-hot on cpu {}", false},
    {"load_balance() failed to find busier queue on cpu {}", true},
    {"load_balance() failed to find busier group on cpu {}", true},
};
constexpr const char* kIdleName[kIdleTypes] = {"busy", "idle", "newly idle"};
constexpr const char* kIdleCategory[kIdleTypes] = {" <Category busy> ", " <Category idle> ", " <Category newidle> "};
struct Plain {
  int field;
  const char* desc;
};
struct Category {
  const char* title;
  Plain fields[3];
};
constexpr Category kOther[] = {
    {" <Category active_load_balance()> ",
     {{kAlbCount, "active_load_balance() count"},
      {kAlbFailed, "active_load_balance() move task failed"},
      {kAlbPushed, "active_load_balance() successfully moved a task"}}},
    {" <Category sched_balance_exec()> ",
     {{kSbeCount, "sbe_count is not used"}, {kSbeBalanced, "sbe_balanced is not used"}, {kSbePushed, "sbe_pushed is not used"}}},
    {" <Category sched_balance_fork()> ",
     {{kSbfCount, "sbf_count is not used"}, {kSbfBalanced, "sbf_balanced is not used"}, {kSbfPushed, "sbf_pushed is not used"}}},
    {" <Wakeup Info> ",
     {{kTtwuWakeRemote, "try_to_wake_up() awoke a task that last ran on a diff cpu"},
      {kTtwuMoveAffine, "try_to_wake_up() moved task because cache-cold on own cpu"},
      {kTtwuMoveBalance, "try_to_wake_up() started passive balancing"}}},
};

constexpr int kWidth = 100;

std::string separator() { return std::string(kWidth, '-') + "\n"; }
std::string category(const char* title) {
  const std::size_t len = std::string_view(title).size();
  const std::size_t pre = (kWidth - len) / 2, post = kWidth - len - pre;
  return std::string(pre, '-') + title + std::string(post, '-') + "\n";
}

// perf's helpers: a share of a base (CALC_PCT), a mean interval (CALC_AVG), a change in %
// (PCT_CHNG), each 0 when undefined.
double calc_pct(uint64_t x, uint64_t y) { return y ? static_cast<double>(x) / static_cast<double>(y) * 100 : 0.0; }
long double calc_avg(long double x, long double y) { return y != 0 ? x / y : 0.0L; }
double pct_chng(double x, double y) { return x != 0 ? (y - x) / x * 100 : 0.0; }
long double pct_chng_l(long double x, long double y) { return x != 0 ? (y - x) / x * 100 : 0.0L; }

std::string label(const std::string& desc) { return fmt::format("{:<65}: ", desc); }

std::string cpu_block(const Cpu& a, const Cpu* b) {
  std::string out = fmt::format("{:<65} ", "DESC");
  out += b ? fmt::format("{:>12} {:>11} {:>12} {:>14} {:>10}", "COUNT1", "COUNT2", "PCT_CHANGE", "PCT_CHANGE1",
                         "PCT_CHANGE2")
           : fmt::format("{:>12} {:>12}", "COUNT", "PCT_CHANGE");
  out += "\n";
  out += separator();
  for (int f = 0; f < kCpuFields; ++f) {
    out += label(kCpu[f].desc) + fmt::format("{:11}", a.v[f]);
    const int of = kCpu[f].pct_of;
    if (!b) {
      if (of >= 0) out += fmt::format("  ( {:8.2f}% )", calc_pct(a.v[f], a.v[of]));
    } else {
      out += fmt::format(",{:11}  | {:8.2f}% |", b->v[f],
                         pct_chng(static_cast<double>(a.v[f]), static_cast<double>(b->v[f])));
      if (of >= 0)
        out += fmt::format("  ( {:8.2f}%,  {:8.2f}% )", calc_pct(a.v[f], a.v[of]), calc_pct(b->v[f], b->v[of]));
    }
    out += "\n";
  }
  return out;
}

std::string domain_block(const Domain& a, const Domain* b, uint64_t ja, uint64_t jb) {
  std::string out = fmt::format("{:<65} ", "DESC");
  out += b ? fmt::format("{:>12} {:>11} {:>12} {:>16} {:>12}", "COUNT1", "COUNT2", "PCT_CHANGE", "AVG_JIFFIES1",
                         "AVG_JIFFIES2")
           : fmt::format("{:>12} {:>14}", "COUNT", "AVG_JIFFIES");
  out += "\n";
  auto field = [&](const std::string& desc, int f, bool jiffies) {
    out += label(desc) + fmt::format("{:11}", a.v[f]);
    if (!b) {
      if (jiffies) out += fmt::format("  $ {:11.2f} $", calc_avg(ja, a.v[f]));
    } else {
      out += fmt::format(",{:11}  | {:8.2f}% |", b->v[f],
                         pct_chng(static_cast<double>(a.v[f]), static_cast<double>(b->v[f])));
      if (jiffies) out += fmt::format("  $ {:11.2f}, {:11.2f} $", calc_avg(ja, a.v[f]), calc_avg(jb, b->v[f]));
    }
    out += "\n";
  };
  for (int t = 0; t < kIdleTypes; ++t) {
    out += category(kIdleCategory[t]);
    const int base = t * kLbFields;
    for (int f = 0; f < kLbFields; ++f) field(fmt::format(fmt::runtime(kLb[f].fmt), kIdleName[t]), base + f, kLb[f].jiffies);
    // The derived rows: successful balances (count - balanced - failed, as perf's 32-bit
    // arithmetic), and tasks pulled per success.
    auto success = [&](const Domain& d) {
      return static_cast<uint32_t>(d.v[base + kLbCount] - d.v[base + kLbBalanced] - d.v[base + kLbFailed]);
    };
    const uint32_t sa = success(a);
    out += fmt::format("*{:<64}: {:11}", fmt::format("load_balance() success count on cpu {}", kIdleName[t]), sa);
    if (b) {
      const uint32_t sb = success(*b);
      out += fmt::format(",{:11}  | {:8.2f}% |", sb, pct_chng(sa, sb));
    }
    out += "\n";
    const long double pa = calc_avg(a.v[base + kLbGained], sa);
    out += fmt::format("*{:<64}: {:11.2f}", fmt::format("avg task pulled per successful lb attempt (cpu {})", kIdleName[t]), pa);
    if (b) {
      const long double pb = calc_avg(b->v[base + kLbGained], success(*b));
      out += fmt::format(",{:11.2f}  | {:8.2f}% |", pb, pct_chng_l(pa, pb));
    }
    out += "\n";
  }
  for (const auto& c : kOther) {
    out += category(c.title);
    for (const auto& p : c.fields) field(p.desc, p.field, false);
  }
  return out;
}

// The "ALL CPUS SUMMARY" of a recording: each field's sum over the CPUs divided by their number
// (integer division, as perf does), domain by domain index.
Cpu summary(const Snapshot& s) {
  Cpu sum = s.cpus.front();
  for (const auto& c : s.cpus)
    if (c.domains.size() != sum.domains.size())
      throw SampleError(fmt::format("schedstat: cpu{} has {} domains, cpu{} {}: no summary of all CPUs", sum.cpu,
                                    sum.domains.size(), c.cpu, c.domains.size()));
  for (std::size_t i = 1; i < s.cpus.size(); ++i) {
    for (int f = 0; f < kCpuFields; ++f) sum.v[f] += s.cpus[i].v[f];
    for (std::size_t d = 0; d < sum.domains.size(); ++d)
      for (int f = 0; f < kDomainFields; ++f) sum.domains[d].v[f] += s.cpus[i].domains[d].v[f];
  }
  const uint64_t n = s.cpus.size();
  for (auto& v : sum.v) v /= n;
  for (auto& d : sum.domains)
    for (auto& v : d.v) v /= n;
  return sum;
}

void check_shape(const std::string& what, const Snapshot& a, const Snapshot& b) {
  if (a.cpus.size() != b.cpus.size())
    throw SampleError(fmt::format("{}: {} CPUs and {} CPUs", what, a.cpus.size(), b.cpus.size()));
  for (std::size_t i = 0; i < a.cpus.size(); ++i) {
    const auto &x = a.cpus[i], &y = b.cpus[i];
    if (x.cpu != y.cpu) throw SampleError(fmt::format("{}: cpu{} where cpu{} was", what, y.cpu, x.cpu));
    if (x.domains.size() != y.domains.size())
      throw SampleError(fmt::format("{}: cpu{} has {} domains and {} domains", what, x.cpu, x.domains.size(),
                                    y.domains.size()));
    for (std::size_t d = 0; d < x.domains.size(); ++d)
      if (x.domains[d].name != y.domains[d].name || x.domains[d].cpumask != y.domains[d].cpumask)
        throw SampleError(fmt::format("{}: cpu{} domain{} is {} {} and {} {}", what, x.cpu, d, x.domains[d].name,
                                      x.domains[d].cpumask, y.domains[d].name, y.domains[d].cpumask));
  }
}

uint64_t parse_u64(const std::string& where, const std::string& tok) {
  if (tok.empty() || !std::all_of(tok.begin(), tok.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw SampleError(fmt::format("{}: not a counter: '{}'", where, tok));
  try {
    return std::stoull(tok);
  } catch (const std::exception&) {
    throw SampleError(fmt::format("{}: counter out of range: '{}'", where, tok));
  }
}

bool is_mask(const std::string& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isxdigit(c) || c == ','; });
}

}  // namespace

std::string cpumask_hex(std::span<const int> cpus, int nr_cpus) {
  const int nibbles = std::max(1, (nr_cpus + 3) / 4);
  std::vector<int> nib(static_cast<std::size_t>(nibbles), 0);
  for (int c : cpus) nib[static_cast<std::size_t>(c / 4)] |= 1 << (c % 4);
  std::string out;
  for (int i = nibbles - 1; i >= 0; --i) {
    out += "0123456789abcdef"[nib[static_cast<std::size_t>(i)]];
    if (i > 0 && i % 8 == 0) out += ',';
  }
  return out;
}

std::string cpulist_of_mask(const std::string& hex) {
  std::vector<int> cpus;
  int bit = 0;
  for (auto it = hex.rbegin(); it != hex.rend(); ++it) {
    if (*it == ',') continue;
    const int v = std::isdigit(static_cast<unsigned char>(*it)) ? *it - '0' : std::tolower(*it) - 'a' + 10;
    for (int b = 0; b < 4; ++b)
      if (v & (1 << b)) cpus.push_back(bit + b);
    bit += 4;
  }
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string to_text(const Snapshot& s) {
  std::string out = fmt::format("version {}\ntimestamp {}\n", s.version, s.timestamp);
  for (const auto& c : s.cpus) {
    out += fmt::format("cpu{}", c.cpu);
    for (auto v : c.v) out += fmt::format(" {}", v);
    out += "\n";
    for (const auto& d : c.domains) {
      out += fmt::format("domain{} {} {}", d.index, d.name, d.cpumask);
      for (auto v : d.v) out += fmt::format(" {}", v);
      out += "\n";
    }
  }
  return out;
}

std::vector<Snapshot> parse(const std::string& name, const std::string& text) {
  std::vector<Snapshot> out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = fmt::format("{}:{}", name, lineno);
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.empty()) continue;
    if (t[0] == "version") {
      if (t.size() != 2) throw SampleError(fmt::format("{}: malformed version line", where));
      const uint64_t v = parse_u64(where, t[1]);
      if (v != kVersion)
        throw SampleError(fmt::format("{}: schedstat version {} (schedlab reads version {})", where, v, kVersion));
      out.push_back({});
      continue;
    }
    if (out.empty()) throw SampleError(fmt::format("{}: '{}' before the first \"version\" line", where, t[0]));
    Snapshot& s = out.back();
    if (t[0] == "timestamp") {
      if (t.size() != 2) throw SampleError(fmt::format("{}: malformed timestamp line", where));
      s.timestamp = parse_u64(where, t[1]);
    } else if (t[0].rfind("cpu", 0) == 0) {
      if (t.size() != 1 + kCpuFields)
        throw SampleError(fmt::format("{}: cpu line with {} fields (version {} has {})", where, t.size() - 1, kVersion,
                                      kCpuFields));
      Cpu c;
      c.cpu = static_cast<int>(parse_u64(where, t[0].substr(3)));
      for (int i = 0; i < kCpuFields; ++i) c.v[i] = parse_u64(where, t[1 + i]);
      s.cpus.push_back(std::move(c));
    } else if (t[0].rfind("domain", 0) == 0) {
      if (s.cpus.empty()) throw SampleError(fmt::format("{}: domain line before any cpu line", where));
      Domain d;
      d.index = static_cast<int>(parse_u64(where, t[0].substr(6)));
      std::size_t k = 1;
      // The name needs CONFIG_SCHED_DEBUG; without it the mask comes first.
      if (t.size() == 2 + 1 + kDomainFields) d.name = t[k++];
      if (t.size() != k + 1 + kDomainFields || !is_mask(t[k]))
        throw SampleError(fmt::format("{}: domain line with {} fields (version {}: domainN [NAME] MASK and {})", where,
                                      t.size() - 1, kVersion, kDomainFields));
      d.cpumask = t[k++];
      if (d.name.empty()) d.name = fmt::format("{}", d.index);
      for (int i = 0; i < kDomainFields; ++i) d.v[i] = parse_u64(where, t[k + i]);
      s.cpus.back().domains.push_back(std::move(d));
    } else {
      throw SampleError(fmt::format("{}: unknown line '{}'", where, t[0]));
    }
  }
  if (out.empty()) throw SampleError(fmt::format("{}: no schedstat snapshot (no \"version\" line)", name));
  for (const auto& s : out)
    if (s.cpus.empty()) throw SampleError(fmt::format("{}: a snapshot without cpu lines", name));
  return out;
}

Snapshot recording(const std::string& name, const Snapshot& before, const Snapshot& after) {
  check_shape(name, before, after);
  if (after.timestamp < before.timestamp) throw SampleError(fmt::format("{}: the timestamp went backwards", name));
  Snapshot r = after;
  r.timestamp = after.timestamp - before.timestamp;
  for (std::size_t i = 0; i < r.cpus.size(); ++i) {
    for (int f = 0; f < kCpuFields; ++f) {
      if (after.cpus[i].v[f] < before.cpus[i].v[f])
        throw SampleError(fmt::format("{}: cpu{} field {} went backwards", name, r.cpus[i].cpu, f + 1));
      r.cpus[i].v[f] -= before.cpus[i].v[f];
    }
    for (std::size_t d = 0; d < r.cpus[i].domains.size(); ++d)
      for (int f = 0; f < kDomainFields; ++f) {
        if (after.cpus[i].domains[d].v[f] < before.cpus[i].domains[d].v[f])
          throw SampleError(
              fmt::format("{}: cpu{} domain{} field {} went backwards", name, r.cpus[i].cpu, d, f + 1));
        r.cpus[i].domains[d].v[f] -= before.cpus[i].domains[d].v[f];
      }
  }
  return r;
}

Snapshot recording_of_file(const std::string& name, const std::string& text) {
  auto snaps = parse(name, text);
  if (snaps.size() < 2)
    throw SampleError(fmt::format("{}: one schedstat snapshot; a recording needs two (before and after)", name));
  return recording(name, snaps.front(), snaps.back());
}

Snapshot add(const Snapshot& a, const Snapshot& b) {
  check_shape("schedstat recordings", a, b);
  Snapshot r = a;
  r.timestamp += b.timestamp;
  for (std::size_t i = 0; i < r.cpus.size(); ++i) {
    for (int f = 0; f < kCpuFields; ++f) r.cpus[i].v[f] += b.cpus[i].v[f];
    for (std::size_t d = 0; d < r.cpus[i].domains.size(); ++d)
      for (int f = 0; f < kDomainFields; ++f) r.cpus[i].domains[d].v[f] += b.cpus[i].domains[d].v[f];
  }
  return r;
}

std::string perf_sched_stats(const Snapshot& a, const Snapshot* b) {
  if (a.cpus.empty() || (b && b->cpus.empty())) throw SampleError("schedstat recording without CPUs");
  if (b) check_shape("the two recordings", a, *b);
  std::string out = "Columns description\n" + separator();
  out += fmt::format("{:<24}-> {}\n", "DESC", "Description of the field");
  out += fmt::format("{:<24}-> {}\n", "COUNT", "Value of the field");
  out += fmt::format("{:<24}-> {}\n", "PCT_CHANGE", "Percent change with corresponding base value");
  out += fmt::format("{:<24}-> {}\n", "AVG_JIFFIES", "Avg time in jiffies between two consecutive occurrence of event");
  out += separator();
  out += label("Time elapsed (in jiffies)") + fmt::format("{:11}", a.timestamp);
  if (b) out += fmt::format(",{:11}", b->timestamp);
  out += "\n";
  out += separator();
  const Cpu sa = summary(a);
  const Cpu sb = b ? summary(*b) : Cpu{};
  auto block = [&](const Cpu& ca, const Cpu* cb, bool is_summary) {
    out += "\n";
  out += separator();
    out += is_summary ? std::string("CPU <ALL CPUS SUMMARY>\n") : fmt::format("CPU {}\n", ca.cpu);
    out += separator() + cpu_block(ca, cb) + separator();
    for (std::size_t d = 0; d < ca.domains.size(); ++d) {
      const Domain& da = ca.domains[d];
      out += is_summary ? fmt::format("CPU <ALL CPUS SUMMARY>, DOMAIN {}\n", da.name)
                        : fmt::format("CPU {}, DOMAIN {} CPUS {}\n", ca.cpu, da.name, cpulist_of_mask(da.cpumask));
      out += separator() + domain_block(da, cb ? &cb->domains[d] : nullptr, a.timestamp, b ? b->timestamp : 0) +
             separator();
    }
  };
  block(sa, b ? &sb : nullptr, true);
  if (!b)  // `perf sched stats report`: every CPU after the summary (diff shows the summary only)
    for (const auto& c : a.cpus) block(c, nullptr, false);
  return out;
}

}  // namespace schedlab::report::schedstat
