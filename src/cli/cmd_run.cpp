// schedlab run [--machine P] [--features F] [--seed N] [--idle-disable NAMES] [--set K=V ...]
//              [--json FILE] [--trace FILE] [--html FILE] [--schedstat FILE] -- <benchmark command line>
#include <fmt/core.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/reports.hpp"
#include "experiment/run.hpp"
#include "io/output.hpp"

namespace schedlab::cli {

namespace {
struct RunArgs {
  experiment::RunSpec spec;
  std::optional<std::string> idle_disable;
  std::optional<std::string> json;
  std::optional<std::string> trace;
  std::optional<std::string> html;
  std::optional<std::string> schedstat;
  std::optional<std::string> max_memory;
  OutputChoice out;                 // -o FILE, --format
  std::optional<std::string> text;  // -o FILE.txt / .md: the benchmark's text and the summary
  std::vector<std::string> positional;
};
}  // namespace

namespace {
// -o FILE: json becomes --json, html --html, txt (.txt, .md) the text file instead of stdout.
const OutputSpec kRunOutput{{{{"json"}, {".json"}}, {{"html"}, {".html"}, false}, {{"txt", "text"}, {".txt", ".md"}}},
                            "txt", true};

void resolve_run_output(RunArgs& a) {
  ResolvedOutput out = resolve_output(a.out, kRunOutput);
  route_alias(out, "json", "--json", a.json);
  route_alias(out, "html", "--html", a.html);
  if (out.path && *out.path != "-") a.text = out.path;
}
}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "simulate one benchmark run on a modeled machine");
  add_model_options(cmd, args->spec, args->idle_disable);
  cmd->add_option_function<std::string>(
      "--seed", [args](const std::string& v) { args->spec.seed = parse_seed("--seed", v); },
      "random seed (same seed, same output)")
      ->type_name("N")
      ->default_str("1");
  add_output_options(cmd, args->out,
                     "write the result to FILE in the format of its extension: .json (as --json), .html (as --html), "
                     ".txt or .md (the benchmark's text and the summary, instead of stdout); '-': stdout",
                     "the format of -o: json, html or txt (default: -o's extension)");
  add_optional(cmd, "--json", args->json, "write metrics and counters (total and per CPU) as JSON ('-': stdout, which then carries the JSON alone; the benchmark text goes to stderr)")
      ->type_name("FILE");
  add_optional(cmd, "--trace", args->trace, "write a trace: .dat (trace-cmd), .txt (ftrace text), .json (Perfetto)")
      ->type_name("FILE");
  add_optional(cmd, "--html", args->html,
               "write a self-contained HTML report (plots as inline SVG, the data as JSON)")
      ->type_name("FILE");
  add_optional(cmd, "--schedstat", args->schedstat,
               "write /proc/schedstat (version 17) as the run starts and as it ends, one snapshot after the other")
      ->type_name("FILE");
  cmd->add_option("--trace-window", args->spec.trace_window,
                  "only trace START,END of the run (e.g. 0.5s,0.6s; default the whole run)")
      ->type_name("START,END");
  add_optional(cmd, "--max-memory", args->max_memory,
               "refuse a run whose memory estimate (its tasks, events and per-CPU state, made before it "
               "starts) exceeds SIZE (512M, 4G; default: MemAvailable of /proc/meminfo)")
      ->type_name("SIZE");
  cmd->add_flag("--check", args->spec.check,
                "check the model's invariants after every event; measure wasted idle time");
  cmd->add_option("command", args->positional, "benchmark command line, after --");
  cmd->callback(deferred([args] {
    args->spec.command = benchmark_command(args->positional);
    resolve_run_output(*args);
    machine::Machine m = finish_model_options(args->spec, args->idle_disable);
    if (args->max_memory) {
      args->spec.memory_limit_bytes = parse_size("--max-memory", *args->max_memory);
      args->spec.memory_limit_source = "--max-memory";
    } else {
      args->spec.memory_limit_bytes = experiment::mem_available_bytes();
      args->spec.memory_limit_source = "MemAvailable in /proc/meminfo";
    }
    // Every output is checked before the simulation starts: --json, --trace and the files the
    // benchmark writes (rt-app's logs) whose names are known now.
    std::vector<io::OutputPath> outs;
    if (args->json) outs.push_back({"--json", *args->json, true});
    if (args->trace) outs.push_back({"--trace", *args->trace, false});
    if (args->html) outs.push_back({"--html", *args->html, false});
    if (args->schedstat) outs.push_back({"--schedstat", *args->schedstat, true});
    if (args->text && *args->text != "-") outs.push_back({"-o", *args->text, false});
    const size_t own_outputs = outs.size();  // schedlab's; then the benchmark's known files
    for (const auto& p : workload::parse_workload(args->spec.command, m.topo.nr_cpus())->output_paths())
      outs.push_back({"rt-app log", p, false});
    io::check_output_paths(outs);
    // With `--json -` (or `--schedstat -`) stdout carries that file alone: the benchmark's text
    // and the summary go to stderr.
    const bool json_stdout = args->json == "-", schedstat_stdout = args->schedstat == "-";
    if (json_stdout && schedstat_stdout)
      throw UsageError("--json - and --schedstat -: only one of them can be standard output");
    FILE* text_to = json_stdout || schedstat_stdout ? stderr : stdout;
    args->spec.trace_path = args->trace.value_or("");
    args->spec.schedstat = args->schedstat.has_value();
    experiment::RunProgress progress;  // on stderr for a run that takes more than a few seconds
    args->spec.progress = std::ref(progress);
    experiment::RunResult r = experiment::run_one(m, args->spec);
    progress.finish();
    std::string json;
    if (args->json) json = experiment::to_json(r).dump(2) + "\n";
    std::string html;
    if (args->html) html = experiment::run_html(args->spec, r);
    std::string schedstat;
    if (args->schedstat) schedstat = experiment::schedstat_file(r);
    for (const auto& w : r.warnings) fmt::print(stderr, "schedlab: warning: {}\n", w);
    std::fflush(stderr);
    const bool text_file = args->text && *args->text != "-";
    if (!text_file) {
      fmt::print(text_to, "{}", r.report);
      fmt::print(text_to, "{}", experiment::summary(r));
      io::flush_stdout();
    }
    // The benchmark's own files (rt-app's logs), then --json; each written whole (temp + rename).
    // Forked threads' logs are named only now: all are checked again before the first is written.
    if (!r.files.empty()) {
      outs.resize(own_outputs);
      for (const auto& f : r.files) outs.push_back({"rt-app log", f.path, false});
      io::check_output_paths(outs);
    }
    for (const auto& f : r.files) io::write_file_atomic("rt-app log", f.path, f.content);
    if (args->json) io::write_file_atomic("--json", *args->json, json);
    if (args->html) io::write_file_atomic("--html", *args->html, html);
    if (args->schedstat) io::write_file_atomic("--schedstat", *args->schedstat, schedstat);
    if (text_file) io::write_file_atomic("-o", *args->text, r.report + experiment::summary(r));
  }));
}

}  // namespace schedlab::cli
