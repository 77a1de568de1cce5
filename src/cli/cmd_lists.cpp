// schedlab machines | features | workloads: what exists, one line each.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/microbench.hpp"
#include "kernel/change.hpp"
#include "kernel/features.hpp"
#include "machine/machine.hpp"
#include "workload/workload.hpp"

namespace schedlab::cli {

namespace {

std::string param_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

// Every key `--set` and the profile tables accept, with unit, range and meaning, then the
// scheduler changes' tunables (`--set` only; `schedlab features --verbose` has their defaults).
void print_params() {
  struct Row {
    std::string key, unit, min, max, help;
  };
  std::vector<Row> rows;
  std::vector<machine::ParamInfo> ps = machine::params();
  for (const auto& p : machine::idle_state_params()) ps.push_back(p);
  for (const auto& p : ps) rows.push_back({p.key, p.unit, param_num(p.min), param_num(p.max), p.help});
  for (const auto* c : kernel::change_types())
    for (const auto& t : c->info.tunables)
      rows.push_back({fmt::format("change.{}.{}", c->info.name, t.key), t.unit, std::to_string(t.min),
                      std::to_string(t.max), fmt::format("{} (scheduler change {}; --set only)", t.help, c->info.name)});
  size_t w = 3;
  for (const auto& r : rows) w = std::max(w, r.key.size());
  fmt::print("{:<{}}  {:<8} {:>6} {:>11}  {}\n", "KEY", w, "UNIT", "MIN", "MAX", "MEANING");
  for (const auto& r : rows) fmt::print("{:<{}}  {:<8} {:>6} {:>11}  {}\n", r.key, w, r.unit, r.min, r.max, r.help);
}

// machines --check: the table (text, the default) or its JSON.
const OutputSpec kMachineCheckOutput{{{{"txt", "text"}, {".txt"}}, {{"json"}, {".json"}}}, "txt", false};

// `machines --check NAME`: the published microbenchmarks of profiles/microbench/NAME.toml
// simulated on the profile NAME (experiment/microbench.hpp).
void run_machine_check(const std::string& name, const OutputChoice& out) {
  const ResolvedOutput dest = resolve_output(out, kMachineCheckOutput);
  machine::Machine m = machine::load_profile(name);  // an unknown machine: UnknownMachine, exit 2
  const std::string path = experiment::figures_path(name);
  std::error_code ec;
  if (name.find('/') != std::string::npos || !std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("machines --check {}: no published microbenchmarks ({} does not exist; "
                                 "scale-4096 and tiny-4 are synthetic and have none)",
                                 name, path));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  experiment::FigureSet set;
  try {
    set = experiment::read_figures(text.str(), path);
  } catch (const experiment::FiguresError& e) {
    throw UsageError(e.what());
  }
  if (set.machine != name)
    throw UsageError(fmt::format("{}: machine = \"{}\", but the file is for '{}'", path, set.machine, name));
  auto rows = experiment::published_check(m, set);
  const double t = experiment::kPublishedThresholdPct;
  if (dest.format == "json") {
    write_output(dest, experiment::check_json(rows, name, t).dump(1) + "\n");
    return;
  }
  const std::string title = fmt::format(
      "published microbenchmarks of {} ({}) simulated on the profile (schedlab machines --check; docs/model.md)",
      name, path.substr(path.rfind("/microbench/") + 1));
  write_output(dest, experiment::check_table(rows, name, t, title));
}

}  // namespace

void register_lists(CLI::App& app) {
  auto* m = app.add_subcommand("machines", "list the machine profiles (--params: every profile key)");
  auto params = std::make_shared<bool>(false);
  m->add_flag("--params", *params,
              "list every parameter --set and the profiles accept: key, unit, allowed range, meaning");
  auto check = std::make_shared<std::string>();
  auto out = std::make_shared<OutputChoice>();
  m->add_option("--check", *check,
                "simulate the machine's published microbenchmarks (profiles/microbench/NAME.toml) on its profile: "
                "model beside published, within 15 %")
      ->type_name("NAME");
  add_output_options(m, *out, "with --check: where the table goes (.txt, or .json for its JSON; '-' = stdout, the default)",
                     "with --check: txt or json (default: -o's extension, else txt)");
  m->callback(deferred([params, check, out] {
    if ((out->path || out->format) && check->empty())
      throw UsageError("machines: -o and --format go with --check NAME");
    if (!check->empty()) {
      if (*params) throw UsageError("machines: --check and --params: give one");
      run_machine_check(*check, *out);
      return;
    }
    if (*params) {
      print_params();
      return;
    }
    for (const auto& name : machine::list_profiles()) {
      machine::Machine mm = machine::load_profile(name);
      std::string states;
      for (const auto& s : mm.idle_states) {
        if (!states.empty()) states += ",";
        states += s.name;
      }
      fmt::print("{:<16} {:>4} CPUs  {}x{}x{} (sockets x cores x threads), {} CPUs/LLC, {} {} [{}]  {}\n",
                 name, mm.topo.nr_cpus(), mm.topo.sockets, mm.topo.cores_per_socket,
                 mm.topo.threads_per_core, mm.topo.llc_size(), mm.arch, mm.cpuidle_driver,
                 states, mm.description);
    }
  }));
  auto* f = app.add_subcommand("features", "list the scheduler features and their defaults");
  auto verbose = std::make_shared<bool>(false);
  f->add_flag("--verbose,-v", *verbose,
              "also each scheduler change's origin, counters and tunables (--set change.NAME.KEY=V)");
  f->callback(deferred([verbose] {
    const auto table = kernel::feature_table();
    size_t width = 18;  // the name column fits the longest name
    for (const auto& fi : table) width = std::max(width, std::string(fi.name).size());
    for (const auto& fi : table) {
      fmt::print("{:<{}} {:<3}  {}\n", fi.name, width, fi.default_on ? "on" : "off", fi.help);
      if (!*verbose || fi.change < 0) continue;
      const kernel::ChangeInfo& in = kernel::change_types()[fi.change]->info;
      fmt::print("{:<24}origin: {}\n", "", in.origin);
      for (const auto& c : in.counters)
        fmt::print("{:<24}counter {} ({}){}: {}\n", "", c.name, c.unit, c.key ? ", in ab" : "",
                   c.help);
      for (const auto& t : in.tunables)
        fmt::print("{:<24}tunable change.{}.{} = {} {} [{}, {}]: {}\n", "", in.name, t.key, t.value,
                   t.unit, t.min, t.max, t.help);
    }
  }));
  auto* w = app.add_subcommand("workloads", "list the benchmarks schedlab models");
  w->callback(deferred([] {
    for (const auto& wi : workload::list_workloads())
      fmt::print("{:<24} {}  -- {}\n", wi.name, wi.usage, wi.help);
  }));
}

}  // namespace schedlab::cli
