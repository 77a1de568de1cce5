// The published-results catalogue (published/*.toml): one file per result measured on a real
// machine and posted on LKML, with the band in which the model counts as reproducing it.
// Schema: published/README.md. Every error is one line naming the file and line.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedlab::experiment {

// A malformed catalogue file: "published/x.toml:12: what".
class CatalogueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class BandDirection { Better, Worse, None };

struct Band {
  BandDirection direction = BandDirection::None;
  double factor = 0;          // better / worse: the model gain within [gain/factor, gain*factor]
  double max_change_pct = 0;  // none: |model change| at most this
  std::string justification;
  // `direction_only = true`: the case is meant to say the direction only; required (and only
  // allowed) when the better / worse interval reaches gain 1.0 (direction_only() below).
  bool labelled_direction_only = false;
  // The model's gain interval that counts for better / worse: {gain / factor, gain * factor}.
  std::pair<double, double> interval(double published_gain) const;
  // Whether a model result (gain = test over base performance, pct = mmtests pct imp) is in band.
  bool contains(double published_gain, double model_gain, double model_pct) const;
  std::string describe(double published_gain) const;  // "worse, gain 0.684..0.985"
  // A better / worse band whose interval reaches gain 1.0 (gain / factor <= 1 for better,
  // gain * factor >= 1 for worse): any change in the published direction is in it, so meeting
  // it says the direction only.
  bool direction_only(double published_gain) const;
};
std::string to_string(BandDirection d);

struct PublishedResult {
  std::vector<std::string> commands;
  std::string statistic, runs, unit, doubts;
  bool higher_is_better = true;
  double base = 0, test = 0;
  std::optional<double> pct;  // as printed by the thread
  // Test performance over base performance (test/base, or base/test for lower-is-better).
  double gain() const;
  // The thread's pct if given, else computed from base and test (+ = better).
  double pct_imp() const;
};

struct CaseModel {
  std::string command_line;           // as written
  std::vector<std::string> command;   // argv
  std::string metric;
  uint32_t metric_line = 0;           // where `metric` is, for errors found at run time
  std::string base_features, test_features;
  std::vector<std::string> sets, idle_disable;                // both sides
  std::vector<std::string> base_sets, test_sets;              // per side
  std::vector<std::string> base_idle_disable, test_idle_disable;
  std::vector<std::string> needs;     // capabilities (features.toml, kind "capability")
  int runs = 3;
  std::string scaling, lacks;
  double simulated_s = 0;          // simulated time of one run (s), as `reproduce` measured it
  std::string published_length;    // one published run's length, as the thread gives it (or "not stated")
};

// [absolute]: the published base in absolute terms, where the source prints one (s, us/op, MB/s,
// trans/s): the base side's figure in `unit` (the model metric's), and `scale`, the factor that
// takes it from the published command to the model's (`[model] scaling`: 1000 loops instead of
// 16000 is 0.0625 for a time; 1 for a rate). The model's base is compared with base x scale.
// Without a figure (`none = "why"`: the thread prints normalised numbers only, or a figure that
// cannot be scaled to the model's command) `given` is false and no ratio is computed.
struct AbsoluteBase {
  bool given = false;
  double base = 0, scale = 1;
  std::string unit, source, none;
  uint32_t unit_line = 0;  // where `unit` is, for errors found at run time
  double expected() const { return base * scale; }
};

struct CaseSource {
  std::string thread, message_id, url, date, author, notes;
};

struct CaseMachine {
  std::string profile, cpu, llc, idle_states, boost, governor;
  int sockets = 0, cores_per_socket = 0, threads_per_core = 0;
};

struct Case {
  std::string name;  // file stem
  std::string file;  // path as loaded
  std::string title;
  CaseSource source;
  CaseMachine machine;
  std::string kernel_base, kernel_test;
  PublishedResult published;
  CaseModel model;
  AbsoluteBase absolute;
  Band band;
  // What the model lacks to run this case now: "feature SIS_NODE", "capability HALTPOLL_GOVERNOR".
  std::vector<std::string> missing;
  bool runnable() const { return missing.empty(); }
};

// An entry of published/features.toml.
struct PlannedFeature {
  std::string name;
  std::string kind;  // "feature" or "capability"
  bool default_on = false;   // features
  bool implemented = false;  // capabilities
  std::string summary, notes;
};

struct Catalogue {
  std::string dir;
  std::vector<PlannedFeature> planned;
  std::vector<Case> cases;  // sorted by name
  const Case* find(const std::string& name) const;
};

// published/ of the source tree, or $SCHEDLAB_PUBLISHED.
std::string default_catalogue_dir();
// Loads features.toml and every other *.toml in dir. Throws CatalogueError.
Catalogue load_catalogue(const std::string& dir);
// One case file's text (file is the path used in errors and for the case name; dir resolves
// `notes`). Loads the case's machine profile to check topology, command, sets and idle states.
Case parse_case(const std::string& text, const std::string& file, const std::string& dir,
                const std::vector<PlannedFeature>& planned);
std::vector<PlannedFeature> parse_planned_features(const std::string& text, const std::string& file);

}  // namespace schedlab::experiment
