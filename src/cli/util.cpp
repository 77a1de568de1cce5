#include "cli/util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "cli/commands.hpp"

namespace schedlab::cli {

namespace {
std::function<void()> g_deferred;
std::optional<std::vector<std::string>> g_tail;
}  // namespace

namespace {
// "INT:INT in [2 - 100000]" (CLI11's type name with its validators' descriptions): the name.
std::string value_name(const CLI::Option* opt) {
  std::string t = opt->get_type_name();
  return t.substr(0, t.find(':'));
}
// The validators' part, as the range it checks: "(2 to 100000)"; "" if none.
std::string check_text(const CLI::Option* opt) {
  std::string t = opt->get_type_name();
  size_t colon = t.find(':');
  if (colon == std::string::npos) return "";
  std::string v = t.substr(colon + 1);
  size_t open = v.find('['), dash = v.find(" - "), close = v.rfind(']');
  if (open != std::string::npos && dash != std::string::npos && close != std::string::npos && open < dash && dash < close)
    return fmt::format("({} to {})", v.substr(open + 1, dash - open - 1), v.substr(dash + 3, close - dash - 3));
  return "(" + v + ")";
}
}  // namespace

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  std::string out = "Usage: " + name;
  if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty()) out += " [OPTIONS]";
  for (const CLI::Option* o : app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    if (o->get_name() == "command") {  // the commands that take a benchmark command line
      out += " -- BENCHMARK [ARG...]";
      continue;
    }
    std::string n = o->get_name();
    for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (o->get_expected_max() > 1) n += "...";
    out += o->get_required() ? " " + n : " [" + n + "]";
  }
  if (!app->get_subcommands([](const CLI::App* s) { return !s->get_disabled() && !s->get_name().empty(); }).empty())
    out += " COMMAND";
  return out + "\n";
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_type_size() == 0) return "";  // a flag
  std::string out = " " + value_name(opt);
  if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
  if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
  if (opt->get_required()) out += " REQUIRED";
  return out;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  std::string check = opt->get_positional() ? "" : check_text(opt);
  return opt->get_description() + (check.empty() ? "" : " " + check);
}

std::vector<std::string> split_list(const std::string& flag, const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty())
      throw UsageError(s.empty() ? fmt::format("{}: empty list", flag)
                                 : fmt::format("{} '{}': empty item in the list", flag, s));
    out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

uint64_t parse_seed(const std::string& flag, const std::string& v) {
  uint64_t seed = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
  bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
  if (digits && ec == std::errc::result_out_of_range)
    throw UsageError(fmt::format("{}: '{}' is larger than 18446744073709551615 (2^64 - 1)", flag, v));
  if (!digits || ec != std::errc() || ptr != v.data() + v.size())
    throw UsageError(fmt::format("{}: '{}' is not a non-negative integer", flag, v));
  return seed;
}

int64_t parse_size(const std::string& flag, const std::string& v) {
  size_t digits = v.find_first_not_of("0123456789");
  std::string num = v.substr(0, digits), suffix = digits == std::string::npos ? "" : v.substr(digits);
  int shift = -1;
  const char* names[] = {"", "K", "M", "G", "T"};
  for (int i = 0; i < 5; ++i)
    if (suffix == names[i] || (i > 0 && suffix == std::string(names[i]) + "iB")) shift = 10 * i;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
  if (num.empty() || shift < 0 || ec != std::errc() || n == 0)
    throw UsageError(fmt::format("{}: '{}' is not a memory size (a positive number of bytes, or with K, M, G or T: "
                                 "512M, 4G)",
                                 flag, v));
  if (n > (uint64_t{1} << (62 - shift))) throw UsageError(fmt::format("{}: '{}' is too large", flag, v));
  return static_cast<int64_t>(n << shift);
}

void require_finite(const std::string& flag, double v) {
  if (!std::isfinite(v)) throw UsageError(fmt::format("{}: '{}' is not a finite number", flag, v));
}

CLI::Option* add_optional(CLI::App* cmd, const std::string& name, std::optional<std::string>& target,
                          const std::string& help) {
  return cmd->add_option_function<std::string>(
      name, [&target](const std::string& v) { target = v; }, help);
}

std::pair<CLI::Option*, CLI::Option*> add_output_options(CLI::App* cmd, OutputChoice& choice,
                                                         const std::string& output_help,
                                                         const std::string& format_help) {
  CLI::Option* o = add_optional(cmd, "-o,--output", choice.path, output_help)->type_name("FILE");
  CLI::Option* f = add_optional(cmd, "--format", choice.format, format_help)->type_name("FORMAT");
  return {o, f};
}

