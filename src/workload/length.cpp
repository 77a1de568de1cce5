// A benchmark command line with its run length scaled (`schedlab reproduce --convergence`).
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "workload/hackbench.hpp"
#include "workload/ipistorm.hpp"
#include "workload/netperf.hpp"
#include "workload/perf_pipe.hpp"
#include "workload/schbench.hpp"
#include "workload/tbench.hpp"
#include "workload/workload.hpp"

namespace schedlab::workload {

namespace {

bool to_count(const std::string& s, long long& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && v > 0;
}

// Scales the value of flag -S / --LONG in args[first, last) (forms: -S N, -SN, --LONG N,
// --LONG=N); when absent, inserts "-S <default x factor>" at `insert_at`. False if the value
// is not a positive integer.
bool scale_flag(std::vector<std::string>& args, size_t first, size_t last, char short_name,
                const char* long_name, long long def, int factor, size_t insert_at) {
  const std::string s = std::string("-") + short_name, l = std::string("--") + long_name;
  for (size_t i = first; i < last; ++i) {
    const std::string& a = args[i];
    long long v = 0;
    if ((a == s || a == l) && i + 1 < last) {
      if (!to_count(args[i + 1], v)) return false;
      args[i + 1] = std::to_string(v * factor);
      return true;
    }
    if (a.rfind(l + "=", 0) == 0) {
      if (!to_count(a.substr(l.size() + 1), v)) return false;
      args[i] = l + "=" + std::to_string(v * factor);
      return true;
    }
    if (a.size() > 2 && a.rfind(s, 0) == 0 && a[1] != '-') {
      if (!to_count(a.substr(2), v)) return false;
      args[i] = s + std::to_string(v * factor);
      return true;
    }
  }
  args.insert(args.begin() + static_cast<std::ptrdiff_t>(insert_at), {s, std::to_string(def * factor)});
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> scale_length(const std::vector<std::string>& argv, int factor) {
  std::vector<std::string> a = argv;
  // taskset prefixes (taskset -c LIST | taskset MASK), possibly nested.
  size_t i = 0;
  while (i < a.size() && (a[i] == "taskset" || a[i] == "/usr/bin/taskset"))
    i += (i + 1 < a.size() && (a[i + 1] == "-c" || a[i + 1] == "--cpu-list")) ? 3 : 2;
  if (i >= a.size()) return std::nullopt;
  std::string tool = a[i];
  if (auto slash = tool.rfind('/'); slash != std::string::npos) tool = tool.substr(slash + 1);
  const size_t args = i + 1;
  bool ok = false;
  if (tool == "hackbench") {
    ok = scale_flag(a, args, a.size(), 'l', "loops", HackbenchOptions{}.loops, factor, a.size());
  } else if (tool == "perf") {
    // perf ... sched pipe [-l N] [-T]: the flags after "pipe".
    size_t p = args;
    while (p < a.size() && a[p] != "pipe") ++p;
    if (p == a.size()) return std::nullopt;
    ok = scale_flag(a, p + 1, a.size(), 'l', "loop", PerfPipeOptions{}.loops, factor, a.size());
  } else if (tool == "tbench") {
    ok = scale_flag(a, args, a.size(), 't', "timelimit", TbenchOptions{}.timelimit, factor, args);
  } else if (tool == "schbench") {
    ok = scale_flag(a, args, a.size(), 'r', "runtime", SchbenchOptions{}.runtime, factor, a.size());
  } else if (tool == "netperf") {
    // The global options end at "--" (the test-specific ones follow).
    size_t dd = args;
    while (dd < a.size() && a[dd] != "--") ++dd;
    ok = scale_flag(a, args, dd, 'l', "length", NetperfOptions{}.seconds, factor, dd);
  } else if (tool == "ipistorm" || tool == "ipistorm.ko" || tool == "insmod") {
    for (size_t k = args; k < a.size(); ++k) {
      if (a[k].rfind("numipi=", 0) != 0) continue;
      long long v = 0;
      if (!to_count(a[k].substr(7), v)) return std::nullopt;
      a[k] = "numipi=" + std::to_string(v * factor);
      return a;
    }
    a.push_back("numipi=" + std::to_string(IpistormOptions{}.numipi * factor));
    ok = true;
  }
  if (!ok) return std::nullopt;
  return a;
}

}  // namespace schedlab::workload
