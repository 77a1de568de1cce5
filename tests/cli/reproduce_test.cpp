// `schedlab reproduce` end to end: --list of the shipped catalogue, a malformed catalogue file
// (one error line naming file and line, exit 2, nothing on stdout), a small catalogue run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/catalogue_case.hpp"
#include "../common/process.hpp"

namespace fs = std::filesystem;
using schedlab::fixture::kPlanned;
using schedlab::fixture::line_of;
using schedlab::fixture::run_schedlab;
const std::string kCase = schedlab::fixture::kValidCase;

namespace {

using ReproduceCli = schedlab::fixture::CatalogueTempDir;

}  // namespace

TEST(ReproduceShipped, ListShowsEveryCaseWithItsSource) {
  auto r = run_schedlab("reproduce --list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("24 cases in published/"), std::string::npos) << r.out;
  int sources = 0;
  for (size_t p = 0; (p = r.out.find("> 20", p)) != std::string::npos; ++p) ++sources;  // "<id> 2022-..."
  EXPECT_GE(sources, 10);
  // Every change the shipped cases compare exists (HALTPOLL_GOVERNOR and SIS_NODE were the last),
  // so no case says it needs one; CatalogueDir.CaseNeedingAMissingChangeIsNotRunnable covers the message.
  EXPECT_EQ(r.out.find("needs capability"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("needs feature"), std::string::npos) << r.out;
  auto j = run_schedlab("reproduce --list --format json");
  ASSERT_EQ(j.status, 0);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["cases"].size(), 24u);
  for (const auto& c : doc["cases"]) EXPECT_FALSE(c["source"]["message_id"].get<std::string>().empty());
}

TEST_F(ReproduceCli, MalformedFileIsOneErrorWithFileAndLine) {
  write("good.toml", kCase);
  write("bad.toml", schedlab::fixture::replace(kCase, "factor = 3.0", "factor = 0.1"));
  for (const char* extra : {"--list", ""}) {
    auto r = run_schedlab("reproduce --catalogue " + dir() + " " + extra);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    std::string want = "schedlab: error: " + (dir_ / "bad.toml").string() + ":" + std::to_string(line_of(kCase, "factor =")) + ": factor must be a number >= 1\n";
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
  write("b-needs.toml", schedlab::fixture::replace(kCase, "test_features = \"IDLE_SPIN\"", "test_features = \"NO_NEW_THING\""));
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
  EXPECT_EQ(md.out.rfind("| case | machine | published | model | base | band | result |", 0), 0u) << md.out;
}
