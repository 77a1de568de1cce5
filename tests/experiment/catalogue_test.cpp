// The published-results catalogue: every shipped file parses; malformed files get one error
// naming the file and line; bands, gains and the not-runnable rule; a small case end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "experiment/catalogue.hpp"
#include "experiment/reproduce.hpp"
#include "../common/catalogue_case.hpp"

namespace fs = std::filesystem;
using namespace schedlab;
using namespace schedlab::experiment;
using schedlab::fixture::kPlanned;
using schedlab::fixture::kValidCase;
using schedlab::fixture::line_of;
using schedlab::fixture::replace;

namespace {

const std::string kPublished = std::string(SCHEDLAB_SOURCE_DIR) + "/published";

class CatalogueDir : public fixture::CatalogueTempDir {
 protected:
  std::string file() const { return (dir_ / "case.toml").string(); }
  std::vector<PlannedFeature> planned() const { return parse_planned_features(kPlanned, "features.toml"); }
  Case parse(const std::string& text) const { return parse_case(text, file(), dir_.string(), planned()); }

  // Parsing `text` fails with exactly "<file>:<line>: ..." containing `what`.
  void expect_error(const std::string& text, int line, const std::string& what) const {
    try {
      parse(text);
      ADD_FAILURE() << "no error for: " << what;
    } catch (const CatalogueError& e) {
      std::string msg = e.what();
      std::string prefix = file() + ":" + std::to_string(line) + ": ";
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg << "\nexpected prefix " << prefix;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
};

}  // namespace

TEST(Catalogue, EveryShippedFileParses) {
  Catalogue cat = load_catalogue(kPublished);
  ASSERT_GE(cat.cases.size(), 10u);
  std::set<std::string> ids;
  int runnable = 0;
  for (const auto& c : cat.cases) {
    SCOPED_TRACE(c.file);
    EXPECT_TRUE(ids.insert(c.name).second);
    EXPECT_NE(c.source.message_id.find('@'), std::string::npos);
    EXPECT_FALSE(c.band.justification.empty());
    EXPECT_FALSE(c.model.lacks.empty());
    EXPECT_FALSE(c.model.scaling.empty());
    EXPECT_GT(c.published.gain(), 0);
    if (c.runnable()) ++runnable;
  }
  EXPECT_GT(runnable, 0);
}

TEST(Catalogue, EveryPlannedFeatureIsUsedAndDescribed) {
  Catalogue cat = load_catalogue(kPublished);
  std::ifstream in(kPublished + "/notes/features-needed.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string notes = ss.str();
  for (const auto& f : cat.planned) {
    SCOPED_TRACE(f.name);
    EXPECT_NE(notes.find("\n## " + f.name + "\n"), std::string::npos) << "no section for it in features-needed.md";
    bool used = false;
    for (const auto& c : cat.cases)
      for (const auto& m : c.missing)
        if (m.find(f.name) != std::string::npos) used = true;
    EXPECT_TRUE(used) << "no case needs it";
  }
}

TEST(Catalogue, HeldOutThreadsAreNotCases) {
  // The SM_IDLE fast-path, the 2020 idle-cpumask and the 2018 busy-wait threads are kept as an
  // independent check: no case may take its numbers from them.
  Catalogue cat = load_catalogue(kPublished);
  for (const auto& c : cat.cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.source.thread.find("Introduce SM_IDLE"), std::string::npos);
    EXPECT_EQ(c.source.thread.find("idle cpumask"), std::string::npos);
    EXPECT_EQ(c.source.thread.find("busy wait before going idle"), std::string::npos);
  }
}

TEST_F(CatalogueDir, ValidCaseParses) {
  Case c = parse(kValidCase);
  EXPECT_EQ(c.name, "case");
  EXPECT_TRUE(c.runnable());
  EXPECT_EQ(c.model.command, (std::vector<std::string>{"perf", "bench", "sched", "pipe", "-l", "200"}));
  EXPECT_DOUBLE_EQ(c.published.gain(), 2.0);  // lower is better: base / test
  EXPECT_DOUBLE_EQ(c.published.pct_imp(), 50.0);
  EXPECT_EQ(c.model.metric_line, static_cast<uint32_t>(line_of(kValidCase, "metric =")));
}

TEST_F(CatalogueDir, MalformedFilesNameFileAndLine) {
  const std::string v = kValidCase;
  expect_error(replace(v, "runs = 2", "runs = \"two\""), line_of(v, "runs = 2"), "must be an integer");
  expect_error(replace(v, "runs = 2", "runs = 1"), line_of(v, "runs = 2"), "out of range");
  expect_error(replace(v, "factor = 3.0", "factor = 0.5"), line_of(v, "factor = 3.0"), "factor must be");
  expect_error(replace(v, "factor = 3.0", "max_change_pct = 3.0"), line_of(v, "factor = 3.0"),
               "takes factor");
  expect_error(replace(v, "direction = \"better\"", "direction = \"worse\""), line_of(v, "direction ="),
               "published gain is 2.000");
  expect_error(replace(v, "direction = \"better\"", "direction = \"up\""), line_of(v, "direction ="),
               "band direction 'up'");
  expect_error(replace(v, "pct = 50.0", "pct = 40.0"), line_of(v, "pct = 50.0"), "does not match");
  expect_error(replace(v, "test = 5.0", "test = -5.0"), line_of(v, "test = 5.0"), "positive number");
  expect_error(replace(v, "date = \"2024-01-01\"", "date = \"1 Jan 2024\""), line_of(v, "date ="), "YYYY-MM-DD");
  expect_error(replace(v, "message_id = \"test@example.org\"", "message_id = \"<test@example.org>\""),
               line_of(v, "message_id ="), "not a Message-ID");
  expect_error(replace(v, "notes = \"notes/test.md\"", "notes = \"notes/none.md\""), line_of(v, "notes ="),
               "not found");
  expect_error(replace(v, "profile = \"tiny-4\"", "profile = \"no-such-box\""), line_of(v, "profile ="),
               "unknown machine 'no-such-box'");
  expect_error(replace(v, "sockets = 1", "sockets = 2"), line_of(v, "sockets = 1"), "the machine is 2x2x2");
  expect_error(replace(v, "command = \"perf bench sched pipe -l 200\"", "command = \"perf bench sched pipe -x\""),
               line_of(v, "command = \"perf"), "-x");
  expect_error(replace(v, "test_features = \"IDLE_SPIN\"", "test_features = \"IDLE_SPINN\""),
               line_of(v, "test_features ="), "unknown feature 'IDLE_SPINN'");
  expect_error(replace(v, "test_features = \"IDLE_SPIN\"", "test_features = \"GOVERNOR_X\""),
               line_of(v, "test_features ="), "is a capability");
  expect_error(replace(v, "test_features = \"IDLE_SPIN\"", "test_features = \"\""), line_of(v, "test_features ="),
               "the same");
  expect_error(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\nneeds = [\"NEW_THING\"]"),
               line_of(v, "lacks = ") + 1, "is a feature");
  expect_error(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\nneeds = [\"WHATEVER\"]"),
               line_of(v, "lacks = ") + 1, "not listed");
  expect_error(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\nsets = [\"costs.nope=1\"]"),
               line_of(v, "lacks = ") + 1, "costs.nope");
  expect_error(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\nidle_disable = [\"C9\"]"),
               line_of(v, "lacks = ") + 1, "C9");
  expect_error(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\ncolour = \"red\""),
               line_of(v, "lacks = ") + 1, "unknown key 'colour' in [model]");
  expect_error(replace(v, "scaling = \"200 loops\"\n", ""), line_of(v, "[model]"), "missing key 'scaling' in [model]");
  expect_error(replace(v, "[kernel]\nbase = \"base\"\ntest = \"base + IDLE_SPIN\"\n", ""), 1, "missing [kernel] table");
  expect_error(replace(v, "cpu = \"test\"", "cpu = test"), line_of(v, "cpu = \"test\""), "TOML syntax error");
  expect_error(replace(v, "commands = [\"perf bench sched pipe\"]", "commands = [1]"), line_of(v, "commands ="),
               "array of strings");
}

TEST_F(CatalogueDir, BandReachingGainOneMustBeLabelledDirectionOnly) {
  // gain 2.0, factor 3.0: 0.667..6.0 reaches gain 1.0. Without the label the parser refuses it;
  // with a band that does not reach 1.0 the label is refused.
  const std::string v = kValidCase;
  expect_error(replace(v, "direction_only = true\n", ""), line_of(v, "factor = 3.0"),
               "reaches gain 1.0");
  expect_error(replace(v, "factor = 3.0", "factor = 1.5"), line_of(v, "direction_only ="),
               "does not reach gain 1.0");
  Case c = parse(replace(replace(v, "factor = 3.0", "factor = 1.5"), "direction_only = true\n", ""));
  EXPECT_FALSE(c.band.labelled_direction_only);
  EXPECT_FALSE(c.band.direction_only(c.published.gain()));
  EXPECT_TRUE(parse(v).band.labelled_direction_only);
}

TEST_F(CatalogueDir, CaseRecordsItsSimulatedAndPublishedLength) {
  const std::string v = kValidCase;
  Case c = parse(v);
  EXPECT_DOUBLE_EQ(c.model.simulated_s, 0.003);
  EXPECT_EQ(c.model.published_length, "not stated");
  expect_error(replace(v, "simulated_s = 0.003\n", ""), line_of(v, "[model]"), "missing key 'simulated_s'");
  expect_error(replace(v, "simulated_s = 0.003", "simulated_s = 0"), line_of(v, "simulated_s ="),
               "positive number of seconds");
  expect_error(replace(v, "published_length = \"not stated\"\n", ""), line_of(v, "[model]"),
               "missing key 'published_length'");
}

TEST_F(CatalogueDir, PlannedFeaturesNeedAKnownKindAndUniqueNames) {
  std::string dup = std::string(kPlanned) + "\n[[feature]]\nname = \"NEW_THING\"\nkind = \"feature\"\n"
                    "default_on = true\nsummary = \"again\"\nnotes = \"x\"\n";
  EXPECT_THROW(parse_planned_features(dup, "f.toml"), CatalogueError);
  try {
    parse_planned_features(replace(kPlanned, "kind = \"feature\"", "kind = \"wish\""), "f.toml");
    ADD_FAILURE();
  } catch (const CatalogueError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.toml:3: kind 'wish'", 0), 0u) << e.what();
  }
  EXPECT_THROW(parse_planned_features(replace(kPlanned, "default_on = false\n", ""), "f.toml"), CatalogueError);
}

TEST_F(CatalogueDir, CaseNeedingAMissingChangeIsNotRunnable) {
  const std::string v = kValidCase;
  Case a = parse(replace(v, "test_features = \"IDLE_SPIN\"", "test_features = \"IDLE_SPIN,NO_NEW_THING\""));
  EXPECT_EQ(a.missing, (std::vector<std::string>{"feature NO_NEW_THING"}));
  Case b = parse(replace(v, "lacks = \"nothing\"", "lacks = \"nothing\"\nneeds = [\"GOVERNOR_X\"]"));
  EXPECT_EQ(b.missing, (std::vector<std::string>{"capability GOVERNOR_X"}));
  CaseOutcome o = reproduce_case(a, ReproduceOptions{});
  EXPECT_EQ(o.status, CaseStatus::NotRunnable);
  EXPECT_EQ(o.runs, 0);  // nothing was simulated
}

TEST(CatalogueBand, DirectionAndFactor) {
  Band better{BandDirection::Better, 1.5, 0, ""};
  EXPECT_TRUE(better.contains(2.0, 2.0, 50));
  EXPECT_TRUE(better.contains(2.0, 1.34, 25));
  EXPECT_FALSE(better.contains(2.0, 1.3, 23));   // below 2.0 / 1.5
  EXPECT_FALSE(better.contains(2.0, 3.1, 68));   // above 2.0 * 1.5
  Band wide{BandDirection::Better, 3.0, 0, ""};
  EXPECT_FALSE(wide.contains(2.0, 0.9, -11));    // inside the ratio interval, wrong direction
  EXPECT_FALSE(wide.contains(2.0, 1.0, 0));
  EXPECT_EQ(wide.describe(2.0), "better, gain 1.000..6.000");
  Band worse{BandDirection::Worse, 1.2, 0, ""};
  EXPECT_TRUE(worse.contains(0.8, 0.9, -10));
  EXPECT_FALSE(worse.contains(0.8, 1.01, 1));
  EXPECT_EQ(worse.describe(0.8), "worse, gain 0.667..0.960");
  Band none{BandDirection::None, 0, 3.0, ""};
  EXPECT_TRUE(none.contains(1.0, 1.02, 2.9));
  EXPECT_TRUE(none.contains(1.0, 0.98, -3.0));
  EXPECT_FALSE(none.contains(1.0, 1.05, 3.1));
}

TEST(CataloguePublished, GainFollowsTheDirectionOfTheNumbers) {
  PublishedResult t;
  t.higher_is_better = true;
  t.base = 100;
  t.test = 90;
  EXPECT_DOUBLE_EQ(t.gain(), 0.9);
  EXPECT_DOUBLE_EQ(t.pct_imp(), -10.0);
  t.higher_is_better = false;
  EXPECT_NEAR(t.gain(), 1.0 / 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(t.pct_imp(), 10.0);
  t.pct = 9.5;  // the thread's own rounding wins
  EXPECT_DOUBLE_EQ(t.pct_imp(), 9.5);
}

TEST_F(CatalogueDir, ReproducesASmallCaseDeterministically) {
  Case c = parse(kValidCase);
  ReproduceOptions one{0, 1}, two{0, 2};
  CaseOutcome a = reproduce_case(c, one);
  CaseOutcome b = reproduce_case(c, two);
  ASSERT_NE(a.status, CaseStatus::NotRunnable);
  EXPECT_EQ(a.runs, 2);
  EXPECT_FALSE(a.higher_is_better);
  // IDLE_SPIN avoids the switch to idle in a pipe ping-pong on tiny-4: the test side is faster.
  EXPECT_GT(a.gain, 1.0);
  EXPECT_NEAR(a.gain, a.base_mean / a.test_mean, 1e-12);
  EXPECT_EQ(a.base_mean, b.base_mean);
  EXPECT_EQ(a.test_mean, b.test_mean);
  // The band (gain 2.0 within 3x) reaches gain 1.0: meeting it is the direction only.
  ASSERT_TRUE(c.band.direction_only(c.published.gain()));
  EXPECT_TRUE(a.exercised());
  EXPECT_EQ(a.direction_clear, a.gain_low > 1.0);
  EXPECT_EQ(a.band_met, a.direction_clear && c.band.contains(c.published.gain(), a.gain, a.pct));
  EXPECT_EQ(a.status, a.band_met ? CaseStatus::DirectionOnly : CaseStatus::Miss);
  // A band that cannot hold this gain makes the same result a miss.
  Case narrow = c;
  narrow.band.factor = 1.0;
  narrow.published.test = narrow.published.base / (a.gain * 1.5);
  EXPECT_EQ(reproduce_case(narrow, one).status, CaseStatus::Miss);

  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {a}, report::Format::Text);
  EXPECT_NE(text.find(" of 1 in band (1 ran"), std::string::npos) << text;
  EXPECT_NE(text.find(" in band, direction only\n"), std::string::npos) << text;
  EXPECT_NE(text.find(", 1 in band by direction only,"), std::string::npos) << text;
  std::string md = render_reproduce(cat, {reproduce_case(narrow, one)}, report::Format::Markdown);
  EXPECT_NE(md.find("## Misses"), std::string::npos);
  EXPECT_NE(md.find("what the model lacks: nothing"), std::string::npos);
}

TEST(CatalogueBand, DirectionOnlyWhenTheIntervalReachesGainOne) {
  Band better{BandDirection::Better, 1.5, 0, ""};
  EXPECT_FALSE(better.direction_only(2.0));  // 1.333..3.0
  EXPECT_TRUE(better.direction_only(1.5));   // 1.0..2.25: its lower edge is gain 1.0
  EXPECT_TRUE(better.direction_only(1.2));
  Band worse{BandDirection::Worse, 1.2, 0, ""};
  EXPECT_FALSE(worse.direction_only(0.8));   // 0.667..0.96
  EXPECT_TRUE(worse.direction_only(0.85));   // ..1.02
  Band none{BandDirection::None, 0, 3.0, ""};
  EXPECT_FALSE(none.direction_only(1.0));
}

// A case whose sides differ only in a cost the benchmark never pays (a pipe ping-pong has no
// TCP) runs the same simulation twice: not exercised, whatever the band says.
TEST_F(CatalogueDir, IdenticalSidesAreNotExercised) {
  Case c = parse(replace(replace(kValidCase, "test_features = \"IDLE_SPIN\"", "test_features = \"\""),
                         "runs = 2\n", "runs = 2\ntest_sets = [\"tcp_send_ns=9999\"]\n"));
  CaseOutcome o = reproduce_case(c, ReproduceOptions{0, 1});
  EXPECT_TRUE(o.identical_sides);
  EXPECT_FALSE(o.exercised());
  EXPECT_EQ(o.status, CaseStatus::NotExercised);
  EXPECT_EQ(o.gain, 1.0);
  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {o}, report::Format::Text);
  EXPECT_NE(text.find("not exercised: sides identical (band missed)"), std::string::npos) << text;
  EXPECT_NE(text.find("0 of 1 in band (1 ran: 0 in band, 0 in band by direction only, 0 missed, 1 not exercised, "
                      "0 not converged, 0 base off;"),
            std::string::npos)
      << text;
  std::string md = render_reproduce(cat, {o}, report::Format::Markdown);
  EXPECT_NE(md.find("## Not exercised"), std::string::npos) << md;
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["status"], "not_exercised");
  EXPECT_EQ(j["cases"][0]["model"]["identical_sides"], true);
  EXPECT_EQ(j["cases"][0]["model"]["exercised"], false);
  EXPECT_EQ(j["summary"]["not_exercised"], 1);
  // The same sides with the change on: the runs differ and IDLE_SPIN's counters count.
  CaseOutcome spin = reproduce_case(parse(kValidCase), ReproduceOptions{0, 1});
  EXPECT_FALSE(spin.identical_sides);
  EXPECT_TRUE(spin.silent_changes.empty());
  EXPECT_EQ(spin.changes_with_counters, 1);
  EXPECT_TRUE(spin.exercised());
}

