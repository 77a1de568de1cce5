#include "host/background.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <regex>
#include <sstream>
#include <thread>

#include "host/calib_stats.hpp"
#include "host/procfs.hpp"
#include "machine/param_api.hpp"

namespace schedlab::host {
using machine::BackgroundActivity;
using machine::Recorded;

namespace {

std::string slurp(const std::string& path) { return read_file_text(path).value_or(""); }

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Per-CPU steal ticks from /proc/stat's cpuN lines.
std::vector<long long> steal_per_cpu(const std::string& text) {
  std::vector<long long> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream f(line);
    std::string label;
    long long v[8] = {0};
    f >> label;
    for (auto& x : v) f >> x;
    int cpu = std::atoi(label.c_str() + 3);
    if (cpu >= static_cast<int>(out.size())) out.resize(cpu + 1, 0);
    out[cpu] = v[7];
  }
  return out;
}

// All CPUs' non-idle time from /proc/stat's `cpu` line: user nice system idle iowait irq softirq
// (steal and guest, already in user, left out), in seconds; -1 without that line.
double stat_busy_s(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream f(line.substr(4));
    long long v[7] = {0};
    for (auto& x : v)
      if (!(f >> x)) return -1;
    const long long hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
    return static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6]) / static_cast<double>(hz);
  }
  return -1;
}

long long nonvoluntary_switches() {
  std::istringstream in(slurp("/proc/thread-self/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) return std::atoll(line.c_str() + 27);
  return 0;
}

// "kworker/1:2H-events_highpri" -> "kworker/N:NH" (a kworker's comm names its current workqueue
// after the '-'); "ksoftirqd/0" -> "ksoftirqd/N"; "rcu_preempt" stays.
std::string pattern_of(std::string comm) {
  if (comm.rfind("kworker/", 0) == 0) comm = comm.substr(0, comm.find('-'));
  return std::regex_replace(comm, std::regex("[0-9]+"), "N");
}

// Longest gap still counted as a tick (the tick preempting the scanning thread for another task
// makes gaps of that task's slice, milliseconds).
constexpr double kMaxTickGapNs = 1e6;

Recorded rec(double v, std::string source) { return Recorded{v, std::move(source)}; }

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace

std::vector<IrqLine> parse_interrupts(const std::string& text) {
  std::vector<IrqLine> out;
  std::istringstream in(text);
  std::string header;
  if (!std::getline(in, header)) return out;
  int ncpu = 0;
  {
    std::istringstream h(header);
    for (std::string w; h >> w;) ncpu += w.rfind("CPU", 0) == 0;
  }
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string name;
    if (!(f >> name) || name.back() != ':') continue;
    name.pop_back();
    IrqLine l;
    l.name = name;
    for (int c = 0; c < ncpu; ++c) {
      std::string w;
      if (!(f >> w) || !all_digits(w)) break;
      l.per_cpu.push_back(std::atoll(w.c_str()));
    }
    if (static_cast<int>(l.per_cpu.size()) != ncpu) continue;  // ERR:, MIS: have one total
    std::string rest;
    std::getline(f, rest);
    size_t b = rest.find_first_not_of(" \t");
    l.desc = b == std::string::npos ? "" : rest.substr(b);
    // collapse runs of spaces
    l.desc = std::regex_replace(l.desc, std::regex("\\s+"), " ");
    out.push_back(std::move(l));
  }
  return out;
}

std::map<std::string, std::vector<long long>> parse_softirqs(const std::string& text) {
  std::map<std::string, std::vector<long long>> out;
  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string name;
    if (!(f >> name) || name.back() != ':') continue;
    name.pop_back();
    std::vector<long long> v;
    for (long long x; f >> x;) v.push_back(x);
    out[name] = v;
  }
  return out;
}

