// experiment::render_validation on a hand-made report (no real benchmarks), and validate()'s
// argument checks, which happen before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "experiment/validate.hpp"
#include "machine/machine.hpp"

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
  experiment::summarize_case(c);
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
  // CoV: 0.0163/0.22 = 7.4%, 0.816/21 = 3.9%, 1.225/31.5 = 3.9%; CoV x = sim / real.
  EXPECT_NE(t.find("case                            metric  real AMean  real CoV %  sim AMean  sim CoV %  error %  "
                   "CoV x  KS p\n"
                   "hackbench -p -T -g 1 -l 200     s           0.2200         7.4     0.1100        0.0    -50.0      "
                   "0   0.1\n"
                   "perf bench sched pipe -l 20000  us/op       21.000         3.9     31.500        3.9    +50.0      "
                   "1   0.1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("agree:    0 of 2 case(s) within 15% in AMean, 1 within 2x in CoV, 0 both\n"), std::string::npos)
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
  EXPECT_NE(md.find("| case | metric | real AMean | real CoV % | sim AMean | sim CoV % | error % | CoV x | KS p |\n"
                    "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
                    "| `hackbench -p -T -g 1 -l 200` | s | 0.2200 | 7.4 | 0.1100 | 0.0 | -50.0 | 0 | 0.1 |\n"),
            std::string::npos)
      << md;

  std::string csv = experiment::render_validation(r, report::Format::Csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "case,command,metric,unit,n,real_mean,real_std,real_cov,sim_mean,sim_std,sim_cov,error_pct,cov_ratio,ks_d,"
            "ks_p");
  EXPECT_NE(csv.find("\nperf pipe process,perf bench sched pipe -l 20000,usecs_per_op,us/op,3,21,"), std::string::npos)
      << csv;

  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["command"], "hackbench -p -T -g 1 -l 200");
  EXPECT_EQ(j["cases"][0]["real"]["samples"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["cases"][1]["sim"]["mean"].get<double>(), 31.5);
  EXPECT_NEAR(j["cases"][1]["error_pct"].get<double>(), 50.0, 1e-9);
  EXPECT_EQ(j["kernel"], "6.1.0-test");
  EXPECT_NEAR(j["cases"][1]["cov_ratio"].get<double>(), 1.0, 1e-9);  // 20..22 vs 30..33: the same relative spread
  EXPECT_EQ(j["agreement"]["within_2x_cov"], 1);
  EXPECT_EQ(j["runs"], 3);
}

TEST(ValidateRender, NonFiniteErrorIsNan) {
  auto r = sample_report();
  r.cases[0].error_pct = NAN;
  EXPECT_NE(experiment::render_validation(r, report::Format::Text).find(" nan "), std::string::npos);
  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_TRUE(j["cases"][0]["error_pct"].is_null());
}

TEST(ValidateRender, AgreementCountsErrorAndCovLimits) {
  std::vector<CaseResult> cs;
  cs.push_back(make_case("a", {"x"}, "time", "s", {1.0, 1.1, 0.9}, {1.1, 1.2, 1.0}));   // +10%, same spread
  cs.push_back(make_case("b", {"x"}, "time", "s", {1.0, 1.1, 0.9}, {1.2, 1.2, 1.2}));   // +20%, no spread
  cs.push_back(make_case("c", {"x"}, "time", "s", {1.0, 1.5, 0.5}, {1.0, 1.1, 0.9}));   // 0%, CoV 1/5
  auto a = experiment::agreement(cs);
  EXPECT_EQ(a.cases, 3);
  EXPECT_EQ(a.within_error, 2);
  EXPECT_EQ(a.within_cov, 1);
  EXPECT_EQ(a.within_both, 1);
  EXPECT_TRUE(std::isnan(make_case("d", {"x"}, "time", "s", {1, 1}, {1, 2}).cov_ratio));  // real CoV 0
}

TEST(Validate, ArgumentErrorsBeforeRunningAnything) {
  experiment::ValidateOptions o;
  o.runs = 0;
  EXPECT_THROW(experiment::validate(o), std::invalid_argument);
  o.runs = 1;
  o.only = "no-such-case";
  EXPECT_THROW(experiment::validate(o), std::invalid_argument);
}

TEST(ValidateRender, ContextSwitchesBesideTheModel) {
  auto r = sample_report();
  EXPECT_EQ(experiment::render_validation(r, report::Format::Text).find("context switches"), std::string::npos);
  r.cases[1].real_vcsw = {40000, 40010};
  r.cases[1].real_ivcsw = {10, 30};
  r.cases[1].sim_vcsw = {20000, 20002};
  r.cases[1].sim_ivcsw = {0, 0};
  r.cases[1].real_migrations = {7, 9};
  r.cases[1].real_perf_switches = {40010, 40040};
  r.cases[1].sim_migrations = {2, 2};
  std::string t = experiment::render_validation(r, report::Format::Text);
  EXPECT_NE(t.find("\ncontext switches and CPU migrations of the benchmark's processes per run"), std::string::npos)
      << t;
  EXPECT_NE(t.find("perf bench sched pipe -l 20000         40005       20001    0.50          20            0           8"
                   "           2\n"),
            std::string::npos)
      << t;
  std::string md = experiment::render_validation(r, report::Format::Markdown);
  EXPECT_NE(md.find("| `perf bench sched pipe -l 20000` | 40005 | 20001 | 0.50 | 20 | 0 | 8 | 2 |\n"), std::string::npos)
      << md;
  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_EQ(j["cases"][1]["real"]["voluntary_switches"][1], 40010);
  EXPECT_EQ(j["cases"][1]["sim"]["involuntary_switches"][0], 0);
  EXPECT_EQ(j["cases"][1]["real"]["cpu_migrations"][1], 9);
  EXPECT_EQ(j["cases"][1]["real"]["perf_context_switches"][0], 40010);
  EXPECT_EQ(j["cases"][1]["sim"]["cpu_migrations"][0], 2);
  // Where perf could not count, the real migrations are '-' in the table and null in the JSON.
  r.cases[1].real_migrations = {std::nan(""), std::nan("")};
  t = experiment::render_validation(r, report::Format::Text);
  EXPECT_NE(t.find("          20            0           -           2\n"), std::string::npos) << t;
  j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_TRUE(j["cases"][1]["real"]["cpu_migrations"][0].is_null());
}

// The IPI and idle table: real /proc/interrupts and cpuidle counts beside the model's ipi_sent,
// idle_usage and idle_ns; absent while no case recorded them.
TEST(ValidateRender, IpisAndIdleBesideTheModel) {
  auto r = sample_report();
  EXPECT_EQ(experiment::render_validation(r, report::Format::Text).find("\nIPIs and idle per run"), std::string::npos);
  r.cases[1].real_resched_ipis = {300, 310};
  r.cases[1].real_call_ipis = {150, 170};
  r.cases[1].sim_resched_ipis = {880, 900};
  r.cases[1].sim_call_ipis = {6, 6};
  r.cases[1].real_idle_entries = {120, 136};
  r.cases[1].sim_idle_entries = {5, 7};
  r.cases[1].real_idle_ms = {17.5, 18.1};
  r.cases[1].sim_idle_ms = {0.7, 0.75};
  std::string t = experiment::render_validation(r, report::Format::Text);
  EXPECT_NE(t.find("\nIPIs and idle per run (mean; real: /proc/interrupts and cpuidle sysfs of the whole machine"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("perf bench sched pipe -l 20000            305          890          160            6         128"
                   "           6        17.8         0.7\n"),
            std::string::npos)
      << t;
  std::string md = experiment::render_validation(r, report::Format::Markdown);
  EXPECT_NE(md.find("| `perf bench sched pipe -l 20000` | 305 | 890 | 160 | 6 | 128 | 6 | 17.8 | 0.7 |\n"),
            std::string::npos)
      << md;
  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_EQ(j["cases"][1]["real"]["resched_ipis"][1], 310);
  EXPECT_EQ(j["cases"][1]["sim"]["call_function_ipis"][0], 6);
  EXPECT_EQ(j["cases"][1]["real"]["idle_entries"][0], 120);
  EXPECT_DOUBLE_EQ(j["cases"][1]["sim"]["idle_ms"][1].get<double>(), 0.75);
}

// The wake-up table: the machine's /proc/schedstat counts beside the model's, with the share on
// the waker's own CPU; '-' for a real side without schedstats.
TEST(ValidateRender, WakeupsBesideTheModel) {
  auto r = sample_report();
  EXPECT_EQ(experiment::render_validation(r, report::Format::Text).find("\nwake-ups per run"), std::string::npos);
  r.cases[1].real_wakeups = {40000, 40010};
  r.cases[1].real_local_wakeups = {20000, 20005};
  r.cases[1].sim_wakeups = {40000, 40000};
  r.cases[1].sim_local_wakeups = {0, 2};
  std::string t = experiment::render_validation(r, report::Format::Text);
  EXPECT_NE(t.find("\nwake-ups per run (mean; real: /proc/schedstat ttwu_count / ttwu_local"), std::string::npos) << t;
  EXPECT_NE(t.find("perf bench sched pipe -l 20000           40005         40000          50.0           0.0\n"),
            std::string::npos)
      << t;
  std::string md = experiment::render_validation(r, report::Format::Markdown);
  EXPECT_NE(md.find("| `perf bench sched pipe -l 20000` | 40005 | 40000 | 50.0 | 0.0 |\n"), std::string::npos) << md;
  auto j = nlohmann::json::parse(experiment::render_validation(r, report::Format::Json));
  EXPECT_EQ(j["cases"][1]["real"]["local_wakeups"][1], 20005);
  EXPECT_EQ(j["cases"][1]["sim"]["wakeups"][0], 40000);
  r.cases[1].real_wakeups = {std::nan(""), std::nan("")};
  r.cases[1].real_local_wakeups = {std::nan(""), std::nan("")};
  t = experiment::render_validation(r, report::Format::Text);
  EXPECT_NE(t.find("perf bench sched pipe -l 20000               -         40000             -           0.0\n"),
            std::string::npos)
      << t;
}

// The header warns when the profile's [kernel] has scheduler settings mainline Linux does not
// (host::probe_kernel() records them: the dev VM's sched_vcpu_pack), and only then.
TEST(ValidateHeader, WarnsAboutTheKernelsOwnSchedulerSettings) {
  machine::Machine m = machine::load_profile("tiny-4");
  m.kernel.present = true;
  experiment::ValidateOptions opt;
  opt.machine = "tiny-4";
  auto says = [](const experiment::ValidationReport& r) {
    for (const auto& w : r.warnings)
      if (w.find("mainline Linux does not") != std::string::npos) return w;
    return std::string();
  };
  EXPECT_EQ(says(experiment::report_header(opt, m, "")), "");
  m.kernel.other_sched_sysctls = machine::RecordedText{"sched_vcpu_pack=15", "/proc/sys/kernel"};
  EXPECT_EQ(says(experiment::report_header(opt, m, "")),
            "the real kernel has scheduler settings mainline Linux does not (sched_vcpu_pack=15): its runs include "
            "what they change, the model's do not");
}