// The test side turns on a change that has nothing to act on (SIS_NODE on a one-LLC machine:
// no other LLC to scan) and also changes a cost, so the runs differ: the change's counters are
// all zero, so the case is not exercised.
TEST_F(CatalogueDir, ChangeWithAllCountersZeroIsNotExercised) {
  Case c = parse(replace(replace(kValidCase, "test_features = \"IDLE_SPIN\"", "test_features = \"SIS_NODE\""),
                         "runs = 2\n", "runs = 2\ntest_sets = [\"context_switch_ns=2500\"]\n"));
  CaseOutcome o = reproduce_case(c, ReproduceOptions{0, 1});
  EXPECT_FALSE(o.identical_sides);
  EXPECT_EQ(o.changes_with_counters, 1);
  EXPECT_EQ(o.silent_changes, (std::vector<std::string>{"SIS_NODE"}));
  EXPECT_EQ(o.status, CaseStatus::NotExercised);
  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {o}, report::Format::Text);
  EXPECT_NE(text.find("not exercised: SIS_NODE counters all 0"), std::string::npos) << text;
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["model"]["silent_changes"], nlohmann::json::array({"SIS_NODE"}));
}

// SIS_UTIL's scan depth from the start state. On a just-booted tiny-4 (--cold: nr_idle_scan 0,
// the LLC's first busy balance due after balance_interval x busy_factor, 4 ms x 16), 100 loops of
// hackbench (about 18 ms) end before any busy CPU balances the LLC: every depth SIS_UTIL set was
// the boot value's, so the case is not converged whatever its gain. 2000 loops (about 0.33 s)
// track the load for most of the run; the warm start's staggered balances, some of them overdue
// at t = 0, refresh it within the first milliseconds even at 100 loops.
TEST_F(CatalogueDir, SisUtilDepthsFromTheStartStateAreNotConverged) {
  auto hackbench_case = [&](int loops) {
    std::string t = replace(kValidCase, "perf bench sched pipe -l 200", fmt::format("hackbench -g 1 -l {}", loops));
    t = replace(t, "metric = \"usecs_per_op\"", "metric = \"time\"");
    t = replace(t, "test_features = \"IDLE_SPIN\"", "test_features = \"NO_SIS_UTIL\"");
    t = replace(t, "base = 10.0\nunit = \"us/op\"\nscale = 1.0\nsource = \"the test thread's table\"\n",
                "none = \"normalised only\"\n");
    return parse(t);
  };
  ReproduceOptions cold{0, 1};
  cold.cold = true;
  const Case short_case = hackbench_case(100), long_case = hackbench_case(2000);  // outcomes point at them
  CaseOutcome o = reproduce_case(short_case, cold);
  EXPECT_GT(o.start_state_base, 0.99);  // of all select_idle_cpu() calls: the few core scans don't count
  EXPECT_EQ(o.start_state_test, -1.0);  // NO_SIS_UTIL: no depth to count
  EXPECT_TRUE(o.start_state);
  EXPECT_EQ(o.status, CaseStatus::NotConverged);
  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {o}, report::Format::Text);
  // The share as the report rounds it (99 or 100 %: above 0.99 either way).
  const std::string share = fmt::format("{:.0f} %", 100 * o.start_state_base);
  EXPECT_NE(text.find("not converged: " + share +
                      " of select_idle_cpu() calls took SIS_UTIL's depth from the start state's"),
            std::string::npos)
      << text;
  std::string md = render_reproduce(cat, {o}, report::Format::Markdown);
  EXPECT_NE(md.find(share + " of the base's and none of the test's select_idle_cpu() calls took "
                            "SIS_UTIL's depth"),
            std::string::npos)
      << md;
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  const auto& m = j["cases"][0]["model"];
  EXPECT_EQ(m["converged"], false);
  EXPECT_EQ(m["start_state"]["majority"], true);
  EXPECT_DOUBLE_EQ(m["start_state"]["sis_util_share_base"].get<double>(), o.start_state_base);
  EXPECT_TRUE(m["start_state"]["sis_util_share_test"].is_null());
  EXPECT_EQ(j["summary"]["not_converged"], 1);

  CaseOutcome longer = reproduce_case(long_case, cold);
  EXPECT_GT(longer.start_state_base, 0.0);
  EXPECT_LT(longer.start_state_base, kStartStateMajority);
  EXPECT_FALSE(longer.start_state);

  CaseOutcome warm = reproduce_case(short_case, ReproduceOptions{0, 1});
  EXPECT_GE(warm.start_state_base, 0.0);
  EXPECT_LT(warm.start_state_base, kStartStateMajority);
  EXPECT_FALSE(warm.start_state);
}

