// `schedlab compare`: statistics and A/B table for samples measured elsewhere (e.g. on real
// kernels). Reads one sample per file, prints report::render's table.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "report/mmtests.hpp"
#include "report/report.hpp"
#include "report/samples.hpp"
#include "report/schedstat.hpp"
#include "util/read.hpp"

namespace schedlab::cli {

namespace {

struct CompareArgs {
  std::vector<std::string> files;
  std::string labels;
  bool higher_is_better = false;
  std::string column;
  OutputChoice out;  // -o FILE, --format
  std::string metric;
  std::string unit;
  bool sample_std = false;
  std::string quantile_method = "linear";
  std::string mmtests_significance = "ci";
  int mmtests_decimals = 2;
};

std::string read_all(const std::string& path) {
  auto too_big = [&] {
    return UsageError(fmt::format("{}: larger than {}, the limit for an input file", path == "-" ? "<stdin>" : path,
                                  util::kMaxInputText));
  };
  if (path == "-") {
    auto text = util::read_capped(std::cin);
    if (!text) throw too_big();
    return *text;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(fmt::format("{}: is a directory, not a sample file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open file: {}", path, std::strerror(errno)));
  auto text = util::read_capped(in);
  if (in.bad()) throw UsageError(fmt::format("{}: cannot read file", path));
  if (!text) throw too_big();
  return *text;
}

std::vector<double> read_sample(const std::string& path, const std::string& column) {
  return report::parse_sample(path == "-" ? "<stdin>" : path, read_all(path), report::sample_format_for(path),
                              column);
}

std::string default_label(const std::string& path) {
  if (path == "-") return "stdin";
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> split_labels(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto comma = s.find(',', start);
    std::string label = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    label.erase(0, label.find_first_not_of(" \t"));
    label.erase(label.find_last_not_of(" \t") + 1);
    out.push_back(label);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const OutputSpec kCompareOutput{{{{"text", "txt"}, {".txt"}},
                                 {{"markdown", "md"}, {".md"}},
                                 {{"json"}, {".json"}},
                                 {{"csv"}, {".csv"}},
                                 {{"mmtests"}, {}},
                                 {{"perf-sched-stats"}, {}}},
                                "text", false};

void run_compare(const CompareArgs& a) {
  const ResolvedOutput out = resolve_output(a.out, kCompareOutput);
  const bool mmtests = out.format == "mmtests";
  if (out.format == "perf-sched-stats") {
    // Files of /proc/schedstat snapshots (`run --schedstat`, or a real kernel's captured before
    // and after): one is `perf sched stats report`, two `perf sched stats diff`.
    if (a.files.empty() || a.files.size() > 2)
      throw UsageError(fmt::format("--format perf-sched-stats: one schedstat file (report) or two (diff), not {}",
                                   a.files.size()));
    if (!a.labels.empty() || !a.column.empty() || !a.metric.empty() || a.higher_is_better)
      throw UsageError("--format perf-sched-stats: --labels, --column, --metric and --higher-is-better do not apply");
    std::vector<report::schedstat::Snapshot> recs;
    for (const auto& f : a.files)
      recs.push_back(report::schedstat::recording_of_file(f == "-" ? "<stdin>" : f, read_all(f)));
    write_output(out, report::schedstat::perf_sched_stats(recs[0], recs.size() == 2 ? &recs[1] : nullptr));
    return;
  }
  auto format = mmtests ? std::optional(report::Format::Text) : report::parse_format(out.format);
  report::mmtests::Options mm_opts;
  try {
    mm_opts.significance = report::mmtests::parse_significance(a.mmtests_significance);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--mmtests-significance: {}", e.what()));
  }
  if (a.files.size() < 2)
    throw UsageError("compare needs at least two sample files (FILE_A FILE_B ...)");
  if (std::count(a.files.begin(), a.files.end(), "-") > 1)
    throw UsageError("stdin ('-') can be given only once");
  std::vector<std::string> labels;
  if (!a.labels.empty()) {
    labels = split_labels(a.labels);
    if (labels.size() != a.files.size())
      throw UsageError(fmt::format("--labels has {} labels for {} files", labels.size(),
                                   a.files.size()));
    for (const auto& l : labels)
      if (l.empty()) throw UsageError("--labels has an empty label");
  } else {
    for (const auto& f : a.files) labels.push_back(default_label(f));
  }
  report::Options opts;
  if (a.sample_std) opts.std_kind = stats::StdKind::Sample;
  try {
    opts.quantile_method = stats::parse_quantile_method(a.quantile_method);
  } catch (const std::invalid_argument&) {
    throw UsageError(fmt::format(
        "unknown quantile method '{}' (use linear, lower, higher, nearest, midpoint or "
        "inverted_cdf)",
        a.quantile_method));
  }
  report::Metric m;
  m.name = !a.metric.empty() ? a.metric : (!a.column.empty() ? a.column : "value");
  m.unit = a.unit;
  m.dir = a.higher_is_better ? report::Direction::HigherIsBetter : report::Direction::LowerIsBetter;
  for (std::size_t i = 0; i < a.files.size(); ++i)
    m.sets.push_back({labels[i], read_sample(a.files[i], a.column)});
  // Render fully before writing anything, so an error leaves stdout empty.
  std::string text;
  if (mmtests) {
    // One operation (the metric), a column per file; the title names the metric and its unit.
    namespace mm = report::mmtests;
    std::vector<std::vector<double>> sets;
    for (const auto& s : m.sets) sets.push_back(s.values);
    text = mm::render(mm::make_table(m.unit.empty() ? m.name : fmt::format("{} ({})", m.name, m.unit), labels,
                                    a.mmtests_decimals, {{m.name, m.dir, sets}}, mm_opts),
                     mm_opts);
  } else {
    text = report::render({m}, *format, opts);
  }
  write_output(out, text);
}

}  // namespace

void register_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare samples measured elsewhere: summary statistics, pct imp against the first file, "
      "KS and Mann-Whitney tests, verdict");
  cmd->add_option("files", args->files,
                  "Sample files; the first is the base. One number per line (# comments), .csv "
                  "(header row, see --column) or .json (array, or objects with --column); - is "
                  "stdin")
      ->required();
  cmd->add_option("--labels", args->labels, "Comma-separated labels, one per file (default: file names)")
      ->type_name("A,B,...");
  cmd->add_flag("--higher-is-better", args->higher_is_better,
                "Larger values are better (throughput); default: lower is better (latency)");
  cmd->add_option("--column", args->column, "Column (CSV) or field (JSON) holding the values");
  add_output_options(cmd, args->out,
                     "Write the table to FILE (instead of stdout) in the format of its extension: .txt, .md "
                     "(markdown), .json, .csv; '-': stdout",
                     "Output format: text, markdown, json, csv, mmtests, or perf-sched-stats (the files are "
                     "/proc/schedstat snapshots: `perf sched stats report` of one, `diff` of two); default: "
                     "-o's extension, else text")
      .second->default_str("text");
  cmd->add_option("--mmtests-significance", args->mmtests_significance,
                  "--format mmtests: the asterisk's rule, ci (mmtests now) or ttest (before 2024-11-28)")
      ->default_str("ci");
  cmd->add_option("--mmtests-decimals", args->mmtests_decimals,
                  "--format mmtests: decimals of the values (mmtests' DecimalPlaces; 4 for hackbench)")
      ->check(CLI::Range(0, 12))
      ->default_str("2");
  cmd->add_option("--metric", args->metric, "Metric name in the table (default: --column or 'value')");
  cmd->add_option("--unit", args->unit, "Unit printed after the metric name");
  cmd->add_flag("--sample-std", args->sample_std,
                "Standard deviation divides by n-1 (default: population, divides by n)");
  cmd->add_option("--quantile-method", args->quantile_method,
                  "Quantile method for median/q90/q99: linear (NumPy default, R type 7), lower, "
                  "higher, nearest, midpoint, inverted_cdf (nearest rank, R type 1)")
      ->default_str("linear");
  cmd->callback(deferred([args] { run_compare(*args); }));
}

}  // namespace schedlab::cli
