// Benchmark command lines -> workloads, with each real tool's flags and defaults.
#include <fmt/format.h>

#include <cerrno>
#include <cctype>
#include <cstdlib>

#include "workload/calib.hpp"
#include "workload/hackbench.hpp"
#include "workload/ipistorm.hpp"
#include "workload/netperf.hpp"
#include "workload/schbench.hpp"
#include "workload/tbench.hpp"
#include "workload/perf_pipe.hpp"
#include "workload/rtapp.hpp"
#include "workload/options.hpp"
#include "workload/workload.hpp"
#include "util/text.hpp"

namespace schedlab::workload {

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

long long parse_count(const std::string& flag, const std::string& value, long long min,
                      long long max) {
  if (value.empty()) throw WorkloadError(fmt::format("{}: missing value", flag));
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    throw WorkloadError(fmt::format("{}: '{}' is not an integer", flag, value));
  if (v < min || v > max)
    throw WorkloadError(fmt::format("{}: {} is out of range [{}, {}]", flag, v, min, max));
  return v;
}

std::vector<ParsedOpt> getopt(const std::string& tool, const std::vector<std::string>& args,
                              const std::vector<OptSpec>& specs,
                              std::vector<std::string>* positional) {
  std::vector<ParsedOpt> out;
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const OptSpec* s = nullptr;
    std::string value;
    bool has_value = false;
    if (!only_positional && a == "--") {
      only_positional = true;
      continue;
    }
    if (!only_positional && a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2);
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      for (const auto& sp : specs)
        if (sp.long_name && name == sp.long_name) s = &sp;
      if (!s) throw WorkloadError(fmt::format("{}: unknown option '--{}'", tool, name));
    } else if (!only_positional && a.size() >= 2 && a[0] == '-' && a[1] != '-' &&
               !(a[1] >= '0' && a[1] <= '9')) {
      for (const auto& sp : specs)
        if (sp.short_name != 0 && sp.short_name == a[1]) s = &sp;
      if (!s) throw WorkloadError(fmt::format("{}: unknown option '-{}'", tool, a[1]));
      if (a.size() > 2) {
        if (!s->takes_value)
          throw WorkloadError(fmt::format("{}: option '-{}' takes no value", tool, a[1]));
        value = a.substr(2);
        has_value = true;
      }
    } else {
      if (!positional)
        throw WorkloadError(fmt::format("{}: unexpected argument '{}'", tool, a));
      positional->push_back(a);
      continue;
    }
    if (s->takes_value && !has_value) {
      if (i + 1 >= args.size())
        throw WorkloadError(fmt::format("{}: option '{}' needs a value", tool, a));
      value = args[++i];
    } else if (!s->takes_value && has_value) {
      throw WorkloadError(fmt::format("{}: option '{}' takes no value", tool, a));
    }
    out.push_back({s, a, value});
  }
  return out;
}

std::vector<int> parse_cpulist(const std::string& flag, const std::string& value, int nr_cpus) {
  if (util::trim(value).empty()) throw WorkloadError(fmt::format("{}: empty CPU list", flag));
  std::vector<int> cpus;
  try {
    cpus = util::parse_cpu_list(value);
  } catch (const std::invalid_argument& e) {
    throw WorkloadError(fmt::format("{}: {}", flag, e.what()));
  }
  if (cpus.back() >= nr_cpus)
    throw WorkloadError(
        fmt::format("{}: CPU {} is beyond the machine ({} CPUs)", flag, cpus.back(), nr_cpus));
  return cpus;
}

double parse_number(const std::string& flag, const std::string& value, double min, double max) {
  if (value.empty()) throw WorkloadError(fmt::format("{}: missing value", flag));
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(value.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v == v))
    throw WorkloadError(fmt::format("{}: '{}' is not a number", flag, value));
  if (v < min || v > max)
    throw WorkloadError(fmt::format("{}: {} is out of range [{}, {}]", flag, value, min, max));
  return v;
}