TEST(CatalogueConvergence, GainMovesWithinTheBandsTolerance) {
  Band better{BandDirection::Better, 1.2, 0, ""};
  EXPECT_TRUE(gain_converged(better, 1.5, 33.3, 1.7, 41.2));   // x1.13
  EXPECT_FALSE(gain_converged(better, 1.5, 33.3, 1.9, 47.4));  // x1.27
  EXPECT_FALSE(gain_converged(better, 1.5, 33.3, 1.2, 16.7));  // /1.25
  Band none{BandDirection::None, 0, 3.0, ""};
  EXPECT_TRUE(gain_converged(none, 1.01, 1.0, 0.99, -1.0));
  EXPECT_FALSE(gain_converged(none, 1.02, 2.0, 0.99, -1.5));
}

// A mean inside a better/worse band is not enough: the seeds must tell the change from none.
TEST(CatalogueBand, DirectionNeedsAnIntervalClearOfOne) {
  Band worse{BandDirection::Worse, 1.2, 0, ""};
  EXPECT_TRUE(direction_clear(worse, 0.90, 0.97));
  EXPECT_FALSE(direction_clear(worse, 0.93, 1.03));  // sis-util-v3-zen3-hackbench-16g at 3 seeds
  EXPECT_FALSE(direction_clear(worse, 0.95, 1.0));
  Band better{BandDirection::Better, 1.2, 0, ""};
  EXPECT_TRUE(direction_clear(better, 1.01, 1.3));
  EXPECT_FALSE(direction_clear(better, 0.99, 1.3));
  EXPECT_FALSE(direction_clear(better, 0.8, 0.9));
  Band none{BandDirection::None, 0, 3.0, ""};
  EXPECT_TRUE(direction_clear(none, 0.97, 1.02));
}