namespace {
const OutputFormat* find_format(const OutputSpec& spec, const std::string& name) {
  for (const auto& f : spec.formats)
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f;
  return nullptr;
}

std::string format_names(const OutputSpec& spec) {
  std::string out;
  for (const auto& f : spec.formats) out += (out.empty() ? "" : ", ") + f.names.front();
  return out;
}

// "(.json, .html, .txt, .md; or give --format)"
std::string extension_list(const OutputSpec& spec) {
  std::string out;
  for (const auto& f : spec.formats)
    for (const auto& e : f.extensions) out += (out.empty() ? "" : ", ") + e;
  return "(" + out + "; or give --format)";
}

// An existing file that is not a regular one (/dev/null, a pipe): it has no extension to speak of.
bool is_special_file(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
         !std::filesystem::is_directory(st);
}

// The format -o FILE's extension names.
const OutputFormat& format_of_extension(const OutputSpec& spec, const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext.empty() || ext == ".")
    throw UsageError(fmt::format("-o '{}': no extension to tell the format {}", path, extension_list(spec)));
  for (const auto& f : spec.formats)
    if (std::find(f.extensions.begin(), f.extensions.end(), ext) != f.extensions.end()) return f;
  throw UsageError(fmt::format("-o '{}': unknown extension '{}' {}", path, ext, extension_list(spec)));
}
}  // namespace

ResolvedOutput resolve_output(const OutputChoice& choice, const OutputSpec& spec) {
  if (choice.format && !choice.path && spec.format_needs_output)
    throw UsageError("--format: says the format of -o FILE; give -o too");
  if (choice.path) io::check_output_path({"-o", *choice.path, true});  // empty, a directory, ...
  const OutputFormat* f = nullptr;
  if (choice.format) {
    f = find_format(spec, *choice.format);
    if (!f) throw UsageError(fmt::format("--format: unknown format '{}' ({})", *choice.format, format_names(spec)));
  } else if (!choice.path || *choice.path == "-" || is_special_file(*choice.path)) {
    f = find_format(spec, spec.default_format);  // stdout, or a device or pipe (/dev/null, /dev/stdout)
  } else {
    f = &format_of_extension(spec, *choice.path);
  }
  ResolvedOutput out{f->names.front(), choice.path};
  if (out.to_stdout() && !f->to_stdout)
    throw UsageError(fmt::format("{}: the {} report is written to a file, not standard output",
                                 choice.path ? "-o -" : "--format " + *choice.format, out.format));
  return out;
}

void route_alias(ResolvedOutput& out, const std::string& format, const std::string& alias_flag,
                 std::optional<std::string>& alias) {
  if (out.format != format || !out.path) return;
  if (alias) throw UsageError(fmt::format("-o and {}: both name the {} output; give one", alias_flag, format));
  alias = *out.path;
  out.path.reset();
}

void write_output(const ResolvedOutput& out, std::string_view text) {
  if (out.to_stdout()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    io::flush_stdout();
  } else {
    io::write_file_atomic("-o", *out.path, text);
  }
}

void add_model_options(CLI::App* cmd, experiment::RunSpec& spec, std::optional<std::string>& idle_disable) {
  cmd->add_option("--machine", spec.machine,
                  "machine profile name, path to a .toml file, or `host` (this machine's profile, written by "
                  "`schedlab host probe|calibrate`); the default, tiny-4, is a 4-CPU test machine without "
                  "cost noise (the seed still staggers the warm start's balance times, which moves runs "
                  "with more tasks than CPUs)")
      ->type_name("PROFILE")
      ->capture_default_str();
  cmd->add_option("--features", spec.features,
                  "scheduler features: NAME turns on, NO_NAME turns off (see `schedlab features`)")
      ->type_name("LIST")
      ->default_str("default");
  add_optional(cmd, "--idle-disable", idle_disable,
               "disable idle states by name on every CPU (like cpuidle/stateN/disable)")
      ->type_name("NAMES");
  cmd->add_option("--set", spec.sets,
                  "override a profile parameter or a scheduler change's tunable: KEY=VALUE, "
                  "change.NAME.KEY=VALUE (repeatable; keys: `schedlab machines --params`)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_flag("--cold", spec.cold,
                "start the machine as just booted (balance timestamps in phase, SIS_UTIL's nr_idle_scan 0, "
                "no governor history, ticks running) instead of as one that has been up and idle");
}

machine::Machine finish_model_options(experiment::RunSpec& spec, const std::optional<std::string>& idle_disable) {
  if (idle_disable) spec.idle_disable = split_list("--idle-disable", *idle_disable);
  experiment::run_features(spec);             // SpecError -> exit 2
  return experiment::load_machine(spec);      // ProfileError -> exit 2
}

std::function<void()> deferred(std::function<void()> work) {
  return [work = std::move(work)] { g_deferred = work; };
}

void run_deferred() {
  if (g_deferred) g_deferred();
}

bool takes_benchmark(const std::vector<std::string>& path) {
  if (path.size() == 1) return path[0] == "run" || path[0] == "ab";
  return path.size() == 2 && path[0] == "host" && path[1] == "bench";
}

void set_benchmark_tail(std::vector<std::string> tail) { g_tail = std::move(tail); }

std::vector<std::string> benchmark_command(const std::vector<std::string>& positional) {
  if (g_tail) {
    if (!positional.empty())
      throw UsageError(fmt::format("unexpected argument '{}' before '--' (the benchmark command line goes "
                                   "after --)",
                                   positional.front()));
    if (g_tail->empty()) throw UsageError("no benchmark command line after '--'");
    return *g_tail;
  }
  if (positional.empty()) throw UsageError("no benchmark command line (give it after --)");
  return positional;
}

}  // namespace schedlab::cli