namespace {

std::unique_ptr<Workload> parse_hackbench(const std::vector<std::string>& args) {
  static const std::vector<OptSpec> specs = {
      {'p', "pipe", false},    {'T', "threads", false}, {'P', "process", false},
      {'g', "groups", true},   {'f', "fds", true},      {'l', "loops", true},
      {'s', "datasize", true},
  };
  HackbenchOptions o;
  for (const auto& po : getopt("hackbench", args, specs, nullptr)) {
    switch (po.spec->short_name) {
      case 'p': o.pipe = true; break;
      case 'T': o.threads = true; break;
      case 'P': o.threads = false; break;
      case 'g': o.groups = static_cast<int>(parse_count(po.flag, po.value, 1, 4096)); break;
      case 'f': o.fds = static_cast<int>(parse_count(po.flag, po.value, 1, 1024)); break;
      case 'l': o.loops = static_cast<int>(parse_count(po.flag, po.value, 1, 100000000)); break;
      case 's': o.datasize = parse_count(po.flag, po.value, 1, 1 << 20); break;
    }
  }
  return std::make_unique<Hackbench>(o);
}

std::unique_ptr<Workload> parse_perf(const std::vector<std::string>& args) {
  // perf [--no-pager] bench [-f default|simple] sched pipe [-l N] [-T]
  size_t i = 0;
  if (i < args.size() && args[i] == "--no-pager") ++i;
  if (i >= args.size() || args[i] != "bench")
    throw WorkloadError("perf: only 'perf bench sched pipe' is modeled");
  ++i;
  PerfPipeOptions o;
  while (i < args.size() && args[i].rfind("-", 0) == 0) {
    std::string f = args[i];
    std::string v;
    if (f == "-f" || f == "--format") {
      if (i + 1 >= args.size()) throw WorkloadError("perf bench: option '-f' needs a value");
      v = args[++i];
    } else if (f.rfind("--format=", 0) == 0) {
      v = f.substr(9);
    } else {
      throw WorkloadError(fmt::format("perf bench: unknown option '{}'", f));
    }
    if (v == "simple")
      o.simple = true;
    else if (v != "default")
      throw WorkloadError(fmt::format("perf bench: unknown format '{}'", v));
    ++i;
  }
  if (i + 1 >= args.size() || args[i] != "sched" || args[i + 1] != "pipe")
    throw WorkloadError("perf bench: only 'sched pipe' is modeled");
  std::vector<std::string> rest(args.begin() + i + 2, args.end());
  static const std::vector<OptSpec> specs = {{'l', "loop", true}, {'T', "threaded", false}};
  for (const auto& po : getopt("perf bench sched pipe", rest, specs, nullptr)) {
    if (po.spec->short_name == 'l') o.loops = parse_count(po.flag, po.value, 1, 1000000000LL);
    if (po.spec->short_name == 'T') o.threaded = true;
  }
  return std::make_unique<PerfPipe>(o);
}

}  // namespace

const std::vector<WorkloadInfo>& list_workloads() {
  static const std::vector<WorkloadInfo> w = {
      {"hackbench", "hackbench [-p|--pipe] [-T|--threads] [-g GROUPS] [-f FDS] [-l LOOPS] [-s DATASIZE]",
       "rt-tests hackbench: groups of senders/receivers over sockets or pipes; prints Time:"},
      {"perf bench sched pipe", "perf bench [-f simple] sched pipe [-l LOOPS] [-T]",
       "two tasks ping-pong over two pipes; prints usecs/op and ops/sec"},
      {"ipistorm",
       "[insmod ipistorm.ko] ipistorm [numipi=N] [single=1] [offset=O] [cpulist=C] [wait=0|1] [delay=US]",
       "kthreads on cpulist send numipi call-function IPIs each to idle CPU cpu+offset; prints Time:"},
      {"tbench", "tbench [-t|--timelimit SECONDS] [-c LOADFILE] [-T OPTS] NPROCS [SERVER]",
       "dbench 4.00 tbench: NPROCS client/server pairs replay the loadfile over loopback TCP; "
       "warm-up timelimit/5, then timelimit seconds; prints Throughput MB/sec"},
      {"schbench",
       "schbench [-m MSG_THREADS] [-t WORKERS] [-r SECONDS] [-s SLEEP_USEC] [-n OPS] [-F KB] [-L] [-C] "
       "[-R RPS] [-A PCT] [-w WARMUP] [-i INTERVAL] [-z ZEROTIME] [-M CPUS|auto] [-W CPUS|auto]",
       "schbench (2023+): message threads wake workers via futexes; usleep + matrix math under a "
       "per-CPU lock; prints wakeup/request latency percentiles and average rps"},
      {"netperf",
       "netperf -t TCP_RR [-l SECONDS] [-H HOST] [-T LCPU,RCPU] [-P 0|1] [--instances=N] [-- -r REQ,RESP]",
       "N concurrent client/server pairs ping-pong over loopback TCP (--instances is a schedlab "
       "extension); prints netperf's TCP_RR table (Trans. Rate per sec)"},
      {"rt-app", "rt-app [-l LEVEL] [--duration SECONDS] FILE.json",
       "rt-app: threads described by a JSON use case (run, sleep, timer, mutexes, conditions, "
       "barriers, fork, ...); writes rt-app's per-thread logs; metrics: wakeup latency, slack, "
       "missed periods per task"},
      {"calib", "calib futex-pingpong|wake|membarrier|fork|pipe [-c A[,B]] [-n OPS] [-g GAP_US] [-P]",
       "the microbenchmarks of schedlab host calibrate, as the model runs them (schedlab host check); "
       "metrics in ns as the calibration keys define them"},
      {"taskset", "taskset -c LIST|MASK <benchmark ...>",
       "prefix: every task of the benchmark may run only on those CPUs (as taskset does)"},
  };
  return w;
}