// --convergence runs the case again at twice its length (perf bench sched pipe -l 200 -> 400)
// and says whether the gain stayed within the band's tolerance; the JSON records both lengths.
TEST_F(CatalogueDir, ConvergenceRunsTwiceTheLength) {
  Case c = parse(kValidCase);
  ReproduceOptions opt{0, 1, true};
  CaseOutcome o = reproduce_case(c, opt);
  ASSERT_TRUE(o.convergence_checked);
  EXPECT_EQ(o.command_2x, "perf bench sched pipe -l 400");
  // Start-up counts once: on the warm machine the governor's long-idle history makes the first
  // wakeups slow until it has seen short idle periods, so twice the loops take less than twice.
  EXPECT_NEAR(o.simulated_2x_s, 2 * o.simulated_s, 0.3 * o.simulated_s);
  EXPECT_GT(o.gain_2x, 1.0);
  EXPECT_EQ(o.converged, gain_converged(c.band, o.gain, o.pct, o.gain_2x, o.pct_2x));
  EXPECT_TRUE(o.converged);  // a pipe ping-pong's gain barely moves (band factor 3)
  // A band too tight for the move makes the same runs not converged.
  Case tight = c;
  tight.band.factor = 1.0 + std::fabs(o.gain_2x / o.gain - 1) / 2;
  if (o.gain_2x != o.gain) {
    CaseOutcome t = reproduce_case(tight, opt);
    EXPECT_FALSE(t.converged);
    EXPECT_EQ(t.status, CaseStatus::NotConverged);
    Catalogue cat;
    cat.dir = dir_.string();
    std::string text = render_reproduce(cat, {t}, report::Format::Text);
    EXPECT_NE(text.find("not converged: gain "), std::string::npos) << text;
    EXPECT_NE(text.find(", 1 not converged, 0 base off;"), std::string::npos) << text;
  }
  Catalogue cat;
  cat.dir = dir_.string();
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["model"]["convergence"]["command_2x"], "perf bench sched pipe -l 400");
  EXPECT_EQ(j["cases"][0]["model"]["convergence"]["converged"], true);
  EXPECT_EQ(j["summary"]["not_converged"], 0);
  // Without --convergence nothing of it is printed (the summary still counts the cases whose
  // seeds did not converge).
  CaseOutcome plain = reproduce_case(c, ReproduceOptions{0, 1});
  EXPECT_FALSE(plain.convergence_checked);
  EXPECT_GT(plain.simulated_s, 0);
  EXPECT_EQ(render_reproduce(cat, {plain}, report::Format::Text).find("twice the length"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_reproduce(cat, {plain}, report::Format::Json))["cases"][0]["model"]
                   .contains("convergence"));
}

