// Reading TOML files with one-line errors that name the file and line ("file:12: what").
// Shared by machine profiles (machine/profile.cpp) and the published-results catalogue
// (experiment/catalogue.cpp); Error is the exception type thrown (constructible from a string).
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace schedlab::machine {

// Messages are one line: a newline inside a quoted key or a value is shown escaped.
inline std::string one_line(std::string s) {
  for (size_t i = 0; (i = s.find_first_of("\r\n", i)) != std::string::npos; i += 2)
    s.replace(i, 1, s[i] == '\n' ? "\\n" : "\\r");
  return s;
}

inline const char* type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: return "nothing";
  }
  return "?";
}

template <class Error>
class TomlReader {
 public:
  explicit TomlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  // Parses the text; a syntax error is an Error naming the line and column.
  toml::table parse(const std::string& text) const {
    try {
      return toml::parse(text, file_);
    } catch (const toml::parse_error& e) {
      fail_at(e.source().begin.line,
              fmt::format("TOML syntax error at column {}: {}", e.source().begin.column, e.description()));
    }
  }

  [[noreturn]] void fail_at(uint32_t line, const std::string& what) const {
    if (line == 0) throw Error(one_line(fmt::format("{}: {}", file_, what)));
    throw Error(one_line(fmt::format("{}:{}: {}", file_, line, what)));
  }
  [[noreturn]] void fail(const toml::node& n, const std::string& what) const {
    fail_at(n.source().begin.line, what);
  }
  [[noreturn]] void fail_where(const std::string& where, const std::string& what) const {
    fail_at(line_of(where), what);
  }

  void note(const std::string& path, const toml::node& n) { lines_[path] = n.source().begin.line; }

  // Line of a key path, or of its closest enclosing table that has one.
  uint32_t line_of(std::string where) const {
    while (!where.empty()) {
      if (auto it = lines_.find(where); it != lines_.end() && it->second) return it->second;
      auto dot = where.rfind('.');
      if (dot == std::string::npos) break;
      where.resize(dot);
    }
    return 0;
  }

  // A table's entries must all be in `allowed`.
  void reject_unknown(const toml::table& t, const std::string& table_label,
                      const std::vector<std::string>& allowed) const {
    for (auto&& [k, v] : t) {
      std::string key(k.str());
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        uint32_t line = k.source().begin.line ? k.source().begin.line : v.source().begin.line;
        fail_at(line, fmt::format("unknown key '{}' in {}", key, table_label));
      }
    }
  }

  const toml::table& table(const toml::table& root, const char* name) {
    const toml::node* n = root.get(name);
    if (!n) fail_at(0, fmt::format("missing [{}] table", name));
    if (!n->is_table()) fail(*n, fmt::format("'{}' must be a table, not {}", name, type_name(n->type())));
    note(name, *n);
    return *n->as_table();
  }

  const toml::node& require(const toml::table& t, const std::string& path, const std::string& key,
                            const std::string& table_label) {
    const toml::node* n = t.get(key);
    if (!n) fail_at(line_of(path), fmt::format("missing key '{}' in {}", key, table_label));
    note(path + "." + key, *n);
    return *n;
  }

  int64_t get_int(const toml::node& n, const std::string& key) const {
    if (!n.is_integer()) fail(n, fmt::format("{} must be an integer, not {}", key, type_name(n.type())));
    return n.as_integer()->get();
  }
  double get_real(const toml::node& n, const std::string& key) const {
    if (n.is_integer()) return static_cast<double>(n.as_integer()->get());
    if (!n.is_floating_point())
      fail(n, fmt::format("{} must be a number, not {}", key, type_name(n.type())));
    return n.as_floating_point()->get();
  }
  bool get_bool(const toml::node& n, const std::string& key) const {
    if (!n.is_boolean())
      fail(n, fmt::format("{} must be true or false, not {}", key, type_name(n.type())));
    return n.as_boolean()->get();
  }
  std::string get_string(const toml::node& n, const std::string& key) const {
    if (!n.is_string()) fail(n, fmt::format("{} must be a string, not {}", key, type_name(n.type())));
    return n.as_string()->get();
  }
  std::vector<std::string> get_strings(const toml::node& n, const std::string& key) const {
    if (!n.is_array()) fail(n, fmt::format("{} must be an array of strings, not {}", key, type_name(n.type())));
    std::vector<std::string> out;
    for (const auto& e : *n.as_array()) {
      if (!e.is_string())
        fail(e, fmt::format("{} must be an array of strings; found {}", key, type_name(e.type())));
      out.push_back(e.as_string()->get());
    }
    return out;
  }

 private:
  std::string file_;
  std::map<std::string, uint32_t> lines_;
};

}  // namespace schedlab::machine
