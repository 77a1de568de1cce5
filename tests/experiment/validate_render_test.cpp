// experiment::render_validation on a hand-made report (no real benchmarks), and validate()'s
// argument checks, which happen before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "experiment/validate.hpp"

using namespace schedlab;
using experiment::CaseResult;
using experiment::ValidationReport;

namespace {

CaseResult make_case(const std::string& name, std::vector<std::string> argv, const std::string& metric,
                     const std::string& unit, std::vector<double> real, std::vector<double> sim) {
  CaseResult c;
  c.c = {name, std::move(argv), metric, unit};
  c.real = std::move(real);
  c.sim = std::move(sim);
  c.real_s = stats::summarize(c.real);
  c.sim_s = stats::summarize(c.sim);
  c.error_pct = (c.sim_s.mean - c.real_s.mean) / c.real_s.mean * 100;
  c.ks = stats::ks_2samp(c.real, c.sim);
  return c;
}

ValidationReport sample_report() {
  ValidationReport r;
  r.machine = "host";
  r.profile_path = "/cfg/schedlab/host.toml";
  r.profile_kind = "calibrated: measured costs from `schedlab host calibrate`, others base defaults";
  r.kernel = "6.1.0-test";
  r.hostname = "box";
  r.started_utc = "2026-01-01 00:00:00 UTC";
  r.loadavg_before = "0.10 0.20 0.30";
  r.loadavg_after = "1.00 0.50 0.40";
  r.nr_online_cpus = 2;
  r.model_cpus = 2;
  r.runs = 3;
  r.elapsed_s = 12.5;
  r.cases.push_back(make_case("hackbench pipe thread 1g", {"hackbench", "-p", "-T", "-g", "1", "-l", "200"}, "time",
                              "s", {0.20, 0.22, 0.24}, {0.11, 0.11, 0.11}));
  r.cases.push_back(make_case("perf pipe process", {"perf", "bench", "sched", "pipe", "-l", "20000"},
                              "usecs_per_op", "us/op", {20.0, 21.0, 22.0}, {30.0, 31.5, 33.0}));
  return r;
}

}  // namespace

TEST(ValidateRender, TextTableIsAlignedAndComplete) {
  std::string t = experiment::render_validation(sample_report(), report::Format::Text);
  EXPECT_EQ(t.rfind("schedlab validate: the model vs the real kernel on this machine\n", 0), 0u) << t;
  EXPECT_NE(t.find("host:     'box', Linux 6.1.0-test, 2 online CPU(s)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("model:    --machine host = /cfg/schedlab/host.toml (2 CPUs)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("runs:     3 real runs per case, one after another; 3 simulated (seeds 1..3)\n"), std::string::npos);
  EXPECT_NE(t.find(
                "case                            metric  real AMean  real Std  sim AMean  sim Std  error %  KS p\n"
                "hackbench -p -T -g 1 -l 200     s           0.2200    0.0163     0.1100   0.0000    -50.0   0.1\n"
                "perf bench sched pipe -l 20000  us/op       21.000     0.816     31.500    1.225    +50.0   0.1\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("warning:"), std::string::npos);
  auto r = sample_report();
  r.warnings.push_back("the machine is busy");
  EXPECT_NE(experiment::render_validation(r, report::Format::Text).find("warning:  the machine is busy\n"),
            std::string::npos);
  // Deterministic.
  EXPECT_EQ(t, experiment::render_validation(sample_report(), report::Format::Text));
}

TEST(ValidateRender, MarkdownCsvJson) {
  auto r = sample_report();
  std::string md = experiment::render_validation(r, report::Format::Markdown);
  EXPECT_NE(md.find("| case | metric | real AMean | real Std | sim AMean | sim Std | error % | KS p |\n"
                    "|---|---|---:|---:|---:|---:|---:|---:|\n"
                    "| `hackbench -p -T -g 1 -l 200` | s | 0.2200 | 0.0163 | 0.1100 | 0.0000 | -50.0 | 0.1 |\n"),
            std::string::npos)
      << md;

  std::string csv = experiment::render_validation(r, report::Format::Csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "case,command,metric,unit,n,real_mean,real_std,sim_mean,sim_std,error_pct,ks_d,ks_p");
  EXPECT_NE(csv.find("\nperf pipe process,perf bench sched pipe -l 20000,usecs_per_op,us/op,3,21,"), std::string::npos)
      << csv;

  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["command"], "hackbench -p -T -g 1 -l 200");
  EXPECT_EQ(j["cases"][0]["real"]["samples"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["cases"][1]["sim"]["mean"].get<double>(), 31.5);
  EXPECT_NEAR(j["cases"][1]["error_pct"].get<double>(), 50.0, 1e-9);
  EXPECT_EQ(j["kernel"], "6.1.0-test");
  EXPECT_EQ(j["runs"], 3);
}

TEST(ValidateRender, NonFiniteErrorIsNan) {
  auto r = sample_report();
  r.cases[0].error_pct = NAN;
  EXPECT_NE(experiment::render_validation(r, report::Format::Text).find(" nan "), std::string::npos);
  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_TRUE(j["cases"][0]["error_pct"].is_null());
}

TEST(Validate, ArgumentErrorsBeforeRunningAnything) {
  experiment::ValidateOptions o;
  o.runs = 0;
  EXPECT_THROW(experiment::validate(o), std::invalid_argument);
  o.runs = 1;
  o.only = "no-such-case";
  EXPECT_THROW(experiment::validate(o), std::invalid_argument);
}