TEST_F(CatalogueDir, WrongMetricIsAnErrorAtItsLine) {
  Case c = parse(replace(kValidCase, "metric = \"usecs_per_op\"", "metric = \"rps\""));
  try {
    reproduce_case(c, ReproduceOptions{});
    ADD_FAILURE();
  } catch (const CatalogueError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file() + ":" + std::to_string(line_of(kValidCase, "metric =")) + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find("usecs_per_op"), std::string::npos) << msg;  // names what the benchmark reports
  }
}

TEST_F(CatalogueDir, LoadsADirectoryAndReportsTheFirstBadFile) {
  std::ofstream(dir_ / "a-good.toml") << kValidCase;
  Catalogue cat = load_catalogue(dir_.string());
  ASSERT_EQ(cat.cases.size(), 1u);
  EXPECT_EQ(cat.cases[0].name, "a-good");
  EXPECT_EQ(cat.planned.size(), 2u);
  std::ofstream(dir_ / "b-bad.toml") << replace(kValidCase, "factor = 3.0", "factor = \"big\"");
  try {
    load_catalogue(dir_.string());
    ADD_FAILURE();
  } catch (const CatalogueError& e) {
    std::string want = (dir_ / "b-bad.toml").string() + ":" + std::to_string(line_of(kValidCase, "factor =")) + ":";
    EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
  }
  EXPECT_THROW(load_catalogue((dir_ / "nope").string()), CatalogueError);
}

