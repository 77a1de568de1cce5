// The published-microbenchmark figures (experiment/microbench.hpp, `schedlab machines --check`):
// the reader's errors name file, line and key; every shipped figures file parses, is for its
// profile, and each figure is simulated or mapped to the cost it was taken from.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "experiment/microbench.hpp"

using namespace schedlab;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
// The error read_figures gives for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    experiment::read_figures(text, "f.toml");
  } catch (const experiment::FiguresError& e) {
    return e.what();
  }
  return "";
}
const char* kGood = R"(machine = "tiny-4"

[[figure]]
key = "cacheline_llc"
value_ns = 23.5
what = "one-way"
source = "C2C-7R13"
role = "cost"

[[figure]]
key = "wake_latency_llc_gap50us"
value_ns = 1150
what = "wake"
source = "WAKE-ZEN2"
role = "check"
note = "a note"
)";
}  // namespace

TEST(Microbench, ReadsFigures) {
  auto set = experiment::read_figures(kGood, "f.toml");
  EXPECT_EQ(set.machine, "tiny-4");
  ASSERT_EQ(set.figures.size(), 2u);
  EXPECT_EQ(set.figures[0].key, "cacheline_llc");
  EXPECT_DOUBLE_EQ(set.figures[0].value_ns, 23.5);
  EXPECT_EQ(set.figures[0].role, "cost");
  EXPECT_EQ(set.figures[0].line, 3);
  EXPECT_EQ(set.figures[1].source, "WAKE-ZEN2");
  EXPECT_EQ(set.figures[1].note, "a note");
}

TEST(Microbench, ErrorsNameFileLineAndKey) {
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string g = kGood;
  EXPECT_EQ(error_of(replace(g, "value_ns = 1150", "value_ns = -3")),
            "f.toml:12: figure 'wake_latency_llc_gap50us': value_ns must be a time in ns, > 0 and at most 1e9 (got -3)");
  EXPECT_EQ(error_of(replace(g, "value_ns = 1150", "value_ns = \"fast\"")),
            "f.toml:12: figure 'wake_latency_llc_gap50us': value_ns must be a number, not a string");
  EXPECT_EQ(error_of(replace(g, "role = \"check\"", "role = \"guess\"")).substr(0, 63),
            "f.toml:15: figure 'wake_latency_llc_gap50us': role must be \"che");
  EXPECT_EQ(error_of(replace(g, "note = ", "nope = ")), "f.toml:16: unknown key 'nope' in figure 2");
  EXPECT_EQ(error_of(replace(g, "role = \"cost\"\n", "")), "f.toml:3: figure 1: missing key 'role'");
  EXPECT_EQ(error_of(replace(g, "wake_latency_llc_gap50us", "cacheline_llc")), "f.toml:10: figure 'cacheline_llc': key given twice");
  EXPECT_EQ(error_of(replace(g, "key = \"cacheline_llc\"", "key = \"cache line\"")).substr(0, 48),
            "f.toml:4: figure 1: key 'cache line' must be let");
  EXPECT_EQ(error_of(replace(g, "machine = \"tiny-4\"", "")), "f.toml: missing key 'machine' (the profile the figures are for)");
  EXPECT_EQ(error_of("machine = \"x\"\n"), "f.toml: no [[figure]] tables");
  EXPECT_EQ(error_of("machine = \"x\"\n[[figure]\n").substr(0, 31), "f.toml:2: TOML syntax error at ");
  EXPECT_EQ(error_of(replace(g, "key = \"cacheline_llc\"", "key = \"membarrier_noipi_llc\"")).substr(0, 62),
            "f.toml:4: figure 1: give the IPI round trip itself as membarri");
}

// The threshold is a parameter: host check's 10 %, machines --check's 15 %.
TEST(Microbench, ThresholdIsAParameter) {
  experiment::CheckRow r;
  r.key = "x";
  r.kind = "simulated";
  r.model_ns = 112;
  r.measured_ns = 100;
  EXPECT_NE(experiment::check_table({r}, "p").find("# 0 of 1 within 10 %"), std::string::npos);
  EXPECT_NE(experiment::check_table({r}, "p", 15).find("# 1 of 1 within 15 %"), std::string::npos);
  EXPECT_EQ(experiment::check_json({r}, "p", 15)["within_15pct"], 1);
  EXPECT_EQ(experiment::check_json({r}, "p")["within_10pct"], 0);
}

