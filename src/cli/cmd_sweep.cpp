// schedlab sweep run FILE [--shard I/N] --out DIR [--jobs J]
// schedlab sweep merge DIR [--format text|markdown|json|csv|mmtests] [--mmtests-significance ci|ttest] [-o FILE]
//                      [--json FILE] [--csv FILE]
// schedlab sweep slurm FILE --shards N [--out DIR] [--partition P] [--time T] [--jobs J] [--schedlab PATH]
// schedlab sweep list FILE [--shard I/N] [--format text|json]
// Sweeps that outgrow one machine (docs/sweeps.md): cells run in deterministic shards, merged
// into the A/B tables of `schedlab ab`, one per comparison.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "cli/ab_tables.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"
#include "experiment/reports.hpp"
#include "experiment/sweep.hpp"
#include "io/output.hpp"

namespace schedlab::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int default_jobs(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Sweep errors are bad input (one line, exit 2) like the other commands' UsageError.
template <class F>
auto sweep_errors(F&& f) {
  try {
    return f();
  } catch (const experiment::SweepError& e) {
    throw UsageError(e.what());
  }
}

std::string duration(double s) {
  long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

struct SweepRunArgs {
  std::string file, shard = "0/1", out;
  int jobs = 0;
};

struct MergeArgs {
  std::string dir, format = "text", output = "-", mmtests_significance = "ci";
  std::optional<std::string> json, csv;
};

struct SlurmArgs {
  std::string file, out, partition, time, schedlab;
  int shards = 0;
  int jobs = 1;
};

struct ListArgs {
  std::string file, shard = "0/1", format = "text";
};

void do_run(const SweepRunArgs& a) {
  const experiment::Sweep s = sweep_errors([&] { return experiment::load_sweep(a.file); });
  const experiment::Shard shard = sweep_errors([&] { return experiment::parse_shard("--shard", a.shard); });
  const int jobs = default_jobs(a.jobs);
  sweep_errors([&] { experiment::prepare_result_dir(s, a.out); return 0; });
  const experiment::ShardPlan plan = experiment::plan_shard(s, shard, a.out);
  std::set<std::string> warned;
  for (const auto& g : s.groups)
    for (const auto& w : g.warnings)
      if (warned.insert(w).second) fmt::print(stderr, "schedlab: warning: {}: {}\n", g.workload, w);
  const std::string prefix = fmt::format("sweep {}: shard {}/{}", s.name, shard.index, shard.count);
  fmt::print(stderr, "{}: {} of {} cells, {} already done, {} to run (--jobs {})\n", prefix, plan.in_shard,
             s.cells.size(), plan.finished, plan.todo.size(), std::min<size_t>(jobs, std::max<size_t>(1, plan.todo.size())));
  const bool tty = isatty(2);
  const auto start = Clock::now();
  auto progress = [&](int done, int total) {
    double el = std::chrono::duration<double>(Clock::now() - start).count();
    std::string line = fmt::format("{}: {}/{} cells run, {} elapsed", prefix, done, total, duration(el));
    if (done < total) line += ", ETA " + duration(el / done * (total - done));
    if (tty) {
      io::set_progress_line_open(true);  // a signal or an error ends the line first
      fmt::print(stderr, "\r{}\x1b[K", line);
      if (done == total) {
        fmt::print(stderr, "\n");
        io::set_progress_line_open(false);
      }
    } else if (done == total || done % std::max(1, total / 10) == 0) {
      fmt::print(stderr, "{}\n", line);
    }
  };
  sweep_errors([&] { experiment::run_shard(s, plan, a.out, jobs, progress); return 0; });
  if (plan.todo.empty()) fmt::print(stderr, "{}: nothing to run\n", prefix);
}

// The merge in the format of --format: json and csv as written to DIR/merge.json and
// DIR/merge.csv, the table formats (text, markdown, mmtests) as `schedlab ab` prints its tables,
// one per comparison and group after a header naming them. Another table format plugs in here:
// a name for --format and its renderer of one table (t.spec and t.result are what `schedlab ab`
// has), after the header line.
std::string merge_output(const experiment::MergedSweep& m, const std::string& format, const std::string& json_text,
                         const std::string& csv_text, const report::mmtests::Options& mm) {
  const bool mmtests = format == "mmtests";
  const auto f = mmtests ? std::optional(report::Format::Text) : report::parse_format(format);
  if (!f) throw UsageError(fmt::format("--format: unknown format '{}' (text, markdown, json, csv or mmtests)", format));
  if (*f == report::Format::Json) return json_text;
  if (*f == report::Format::Csv) return csv_text;
  std::string out = fmt::format("# schedlab sweep {}: {} cells, {} tables{}\n", m.sweep.name, m.sweep.cells.size(),
                                m.tables.size(), m.sweep.description.empty() ? "" : " (" + m.sweep.description + ")");
  for (const auto& t : m.tables) {
    size_t nbench = 0;
    auto metrics = experiment::table_metrics(m, t, &nbench);
    out += "\n" + experiment::table_header(m, t) + "\n";
    if (mmtests)  // the benchmark's metrics only, as `ab --format mmtests`
      out += experiment::mmtests_table(metrics, nbench, m.sweep.groups[t.group].command, mm);
    else
      out += ab_tables(metrics, nbench, *f, m.sweep.groups[t.group].counters_cpu);
  }
  return out;
}

void do_merge(const MergeArgs& a) {
  if (a.format != "mmtests" && !report::parse_format(a.format))
    throw UsageError(fmt::format("--format: unknown format '{}' (text, markdown, json, csv or mmtests)", a.format));
  report::mmtests::Options mm;
  try {
    mm.significance = report::mmtests::parse_significance(a.mmtests_significance);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--mmtests-significance: {}", e.what()));
  }
  std::error_code ec;
  if (!fs::is_directory(a.dir, ec)) throw UsageError(fmt::format("sweep merge '{}': not a directory", a.dir));
  const std::string json = a.json ? *a.json : (fs::path(a.dir) / "merge.json").string();
  const std::string csv = a.csv ? *a.csv : (fs::path(a.dir) / "merge.csv").string();
  io::check_output_paths({{"-o", a.output, true}, {"--json", json, false}, {"--csv", csv, false}});
  const experiment::MergedSweep m = sweep_errors([&] { return experiment::merge_sweep(a.dir); });
  const std::string json_text = experiment::render_merge_json(m);
  const std::string csv_text = experiment::render_merge_csv(m);
  const std::string out = merge_output(m, a.format, json_text, csv_text, mm);
  io::write_file_atomic("--json", json, json_text);
  io::write_file_atomic("--csv", csv, csv_text);
  io::write_file_atomic("-o", a.output, out);
}

void do_slurm(const SlurmArgs& a) {
  const experiment::Sweep s = sweep_errors([&] { return experiment::load_sweep(a.file); });
  const std::string out = a.out.empty() ? s.name + ".out" : a.out;
  experiment::SlurmOptions o;
  std::error_code ec;
  o.schedlab = a.schedlab.empty() ? fs::read_symlink("/proc/self/exe", ec).string()
                                  : fs::absolute(a.schedlab).lexically_normal().string();
  if (o.schedlab.empty()) throw UsageError("cannot find this binary's path (/proc/self/exe): give --schedlab PATH");
  o.sweep_file = fs::absolute(a.file).lexically_normal().string();
  o.out_dir = fs::absolute(out).lexically_normal().string();
  while (o.out_dir.size() > 1 && o.out_dir.back() == '/') o.out_dir.pop_back();
  o.shards = a.shards;
  o.jobs = a.jobs;
  o.partition = a.partition;
  o.time = a.time;
  // Everything is checked before the directory is touched.
  const experiment::SlurmScripts sc = sweep_errors([&] { return experiment::slurm_scripts(s, o); });
  sweep_errors([&] { experiment::prepare_result_dir(s, o.out_dir); return 0; });
  for (const char* sub : {"slurm", "logs"}) {
    fs::path p = fs::path(o.out_dir) / sub;
    if (!fs::create_directory(p, ec) && !fs::is_directory(p))
      throw io::OutputError(fmt::format("--out '{}': cannot create {}: {}", out, p.string(), ec.message()));
  }
  const fs::path dir = fs::path(o.out_dir) / "slurm";
  io::write_file_atomic("--out", (dir / "array.sbatch").string(), sc.array);
  io::write_file_atomic("--out", (dir / "merge.sbatch").string(), sc.merge);
  io::write_file_atomic("--out", (dir / "submit.sh").string(), sc.submit);
  fs::permissions(dir / "submit.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  fmt::print("sweep {}: {} cells in {} shards: {}/array.sbatch (array job), merge.sbatch (merge job), submit.sh\n",
             s.name, s.cells.size(), o.shards, dir.string());
  fmt::print("submit with: bash {}/submit.sh\n", dir.string());
}

void do_list(const ListArgs& a) {
  const experiment::Sweep s = sweep_errors([&] { return experiment::load_sweep(a.file); });
  const experiment::Shard shard = sweep_errors([&] { return experiment::parse_shard("--shard", a.shard); });
  if (a.format == "json") {
    fmt::print("{}", experiment::manifest_text(s));
    return;
  }
  if (a.format != "text") throw UsageError(fmt::format("--format: unknown format '{}' (text or json)", a.format));
  std::string cmps;
  for (const auto& c : s.comparisons)
    cmps += (cmps.empty() ? "" : ", ") + s.sides[c.base].label + " vs " + s.sides[c.test].label;
  fmt::print("# sweep {}: {} cells = {} groups x {} feature sets x {} seeds; compare {}\n", s.name, s.cells.size(),
             s.groups.size(), s.sides.size(), s.seeds.size(), cmps);
  fmt::print("# index id group side seed\n");
  std::string out;
  for (const auto& c : s.cells)
    if (c.index % shard.count == shard.index)
      out += fmt::format("{} {} {} {} {}\n", c.index, c.id, s.groups[c.group].describe(), s.sides[c.side].label, c.seed);
  fmt::print("{}", out);
}

}  // namespace

void register_sweep(CLI::App& app) {
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Sweeps: the cells of a sweep.toml run in shards (one machine or a Slurm array), merged into A/B tables");
  sweep->require_subcommand(1);

  auto r = std::make_shared<SweepRunArgs>();
  CLI::App* run = sweep->add_subcommand("run", "Run one shard of a sweep: the cells whose index is I mod N");
  run->add_option("file", r->file, "the sweep file (sweep.toml)")->required();
  run->add_option("--shard", r->shard, "I/N: this shard's number (0 to N-1) and the number of shards")
      ->capture_default_str();
  run->add_option("--out", r->out, "result directory (created if missing; one file per cell, finished cells skipped)")
      ->required();
  run->add_option("--jobs", r->jobs, "parallel simulations (0: one per CPU of this machine)")
      ->type_name("J")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  run->callback(deferred([r] { do_run(*r); }));

  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = sweep->add_subcommand(
      "merge", "Check that every cell of a result directory is there once, print the A/B table of each comparison");
  merge->add_option("dir", m->dir, "result directory of `schedlab sweep run`")->required();
  merge->add_option("--format", m->format, "text, markdown, json, csv or mmtests (what -o gets)")->capture_default_str();
  merge->add_option("--mmtests-significance", m->mmtests_significance,
                    "--format mmtests: the asterisk's rule, ci (mmtests now) or ttest (before 2024-11-28)")
      ->capture_default_str();
  merge->add_option("-o", m->output, "the tables to FILE ('-': standard output)")->capture_default_str();
  add_optional(merge, "--json", m->json, "the JSON document to FILE (default DIR/merge.json)");
  add_optional(merge, "--csv", m->csv, "the CSV to FILE (default DIR/merge.csv)");
  merge->callback(deferred([m] { do_merge(*m); }));

  auto sl = std::make_shared<SlurmArgs>();
  CLI::App* slurm = sweep->add_subcommand(
      "slurm", "Write sbatch scripts: an array job (one task per shard) and a merge job after it (afterok)");
  slurm->add_option("file", sl->file, "the sweep file (sweep.toml)")->required();
  slurm->add_option("--shards", sl->shards, "number of shards (array tasks)")->required()->check(CLI::Range(1, 1000000));
  slurm->add_option("--out", sl->out,
                     "result directory (default NAME.out, NAME the sweep's; the scripts go to DIR/slurm/, the logs to "
                     "DIR/logs/)");
  slurm->add_option("--partition", sl->partition, "sbatch --partition (default: the cluster's default)");
  slurm->add_option("--time", sl->time, "sbatch --time of each job (default: the partition's)");
  slurm->add_option("--jobs", sl->jobs, "CPUs per shard: --cpus-per-task and `sweep run --jobs`")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  slurm->add_option("--schedlab", sl->schedlab, "the schedlab binary the jobs run (default: this one)");
  slurm->callback(deferred([sl] { do_slurm(*sl); }));

  auto l = std::make_shared<ListArgs>();
  CLI::App* list = sweep->add_subcommand("list", "Expand a sweep file: its cells in canonical order with their ids");
  list->add_option("file", l->file, "the sweep file (sweep.toml)")->required();
  list->add_option("--shard", l->shard, "I/N: only the cells of this shard")->capture_default_str();
  list->add_option("--format", l->format, "text, or json (the manifest `sweep run` writes)")->capture_default_str();
  list->callback(deferred([l] { do_list(*l); }));
}

}  // namespace schedlab::cli
