// Published microbenchmarks of the reference machines (`schedlab machines --check NAME`,
// docs/model.md "Published microbenchmarks"): each figure of profiles/microbench/NAME.toml
// simulated on the profile with the self-check's runs (experiment/selfcheck.hpp) beside the
// published value. The file:
//   machine = "NAME"                  the profile the figures are for (must match the file name)
//   [[figure]]
//   key = "wake_latency_llc_gap50us"  a calibration key (host/calibrate.cpp), or idle_exit_<STATE>
//   value_ns = 1150                   the published figure, ns (> 0)
//   what = "..."                      one line: what was measured, where
//   source = "WAKE-ZEN2"              its tag in docs/sources.md
//   role = "check"                    "check": simulated from several costs (an independent check);
//                                     "cost": the figure a profile cost was taken from
//   note = "..."                      optional: shown in the how column (e.g. why it is not modeled)
//   iterations = 1000000              optional, wake_latency_* / wake_syscall_* only: the published
//                                     run's length (calib wake -n; default: the self-check's 150)
//   statistic = "mean"                optional, the same keys: "mean" when the published figure is
//                                     the mean over its run (default "median", as calibrate's)
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment/selfcheck.hpp"
#include "machine/machine.hpp"

namespace schedlab::experiment {

// Bad input in a figures file: one line naming the file, the line and the key.
class FiguresError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Figure {
  std::string key;
  double value_ns = 0;
  std::string what, source, role, note;
  int line = 0;  // of its [[figure]] header
  // wake_* figures: the published run's shape (0: the self-check's; statistic "median" or "mean").
  long long iterations = 0;
  std::string statistic = "median";
};

struct FigureSet {
  std::string machine;
  std::vector<Figure> figures;
};

// The longest published run a figure may ask for (calib -n's limit).
constexpr long long kMaxFigureIterations = 100000000LL;

// The threshold of machines --check (host check keeps the self-check's 10 %).
constexpr double kPublishedThresholdPct = 15;

// Parses a figures file; `file` names it in errors ("file:LINE: figure KEY: what").
FigureSet read_figures(const std::string& text, const std::string& file);

// profile_dir()/microbench/NAME.toml (it may not exist).
std::string figures_path(const std::string& machine_name);

// One row per figure, in the file's order: the self-check's row for its key on m (seed 1), with
// the published value as the measurement, the source tag, the role ("cost" figures are marked in
// the how column) and the note.
std::vector<CheckRow> published_check(const machine::Machine& m, const FigureSet& set);

}  // namespace schedlab::experiment
