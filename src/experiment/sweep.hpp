// Sweeps (docs/sweeps.md): a sweep.toml file names the axes of an experiment — machines, feature
// sets, workload templates with parameters, `--set` values, seeds — and the comparisons to
// report. It expands, in a canonical order, into cells: one simulated run each, identified by
// a hash of what it runs, the schedlab version and its machine profile's contents. Cells are
// run in shards (index mod N), each finished cell in its own result file; merging checks that
// every cell is there exactly once and prints the A/B tables of `schedlab ab` per comparison.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiment/ab.hpp"
#include "report/report.hpp"

namespace schedlab::experiment {

// A malformed sweep file ("sweeps/x.toml:12: what"), an unusable result directory, or a merge
// that refuses (missing, duplicate or foreign cells). One line; the CLI exits with status 2.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 64-bit FNV-1a (Fowler/Noll/Vo; offset basis 0xcbf29ce484222325, prime 0x100000001b3) over the
// bytes, continuing from h: the same on every machine (no dependence on endianness or width).
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ull;
uint64_t fnv1a64(std::string_view bytes, uint64_t h = kFnv1a64Basis);
// 16 lower-case hexadecimal digits.
std::string hex64(uint64_t v);

// A side of the comparisons: a label from [features] and what it turns on.
struct SweepSide {
  std::string label;
  std::string features;                   // as --features
  std::vector<std::string> sets;          // this side only (as ab --base-set / --test-set)
  std::vector<std::string> idle_disable;  // this side only
};

struct SweepComparison {
  int base = 0, test = 0;  // indices into Sweep::sides
};

// One machine x workload instance x set-axis point: the cells of every side and seed.
struct SweepGroup {
  std::string machine;       // the machine's label (its name as written unless given one)
  std::string machine_name;  // as written in the sweep file: a profile name, a path or `host`
  std::string machine_ref;   // what load_machine() gets (a relative path resolved); not in the manifest
  std::string profile_hash;  // hex64(fnv1a64(the profile file's bytes))
  std::string workload;      // the workload's name
  std::vector<std::pair<std::string, std::string>> params;  // {name, value}, names sorted
  std::vector<std::pair<std::string, std::string>> axes;    // set-axis point {key, value}, keys sorted
  std::vector<std::string> command;        // the template with the parameters substituted
  std::vector<std::string> sets;           // [sweep] sets, the machine's, the set-axis point
  std::vector<std::string> idle_disable;   // [sweep]'s and the machine's
  std::string counters_cpu;                // as ab --counters-cpu ("" = all CPUs)
  std::vector<int> counter_cpus;           // counters_cpu parsed for the machine
  std::vector<std::string> warnings;       // the benchmark's (parse time); not in the manifest
  // "epyc-milan-2s tbench clients=8 change.IDLE_SPIN.max_ns=1000"
  std::string describe() const;
};

struct SweepCell {
  int index = 0;      // position in the canonical order
  std::string id;     // hex64 of the identity (docs/sweeps.md)
  std::string text;   // the canonical text: what the cell runs and stores
  int group = 0;
  int side = 0;
  int run = 0;        // index into Sweep::seeds
  uint64_t seed = 0;
};

struct Sweep {
  std::string name, description;
  std::string version;  // the schedlab version the ids were computed with
  std::vector<uint64_t> seeds;  // run i of every side uses seeds[i]
  std::vector<SweepSide> sides;              // sorted by label
  std::vector<SweepComparison> comparisons;  // in file order
  std::vector<SweepGroup> groups;            // in canonical order
  std::vector<SweepCell> cells;              // in canonical order (index = position)