bool parse_task(const std::string& stat, const std::string& schedstat, TaskSample* t) {
  // pid (comm) state ppid ... ; comm may hold spaces and parentheses: take the last ')'.
  size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  t->tid = std::atoi(stat.c_str());
  t->comm = stat.substr(open + 1, close - open - 1);
  std::istringstream f(stat.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string w; f >> w;) fields.push_back(w);
  // fields[0] = state (field 3); flags = field 9 -> [6]; processor = field 39 -> [36]
  if (fields.size() < 37) return false;
  unsigned long flags = std::strtoul(fields[6].c_str(), nullptr, 10);
  t->kthread = (flags & 0x00200000UL) != 0;  // PF_KTHREAD
  t->cpu = std::atoi(fields[36].c_str());
  t->start_ticks = std::atoll(fields[19].c_str());  // field 22
  std::istringstream s(schedstat);
  if (!(s >> t->run_ns >> t->wait_ns >> t->slices)) return false;
  return true;
}

ProcSnapshot read_proc_snapshot(int skip_pid, const std::string& proc_root) {
  ProcSnapshot s;
  s.wall_s = static_cast<double>(now_ns()) / 1e9;
  s.irqs = parse_interrupts(slurp(proc_root + "/interrupts"));
  s.softirqs = parse_softirqs(slurp(proc_root + "/softirqs"));
  s.busy_s = stat_busy_s(slurp(proc_root + "/stat"));
  s.nr_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  DIR* proc = opendir(proc_root.c_str());
  if (!proc) return s;
  while (dirent* e = readdir(proc)) {
    if (!all_digits(e->d_name)) continue;
    int pid = std::atoi(e->d_name);
    if (pid == skip_pid) continue;
    std::string tdir = fmt::format("{}/{}/task", proc_root, pid);
    DIR* tasks = opendir(tdir.c_str());
    if (!tasks) continue;
    while (dirent* t = readdir(tasks)) {
      if (!all_digits(t->d_name)) continue;
      TaskSample ts;
      std::string base = tdir + "/" + t->d_name;
      if (parse_task(slurp(base + "/stat"), slurp(base + "/schedstat"), &ts)) {
        ts.pid = pid;
        s.tasks.push_back(std::move(ts));
      }
    }
    closedir(tasks);
  }
  closedir(proc);
  return s;
}

std::vector<GapScan> scan_gaps(const std::vector<int>& cpus, double seconds, int64_t threshold_ns) {
  std::vector<GapScan> out(cpus.size());
  auto irq_before = parse_interrupts(slurp("/proc/interrupts"));
  auto steal_before = steal_per_cpu(slurp("/proc/stat"));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i) {
    threads.emplace_back([&, i] {
      GapScan& g = out[i];
      g.cpu = cpus[i];
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[i], &set);
      bool pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
      sched_yield();
      g.start_ns.reserve(1 << 16);
      g.length_ns.reserve(1 << 16);
      ready.fetch_add(1);
      while (!go.load()) {
      }
      if (!pinned || sched_getcpu() != cpus[i]) {
        g.cpu = -1;
        return;
      }
      long long nv0 = nonvoluntary_switches();
      const int64_t t0 = now_ns(), end = t0 + static_cast<int64_t>(seconds * 1e9);
      int64_t prev = t0, reads = 0;
      for (;;) {
        int64_t t = now_ns();
        ++reads;
        if (t - prev > threshold_ns) {
          g.start_ns.push_back(prev - t0);
          g.length_ns.push_back(t - prev);
        }
        prev = t;
        if (t >= end) break;
      }
      g.involuntary_switches = nonvoluntary_switches() - nv0;
      g.seconds = static_cast<double>(prev - t0) / 1e9;
      g.read_ns = reads > 0 ? static_cast<double>(prev - t0) / static_cast<double>(reads) : 0;
    });
  }
  while (ready.load() < static_cast<int>(cpus.size())) std::this_thread::yield();
  go.store(true);
  for (auto& t : threads) t.join();
  auto irq_after = parse_interrupts(slurp("/proc/interrupts"));
  auto steal_after = steal_per_cpu(slurp("/proc/stat"));
  for (auto& g : out) {
    if (g.cpu < 0) continue;
    for (const auto& a : irq_after)
      for (const auto& b : irq_before)
        if (a.name == b.name && g.cpu < static_cast<int>(a.per_cpu.size()) && g.cpu < static_cast<int>(b.per_cpu.size())) {
          long long d = a.per_cpu[g.cpu] - b.per_cpu[g.cpu];
          g.irqs += d;
          if (a.name == "LOC") g.local_timer += d;
        }
    if (g.cpu < static_cast<int>(steal_after.size()) && g.cpu < static_cast<int>(steal_before.size()))
      g.steal_ticks = steal_after[g.cpu] - steal_before[g.cpu];
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const GapScan& g) { return g.cpu < 0; }), out.end());
  return out;
}

