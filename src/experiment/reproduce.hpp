// `schedlab reproduce`: runs catalogue cases (published results) on their machine profiles as
// A/B series and says whether the model lands in each case's band.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "experiment/ab.hpp"
#include "experiment/catalogue.hpp"
#include "report/report.hpp"

namespace schedlab::experiment {

// InBand: the band was met by a run that exercised the change. DirectionOnly: met, but the band
// reaches gain 1.0, so any change in the published direction meets it. NotExercised: the
// change never acted (both sides byte-identical, or the changed code's counters all zero on
// the side that has it), whatever the band says. docs/reproduction.md, "Trivial passes".
// NotConverged: the gain at twice the run length moved by more than the band's tolerance
// (--convergence), so the band's verdict depends on the length; or the gain's 95 % bootstrap
// interval is still wider than the band at the cap on runs per side (ReproduceOptions::max_runs),
// so the seeds cannot call it.
// BaseOff: the model's base is more than kBaseOffFactor away from the published base in absolute
// terms (after the case's scaling, [absolute]): a right gain on a wrong base is not a
// reproduction, so it overrides the band (met or missed); NotExercised and NotConverged come first.
enum class CaseStatus { InBand, DirectionOnly, Miss, NotExercised, NotConverged, BaseOff, NotRunnable };
std::string to_string(CaseStatus s);  // "in_band", "direction_only", "miss", ...

// A model base more than this factor above or below the published one (after scaling) is "base off".
inline constexpr double kBaseOffFactor = 2.0;
// Whether a model base / published base ratio is off: beyond kBaseOffFactor either way.
inline bool base_is_off(double ratio) { return !(ratio <= kBaseOffFactor && ratio >= 1 / kBaseOffFactor); }

struct CounterMeans {
  std::string name, unit;
  double base = 0, test = 0;
};

struct CaseOutcome {
  const Case* c = nullptr;
  CaseStatus status = CaseStatus::NotRunnable;
  // Filled when the case ran:
  int runs = 0;                // per side
  std::string unit;            // of the model metric
  bool higher_is_better = false;
  double base_mean = 0, test_mean = 0;
  double gain = 0;             // test performance over base performance
  double pct = 0;              // pct imp as the A/B table prints it (+ = better)
  double ks_p = 1;
  std::vector<CounterMeans> counters;  // the A/B key counters, mean per run
  // Whether the change acted (CaseStatus::NotExercised when it did not):
  bool band_met = false;        // the band's own test (and direction_clear), before the checks below
  bool direction_clear = true;  // better/worse band: the gain's 95 % interval excludes 1.0 on the
                                // published side (none: always); band_met is false without it
  bool direction_only = false;  // Band::direction_only()
  bool identical_sides = false; // every run's output, metrics, events and counters (per CPU) the
                                // same on both sides, seed by seed
  // Changes on in one side only (kernel::ChangeType) whose counters are all zero on that side
  // in every run, and how many such changes have counters at all.
  std::vector<std::string> silent_changes;
  int changes_with_counters = 0;
  double simulated_s = 0;       // simulated time of one run (mean over both sides' runs)
  // The base in absolute terms (only where the case gives one, Case::absolute): the model's base
  // mean over the published base x scale, and whether it is off by more than kBaseOffFactor.
  bool base_compared = false;
  double base_ratio = 0;
  bool base_off = false;
  // Enough seeds: runs per side doubled from runs_start (capped at max_runs) until the gain's
  // 95 % bootstrap interval [gain_low, gain_high] (fixed bootstrap seed) is narrower than the
  // band (band_width, in gain; none: 2 x max_change_pct / 100).
  int runs_start = 0, max_runs = 0;
  double gain_low = 0, gain_high = 0, band_width = 0;
  bool seeds_converged = true;
  // Sarle's bimodality coefficient of each side's metric values (stats::bimodality_coefficient;
  // 0 below 4 runs) and whether it flags the side as bimodal (> 5/9).
  double bc_base = 0, bc_test = 0;
  bool bimodal_base = false, bimodal_test = false;
  // --convergence: the same A/B with the command's run length doubled (workload::scale_length).
  bool convergence_checked = false;
  std::string command_2x;       // empty when the command has no length to double (rt-app)
  double gain_2x = 0, pct_2x = 0, simulated_2x_s = 0;
  bool converged = true;        // |gain_2x / gain| within the band's factor (none: |pct_2x - pct|
                                // within max_change_pct)
  // Slow state left at its start: SIS_UTIL's nr_idle_scan is written only by a periodic balance
  // of the LLC level (whose busy interval reaches max_interval x busy_factor, seconds on a large
  // LLC), so a run shorter than that decides every SIS_UTIL scan depth on the start state's
  // value, which a run of the published length spends almost none of its time on. The share of a
  // side's select_idle_cpu() calls (over all its runs) that took SIS_UTIL's depth before a busy
  // CPU's first refresh (-1: SIS_UTIL never set a depth on that side), and whether either side made
  // most of its calls so (kStartStateMajority): then the case is not converged whatever
  // --convergence says, because doubling a run that is all transient can leave it all transient.
  double start_state_base = -1, start_state_test = -1;
  bool start_state = false;
  bool exercised() const {
    return !identical_sides &&
           !(changes_with_counters > 0 && static_cast<int>(silent_changes.size()) == changes_with_counters);
  }
};

// Whether two runs (one per side, same seed) are the same run: report, files, metrics, events,
// simulated time and every counter of every CPU. Only the feature string may differ.
bool same_run(const RunResult& a, const RunResult& b);

struct ReproduceOptions {
  int runs = 0;  // per side; 0 = each case's own
  int jobs = 1;
  bool convergence = false;  // also run each case at twice its length (doubles the run time)
  int max_runs = 24;         // the cap on runs per side while the gain's interval is wider than the band
  bool cold = false;         // --cold: every machine as just booted (RunSpec::cold)
};

// More than this share of a side's select_idle_cpu() calls took SIS_UTIL's depth from the start
// state's nr_idle_scan: the run measured the start, not the steady state (a majority: most of the
// scans were bounded by a value the published run holds for only its first seconds).
inline constexpr double kStartStateMajority = 0.5;

// Whether a gain (and pct) measured at twice the length stays within the band's tolerance of the
// gain at the case's length: the ratio of the two gains within [1/factor, factor] for better /
// worse, the two pcts at most max_change_pct apart for none.
bool gain_converged(const Band& b, double gain, double pct, double gain_2x, double pct_2x);

// Whether the gain's 95 % interval [gain_low, gain_high] says the change moved the metric in the
// band's direction: entirely above 1.0 for better, entirely below for worse; always for none.
// A better/worse band is met only when it does.
bool direction_clear(const Band& b, double gain_low, double gain_high);

// The band's width in gain (better / worse: gain x factor - gain / factor; none: 2 x
// max_change_pct / 100, pct being about 100 x (gain - 1)) and the gain's 95 % bootstrap interval
// of a side's metric values (the ratio of means, test over base performance; 2000 resamples,
// bootstrap seed 1): deterministic.
double band_width(const Band& b, double published_gain);
std::pair<double, double> gain_interval(std::span<const double> base, std::span<const double> test,
                                        bool higher_is_better);
// Whether a case's seeds call it: the interval narrower than the band, or a point (every seed
// gives the same gain: more seeds cannot narrow it).
inline bool interval_narrower(double low, double high, double width) {
  return high - low <= 0 || high - low < width;
}

// The A/B spec of a case (its machine, command, sides, runs).
AbSpec case_ab_spec(const Case& c, const ReproduceOptions& opt);
// Runs one case (or reports it not runnable). progress(done, total) counts runs of this case.
// Throws CatalogueError when the model's benchmark has no such metric.
CaseOutcome reproduce_case(const Case& c, const ReproduceOptions& opt,
                           const std::function<void(int, int)>& progress = nullptr);

// Output: text and markdown tables (a row per case, then what missed and what is not runnable),
// or one JSON document. Byte-deterministic for given outcomes.
std::string render_reproduce(const Catalogue& cat, const std::vector<CaseOutcome>& outcomes, report::Format f);
// `--list`: the cases with their source, machine, sides and whether they can run now.
std::string render_case_list(const Catalogue& cat, const std::vector<const Case*>& cases, report::Format f);
// "k of n in band (r ran: k in band, d direction only, m missed, x not exercised; s not runnable
// yet)", with "c not converged" after "not exercised" when any case was checked (--convergence).
std::string summary_line(const std::vector<CaseOutcome>& outcomes);

}  // namespace schedlab::experiment