std::unique_ptr<Workload> parse_workload(const std::vector<std::string>& argv, int nr_cpus) {
  if (argv.empty()) throw WorkloadError("no benchmark command line given after '--'");
  // taskset -c LIST <benchmark> | taskset MASK <benchmark>: every task of the benchmark is
  // restricted to those CPUs (as the affinity is inherited across fork and clone).
  if (argv[0] == "taskset" || argv[0] == "/usr/bin/taskset") {
    size_t i = 1;
    std::vector<int> cpus;
    if (i < argv.size() && (argv[i] == "-c" || argv[i] == "--cpu-list")) {
      if (i + 1 >= argv.size()) throw WorkloadError("taskset -c: missing CPU list");
      cpus = parse_cpulist("taskset -c", argv[i + 1], nr_cpus);
      i += 2;
    } else if (i < argv.size()) {
      std::string mask = argv[i];
      if (mask.rfind("0x", 0) == 0 || mask.rfind("0X", 0) == 0) mask = mask.substr(2);
      if (mask.empty() || mask.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw WorkloadError(fmt::format("taskset: '{}' is not a CPU mask (or use -c LIST)", argv[i]));
      for (size_t b = 0; b < mask.size() * 4; ++b) {
        char ch = mask[mask.size() - 1 - b / 4];
        int nib = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : (std::tolower(ch) - 'a' + 10);
        if (nib & (1 << (b % 4))) {
          if (static_cast<int>(b) >= nr_cpus)
            throw WorkloadError(fmt::format("taskset: CPU {} is beyond the machine ({} CPUs)", b, nr_cpus));
          cpus.push_back(static_cast<int>(b));
        }
      }
      ++i;
    }
    if (cpus.empty()) throw WorkloadError("taskset: no CPUs given");
    if (i >= argv.size()) throw WorkloadError("taskset: no benchmark command after the CPU list");
    auto w = parse_workload(std::vector<std::string>(argv.begin() + i, argv.end()), nr_cpus);
    // `taskset -c 0 taskset -c 1 cmd`: the inner taskset calls sched_setaffinity() after the
    // outer one, so its mask is the one cmd runs with.
    if (w->affinity().empty()) w->set_affinity(cpus);
    return w;
  }
  std::string tool = argv[0];
  auto slash = tool.rfind('/');
  if (slash != std::string::npos) tool = tool.substr(slash + 1);
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  if (tool == "hackbench") return parse_hackbench(args);
  if (tool == "perf") return parse_perf(args);
  if (tool == "tbench") return std::make_unique<Tbench>(parse_tbench_options(args));
  if (tool == "schbench") return std::make_unique<Schbench>(parse_schbench_options(args, nr_cpus));
  if (tool == "netperf") return std::make_unique<Netperf>(parse_netperf_options(args, nr_cpus));
  if (tool == "rt-app") return parse_rtapp_command(args, nr_cpus);
  if (tool == "calib") return parse_calib(args, nr_cpus);
  if (tool == "insmod") {
    if (args.empty() || !(args[0] == "ipistorm.ko" || args[0].ends_with("/ipistorm.ko")))
      throw WorkloadError("insmod: only 'insmod ipistorm.ko ...' is modeled");
    return std::make_unique<Ipistorm>(parse_ipistorm_options(args, nr_cpus));
  }
  if (tool == "ipistorm" || tool == "ipistorm.ko")
    return std::make_unique<Ipistorm>(parse_ipistorm_options(args, nr_cpus));
  std::string known;
  for (const auto& w : list_workloads()) known += (known.empty() ? "" : ", ") + w.name;
  throw WorkloadError(fmt::format("unknown benchmark '{}' (known: {})", argv[0], known));
}

}  // namespace schedlab::workload
