// Option plumbing shared by the commands.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiment/run.hpp"
#include "io/output.hpp"

namespace schedlab::cli {

// --machine, --features, --idle-disable, --set (each --set takes exactly one KEY=VALUE).
void add_model_options(CLI::App* cmd, experiment::RunSpec& spec, std::optional<std::string>& idle_disable);
// Splits --idle-disable, checks the features and loads the machine (with --set and
// --idle-disable applied) so that bad input is reported before anything runs.
machine::Machine finish_model_options(experiment::RunSpec& spec, const std::optional<std::string>& idle_disable);

// --help as the commands are used: "Usage: schedlab run [OPTIONS] -- BENCHMARK [ARG...]" (the
// program name and the command path), each option with its value's name and its default
// ("--runs N=10"), a range check as "(2 to 100000)" after the description. Set on the top-level
// App before the commands are added (they inherit it).
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(34); }
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
};

// A comma-separated list; an empty item (",," or an empty list) is a UsageError naming `flag`.
std::vector<std::string> split_list(const std::string& flag, const std::string& s);
// A non-negative 64-bit integer (--seed, --first-seed); throws UsageError naming `flag`.
uint64_t parse_seed(const std::string& flag, const std::string& v);

// A memory size (--max-memory): a positive integer of bytes, or with a binary suffix K, M, G, T
// (also KiB, MiB, GiB, TiB): "512M", "4G". Throws UsageError naming `flag`.
int64_t parse_size(const std::string& flag, const std::string& v);

// A floating-point option's value is finite: NaN and the infinities are a UsageError
// ("--budget: 'nan' is not a finite number"); CLI::Range and `v < min || v > max` let NaN through.
void require_finite(const std::string& flag, double v);

// An option whose value may be given empty (`--json ""`, an error) and absent (no file).
CLI::Option* add_optional(CLI::App* cmd, const std::string& name, std::optional<std::string>& target,
                          const std::string& help);

// One output convention for the commands that write a result (run, ab, compare, validate, host):
// `-o FILE` in the format --format names, else the one FILE's extension names; '-' is standard
// output. A format the command cannot write, an extension no format has and a FILE without an
// extension (and no --format) are a UsageError. The file is written whole (io::AtomicFile:
// through symbolic links, keeping an existing file's mode, nothing left on an error).
struct OutputFormat {
  std::vector<std::string> names;       // the first is the one messages give; the others are aliases
  std::vector<std::string> extensions;  // lower case, with the dot: ".json"
  bool to_stdout = true;                // false: only to a file (the html report)
};
struct OutputSpec {
  std::vector<OutputFormat> formats;
  std::string default_format;           // with no -o or --format, with -o -, and onto a device or pipe (/dev/null)
  // true: --format only says -o's format (run, validate, host: without -o their result has a
  // place of its own); false: without -o, --format is the format on stdout (ab, compare).
  bool format_needs_output = false;
};
struct OutputChoice {
  std::optional<std::string> path;    // -o
  std::optional<std::string> format;  // --format
};
struct ResolvedOutput {
  std::string format;                 // OutputFormat::names[0]
  std::optional<std::string> path;    // absent: no -o; "-": standard output
  bool to_stdout() const { return !path || *path == "-"; }
};
// Adds `-o,--output FILE` and `--format FORMAT` with the command's descriptions; returns both
// options (for a default_str in --help).
std::pair<CLI::Option*, CLI::Option*> add_output_options(CLI::App* cmd, OutputChoice& choice,
                                                         const std::string& output_help,
                                                         const std::string& format_help);
// The format and path, or a UsageError; then checks the path (io::check_output_path, before any work).
ResolvedOutput resolve_output(const OutputChoice& choice, const OutputSpec& spec);
// A format whose result an older option also writes (run's --json and --html, ab's --html): -o
// of that format becomes the option's value; both given is a UsageError.
void route_alias(ResolvedOutput& out, const std::string& format, const std::string& alias_flag,
                 std::optional<std::string>& alias);
// Writes `text` to the resolved output: standard output (checked) or the file, whole.
void write_output(const ResolvedOutput& out, std::string_view text);

// Subcommand callbacks only record what to do; main() runs it after CLI11 has checked the whole
// command line (CLI11 calls callbacks before it reports unexpected arguments, so work done in
// a callback would run before that error).
std::function<void()> deferred(std::function<void()> work);
// Runs the recorded work, if any.
void run_deferred();

// The commands that take a benchmark command line after `--` (run, ab, host bench): main()
// splits the arguments at the first `--` and hands what follows here, so that no option of
// schedlab's (a repeatable --set, an unknown --json) can consume the benchmark's flags.
bool takes_benchmark(const std::vector<std::string>& command_path);
void set_benchmark_tail(std::vector<std::string> tail);
// The benchmark command line: what followed `--`; without `--`, the positional words given to
// the command (`schedlab run hackbench`). Throws UsageError if both or neither are present.
std::vector<std::string> benchmark_command(const std::vector<std::string>& positional);

}  // namespace schedlab::cli