  // What one cell runs.
  RunSpec cell_spec(const SweepCell& c) const;
  // The A/B spec of a comparison on a group (its runs, seeds, sides; counter_cpus as given).
  AbSpec ab_spec(const SweepGroup& g, const SweepComparison& c) const;
  // "#12 epyc-milan-2s ipistorm sm_idle seed 3 (0123456789abcdef)"
  std::string describe(const SweepCell& c) const;
};

// The limits of a sweep file (bad input beyond them is refused with the line).
inline constexpr int kSweepMaxCells = 1000000;
inline constexpr int kSweepMaxRuns = 100000;

// Reads and expands a sweep file: every machine is loaded with its sets and idle states,
// every feature list parsed, every workload command parsed for its machine, so that bad input
// is one error naming the file and line before anything runs. Throws SweepError.
Sweep load_sweep(const std::string& path);
// The same from text; `file` names it in errors, relative machine paths are relative to `dir`;
// a sweep of more than max_cells cells is refused before any machine is loaded.
Sweep parse_sweep(const std::string& text, const std::string& file, const std::string& dir,
                  int max_cells = kSweepMaxCells);

// The manifest `sweep run` writes into its result directory (sweep.json): the expansion
// (sides, comparisons, groups, cells with their ids), so that `sweep merge DIR` needs neither
// the sweep file nor the profiles. Byte-deterministic. Throws SweepError when it does not
// parse (`file` names it).
std::string manifest_text(const Sweep& s);
Sweep parse_manifest(const std::string& text, const std::string& file);

// Result directory layout: DIR/sweep.json (the manifest) and one DIR/<id>.cell.json per cell.
inline constexpr const char* kManifestFile = "sweep.json";
inline constexpr const char* kCellSuffix = ".cell.json";
std::string cell_file_name(const SweepCell& c);  // "<id>.cell.json"

// A cell's result file: the cell's identity and what its run gave (the benchmark's metrics and
// result lines, the counters in total and of the group's counters_cpu CPUs). Byte-deterministic.
std::string cell_result_text(const Sweep& s, const SweepCell& c, const RunResult& r);

struct Shard {
  int index = 0, count = 1;  // cells whose index is `index` mod `count`
};
// "I/N" with 0 <= I < N; throws SweepError naming `flag`.
Shard parse_shard(const std::string& flag, const std::string& text);

// Makes DIR a result directory of this sweep: creates it (not its parents) if missing and
// writes the manifest, or checks that the manifest there is this sweep's. Throws SweepError
// (another sweep's directory) or io::OutputError.
void prepare_result_dir(const Sweep& s, const std::string& dir);

struct ShardPlan {
  std::vector<int> todo;  // cell indices to run, ascending
  int in_shard = 0;       // cells of the shard
  int finished = 0;       // of them, already in DIR (resume)
};
ShardPlan plan_shard(const Sweep& s, const Shard& shard, const std::string& dir);

// Runs the planned cells on `jobs` threads, writing each result file (whole, io::write_file_atomic)
// as its run ends; progress(done, total) from worker threads under a lock. A failed run stops
// the shard once the runs in flight end: the error is that of the failed cell with the lowest
// index (SweepError naming the cell), and every cell finished before it is kept.
void run_shard(const Sweep& s, const ShardPlan& plan, const std::string& dir, int jobs,
               const std::function<void(int, int)>& progress = nullptr);

// One table of the merge: a comparison on a group, with the runs of both sides.
struct SweepTable {
  int group = 0;
  int comparison = 0;
  AbSpec spec;      // counter_cpus index the stored per-CPU counters (0..k-1)
  AbResult result;  // results as stored: per_cpu holds the counters_cpu CPUs only
};

struct MergedSweep {
  Sweep sweep;
  std::vector<SweepTable> tables;  // group-major, then comparison, in canonical order
};

// Reads DIR/sweep.json and every *.cell.json under DIR (subdirectories included: shards
// gathered from several machines). Refuses, in one SweepError line naming them, missing cells,
// duplicates (one cell in two files) and foreign files (a cell of another sweep, of another
// profile content or schedlab version, a file that is no cell).
MergedSweep merge_sweep(const std::string& dir);

// The metrics of a table as `schedlab ab` computes them (ab_metrics), its sides labelled by
// the sweep's feature-set labels; the first `nbench` are the benchmark's own.
std::vector<report::Metric> table_metrics(const MergedSweep& m, const SweepTable& t, size_t* nbench = nullptr);
// The header line of a table in the text formats:
// "# schedlab sweep NAME: machine=... workload=... clients=8 base=base (\"\") test=... runs=10 -- cmd".
std::string table_header(const MergedSweep& m, const SweepTable& t);
// Every table as one JSON document / one CSV (the report's columns after the table's).
std::string render_merge_json(const MergedSweep& m);
std::string render_merge_csv(const MergedSweep& m);

// `schedlab sweep slurm`: an sbatch array script (one task per shard, from
// SLURM_ARRAY_TASK_ID), a merge job script, and submit.sh that submits both, the merge with
// --dependency=afterok on the array.
struct SlurmOptions {
  std::string schedlab;    // absolute path of the binary the jobs run
  std::string sweep_file;  // absolute
  std::string out_dir;     // absolute
  int shards = 1;
  int jobs = 1;            // --cpus-per-task and `sweep run --jobs`
  std::string partition;   // "" = the cluster's default
  std::string time;        // "" = the partition's default; else sbatch --time syntax
};
struct SlurmScripts {
  std::string array, merge, submit;
};
// Throws SweepError for a partition or time limit sbatch would not take.
SlurmScripts slurm_scripts(const Sweep& s, const SlurmOptions& o);

}  // namespace schedlab::experiment
