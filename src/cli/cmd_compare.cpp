// `schedlab compare`: statistics and A/B table for samples measured elsewhere (e.g. on real
// kernels). Reads one sample per file, prints report::render's table.
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "report/report.hpp"
#include "util/text.hpp"

namespace schedlab::cli {
using util::trim;

namespace {

struct CompareArgs {
  std::vector<std::string> files;
  std::string labels;
  bool higher_is_better = false;
  std::string column;
  std::string format = "text";
  std::string metric;
  std::string unit;
  bool sample_std = false;
  std::string quantile_method = "linear";
};

// A finite number, or a UsageError naming where it came from.
double parse_number(std::string_view text, const std::string& where) {
  std::string_view t = trim(text);
  std::string_view body = t;
  if (!body.empty() && body.front() == '+') body.remove_prefix(1);  // from_chars rejects '+'
  double v = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  const bool whole = ec == std::errc() && ptr == body.data() + body.size() && !body.empty();
  if (ec == std::errc::result_out_of_range)
    throw UsageError(fmt::format("{}: number out of range: '{}'", where, t));
  if (!whole) throw UsageError(fmt::format("{}: not a number: '{}'", where, t));
  if (!std::isfinite(v)) throw UsageError(fmt::format("{}: not a finite number: '{}'", where, t));
  return v;
}

std::string read_all(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open file", path));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Spreadsheets often save a UTF-8 byte order mark; it is not part of the first field.
std::string strip_bom(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur)) lines.push_back(cur);
  return lines;
}

std::vector<double> read_plain(const std::string& name, const std::string& text) {
  std::vector<double> vals;
  auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = trim(lines[i]);
    if (l.empty() || l.front() == '#') continue;
    vals.push_back(parse_number(l, fmt::format("{}:{}", name, i + 1)));
  }
  return vals;
}

// RFC 4180 fields of one line (quotes, doubled quotes); no embedded newlines.
std::vector<std::string> csv_fields(std::string_view line, const std::string& where) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && trim(cur).empty()) {
      quoted = was_quoted = true;
      cur.clear();
    } else if (c == ',') {
      out.push_back(was_quoted ? cur : std::string(trim(cur)));
      cur.clear();
      was_quoted = false;
    } else {
      cur += c;
    }
  }
  if (quoted) throw UsageError(fmt::format("{}: unterminated quoted field", where));
  out.push_back(was_quoted ? cur : std::string(trim(cur)));
  return out;
}

std::vector<double> read_csv(const std::string& name, const std::string& text,
                             const std::string& column) {
  auto lines = split_lines(text);
  std::size_t li = 0;
  while (li < lines.size() && (trim(lines[li]).empty() || trim(lines[li]).front() == '#')) ++li;
  if (li == lines.size()) return {};  // no header, no values: reported as an empty sample
  const auto header = csv_fields(trim(lines[li]), fmt::format("{}:{}", name, li + 1));
  std::size_t col = 0;
  if (column.empty()) {
    if (header.size() != 1)
      throw UsageError(fmt::format("{}: CSV has {} columns, choose one with --column", name,
                                   header.size()));
  } else {
    auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end())
      throw UsageError(fmt::format("{}: no column '{}' in the CSV header", name, column));
    col = static_cast<std::size_t>(it - header.begin());
  }
  std::vector<double> vals;
  for (++li; li < lines.size(); ++li) {
    std::string_view l = trim(lines[li]);
    if (l.empty() || l.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", name, li + 1);
    auto fields = csv_fields(l, where);
    if (fields.size() <= col)
      throw UsageError(fmt::format("{}: row has no column '{}'", where, header[col]));
    vals.push_back(parse_number(fields[col], where));
  }
  return vals;
}

double json_number(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number()) throw UsageError(fmt::format("{}: not a number: {}", where, v.dump()));
  double d = v.get<double>();
  if (!std::isfinite(d)) throw UsageError(fmt::format("{}: not a finite number", where));
  return d;
}

std::vector<double> read_json(const std::string& name, const std::string& text,
                              const std::string& column) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: invalid JSON: {}", name, e.what()));
  }
  std::vector<double> vals;
  auto need_column = [&]() {
    if (column.empty())
      throw UsageError(fmt::format("{}: JSON holds objects, choose a field with --column", name));
  };
  if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      const auto& e = doc[i];
      const std::string where = fmt::format("{}: element {}", name, i);
      if (e.is_object()) {
        need_column();
        if (!e.contains(column))
          throw UsageError(fmt::format("{}: no field '{}'", where, column));
        vals.push_back(json_number(e.at(column), where + " field '" + column + "'"));
      } else {
        vals.push_back(json_number(e, where));
      }
    }
  } else if (doc.is_object()) {
    need_column();
    if (!doc.contains(column))
      throw UsageError(fmt::format("{}: no field '{}'", name, column));
    const auto& arr = doc.at(column);
    if (!arr.is_array())
      throw UsageError(fmt::format("{}: field '{}' is not an array of numbers", name, column));
    for (std::size_t i = 0; i < arr.size(); ++i)
      vals.push_back(json_number(arr[i], fmt::format("{}: {}[{}]", name, column, i)));
  } else {
    throw UsageError(fmt::format("{}: JSON must be an array or an object of arrays", name));
  }
  return vals;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  std::string tail = s.substr(s.size() - suffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == suffix;
}

std::vector<double> read_sample(const std::string& path, const std::string& column) {
  const std::string name = path == "-" ? "<stdin>" : path;
  const std::string text = strip_bom(read_all(path));
  std::vector<double> vals;
  if (ends_with(path, ".csv"))
    vals = read_csv(name, text, column);
  else if (ends_with(path, ".json"))
    vals = read_json(name, text, column);
  else
    vals = read_plain(name, text);
  if (vals.empty()) throw UsageError(fmt::format("{}: no values (empty sample)", name));
  return vals;
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
    out.emplace_back(trim(std::string_view(s).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void run_compare(const CompareArgs& a) {
  auto format = report::parse_format(a.format);
  if (!format)
    throw UsageError(fmt::format("unknown format '{}' (use text, markdown, json or csv)", a.format));
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
  const std::string out = report::render({m}, *format, opts);
  std::fwrite(out.data(), 1, out.size(), stdout);
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
  cmd->add_option("--labels", args->labels, "Comma-separated labels, one per file (default: file names)");
  cmd->add_flag("--higher-is-better", args->higher_is_better,
                "Larger values are better (throughput); default: lower is better (latency)");
  cmd->add_option("--column", args->column, "Column (CSV) or field (JSON) holding the values");
  cmd->add_option("--format", args->format, "Output format: text, markdown, json or csv")
      ->default_str("text");
  cmd->add_option("--metric", args->metric, "Metric name in the table (default: --column or 'value')");
  cmd->add_option("--unit", args->unit, "Unit printed after the metric name");
  cmd->add_flag("--sample-std", args->sample_std,
                "Standard deviation divides by n-1 (default: population, divides by n)");
  cmd->add_option("--quantile-method", args->quantile_method,
                  "Quantile method for median/q90/q99: linear (NumPy default, R type 7), lower, "
                  "higher, nearest, midpoint, inverted_cdf (nearest rank, R type 1)")
      ->default_str("linear");
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace schedlab::cli
