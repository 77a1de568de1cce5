// Small text helpers every layer shares (header only, below the sim layer): whitespace
// trimming, the kernel's CPU-list syntax, CSV quoting.
#pragma once
#include <charconv>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::util {

// Without leading and trailing whitespace (std::isspace's set: " \t\n\v\f\r").
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\v\f\r";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// A whole decimal integer (an optional sign, then digits, nothing after them), or nullopt for ""
// and anything else: what a /proc or /sys file holding one number contains.
inline std::optional<long long> parse_whole_int(std::string_view x) {
  if (!x.empty() && x.front() == '+') x.remove_prefix(1);
  long long v = 0;
  auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), v);
  if (x.empty() || ec != std::errc() || end != x.data() + x.size()) return std::nullopt;
  return v;
}

// The largest CPU number a list may name (well above any machine: a bound on bad input).
inline constexpr int kMaxCpuInList = 1 << 20;

// Parses a kernel CPU list ("0-3,8,10-11", as cpulist files and taskset -c write it; items may
// be padded with spaces): the CPUs ascending, each once; "" is the empty list. Throws
// std::invalid_argument "bad CPU list '...'" or "bad CPU range 'A-B'" (A > B).
inline std::vector<int> parse_cpu_list(std::string_view text) {
  std::set<int> out;
  std::string_view s = trim(text);
  auto bad = [&] { return std::invalid_argument("bad CPU list '" + std::string(text) + "'"); };
  auto num = [&](std::string_view x) {
    x = trim(x);
    int v = -1;
    auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), v);
    if (x.empty() || ec != std::errc() || end != x.data() + x.size() || v < 0 || v > kMaxCpuInList)
      throw bad();
    return v;
  };
  while (!s.empty()) {
    auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    auto dash = item.find('-');
    int lo = num(item.substr(0, dash));
    int hi = dash == std::string_view::npos ? lo : num(item.substr(dash + 1));
    if (lo > hi) throw std::invalid_argument("bad CPU range '" + std::string(trim(item)) + "'");
    for (int c = lo; c <= hi; ++c) out.insert(c);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
    if (trim(s).empty()) throw bad();  // a trailing comma
  }
  return {out.begin(), out.end()};
}

// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote, CR or LF.
inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace schedlab::util
