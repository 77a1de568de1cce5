// `schedlab validate`: the model against the real kernel of this machine (docs/validation.md).
// Parsing and printing only; the work is in experiment/validate.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/validate.hpp"
#include "host/bench.hpp"
#include "host/probe.hpp"
#include "io/output.hpp"

namespace schedlab::cli {
namespace {

struct ValidateArgs {
  experiment::ValidateOptions opt;
  OutputChoice out;  // -o FILE (default validation.txt), --format
};

// -o FILE / --format: the report file's format; default validation.txt, text.
const OutputSpec kValidateOutput{{{{"text", "txt"}, {".txt"}},
                                  {{"markdown", "md"}, {".md"}},
                                  {{"json"}, {".json"}},
                                  {{"csv"}, {".csv"}}},
                                 "text", true};

void run_validate(ValidateArgs& a) {
  require_finite("--max-busy", a.opt.max_busy_pct);
  OutputChoice choice = a.out;
  if (!choice.path && !choice.format) choice.path = "validation.txt";
  const ResolvedOutput out = resolve_output(choice, kValidateOutput);  // before any real benchmark runs
  a.opt.progress = [](int i, int n, const experiment::ValidationCase& c, const experiment::CaseResult* done) {
    if (!done) {
      io::set_progress_line_open(true);  // an error or a signal ends the "[i/n] ..." line first
      fmt::print(stderr, "[{}/{}] {} ...", i + 1, n, host::join_command(c.argv));
    } else {
      fmt::print(stderr, " real {:.6g}, sim {:.6g} {} ({:+.1f}%)\n", done->real_s.mean, done->sim_s.mean, c.unit,
                 done->error_pct);
    }
    std::fflush(stderr);
    if (done) io::set_progress_line_open(false);
  };
  a.opt.on_first_use = [](const std::string& msg) {
    fmt::print(stderr, "schedlab validate: {}\n", msg);
    std::fflush(stderr);
  };
  experiment::ValidationReport r = experiment::validate(a.opt);
  for (const auto& w : r.warnings) fmt::print(stderr, "schedlab: warning: {}\n", w);
  // The file in its format; stdout the text table and where the file went ('-': the report alone).
  const std::string report = experiment::render_validation(r, *report::parse_format(out.format));
  write_output(out, report);
  if (!out.to_stdout()) {
    const std::string table = experiment::render_validation(r, report::Format::Text);
    std::fwrite(table.data(), 1, table.size(), stdout);
    fmt::print("wrote {}\n", *out.path);
  }
}

}  // namespace

void register_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare the model with the real kernel here: hackbench (pipe/socket, thread/process, 1-2 groups, -l 200) "
      "and perf bench sched pipe (-l 20000, process and -T), N real runs vs N simulated seeds on the host profile; "
      "probes and calibrates this machine first when it has no host profile yet");
  cmd->add_option("--runs,-n", args->opt.runs, "Real runs and simulated seeds per case")
      ->type_name("N")
      ->capture_default_str();
  add_output_options(cmd, args->out,
                     "Report file (written atomically) in the format of its extension: .txt, .md (markdown), .json "
                     "(JSON with every sample), .csv; '-' = stdout only",
                     "The report's format: text, markdown, json or csv (default: -o's extension)")
      .first->default_str("validation.txt");
  cmd->add_option("--machine", args->opt.machine,
                  "Profile to simulate: `host` (written by `schedlab host probe|calibrate`) or a .toml path")
      ->capture_default_str();
  cmd->add_flag("--quick", args->opt.quick, "Tiny loop counts (hackbench -l 10, perf pipe -l 1000), for tests");
  cmd->add_option("--set", args->opt.sets,
                  "Override a profile parameter in the simulated runs only: KEY=VALUE (repeatable; for "
                  "sensitivity studies, not for fitting)")
      ->allow_extra_args(false);
  cmd->add_option("--only", args->opt.only, "Run only the cases whose name or command contains this text");
  cmd->add_option("--max-busy", args->opt.max_busy_pct,
                  "Repeat a real run (at most twice) when other processes kept more than this % of the CPUs busy "
                  "during it; 100 = never")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--allow-busy", args->opt.allow_busy,
                "With no host profile yet: calibrate even if other processes keep the machine busy");
  cmd->callback(deferred([args] { run_validate(*args); }));
}

}  // namespace schedlab::cli
