// What every fuzz target shares. A target is one file fuzz/targets/<name>.cpp:
//
//   #include "fuzz/harness.hpp"
//   SCHEDLAB_FUZZ_TARGET(text) { schedlab::fuzz::expect<SomeInputError>([&] { parse(text); }); }
//
// plus seed inputs in fuzz/corpus/<name>/. CMake and `make fuzz` find both by name. The input
// is `text` (a std::string_view). Bad input must end in one of the expected error types; any
// other exception, a sanitizer report or a failed FUZZ_CHECK is a bug and stops the fuzzer.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::fuzz {

// Runs f; an exception of one of the Expected types (bad input, reported as such) is fine.
template <class F>
void expect(F&& f) {
  f();
}
template <class E, class... Rest, class F>
void expect(F&& f) {
  try {
    expect<Rest...>(f);
  } catch (const E&) {
  }
}

// Splits the input into words at ASCII whitespace and NUL bytes, after argv0 (if not empty):
// the command line a user would type.
inline std::vector<std::string> words(std::string_view text, const std::string& argv0 = "") {
  std::vector<std::string> out;
  if (!argv0.empty()) out.push_back(argv0);
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\0') {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The first line (without '\n') and the rest: for inputs that carry an option value (a --column)
// before the text.
inline std::pair<std::string, std::string_view> first_line(std::string_view text) {
  auto nl = text.find('\n');
  if (nl == std::string_view::npos) return {std::string(text), {}};
  return {std::string(text.substr(0, nl)), text.substr(nl + 1)};
}

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace schedlab::fuzz

// A property every accepted input must have (round trips, ranges).
#define FUZZ_CHECK(cond) ((cond) ? (void)0 : ::schedlab::fuzz::check_failed(#cond, __FILE__, __LINE__))

#define SCHEDLAB_FUZZ_TARGET(text)                                                  \
  static void schedlab_fuzz_one(std::string_view text);                            \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {         \
    schedlab_fuzz_one(std::string_view(reinterpret_cast<const char*>(data), size)); \
    return 0;                                                                       \
  }                                                                                 \
  static void schedlab_fuzz_one(std::string_view text)
