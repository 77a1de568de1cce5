// `schedlab sweep slurm`: the sbatch scripts of a sweep (docs/sweeps.md).
#include <fmt/format.h>

#include <regex>

#include "experiment/sweep.hpp"
#include "machine/toml_reader.hpp"

namespace schedlab::experiment {

namespace {

// A word for the shell: single-quoted, a quote written '\''.
std::string sh(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// #SBATCH lines are split at white space by sbatch, without the shell's quoting.
void check_sbatch_word(const std::string& flag, const std::string& v) {
  if (v.find_first_of(" \t\r\n\"'\\") != std::string::npos)
    throw SweepError(machine::one_line(
        fmt::format("{} '{}': sbatch's #SBATCH lines cannot hold spaces, quotes or backslashes", flag, v)));
}

}  // namespace

SlurmScripts slurm_scripts(const Sweep& s, const SlurmOptions& o) {
  if (o.shards < 1) throw SweepError(fmt::format("--shards {}: at least 1", o.shards));
  if (static_cast<size_t>(o.shards) > s.cells.size())
    throw SweepError(fmt::format("--shards {}: the sweep has {} cells; give at most that many shards", o.shards,
                                 s.cells.size()));
  // Partition names as Slurm takes them (a comma-separated list); time limits in sbatch's forms:
  // minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED.
  static const std::regex partition(R"([A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*)");
  static const std::regex time(R"(\d{1,7}|\d{1,7}:\d{1,2}|\d{1,7}:\d{1,2}:\d{1,2}|\d{1,4}-\d{1,2}(:\d{1,2}(:\d{1,2})?)?|UNLIMITED|INFINITE)");
  if (!o.partition.empty() && !std::regex_match(o.partition, partition))
    throw SweepError(machine::one_line(fmt::format("--partition '{}': not a Slurm partition name (letters, digits, "
                                                   "'_', '-', '.'; a list separated by commas)",
                                                   o.partition)));
  if (!o.time.empty() && !std::regex_match(o.time, time))
    throw SweepError(machine::one_line(fmt::format(
        "--time '{}': give minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED (sbatch --time)", o.time)));
  check_sbatch_word("--out", o.out_dir);
  const std::string logs = o.out_dir + "/logs";
  const std::string job = "schedlab-sweep-" + s.name;
  std::string common;
  if (!o.partition.empty()) common += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.time.empty()) common += "#SBATCH --time=" + o.time + "\n";

  SlurmScripts out;
  out.array = fmt::format(
      "#!/bin/bash\n"
      "# schedlab sweep {name}: {cells} cells in {n} shards, one array task per shard (shard I runs the cells\n"
      "# whose index is I mod {n}). Written by `schedlab sweep slurm`; submit with submit.sh. A shard that\n"
      "# failed or ran out of time is rerun with `sbatch --array=I,J {self}`: finished cells are skipped.\n"
      "#SBATCH --job-name={job}\n"
      "#SBATCH --array=0-{last}\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task={jobs}\n"
      "#SBATCH --output={logs}/shard-%a.log\n"
      "{common}"
      "set -euo pipefail\n"
      "exec {bin} sweep run {file} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" --out {dir} --jobs \"${{SLURM_CPUS_PER_TASK:-{jobs}}}\"\n",
      fmt::arg("name", s.name), fmt::arg("cells", s.cells.size()), fmt::arg("n", o.shards),
      fmt::arg("self", o.out_dir + "/slurm/array.sbatch"), fmt::arg("job", job), fmt::arg("last", o.shards - 1),
      fmt::arg("jobs", o.jobs), fmt::arg("logs", logs), fmt::arg("common", common), fmt::arg("bin", sh(o.schedlab)),
      fmt::arg("file", sh(o.sweep_file)), fmt::arg("dir", sh(o.out_dir)));
  out.merge = fmt::format(
      "#!/bin/bash\n"
      "# schedlab sweep {name}: the merge, once every shard has succeeded (submit.sh gives it\n"
      "# --dependency=afterok on the array job): the tables in merge.txt, merge.json and merge.csv.\n"
      "#SBATCH --job-name={job}-merge\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output={logs}/merge.log\n"
      "{common}"
      "set -euo pipefail\n"
      "exec {bin} sweep merge {dir} -o {txt}\n",
      fmt::arg("name", s.name), fmt::arg("job", job), fmt::arg("logs", logs), fmt::arg("common", common),
      fmt::arg("bin", sh(o.schedlab)), fmt::arg("dir", sh(o.out_dir)), fmt::arg("txt", sh(o.out_dir + "/merge.txt")));
  out.submit = fmt::format(
      "#!/bin/bash\n"
      "# schedlab sweep {name}: submits the shards as one array job and the merge as a job that runs\n"
      "# when all of them have succeeded (--dependency=afterok; cancelled if one fails).\n"
      "set -euo pipefail\n"
      "array=$(sbatch --parsable {array})\n"
      "array=${{array%%;*}}\n"
      "merge=$(sbatch --parsable --dependency=afterok:\"$array\" --kill-on-invalid-dep=yes {merge})\n"
      "merge=${{merge%%;*}}\n"
      "echo \"schedlab sweep {name}: array job $array ({n} shards), merge job $merge\"\n"
      "echo \"results: {dir}/merge.txt, merge.json, merge.csv; logs: {dir}/logs/\"\n",
      fmt::arg("name", s.name), fmt::arg("array", sh(o.out_dir + "/slurm/array.sbatch")),
      fmt::arg("merge", sh(o.out_dir + "/slurm/merge.sbatch")), fmt::arg("n", o.shards), fmt::arg("dir", o.out_dir));
  return out;
}

}  // namespace schedlab::experiment
