// `schedlab reproduce` end to end: --list of the shipped catalogue, a malformed catalogue file
// (one error line naming file and line, exit 2, nothing on stdout), a small catalogue run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/process.hpp"

namespace fs = std::filesystem;
using schedlab::fixture::run_schedlab;

namespace {

const char* const kCase = R"TOML(title = "IDLE_SPIN on a pipe ping-pong (test)"

[source]
thread = "[PATCH] test"
message_id = "cli-test@example.org"
url = "https://lore.kernel.org/lkml/cli-test@example.org/"
date = "2024-01-01"
author = "A Tester"
notes = "notes/n.md"

[machine]
profile = "tiny-4"
cpu = "test"
sockets = 1
cores_per_socket = 2
threads_per_core = 2
llc = "one"
idle_states = "all"
boost = "n/a"
governor = "n/a"

[kernel]
base = "base"
test = "test"

[published]
commands = ["perf bench sched pipe"]
statistic = "usecs/op"
runs = "5"
higher_is_better = false
unit = "us/op"
base = 10.0
test = 5.0
doubts = "none"

[model]
command = "perf bench sched pipe -l 200"
metric = "usecs_per_op"
base_features = ""
test_features = "IDLE_SPIN"
runs = 2
scaling = "200 loops"
lacks = "nothing"

[band]
direction = "better"
factor = 3.0
justification = "test"
)TOML";

const char* const kPlanned = R"TOML([[feature]]
name = "NEW_THING"
kind = "feature"
default_on = true
summary = "a change the model lacks"
notes = "notes/n.md"
)TOML";

class ReproduceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schedlab-reproduce-cli-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "notes");
    std::ofstream(dir_ / "notes" / "n.md") << "notes\n";
    std::ofstream(dir_ / "features.toml") << kPlanned;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string dir() const { return dir_.string(); }
  fs::path dir_;
};

std::string with(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

TEST(ReproduceShipped, ListShowsEveryCaseWithItsSource) {
  auto r = run_schedlab("reproduce --list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("24 cases in published/"), std::string::npos) << r.out;
  int sources = 0;
  for (size_t p = 0; (p = r.out.find("> 20", p)) != std::string::npos; ++p) ++sources;  // "<id> 2022-..."
  EXPECT_GE(sources, 10);
  EXPECT_NE(r.out.find("needs feature SIS_NODE"), std::string::npos);
  auto j = run_schedlab("reproduce --list --format json");
  ASSERT_EQ(j.status, 0);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["cases"].size(), 24u);
  for (const auto& c : doc["cases"]) EXPECT_FALSE(c["source"]["message_id"].get<std::string>().empty());
}

TEST_F(ReproduceCli, MalformedFileIsOneErrorWithFileAndLine) {
  write("good.toml", kCase);
  write("bad.toml", with(kCase, "factor = 3.0", "factor = 0.1"));
  for (const char* extra : {"--list", ""}) {
    auto r = run_schedlab("reproduce --catalogue " + dir() + " " + extra);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    std::string want = "schedlab: error: " + (dir_ / "bad.toml").string() + ":47: factor must be a number >= 1\n";
    EXPECT_EQ(r.err, want);
  }
}

TEST_F(ReproduceCli, BadArgumentsAreErrors) {
  write("good.toml", kCase);
  auto a = run_schedlab("reproduce --catalogue " + dir() + " no-such-case");
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.err.find("unknown case 'no-such-case'"), std::string::npos) << a.err;
  auto b = run_schedlab("reproduce --catalogue " + dir() + " --format csv");
  EXPECT_EQ(b.status, 2);
  auto c = run_schedlab("reproduce --catalogue " + dir() + "/missing");
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("catalogue directory not found"), std::string::npos) << c.err;
}

TEST_F(ReproduceCli, RunsCasesAndReportsTheOnesItCannotRun) {
  write("a-spin.toml", kCase);
  write("b-needs.toml", with(kCase, "test_features = \"IDLE_SPIN\"", "test_features = \"NO_NEW_THING\""));
  auto r = run_schedlab("reproduce --catalogue " + dir() + " --jobs 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" of 2 in band (1 ran"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not runnable yet: needs feature NO_NEW_THING"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("a-spin: 4 runs done"), std::string::npos) << r.err;  // progress on stderr
  auto again = run_schedlab("reproduce --catalogue " + dir() + " --jobs 2");
  EXPECT_EQ(again.out, r.out);  // deterministic, independent of --jobs
  auto j = run_schedlab("reproduce --catalogue " + dir() + " --format json a-spin");
  ASSERT_EQ(j.status, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["cases"].size(), 1u);
  EXPECT_EQ(doc["cases"][0]["model"]["runs"], 2);
  EXPECT_GT(doc["cases"][0]["model"]["gain"].get<double>(), 1.0);
  auto md = run_schedlab("reproduce --catalogue " + dir() + " --format markdown --runs 3 a-spin");
  ASSERT_EQ(md.status, 0);
  EXPECT_EQ(md.out.rfind("| case | machine | published | model | band | result |", 0), 0u) << md.out;
}