// Enough seeds: on a noisy machine (cost jitter) the runs per side double from the case's own
// while the gain's 95 % interval is wider than the band, up to the cap; a band the interval
// never fits is "not converged" at the cap, one it fits stops the growth.
TEST_F(CatalogueDir, RunsGrowUntilTheIntervalFitsTheBand) {
  std::string noisy = replace(kValidCase, "lacks = \"nothing\"", "lacks = \"nothing\"\nsets = [\"noise.jitter_cov=0.5\"]");
  Case c = parse(noisy);
  ReproduceOptions opt;
  opt.max_runs = 8;
  Case tight = c;  // a band of width ~0: no interval of a noisy gain fits it
  tight.band.factor = 1.0000001;
  std::vector<std::pair<int, int>> seen;  // progress counts the runs of both sides, added ones included
  CaseOutcome t = reproduce_case(tight, opt, [&](int done, int total) { seen.emplace_back(done, total); });
  EXPECT_EQ(t.runs_start, 2);
  EXPECT_EQ(t.runs, 8);  // 2 -> 4 -> 8, the cap
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), std::make_pair(16, 16));
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].first, seen[i - 1].first) << i;
  EXPECT_LT(t.gain_low, t.gain);
  EXPECT_GT(t.gain_high, t.gain);
  EXPECT_FALSE(t.seeds_converged);
  EXPECT_EQ(t.status, CaseStatus::NotConverged);
  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {t}, report::Format::Text);
  EXPECT_NE(text.find("not converged: 95 % interval"), std::string::npos) << text;
  auto j = nlohmann::json::parse(render_reproduce(cat, {t}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["model"]["runs"], 8);
  EXPECT_EQ(j["cases"][0]["model"]["seeds_converged"], false);
  EXPECT_EQ(j["cases"][0]["model"]["gain_ci"]["low"], t.gain_low);
  // The same noise with a band wider than any interval: the case's own 2 runs suffice.
  Case wide = c;
  wide.band.factor = 100;
  CaseOutcome w = reproduce_case(wide, opt);
  EXPECT_EQ(w.runs, 2);
  EXPECT_TRUE(w.seeds_converged);
  // Deterministic: the same runs give the same interval.
  CaseOutcome t2 = reproduce_case(tight, opt);
  EXPECT_EQ(t2.gain_low, t.gain_low);
  EXPECT_EQ(t2.gain_high, t.gain_high);
}

