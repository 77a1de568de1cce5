// Helpers for the machine-layer tests.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "machine/machine.hpp"

namespace schedlab::machine::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string profile_path(const std::string& name) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/profiles/" + name + ".toml";
}

inline std::string profile_text(const std::string& name) { return read_text(profile_path(name)); }

// 1-based line of the first occurrence of `needle` at or after the first occurrence of `after`.
inline int line_of(const std::string& text, const std::string& needle, const std::string& after = "") {
  size_t from = after.empty() ? 0 : text.find(after);
  EXPECT_NE(from, std::string::npos) << after;
  size_t pos = text.find(needle, from);
  EXPECT_NE(pos, std::string::npos) << needle;
  if (pos == std::string::npos) return -1;
  int line = 1;
  for (size_t i = 0; i < pos; ++i) line += text[i] == '\n';
  return line;
}

// Replaces the first occurrence of `from` (at or after `after`) by `to`; fails the test if absent.
inline std::string replace(std::string text, const std::string& from, const std::string& to,
                           const std::string& after = "") {
  size_t start = after.empty() ? 0 : text.find(after);
  size_t pos = start == std::string::npos ? start : text.find(from, start);
  EXPECT_NE(pos, std::string::npos) << "test bug: '" << from << "' not in profile";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// The message of the ProfileError that parse_profile throws, or "" (test failure) if none.
inline std::string parse_error(const std::string& text, const std::string& source = "bad.toml") {
  try {
    parse_profile(text, source);
  } catch (const ProfileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ProfileError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace schedlab::machine::testing
