// A small catalogue case (tiny-4, a pipe ping-pong with and without IDLE_SPIN, well under a
// second) and features file shared by the catalogue tests, with helpers to make malformed copies.
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace schedlab::fixture {

// A valid case on tiny-4 that runs in well under a second.
inline const char* const kValidCase = R"TOML(title = "IDLE_SPIN halves pipe ping-pong time (test case)"

[source]
thread = "[PATCH] a test thread"
message_id = "test@example.org"
url = "https://lore.kernel.org/lkml/test@example.org/"
date = "2024-01-01"
author = "A Tester"
notes = "notes/test.md"

[machine]
profile = "tiny-4"
cpu = "test"
sockets = 1
cores_per_socket = 2
threads_per_core = 2
llc = "one LLC"
idle_states = "all"
boost = "n/a"
governor = "n/a"

[kernel]
base = "base"
test = "base + IDLE_SPIN"

[published]
commands = ["perf bench sched pipe"]
statistic = "usecs/op"
runs = "5"
higher_is_better = false
unit = "us/op"
base = 10.0
test = 5.0
pct = 50.0
doubts = "none"

[absolute]
base = 10.0
unit = "us/op"
scale = 1.0
source = "the test thread's table"

[model]
command = "perf bench sched pipe -l 200"
metric = "usecs_per_op"
base_features = ""
test_features = "IDLE_SPIN"
runs = 2
scaling = "200 loops"
simulated_s = 0.003
published_length = "not stated"
lacks = "nothing"

[band]
direction = "better"
factor = 3.0
direction_only = true
justification = "test"
)TOML";

inline const char* const kPlanned = R"TOML([[feature]]
name = "NEW_THING"
kind = "feature"
default_on = false
summary = "a change the model lacks"
notes = "notes/test.md"

[[feature]]
name = "GOVERNOR_X"
kind = "capability"
implemented = false
summary = "a mechanism the model lacks"
notes = "notes/test.md"
)TOML";

// 1-based line of the first line containing `needle`.
inline int line_of(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (l.find(needle) != std::string::npos) return n;
  }
  return 0;
}

inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

// A temporary catalogue directory per test with notes/test.md and features.toml (kPlanned).
class CatalogueTempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() / ("schedlab-catalogue-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "notes");
    std::ofstream(dir_ / "notes" / "test.md") << "notes\n";
    std::ofstream(dir_ / "features.toml") << kPlanned;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }
  std::string dir() const { return dir_.string(); }
  std::filesystem::path dir_;
};

}  // namespace schedlab::fixture