// The bimodal flag on constructed outcomes: shown in the result column and in the JSON, and it
// does not change the verdict.
TEST_F(CatalogueDir, BimodalSidesAreFlaggedInTheTable) {
  Case c = parse(kValidCase);
  CaseOutcome o;
  o.c = &c;
  o.status = CaseStatus::DirectionOnly;
  o.runs = 8;
  o.gain = 1.5;
  o.gain_low = 1.4;
  o.gain_high = 1.6;
  o.bc_base = 0.70;
  o.bimodal_base = true;
  o.bc_test = 0.30;
  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {o}, report::Format::Text);
  EXPECT_NE(text.find("in band, direction only (bimodal: base b=0.70)"), std::string::npos) << text;
  EXPECT_NE(text.find("95 % 1.400..1.600"), std::string::npos) << text;
  std::string md = render_reproduce(cat, {o}, report::Format::Markdown);
  EXPECT_NE(md.find("(bimodal: base b=0.70)"), std::string::npos) << md;
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["model"]["bimodal"]["base"], true);
  EXPECT_EQ(j["cases"][0]["model"]["bimodal"]["test"], false);
  EXPECT_EQ(j["cases"][0]["status"], "direction_only");
  o.bimodal_base = false;
  EXPECT_EQ(render_reproduce(cat, {o}, report::Format::Text).find("bimodal"), std::string::npos);
}

// [absolute]: the published base in absolute terms with its unit and scaling, or `none` saying
// why there is none; a malformed or negative figure is one error naming the file, line and key.
TEST_F(CatalogueDir, AbsoluteBaseParsesAndMalformedFiguresNameTheKey) {
  const std::string v = kValidCase;
  Case c = parse(v);
  EXPECT_TRUE(c.absolute.given);
  EXPECT_DOUBLE_EQ(c.absolute.base, 10.0);
  EXPECT_EQ(c.absolute.unit, "us/op");
  EXPECT_DOUBLE_EQ(c.absolute.expected(), 10.0);
  Case scaled = parse(replace(v, "scale = 1.0", "scale = 0.25"));
  EXPECT_DOUBLE_EQ(scaled.absolute.expected(), 2.5);
  const std::string abs_block =
      "[absolute]\nbase = 10.0\nunit = \"us/op\"\nscale = 1.0\nsource = \"the test thread's table\"\n";
  Case none = parse(replace(v, abs_block, "[absolute]\nnone = \"normalised only\"\n"));
  EXPECT_FALSE(none.absolute.given);
  EXPECT_EQ(none.absolute.none, "normalised only");
  const int base_line = line_of(v, "[absolute]") + 1;
  auto abs_base = [&](const std::string& to) {
    return replace(v, "[absolute]\nbase = 10.0", "[absolute]\nbase = " + to);
  };
  expect_error(abs_base("-10.0"), base_line, "absolute.base must be a positive number");
  expect_error(abs_base("0"), base_line, "absolute.base must be a positive number");
  expect_error(abs_base("\"ten\""), base_line, "absolute.base must be a number");
  expect_error(abs_base("nan"), base_line, "absolute.base must be a positive number");
  expect_error(replace(v, "scale = 1.0", "scale = -0.5"), line_of(v, "scale = 1.0"),
               "absolute.scale must be a positive number");
  expect_error(replace(v, "unit = \"us/op\"\nscale", "unit = \"\"\nscale"), line_of(v, "scale = 1.0") - 1,
               "absolute.unit must not be empty");
  expect_error(abs_base("12.0"), base_line, "but published.base is 10 us/op");
  expect_error(replace(v, "scale = 1.0\n", ""), line_of(v, "[absolute]"), "missing key 'scale' in [absolute]");
  expect_error(replace(v, abs_block, "[absolute]\nnone = \"x\"\nbase = 10.0\n"), line_of(v, "[absolute]") + 2,
               "unknown key 'base' in [absolute]");
  expect_error(replace(v, abs_block, ""), 1, "missing [absolute] table");
}

TEST(CatalogueBase, OffBeyondTwiceEitherWay) {
  EXPECT_FALSE(base_is_off(1.0));
  EXPECT_FALSE(base_is_off(2.0));
  EXPECT_FALSE(base_is_off(0.5));
  EXPECT_TRUE(base_is_off(2.01));
  EXPECT_TRUE(base_is_off(0.49));
  EXPECT_TRUE(base_is_off(std::nan("")));
}

