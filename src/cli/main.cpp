// schedlab: the command-line entry point. Parsing and printing only; the work is in the layers.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <system_error>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/catalogue.hpp"
#include "experiment/run.hpp"
#include "host/probe.hpp"
#include "io/output.hpp"
#include "kernel/kernel.hpp"
#include "machine/machine.hpp"
#include "report/samples.hpp"
#include "trace/writers.hpp"
#include "workload/workload.hpp"

namespace {

using namespace schedlab;

std::vector<CLI::App*> all_subcommands(CLI::App* app) {
  return app->get_subcommands([](CLI::App*) { return true; });
}

std::string names(const std::vector<CLI::App*>& subs) {
  std::string out;
  for (auto* s : subs) out += (out.empty() ? "" : ", ") + s->get_name();
  return out;
}

bool asks_for_help_or_version(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "-h" || a == "--help" || a == "--version"; });
}

// The subcommand path the arguments select ({"host", "bench"}), found before CLI11 parses them so
// that `--` can be split off for the commands that take a benchmark command line. An unknown or
// missing subcommand is a UsageError listing the known ones.
std::vector<std::string> command_path(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> path;
  CLI::App* cur = &app;
  size_t i = 0;
  while (!all_subcommands(cur).empty()) {
    while (i < args.size() && !args[i].empty() && args[i][0] == '-') ++i;  // only flags at these levels
    const auto subs = all_subcommands(cur);
    const std::string where = path.empty() ? "" : path.back() + ": ";
    if (i == args.size()) {
      if (asks_for_help_or_version(args)) return path;
      throw cli::UsageError(fmt::format("{}no command given (commands: {})", where, names(subs)));
    }
    auto it = std::find_if(subs.begin(), subs.end(), [&](CLI::App* s) { return s->check_name(args[i]); });
    if (it == subs.end())
      throw cli::UsageError(
          fmt::format("{}unknown command '{}' (commands: {})", where, args[i], names(subs)));
    path.push_back((*it)->get_name());
    cur = *it;
    ++i;
  }
  return path;
}

// What to say about an argument CLI11 did not expect, with a hint where a user's intent is clear.
std::string extras_message(CLI::App& app, const std::vector<std::string>& path, bool had_dashes) {
  CLI::App* leaf = &app;
  for (const auto& name : path) leaf = leaf->get_subcommand(name);
  std::vector<std::string> extra = leaf->remaining(false);
  std::string cmd;
  for (const auto& p : path) cmd += (cmd.empty() ? "" : " ") + p;
  if (extra.empty()) return fmt::format("{}: unexpected arguments", cmd);
  auto opt = std::find_if(extra.begin(), extra.end(), [](const std::string& a) { return a.size() > 1 && a[0] == '-'; });
  if (opt == extra.end())
    return fmt::format("{}: unexpected argument '{}'{}", cmd, extra.front(),
                       cli::takes_benchmark(path) ? " (the benchmark command line goes after --)" : "");
  std::string name = opt->substr(0, opt->find('='));
  std::string hint;
  if (cli::takes_benchmark(path) && !had_dashes) hint = " (the benchmark command line goes after --)";
  if (path == std::vector<std::string>{"ab"}) {
    if (name == "--json") hint = " (use -o FILE.json, or --format json for JSON on stdout)";
    if (name == "--seed") hint = " (use --first-seed)";
    if (name == "--trace" || name == "--check") hint = fmt::format(" (use {} with `schedlab run`)", name);
  }
  return fmt::format("{}: unknown option '{}'{}", cmd, name, hint);
}

template <class... Types>
bool is_one_of(const std::exception& e) {
  return (... || (dynamic_cast<const Types*>(&e) != nullptr));
}

// One error line on stderr, after what stdout holds and after an unfinished progress line.
int fail(const std::string& prefix, const char* what, int status) {
  std::fflush(stdout);
  if (io::progress_line_open()) {
    std::fputs("\n", stderr);
    io::set_progress_line_open(false);
  }
  // stdio, not fmt::print: a stderr that cannot be written (2>/dev/full) must not throw here.
  std::fprintf(stderr, "schedlab: %s%s\n", prefix.c_str(), what);
  return status;
}

// What ends the process: stdout flushed and checked, then the status. A failed write to stdout
// is an error (exit 2, as an output file that cannot be written is); a failed write to stderr
// cannot be reported, only given as the status.
int finish(int status) {
  try {
    io::flush_stdout();
    if (std::cout.bad()) throw io::OutputError("writing standard output: Input/output error");
  } catch (const io::OutputError& e) {
    if (status == 0) status = fail("error: ", e.what(), 2);
  }
  if (io::stderr_failed() && status == 0) status = 2;
  return status;
}

int run_main(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  io::guard_standard_streams();
  return finish(run_main(argc, argv));
}

namespace {

int run_main(int argc, char** argv) {
  io::install_signal_handlers();
  CLI::App app{"schedlab: a deterministic model of the Linux scheduler's wakeup and idle paths", "schedlab"};
  app.formatter(std::make_shared<cli::HelpFormatter>());  // before the commands: they inherit it
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("schedlab ") + experiment::schedlab_version());
  cli::register_run(app);
  cli::register_lists(app);
  cli::register_compare(app);
  cli::register_ab(app);
  cli::register_host(app);
  cli::register_validate(app);
  cli::register_reproduce(app);
  cli::register_sweep(app);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> path;
  bool had_dashes = false;
  try {
    path = command_path(app, std::vector<std::string>(args.begin(), std::find(args.begin(), args.end(), "--")));
    auto dd = std::find(args.begin(), args.end(), "--");
    had_dashes = dd != args.end();
    if (had_dashes && cli::takes_benchmark(path)) {
      cli::set_benchmark_tail(std::vector<std::string>(dd + 1, args.end()));
      args.erase(dd, args.end());
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
    cli::run_deferred();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const std::system_error& e) {
    // fmt::print's failed write (fmt::system_error): to stdout, an error like any other write
    // error; to stderr, only the status can say it.
    if (std::ferror(stdout)) {
      std::clearerr(stdout);
      return fail("error: writing standard output: ", e.code().message().c_str(), 2);
    }
    if (std::ferror(stderr)) return 2;
    return fail("internal error: ", e.what(), 1);
  } catch (const CLI::ExtrasError& e) {
    return fail("error: ", extras_message(app, path, had_dashes).c_str(), 2);
  } catch (const CLI::ParseError& e) {
    return fail("error: ", e.what(), 2);
  }
  // The model broke one of its own invariants (--check): a bug in the model, not in the input.
  catch (const kernel::CheckError& e) {
    return fail("", e.what(), 1);
  } catch (const std::exception& e) {
    // Bad input, by type: each layer's own error class (exit 2).
    if (is_one_of<cli::UsageError, machine::ProfileError, workload::WorkloadError, experiment::SpecError,
                  experiment::DidNotFinish, experiment::CatalogueError, trace::TraceError, io::OutputError,
                  host::HostError, report::SampleError>(e))
      return fail("error: ", e.what(), 2);
    return fail("internal error: ", e.what(), 1);
  }
  return 0;
}

}  // namespace
