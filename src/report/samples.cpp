#include "report/samples.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace schedlab::report {

namespace {

// Larger magnitudes overflow the statistics (a sum of squares of 1e200 is inf) and are no
// measurement anyone takes; they are refused instead of ending in an internal error.
constexpr double kMaxMagnitude = 1e100;

std::string check_magnitude(double v) {
  return std::fabs(v) > kMaxMagnitude
             ? fmt::format("{} is too large for the statistics (at most 1e100 in magnitude)", v)
             : std::string();
}

using util::trim;

// A finite number, or a SampleError naming where it came from.
double parse_number(std::string_view text, const std::string& where) {
  std::string_view t = trim(text);
  std::string_view body = t;
  if (!body.empty() && body.front() == '+') body.remove_prefix(1);  // from_chars rejects '+'
  double v = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  const bool whole = ec == std::errc() && ptr == body.data() + body.size() && !body.empty();
  if (ec == std::errc::result_out_of_range)
    throw SampleError(fmt::format("{}: number out of range: '{}'", where, t));
  if (!whole) throw SampleError(fmt::format("{}: not a number: '{}'", where, t));
  if (!std::isfinite(v)) throw SampleError(fmt::format("{}: not a finite number: '{}'", where, t));
  if (auto e = check_magnitude(v); !e.empty()) throw SampleError(fmt::format("{}: {}", where, e));
  return v;
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
  if (quoted) throw SampleError(fmt::format("{}: unterminated quoted field", where));
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
      throw SampleError(fmt::format("{}: CSV has {} columns, choose one with --column", name,
                                   header.size()));
  } else {
    auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end())
      throw SampleError(fmt::format("{}: no column '{}' in the CSV header", name, column));
    col = static_cast<std::size_t>(it - header.begin());
  }
  std::vector<double> vals;
  for (++li; li < lines.size(); ++li) {
    std::string_view l = trim(lines[li]);
    if (l.empty() || l.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", name, li + 1);
    auto fields = csv_fields(l, where);
    if (fields.size() <= col)
      throw SampleError(fmt::format("{}: row has no column '{}'", where, header[col]));
    vals.push_back(parse_number(fields[col], where));
  }
  return vals;
}

double json_number(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number()) throw SampleError(fmt::format("{}: not a number: {}", where, v.dump()));
  double d = v.get<double>();
  if (!std::isfinite(d)) throw SampleError(fmt::format("{}: not a finite number", where));
  if (auto e = check_magnitude(d); !e.empty()) throw SampleError(fmt::format("{}: {}", where, e));
  return d;
}

std::vector<double> read_json(const std::string& name, const std::string& text,
                              const std::string& column) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
    throw SampleError(fmt::format("{}: invalid JSON: {}", name, e.what()));
  }
  std::vector<double> vals;
  auto need_column = [&]() {
    if (column.empty())
      throw SampleError(fmt::format("{}: JSON holds objects, choose a field with --column", name));
  };
  if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      const auto& e = doc[i];
      const std::string where = fmt::format("{}: element {}", name, i);
      if (e.is_object()) {
        need_column();
        if (!e.contains(column))
          throw SampleError(fmt::format("{}: no field '{}'", where, column));
        vals.push_back(json_number(e.at(column), where + " field '" + column + "'"));
      } else {
        vals.push_back(json_number(e, where));
      }
    }
  } else if (doc.is_object()) {
    need_column();
    if (!doc.contains(column))
      throw SampleError(fmt::format("{}: no field '{}'", name, column));
    const auto& arr = doc.at(column);
    if (!arr.is_array())
      throw SampleError(fmt::format("{}: field '{}' is not an array of numbers", name, column));
    for (std::size_t i = 0; i < arr.size(); ++i)
      vals.push_back(json_number(arr[i], fmt::format("{}: {}[{}]", name, column, i)));
  } else {
    throw SampleError(fmt::format("{}: JSON must be an array or an object of arrays", name));
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

}  // namespace

SampleFormat sample_format_for(const std::string& path) {
  if (path == "-") return SampleFormat::Plain;
  if (ends_with(path, ".csv")) return SampleFormat::Csv;
  if (ends_with(path, ".json")) return SampleFormat::Json;
  return SampleFormat::Plain;
}

std::vector<double> parse_sample(const std::string& name, std::string_view raw, SampleFormat format,
                                 const std::string& column) {
  const std::string text = strip_bom(std::string(raw));
  std::vector<double> vals;
  switch (format) {
    case SampleFormat::Csv: vals = read_csv(name, text, column); break;
    case SampleFormat::Json: vals = read_json(name, text, column); break;
    case SampleFormat::Plain: vals = read_plain(name, text); break;
  }
  if (vals.empty()) throw SampleError(fmt::format("{}: no values (empty sample)", name));
  return vals;
}

}  // namespace schedlab::report