// The model's base against the published one: the pipe's base on tiny-4 against 10 us/op as
// the case states it (within 2x), and against the same figure scaled by 0.1 (model base several
// times the expected 1 us/op): base off, which overrides the band (met here, direction only).
// A case without an absolute figure has no ratio (n/a, JSON null), not 1.0.
TEST_F(CatalogueDir, BaseOffOverridesTheBandAndIsCountedApart) {
  Case c = parse(kValidCase);
  CaseOutcome ok = reproduce_case(c, ReproduceOptions{0, 1});
  ASSERT_TRUE(ok.base_compared);
  EXPECT_DOUBLE_EQ(ok.base_ratio, ok.base_mean / 10.0);
  EXPECT_EQ(ok.base_off, base_is_off(ok.base_ratio));
  Case off = parse(replace(kValidCase, "scale = 1.0", "scale = 0.1"));
  CaseOutcome o = reproduce_case(off, ReproduceOptions{0, 1});
  ASSERT_TRUE(o.base_compared);
  EXPECT_DOUBLE_EQ(o.base_ratio, o.base_mean / 1.0);
  ASSERT_GT(o.base_ratio, 2.0);  // the model's pipe takes several us per op, not 1
  EXPECT_TRUE(o.base_off);
  EXPECT_TRUE(o.band_met);
  EXPECT_EQ(o.status, CaseStatus::BaseOff);
  Case none = parse(replace(kValidCase,
                            "[absolute]\nbase = 10.0\nunit = \"us/op\"\nscale = 1.0\nsource = \"the test thread's table\"\n",
                            "[absolute]\nnone = \"normalised only\"\n"));
  CaseOutcome n = reproduce_case(none, ReproduceOptions{0, 1});
  EXPECT_FALSE(n.base_compared);
  EXPECT_FALSE(n.base_off);
  EXPECT_EQ(n.status, CaseStatus::DirectionOnly);

  Catalogue cat;
  cat.dir = dir_.string();
  std::string text = render_reproduce(cat, {o, n}, report::Format::Text);
  EXPECT_NE(text.find(fmt::format("{:.3g}x", o.base_ratio)), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("base off: {:.3g}x the published base (band met)", o.base_ratio)),
            std::string::npos) << text;
  EXPECT_NE(text.find(" n/a "), std::string::npos) << text;
  EXPECT_NE(text.find("0 of 2 in band (2 ran: 0 in band, 1 in band by direction only, 0 missed, 0 not exercised, "
                      "0 not converged, 1 base off; 0 not runnable yet)"),
            std::string::npos) << text;
  std::string md = render_reproduce(cat, {o, n}, report::Format::Markdown);
  EXPECT_NE(md.find("\n## Base off\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- base: model base "), std::string::npos) << md;
  EXPECT_NE(md.find(" x 0.1 = 1 us/op"), std::string::npos) << md;
  EXPECT_NE(md.find("Base: no absolute figure."), std::string::npos) << md;
  auto j = nlohmann::json::parse(render_reproduce(cat, {o, n}, report::Format::Json));
  EXPECT_EQ(j["cases"][0]["status"], "base_off");
  EXPECT_EQ(j["cases"][0]["model"]["base_ratio"], o.base_ratio);
  EXPECT_EQ(j["cases"][0]["model"]["base_off"], true);
  EXPECT_EQ(j["cases"][0]["absolute"]["expected_model_base"], 1.0);
  EXPECT_TRUE(j["cases"][1]["model"]["base_ratio"].is_null());
  EXPECT_EQ(j["cases"][1]["absolute"]["none"], "normalised only");
  EXPECT_EQ(j["summary"]["base_off"], 1);
  EXPECT_EQ(j["summary"]["direction_only"], 1);
}

// An absolute figure in another unit than the model metric's is an error at its line.
TEST_F(CatalogueDir, AbsoluteUnitMustBeTheMetricsUnit) {
  const std::string v = replace(kValidCase, "unit = \"us/op\"\nscale", "unit = \"MB/s\"\nscale");
  Case c = parse(v);
  try {
    reproduce_case(c, ReproduceOptions{0, 1});
    ADD_FAILURE();
  } catch (const CatalogueError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file() + ":" + std::to_string(line_of(v, "unit = \"MB/s\"")) + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find("absolute.unit 'MB/s': the model's usecs_per_op is in us/op"), std::string::npos) << msg;
  }
}

// `reproduce --format json` per case: simulated_s, base_ratio, runs per side, gain with its
// interval, converged, exercised, bimodal and the verdict, each with its type and its value
// from the outcome.
TEST_F(CatalogueDir, JsonCarriesEveryVerdictInput) {
  Case c = parse(kValidCase);
  CaseOutcome o = reproduce_case(c, ReproduceOptions{0, 1});
  Catalogue cat;
  cat.dir = dir_.string();
  auto j = nlohmann::json::parse(render_reproduce(cat, {o}, report::Format::Json));
  ASSERT_EQ(j["cases"].size(), 1u);
  const auto& m = j["cases"][0]["model"];
  EXPECT_EQ(j["cases"][0]["status"], to_string(o.status));
  EXPECT_EQ(m["simulated_s"], o.simulated_s);
  EXPECT_GT(m["simulated_s"].get<double>(), 0);
  EXPECT_EQ(m["base_ratio"], o.base_ratio);
  EXPECT_EQ(m["runs"], o.runs);
  EXPECT_EQ(m["runs_start"], 2);
  EXPECT_EQ(m["gain"], o.gain);
  EXPECT_EQ(m["gain_ci"]["low"], o.gain_low);
  EXPECT_EQ(m["gain_ci"]["high"], o.gain_high);
  EXPECT_LE(m["gain_ci"]["low"].get<double>(), m["gain"].get<double>());
  EXPECT_GE(m["gain_ci"]["high"].get<double>(), m["gain"].get<double>());
  EXPECT_EQ(m["converged"], o.converged && o.seeds_converged);
  EXPECT_EQ(m["exercised"], true);
  EXPECT_TRUE(m["bimodal"]["base"].is_boolean());
  EXPECT_TRUE(m["bimodal"]["test"].is_boolean());
  EXPECT_EQ(m["base_off"], false);
  for (const char* k : {"in_band", "direction_only", "missed", "not_exercised", "not_converged", "base_off",
                        "not_runnable"})
    EXPECT_TRUE(j["summary"][k].is_number_integer()) << k;
}