GapClasses classify_gaps(const GapScan& g, int64_t period) {
  GapClasses c;
  if (period <= 0 || g.start_ns.empty()) {
    for (auto l : g.length_ns) c.other.push_back(static_cast<double>(l));
    return c;
  }
  // The most common phase, in bins of 1% of the period.
  constexpr int kBins = 100;
  std::vector<int> hist(kBins, 0);
  for (auto s : g.start_ns) ++hist[static_cast<int>((s % period) * kBins / period)];
  int best = static_cast<int>(std::max_element(hist.begin(), hist.end()) - hist.begin());
  // Phase-locked: within two bins (+-2%) of it, circularly.
  auto locked = [&](int64_t s) {
    int b = static_cast<int>((s % period) * kBins / period);
    int d = std::abs(b - best);
    return std::min(d, kBins - d) <= 2;
  };
  // Ticks are the most common phase only if they are periodic: at least half the periods hold one.
  double span_ns = g.seconds > 0 ? g.seconds * 1e9 : static_cast<double>(g.start_ns.back());
  double periods = span_ns / static_cast<double>(period);
  int near = 0;
  for (auto s : g.start_ns) near += locked(s);
  bool ticking = periods >= 1 && near >= 0.5 * periods;
  for (size_t i = 0; i < g.start_ns.size(); ++i)
    (ticking && locked(g.start_ns[i]) ? c.tick : c.other).push_back(static_cast<double>(g.length_ns[i]));
  c.tick_phase_ns = ticking ? (best + 0.5) * static_cast<double>(period) / kBins : 0;
  return c;
}

