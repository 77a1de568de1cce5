// schedlab run [--machine P] [--features F] [--seed N] [--idle-disable NAMES] [--set K=V ...]
//              [--json FILE] -- <benchmark command line>
#include <fmt/core.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/run.hpp"
#include "host/probe.hpp"

namespace schedlab::cli {

namespace {
struct RunArgs {
  experiment::RunSpec spec;
  std::string idle_disable;
  std::string json;
};
}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "simulate one benchmark run on a modeled machine");
  add_model_options(cmd, args->spec, args->idle_disable);
  cmd->add_option_function<std::string>(
      "--seed", [args](const std::string& v) { args->spec.seed = parse_seed(v); },
      "random seed (same seed, same output)");
  cmd->add_option("--json", args->json, "write metrics and counters (total and per CPU) as JSON");
  cmd->add_option("--trace", args->spec.trace_path,
                  "write a trace: .dat (trace-cmd), .txt (ftrace text), .json (Perfetto)");
  cmd->add_option("--trace-window", args->spec.trace_window,
                  "only trace START,END of the run (e.g. 0.5s,0.6s)");
  cmd->add_flag("--check", args->spec.check,
                "check the model's invariants after every event; measure wasted idle time");
  cmd->add_option("command", args->spec.command, "benchmark command line, after --")
      ->required();
  cmd->callback([args] {
    finish_model_options(args->spec, args->idle_disable);
    experiment::RunResult r = run_guarded(args->spec);
    std::string json;
    if (!args->json.empty()) json = experiment::to_json(r).dump(2) + "\n";
    for (const auto& w : r.warnings) fmt::print(stderr, "schedlab: warning: {}\n", w);
    std::fflush(stderr);
    fmt::print("{}", r.report);
    fmt::print("{}", experiment::summary(r));
    std::fflush(stdout);
    // The benchmark's own files (rt-app's logs), then --json; each written whole (temp + rename).
    for (const auto& f : r.files) {
      try {
        host::write_file_atomic(f.path, f.content);
      } catch (const host::HostError& e) {
        throw UsageError(e.what());
      }
    }
    if (!args->json.empty()) {
      try {
        host::write_file_atomic(args->json, json);
      } catch (const host::HostError& e) {
        throw UsageError(fmt::format("--json: {}", e.what()));
      }
    }
  });
}

}  // namespace schedlab::cli