TEST(Microbench, ShippedFiguresAreModeled) {
  int files = 0;
  for (const auto& name : machine::list_profiles()) {
    const std::string path = experiment::figures_path(name);
    const std::string text = slurp(path);
    if (text.empty()) continue;
    ++files;
    auto set = experiment::read_figures(text, path);
    EXPECT_EQ(set.machine, name);
    machine::Machine m = machine::load_profile(name);
    auto rows = experiment::published_check(m, set);
    ASSERT_EQ(rows.size(), set.figures.size()) << name;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& f = set.figures[i];
      EXPECT_EQ(rows[i].key, f.key);
      EXPECT_EQ(rows[i].source, f.source);
      EXPECT_DOUBLE_EQ(rows[i].measured_ns, f.value_ns) << name << " " << f.key;
      EXPECT_TRUE(rows[i].has_error()) << name << " " << f.key << ": " << rows[i].how;
      // A cost figure is the cost itself (a direct row); a check is simulated from several.
      if (f.role == "cost") {
        EXPECT_EQ(rows[i].kind, "direct") << name << " " << f.key;
      }
    }
  }
  EXPECT_GE(files, 7);
}

// A direct row reads the cost it names: moving the cost moves the model column.
TEST(Microbench, DirectRowsFollowTheProfile) {
  machine::Machine m = machine::load_profile("epyc-milan-2s");
  experiment::FigureSet set = experiment::read_figures(kGood, "f.toml");
  set.figures.resize(1);
  EXPECT_DOUBLE_EQ(experiment::published_check(m, set)[0].model_ns, 23);
  m.costs.remote_read_llc_ns = 40;
  EXPECT_DOUBLE_EQ(experiment::published_check(m, set)[0].model_ns, 40);
  set.figures[0].key = "idle_exit_C2";
  EXPECT_DOUBLE_EQ(experiment::published_check(m, set)[0].model_ns, 2500);
  set.figures[0].key = "idle_exit_C9";
  auto rows = experiment::published_check(m, set);
  EXPECT_EQ(rows[0].kind, "not modeled");
  EXPECT_EQ(rows[0].how.substr(0, 30), "no idle state C9 on this machi");
}

// A wake-up figure may give its published run's length and statistic; nothing else may.
TEST(Microbench, WakeFiguresGiveThePublishedRunsShape) {
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string g = kGood;
  const std::string shaped = replace(g, "note = \"a note\"", "iterations = 1000\nstatistic = \"mean\"");
  auto set = experiment::read_figures(shaped, "f.toml");
  EXPECT_EQ(set.figures[1].iterations, 1000);
  EXPECT_EQ(set.figures[1].statistic, "mean");
  EXPECT_EQ(set.figures[0].iterations, 0);
  EXPECT_EQ(set.figures[0].statistic, "median");
  EXPECT_EQ(error_of(replace(shaped, "iterations = 1000", "iterations = 1")),
            "f.toml:16: figure 'wake_latency_llc_gap50us': iterations must be 2 to 100000000 (got 1)");
  EXPECT_EQ(error_of(replace(shaped, "statistic = \"mean\"", "statistic = \"avg\"")),
            "f.toml:17: figure 'wake_latency_llc_gap50us': statistic must be \"median\" or \"mean\", not \"avg\"");
  EXPECT_EQ(error_of(replace(g, "role = \"cost\"", "role = \"cost\"\niterations = 5")),
            "f.toml:9: figure 'cacheline_llc': iterations applies only to wake_latency_* and wake_syscall_* figures");

  // The shape is the simulated run: its length in the command, its statistic in the metric.
  machine::Machine m = machine::load_profile("tiny-4");
  auto plain = experiment::published_check(m, experiment::read_figures(g, "f.toml"));
  auto rows = experiment::published_check(m, set);
  EXPECT_EQ(plain[1].how, "calib wake -c 0,1 -g 50; a note");
  EXPECT_EQ(rows[1].how, "calib wake -c 0,1 -g 50 -n 1000 (mean)");
  EXPECT_GT(rows[1].model_ns, 0);
}
