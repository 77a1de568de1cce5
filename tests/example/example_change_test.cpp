// The example change (examples/changes/newidle_min_idle.cpp) built in as SCHEDLAB_CHANGES_DIR
// builds it: this folder's SCHEDLAB_BINARY is schedlab-example-changes (CMakeLists.txt), the
// same CLI linked with one more change library made by the same CMake function. The CMake
// option itself is checked by changes_dir.sh (a configure in a temporary build directory).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "../common/process.hpp"

using namespace schedlab::fixture;

namespace {

const std::string kBench = " -- hackbench -g 2 -l 200";

nlohmann::json run_json(const std::string& features, const std::string& set = "") {
  std::string path = "/tmp/schedlab_example_" + std::to_string(::getpid()) + ".json";
  auto r = run_schedlab("run --machine epyc-milan-2s --features '" + features + "' " + set +
                        " --json " + path + kBench);
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(slurp(path));
  std::remove(path.c_str());
  return j;
}

}  // namespace

TEST(ExampleChange, IsListedWithItsCounterAndTunable) {
  auto r = run_schedlab("features --verbose");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\nNEWIDLE_MIN_IDLE +off +newidle balance also needs avg_idle")))
      << r.out;
  EXPECT_NE(r.out.find("counter newidle_min_idle_vetoed (count), in ab: "), std::string::npos);
  EXPECT_NE(r.out.find("tunable change.NEWIDLE_MIN_IDLE.min_idle_ns = 500000 ns [0, 100000000]"),
            std::string::npos);
  // The shipped changes are still there.
  EXPECT_NE(r.out.find("\nSM_IDLE "), std::string::npos);
}

TEST(ExampleChange, VetoesNewidleBalancesTheKernelAllowed) {
  auto off = run_json("");
  auto on = run_json("NEWIDLE_MIN_IDLE");
  auto zero = run_json("NEWIDLE_MIN_IDLE", "--set change.NEWIDLE_MIN_IDLE.min_idle_ns=0");
  const auto& c_off = off["counters"];
  const auto& c_on = on["counters"];
  int64_t vetoed = c_on["newidle_min_idle_vetoed"];
  EXPECT_GT(vetoed, 0);
  // Every veto is a skipped newidle balance; off, the counter stays 0.
  EXPECT_EQ(c_off["newidle_min_idle_vetoed"], 0);
  EXPECT_LT(c_on["newidle_balance_skipped"].get<int64_t>() - vetoed,
            c_on["newidle_balance_calls"].get<int64_t>());
  EXPECT_GT(c_on["newidle_balance_skipped"].get<int64_t>() * c_off["newidle_balance_calls"].get<int64_t>(),
            c_off["newidle_balance_skipped"].get<int64_t>() * c_on["newidle_balance_calls"].get<int64_t>());
  // A zero threshold vetoes nothing: the run is the run without the change.
  EXPECT_EQ(zero["counters"]["newidle_min_idle_vetoed"], 0);
  EXPECT_EQ(zero["counters"]["newidle_balance_skipped"], c_off["newidle_balance_skipped"]);
  EXPECT_EQ(zero["counters"]["context_switches"], c_off["context_switches"]);
}

TEST(ExampleChange, WorksInAb) {
  auto r = run_schedlab("ab --machine epyc-milan-2s --base '' --test NEWIDLE_MIN_IDLE --runs 3" +
                        kBench);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
  // The change's key counter is a row of the key-counter table.
  EXPECT_NE(r.out.find("\nnewidle_min_idle_vetoed (count) "), std::string::npos) << r.out;
  // Its tunable per side: the test side with a zero threshold is the base.
  auto same = run_schedlab("ab --machine epyc-milan-2s --base '' --test NEWIDLE_MIN_IDLE "
                           "--test-set change.NEWIDLE_MIN_IDLE.min_idle_ns=0 --runs 2 --format csv" +
                           kBench);
  ASSERT_EQ(same.status, 0) << same.err;
  // CSV rows come in pairs (base, test) per metric: metric,unit,direction,label,base,n,mean,...
  std::istringstream csv(same.out);
  std::string line, base_row;
  int pairs = 0;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    auto cols = [](const std::string& l) {
      std::vector<std::string> v;
      std::stringstream ss(l);
      for (std::string f; std::getline(ss, f, ',');) v.push_back(f);
      return v;
    };
    auto c = cols(line);
    ASSERT_GE(c.size(), 7u) << line;
    if (c[3] == "base") {
      base_row = line;
      continue;
    }
    EXPECT_EQ(c[3], "NEWIDLE_MIN_IDLE") << line;
    auto b = cols(base_row);
    EXPECT_EQ(c[0], b[0]);
    EXPECT_EQ(c[6], b[6]) << c[0] << ": the mean differs with a zero threshold";
    ++pairs;
  }
  EXPECT_GT(pairs, 5);
}