namespace {

// The steps of background_from(): the gap scan split by cause, the tick's cost, then the
// activities of the idle phase (interrupt lines, tasks) and of the scan (steal), capped at what
// a profile accepts.

// The gap scan's gaps by cause, over all scanned CPUs.
struct ScanGaps {
  std::vector<double> tick, short_gaps, preempt_gaps, long_gaps;
  double scan_s = 0;
  long long invol = 0, steal_ticks = 0;
};

// The gap scan: the tick, then the other gaps by count. Interrupts are the shortest gaps, a
// preemption of the scanning thread by a task takes two context switches and the task's run,
// and what is left is the host's (steal). So per CPU: the shortest (interrupts on the CPU -
// tick gaps) gaps are interrupts, the next (involuntary switches) preemptions, the rest steal.
// Without counts (a scan read elsewhere) the split is by length at short_gap_ns.
ScanGaps split_scans(const BackgroundInput& in, BackgroundResult& r) {
  ScanGaps s;
  for (const auto& g : in.scans) {
    GapClasses c = classify_gaps(g, in.tick_period_ns);
    s.tick.insert(s.tick.end(), c.tick.begin(), c.tick.end());
    std::vector<double> other = c.other;
    std::sort(other.begin(), other.end());
    size_t n_irq, n_pre;
    if (g.irqs > 0 || g.involuntary_switches > 0) {
      n_irq = static_cast<size_t>(std::clamp<long long>(g.irqs - static_cast<long long>(c.tick.size()), 0,
                                                        static_cast<long long>(other.size())));
      n_pre = std::min<size_t>(static_cast<size_t>(std::max<long long>(0, g.involuntary_switches)), other.size() - n_irq);
    } else {
      n_irq = static_cast<size_t>(std::lower_bound(other.begin(), other.end(), static_cast<double>(in.short_gap_ns)) -
                                  other.begin());
      n_pre = 0;
    }
    s.short_gaps.insert(s.short_gaps.end(), other.begin(), other.begin() + n_irq);
    s.preempt_gaps.insert(s.preempt_gaps.end(), other.begin() + n_irq, other.begin() + n_irq + n_pre);
    s.long_gaps.insert(s.long_gaps.end(), other.begin() + n_irq + n_pre, other.end());
    s.scan_s += g.seconds;
    s.invol += g.involuntary_switches;
    s.steal_ticks += g.steal_ticks;
    r.notes.push_back(fmt::format("gap scan cpu{}: {:.1f} s, clock read {:.0f} ns, {} gaps: {} tick (phase {:.0f} us "
                                  "into the {:.0f} us period), {} interrupt, {} preemption, {} left (steal); {} "
                                  "interrupts ({} LOC), {} involuntary switches, {} steal ticks",
                                  g.cpu, g.seconds, g.read_ns, g.length_ns.size(), c.tick.size(), c.tick_phase_ns / 1e3,
                                  static_cast<double>(in.tick_period_ns) / 1e3, n_irq, n_pre,
                                  other.size() - n_irq - n_pre, g.irqs, g.local_timer, g.involuntary_switches,
                                  g.steal_ticks));
  }
  if (!s.preempt_gaps.empty()) {
    Distribution p = distribution(s.preempt_gaps);
    r.notes.push_back(fmt::format("preemptions of the scanning threads: {} gaps, p10/p50/p90 {:.0f}/{:.0f}/{:.0f} ns "
                                  "(the tasks themselves are the kthread/task tables)",
                                  p.n, p.p10, p.p50, p.p90));
  }
  return s;
}

// A tick that also preempts the scanning thread (its slice is up, another task was waiting) is
// followed by that task's run: those gaps are far longer than any tick. Only tick gaps under
// kMaxTickGapNs count, and only if they are most of them.
void tick_cost(const std::vector<double>& tick, BackgroundResult& r) {
  if (tick.empty()) return;
  std::vector<double> plain;
  for (double x : tick)
    if (x < kMaxTickGapNs) plain.push_back(x);
  if (plain.size() * 2 >= tick.size()) {
    r.tick_ns = median_of(plain);
    r.tick_sigma = lognormal_sigma(plain);
    r.tick_gaps = static_cast<int>(plain.size());
  }
  r.notes.push_back(fmt::format("tick gaps: {} phase-locked, {} under {} us{}", tick.size(), plain.size(),
                                kMaxTickGapNs / 1000,
                                plain.size() * 2 >= tick.size()
                                    ? fmt::format(": median {:.0f} ns, lognormal sigma {:.2f}", r.tick_ns, r.tick_sigma)
                                    : std::string(": most ticks preempted the scan (a busy machine), no tick cost")));
}

// The softirqs of the idle phase, as a note.
void softirq_note(const ProcSnapshot& a, const ProcSnapshot& b, double T, BackgroundResult& r) {
  long long softirq_total = 0;
  std::string softirq_list;
  for (const auto& [name, after] : b.softirqs) {
    auto it = a.softirqs.find(name);
    if (it == a.softirqs.end()) continue;
    long long d = 0;
    for (size_t c = 0; c < after.size() && c < it->second.size(); ++c) d += after[c] - it->second[c];
    if (d <= 0) continue;
    softirq_total += d;
    softirq_list += fmt::format("{}{} {:.1f}/s", softirq_list.empty() ? "" : ", ", name, static_cast<double>(d) / T);
  }
  if (softirq_total > 0) r.notes.push_back(fmt::format("softirqs in the idle phase: {}", softirq_list));
}

// Interrupts of the idle phase: per-CPU lines (LOC, RES, CAL, ...) and device lines, each
// lasting as long as the scan's interrupt gaps.
void irq_activities(const ProcSnapshot& a, const ProcSnapshot& b, double T, int ncpu, const ScanGaps& s,
                    const std::string& scan_src, const std::string& idle_src, BackgroundResult& r) {
  Distribution sd = distribution(s.short_gaps);
  const bool have_short = sd.n >= 5;
  const std::string dur_src =
      have_short ? fmt::format("{}: median of the {} interrupt gaps (the shortest non-tick gaps, as many as the "
                               "CPU's non-tick interrupts; p10 {:.0f}, p90 {:.0f} ns), softirqs run at interrupt "
                               "exit included",
                               scan_src, sd.n, sd.p10, sd.p90)
                 : std::string("not measured (no gap scan with enough short gaps): 0");
  for (const auto& la : b.irqs) {
    const IrqLine* lb = nullptr;
    for (const auto& x : a.irqs)
      if (x.name == la.name) lb = &x;
    if (!lb || lb->per_cpu.size() != la.per_cpu.size()) continue;
    long long total = 0;
    for (size_t c = 0; c < la.per_cpu.size(); ++c) total += la.per_cpu[c] - lb->per_cpu[c];
    if (total <= 0) continue;
    BackgroundActivity act;
    const bool device = all_digits(la.name);
    // Device lines are named by their handler (the last word of the description).
    act.name = device ? la.desc.substr(la.desc.rfind(' ') + 1) : la.name;
    act.kind = "irq";
    act.scope = device ? "system" : "per_cpu";
    double rate = static_cast<double>(total) / T / (device ? 1 : ncpu);
    act.rate_hz = rec(round_to(rate, 0.001), fmt::format("/proc/interrupts {} '{}': {} in the {}{}", la.name, la.desc,
                                                          total, idle_src, device ? "" : ", per CPU"));
    act.duration_ns = rec(have_short ? std::round(sd.p50) : 0, dur_src);
    act.duration_sigma = rec(have_short ? round_to(sd.sigma, 0.001) : 0, have_short ? "lognormal sigma of the same gaps"
                                                                                    : "not measured");
    if (have_short)
      act.duration_max_ns = rec(std::round(*std::max_element(s.short_gaps.begin(), s.short_gaps.end())),
                                "the longest of the same gaps");
    r.activities.push_back(act);
  }
}

// Tasks that ran in the idle phase, by name pattern; kernel threads bound to a CPU (name/N...)
// per CPU, the rest for the whole machine.
void task_activities(const ProcSnapshot& a, const ProcSnapshot& b, double T, int ncpu, const std::string& idle_src,
                     BackgroundResult& r) {
  struct Agg {
    long long slices = 0, run_ns = 0;
    int tasks = 0;
    bool kthread = false;
  };
  std::map<std::string, Agg> agg;
  // The same task in the first snapshot: same tid and starttime (a kworker's comm changes with
  // its workqueue: matching by comm took its whole lifetime for the phase's). A tid not there is
  // a task born during the phase (all its time falls in it); a tid there with another starttime
  // was reused.
  std::map<int, const TaskSample*> before;
  for (const auto& o : a.tasks) before[o.tid] = &o;
  long long total_run_ns = 0;
  for (const auto& t : b.tasks) {
    long long s0 = 0, r0 = 0;
    if (auto it = before.find(t.tid); it != before.end()) {
      const TaskSample& o = *it->second;
      if (o.start_ticks < 0 || t.start_ticks < 0 || o.start_ticks == t.start_ticks) s0 = o.slices, r0 = o.run_ns;
    }
    long long ds = t.slices - s0, dr = t.run_ns - r0;
    if (ds <= 0 || dr <= 0) continue;
    total_run_ns += dr;
    std::string key = t.kthread ? pattern_of(t.comm) : t.comm;
    auto& g = agg[key];
    g.slices += ds;
    g.run_ns += dr;
    g.tasks += 1;
    g.kthread = t.kthread;
  }
  for (const auto& [name, g] : agg) {
    BackgroundActivity act;
    act.name = name;
    act.kind = g.kthread ? "kthread" : "task";
    bool per_cpu = g.kthread && name.find("/N") != std::string::npos;
    act.scope = per_cpu ? "per_cpu" : "system";
    double rate = static_cast<double>(g.slices) / T / (per_cpu ? ncpu : 1);
    act.rate_hz = rec(round_to(rate, 0.001), fmt::format("/proc/PID/task/TID/schedstat: {} run(s) of {} task(s) in the "
                                                          "{}{}",
                                                          g.slices, g.tasks, idle_src, per_cpu ? ", per CPU" : ""));
    act.duration_ns = rec(std::round(static_cast<double>(g.run_ns) / static_cast<double>(g.slices)),
                          "schedstat: mean time on the CPU per run (the median is not known)");
    act.duration_sigma = rec(0, "not measured (schedstat has sums only)");
    r.activities.push_back(act);
  }
  // The tasks' run time cannot exceed what /proc/stat counted busy over the same phase (plus a
  // tick per CPU of rounding at each end: /proc/stat counts in USER_HZ ticks).
  if (a.busy_s >= 0 && b.busy_s >= 0) {
    const double busy_ms = (b.busy_s - a.busy_s) * 1e3, tasks_ms = static_cast<double>(total_run_ns) / 1e6;
    r.notes.push_back(fmt::format("tasks other than ours ran {:.1f} ms in the idle phase (schedstat); /proc/stat "
                                  "counted {:.1f} ms busy",
                                  tasks_ms, busy_ms));
    const double slack_ms = 2.0 * ncpu * 1e3 / static_cast<double>(sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100);
    if (tasks_ms > busy_ms + slack_ms)
      r.warnings.push_back(fmt::format("the tasks' schedstat run time in the idle phase ({:.1f} ms) exceeds what "
                                       "/proc/stat counted busy ({:.1f} ms): the task tables are doubtful",
                                       tasks_ms, busy_ms));
  }
}

// Gaps of the scan explained neither by an interrupt nor by a preemption: the host took the vCPU.
void steal_activity(const ScanGaps& s, const std::string& scan_src, BackgroundResult& r) {
  const long long unexplained = static_cast<long long>(s.long_gaps.size());
  if (unexplained <= 0 || !(s.scan_s > 0)) return;
  Distribution d = distribution(s.long_gaps);
  BackgroundActivity act;
  act.name = "steal";
  act.kind = "steal";
  act.scope = "per_cpu";
  act.rate_hz = rec(round_to(static_cast<double>(unexplained) / s.scan_s, 0.001),
                    fmt::format("{}: {} non-tick gaps beyond the CPUs' interrupts and the scanning threads' {} "
                                "involuntary switches ({} steal ticks in /proc/stat meanwhile)",
                                scan_src, unexplained, s.invol, s.steal_ticks));
  act.duration_ns = rec(std::round(d.p50), fmt::format("{}: median of those gaps (p10 {:.0f}, p90 {:.0f} ns)",
                                                       scan_src, d.p10, d.p90));
  act.duration_sigma = rec(round_to(d.sigma, 0.001), "lognormal sigma of the same gaps");
  act.duration_max_ns = rec(std::round(*std::max_element(s.long_gaps.begin(), s.long_gaps.end())),
                            "the longest of the same gaps");
  r.activities.push_back(act);
}

// A value beyond what a profile accepts (a CPU-bound task of another user that ran 0.5 s per
// slice while we recorded) is recorded at the profile's bound, saying so, so that the profile
// written from it loads.
void cap_at_profile_bounds(BackgroundResult& r) {
  const std::string prefix = "background.";
  for (auto& act : r.activities)
    for (const auto& p : machine::background_params()) {
      machine::Recorded& v = machine::background_value(act, p.key.substr(prefix.size()));
      if (v.value > p.max) {
        v.source += fmt::format("; {:.0f} {} capped at the profile's maximum", v.value, p.unit);
        v.value = p.max;
      }
    }
}

}  // namespace

BackgroundResult background_from(const BackgroundInput& in) {
  BackgroundResult r;
  const auto& a = in.idle_before;
  const auto& b = in.idle_after;
  const double T = b.wall_s - a.wall_s;
  const int ncpu = std::max(1, b.nr_cpus);
  if (!(T > 0)) return r;
  const std::string idle_src = fmt::format("idle phase of {:.1f} s, nothing of ours running", T);
  const ScanGaps s = split_scans(in, r);
  const std::string scan_src = fmt::format("gap scan, {:.1f} CPU-s spinning on {} CPU(s)", s.scan_s, in.scans.size());
  tick_cost(s.tick, r);
  irq_activities(a, b, T, ncpu, s, scan_src, idle_src, r);
  softirq_note(a, b, T, r);
  task_activities(a, b, T, ncpu, idle_src, r);
  steal_activity(s, scan_src, r);
  cap_at_profile_bounds(r);
  return r;
}

}  // namespace schedlab::host
