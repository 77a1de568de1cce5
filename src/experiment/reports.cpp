#include "experiment/reports.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace schedlab::experiment {

namespace {
bool has(const std::vector<std::string>& argv, std::initializer_list<const char*> flags) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) {
    return std::any_of(flags.begin(), flags.end(), [&](const char* f) { return a == f; });
  });
}
// The value after a flag ("-g 4", "--groups=4", "-g4"); empty if absent.
std::string value_of(const std::vector<std::string>& argv, const char* shrt, const char* lng) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if ((a == shrt || a == lng) && i + 1 < argv.size()) return argv[i + 1];
    const std::string eq = std::string(lng) + "=";
    if (a.rfind(eq, 0) == 0) return a.substr(eq.size());
    if (a.size() > 2 && a.rfind(shrt, 0) == 0 && a[1] != '-') return a.substr(2);
  }
  return "";
}
}  // namespace

MmtestsNaming mmtests_naming(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  // `taskset -c LIST <benchmark>`: the benchmark's own words.
  while (argv.size() >= 3 && argv[0] == "taskset") argv.erase(argv.begin(), argv.begin() + 3);
  MmtestsNaming n;
  if (argv.empty()) return n;
  const std::string& tool = argv[0];
  if (tool == "hackbench") {
    const bool threads = has(argv, {"-T", "--threads"});
    const bool pipes = has(argv, {"-p", "--pipe"});
    n.title = fmt::format("hackbench-{}-{}", threads ? "thread" : "process", pipes ? "pipes" : "sockets");
    const std::string g = value_of(argv, "-g", "--groups");
    n.op = g.empty() ? "10" : g;  // hackbench's default group count
    n.precision = 4;
  } else if (tool == "tbench") {
    n.title = "tbench4";
  } else if (tool == "perf") {
    n.title = "perfpipe";
  } else if (tool == "netperf") {
    n.title = "netperf-tcp-rr";
  } else {
    n.title = tool;
  }
  return n;
}

std::string ab_mmtests(const AbSpec& spec, const AbResult& r, const report::mmtests::Options& opts) {
  namespace mm = report::mmtests;
  const auto metrics = ab_metrics(spec, r);
  const size_t nbench = r.base.empty() ? 0 : r.base.front().metrics.size();
  const MmtestsNaming naming = mmtests_naming(spec.base.command);
  std::vector<std::string> labels;
  std::vector<mm::OperationSamples> bench;
  for (size_t i = 0; i < nbench && i < metrics.size(); ++i) {
    const auto& m = metrics[i];
    if (labels.empty())
      for (const auto& s : m.sets) labels.push_back(s.label);
    mm::OperationSamples op;
    op.name = nbench == 1 && !naming.op.empty() ? naming.op : m.name;
    op.dir = m.dir;
    for (const auto& s : m.sets) op.sets.push_back(s.values);
    bench.push_back(std::move(op));
  }
  return mm::render(mm::make_table(naming.title, labels, naming.precision, bench, opts), opts);
}

}  // namespace schedlab::experiment
