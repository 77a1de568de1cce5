// Sweep files: the hash, the canonical expansion and its order, cell identity (what changes an id
// and what does not), malformed files with file:line, the manifest, shards, the Slurm scripts,
// and the shipped examples.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "experiment/sweep.hpp"
#include "../common/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace schedlab;
using namespace schedlab::experiment;

namespace {

const std::string kSource = SCHEDLAB_SOURCE_DIR;

// 2 machines x (2 + 1) workload instances x 2 set-axis points x 2 sides x 3 seeds = 72 cells.
const std::string kSweep = R"([sweep]
name = "unit"
description = "a sweep of every axis"
machines = [{ name = "tiny-4", sets = ["noise.jitter_cov=0.02"] }, "emag-32"]
runs = 3
first_seed = 5
sets = ["costs.ttwu_ns=300"]

[features]
spin = { features = "IDLE_SPIN", sets = ["change.IDLE_SPIN.max_ns=20000"] }
base = ""

[[workload]]
name = "pipe"
command = "perf bench sched pipe -l {loops}"
params = { loops = [300, 200] }

[[workload]]
name = "hb"
command = "hackbench -g 1 -l 20"
counters_cpu = "0-1"

[set_axes]
"costs.ipi_send_ns" = [100, 200]

[[compare]]
base = "base"
test = "spin"
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

class SweepFile : public fixture::TempDirTest {
 protected:
  std::string file() const { return p("sweep.toml"); }
  Sweep parse(const std::string& text) const { return parse_sweep(text, file(), dir_.string()); }
  // Parsing `text` fails with exactly "<file>:<line>: ..." containing `what`, on one line.
  void expect_error(const std::string& text, int line, const std::string& what) const {
    try {
      parse(text);
      ADD_FAILURE() << "no error for: " << what;
    } catch (const SweepError& e) {
      std::string msg = e.what();
      std::string prefix = file() + (line ? ":" + std::to_string(line) : std::string()) + ": ";
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg << "\nexpected prefix " << prefix;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
};

}  // namespace

// The published FNV-1a 64-bit test vectors (Fowler/Noll/Vo, "FNV test suite": fnv1a64 of "",
// "a", "foobar").
TEST(SweepHash, Fnv1a64Vectors) {
  EXPECT_EQ(hex64(fnv1a64("")), "cbf29ce484222325");
  EXPECT_EQ(hex64(fnv1a64("a")), "af63dc4c8601ec8c");
  EXPECT_EQ(hex64(fnv1a64("foobar")), "85944171f73967e8");
  // Continuing a hash is hashing the concatenation.
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
}

TEST_F(SweepFile, ExpandsEveryAxisInCanonicalOrder) {
  Sweep s = parse(kSweep);
  EXPECT_EQ(s.name, "unit");
  EXPECT_EQ(s.version, schedlab_version());
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{5, 6, 7}));
  ASSERT_EQ(s.sides.size(), 2u);
  EXPECT_EQ(s.sides[0].label, "base");  // labels sorted
  EXPECT_EQ(s.sides[1].label, "spin");
  ASSERT_EQ(s.comparisons.size(), 1u);
  EXPECT_EQ(s.comparisons[0].base, 0);
  EXPECT_EQ(s.comparisons[0].test, 1);
  // Groups: machines, workloads in file order, parameter values in file order, set-axis points.
  ASSERT_EQ(s.groups.size(), 12u);
  std::vector<std::string> desc;
  for (const auto& g : s.groups) desc.push_back(g.describe());
  EXPECT_EQ(desc[0], "tiny-4 pipe loops=300 costs.ipi_send_ns=100");
  EXPECT_EQ(desc[1], "tiny-4 pipe loops=300 costs.ipi_send_ns=200");
  EXPECT_EQ(desc[2], "tiny-4 pipe loops=200 costs.ipi_send_ns=100");
  EXPECT_EQ(desc[4], "tiny-4 hb costs.ipi_send_ns=100");
  EXPECT_EQ(desc[6], "emag-32 pipe loops=300 costs.ipi_send_ns=100");
  EXPECT_EQ(s.groups[0].command, (std::vector<std::string>{"perf", "bench", "sched", "pipe", "-l", "300"}));
  // The sets in the order applied: the sweep's, the machine's, the set-axis point.
  EXPECT_EQ(s.groups[1].sets,
            (std::vector<std::string>{"costs.ttwu_ns=300", "noise.jitter_cov=0.02", "costs.ipi_send_ns=200"}));
  EXPECT_EQ(s.groups[4].counter_cpus, (std::vector<int>{0, 1}));
  // Cells: group, side, seed (innermost); every id distinct.
  ASSERT_EQ(s.cells.size(), 72u);
  std::set<std::string> ids;
  for (size_t i = 0; i < s.cells.size(); ++i) {
    const SweepCell& c = s.cells[i];
    EXPECT_EQ(c.index, static_cast<int>(i));
    EXPECT_EQ(c.group, static_cast<int>(i / 6));
    EXPECT_EQ(c.side, static_cast<int>(i / 3 % 2));
    EXPECT_EQ(c.seed, 5 + i % 3);
    EXPECT_EQ(c.id.size(), 16u);
    EXPECT_TRUE(ids.insert(c.id).second) << c.text;
  }
  // The id as docs/sweeps.md defines it: the text, the version, the profile file's hash.
  for (const auto& [ci, profile] : {std::pair{0, "tiny-4"}, std::pair{40, "emag-32"}}) {
    std::ifstream in(kSource + "/profiles/" + profile + ".toml", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const SweepCell& c = s.cells[ci];
    EXPECT_EQ(c.id, hex64(fnv1a64(c.text + "schedlab_version " + schedlab_version() + "\nprofile_fnv1a64 " +
                                  hex64(fnv1a64(bytes)) + "\n")));
    EXPECT_EQ(c.text.rfind("schedlab sweep cell\nmachine " + std::string(profile) + "\n", 0), 0u) << c.text;
  }
  // A cell's run: the side's features and sets after the group's.
  RunSpec r = s.cell_spec(s.cells[4]);
  EXPECT_EQ(r.machine, "tiny-4");
  EXPECT_EQ(r.features, "IDLE_SPIN");
  EXPECT_EQ(r.seed, 6u);
  EXPECT_EQ(r.sets.back(), "change.IDLE_SPIN.max_ns=20000");
  EXPECT_NE(s.cells[4].text.find("set change.IDLE_SPIN.max_ns=20000\n"), std::string::npos) << s.cells[4].text;
  EXPECT_NE(s.cells[4].text.find("seed 6\n"), std::string::npos);
  EXPECT_NE(s.cells[24].text.find("counters_cpu 0-1\n"), std::string::npos) << s.cells[24].text;
  // The A/B spec of a comparison on a group: what `schedlab ab` would be given.
  AbSpec a = s.ab_spec(s.groups[0], s.comparisons[0]);
  EXPECT_EQ(a.runs, 3);
  EXPECT_EQ(a.first_seed, 5u);
  EXPECT_EQ(a.base_features, "");
  EXPECT_EQ(a.test_features, "IDLE_SPIN");
  EXPECT_EQ(a.test_sets, (std::vector<std::string>{"change.IDLE_SPIN.max_ns=20000"}));
}

// An id is what the cell runs: the file's layout, comments, key order and labels do not change
// it; a seed, a feature, a set, the command or the profile's contents do.
TEST_F(SweepFile, IdsFollowWhatRunsNotHowItIsWritten) {
  Sweep s = parse(kSweep);
  std::string reordered = R"(# the same sweep, written otherwise
[[compare]]
test = "spinning"
base = "plain"

[set_axes]
"costs.ipi_send_ns" = [100, 200]

[features]
plain = ""
spinning = { sets = ["change.IDLE_SPIN.max_ns=20000"], features = "IDLE_SPIN" }

[[workload]]
command = "perf  bench sched   pipe -l {loops}"
name = "ping"
params = { loops = [300, 200] }

[[workload]]
name = "hackbench"
counters_cpu = " 0-1 "
command = "hackbench -g 1 -l 20"

[sweep]
sets = ["costs.ttwu_ns=300"]
first_seed = 5
runs = 3
machines = [{ sets = ["noise.jitter_cov=0.02"], name = "tiny-4", label = "small" }, "emag-32"]
name = "other-name"
)";
  Sweep t = parse(reordered);
  ASSERT_EQ(t.cells.size(), s.cells.size());
  for (size_t i = 0; i < s.cells.size(); ++i) {
    EXPECT_EQ(t.cells[i].id, s.cells[i].id) << i;
    EXPECT_EQ(t.cells[i].text, s.cells[i].text) << i;
  }
  auto first_id = [&](const std::string& text) { return parse(text).cells[0].id; };
  EXPECT_NE(first_id(replace(kSweep, "first_seed = 5", "first_seed = 6")), s.cells[0].id);
  EXPECT_NE(first_id(replace(kSweep, "base = \"\"", "base = \"NO_SIS_UTIL\"")), s.cells[0].id);
  EXPECT_NE(first_id(replace(kSweep, "costs.ttwu_ns=300", "costs.ttwu_ns=301")), s.cells[0].id);
  EXPECT_NE(first_id(replace(kSweep, "[300, 200]", "[301, 200]")), s.cells[0].id);

  // The profile's contents: a copy of tiny-4 gives the same id only if it is the same file.
  std::ifstream in(kSource + "/profiles/tiny-4.toml", std::ios::binary);
  std::string profile((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(p("m.toml"), std::ios::binary) << profile;
  std::string by_path = replace(kSweep, "name = \"tiny-4\"", "name = \"m.toml\"");  // relative to the sweep file
  Sweep a = parse(by_path);
  EXPECT_EQ(a.groups[0].profile_hash, s.groups[0].profile_hash);
  EXPECT_NE(a.cells[0].id, s.cells[0].id);  // the text names the machine as written
  std::ofstream(p("m.toml"), std::ios::binary) << profile << "\n# one more comment\n";
  Sweep b = parse(by_path);
  EXPECT_EQ(b.cells[0].text, a.cells[0].text);
  EXPECT_NE(b.groups[0].profile_hash, a.groups[0].profile_hash);
  EXPECT_NE(b.cells[0].id, a.cells[0].id);
}

TEST_F(SweepFile, SeedsAsAList) {
  Sweep s = parse(replace(kSweep, "runs = 3\nfirst_seed = 5", "seeds = [9, 3]"));
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{9, 3}));
  EXPECT_EQ(s.cells[0].seed, 9u);
  EXPECT_EQ(s.cells[1].seed, 3u);
}

TEST_F(SweepFile, MalformedFilesNameFileAndLine) {
  expect_error("[sweep\nname = 1", 1, "TOML syntax error");
  expect_error(replace(kSweep, "name = \"unit\"", "name = \"has space\""), 2, "a name is");
  expect_error(replace(kSweep, "runs = 3", "runs = 1"), 5, "must be 2 to");
  expect_error(replace(kSweep, "runs = 3", "runs = \"3\""), 5, "must be an integer");
  expect_error(replace(kSweep, "runs = 3\nfirst_seed = 5", "runs = 3\nseeds = [1, 2]"), 6, "not both");
  expect_error(replace(kSweep, "runs = 3\nfirst_seed = 5", "seeds = [1, 1]"), 5, "given twice");
  expect_error(replace(kSweep, "runs = 3\nfirst_seed = 5", "seeds = [-1, 2]"), 5, "negative");
  expect_error(replace(kSweep, "\"emag-32\"]", "\"nope-9\"]"), 4, "unknown machine 'nope-9'");
  expect_error(replace(kSweep, "\"emag-32\"]", "\"tiny-4\"]"), 4, "'tiny-4' is given twice");
  expect_error(replace(kSweep, "\"emag-32\"]", "{ name = \"emag-32\", cpus = 3 }]"), 4, "unknown key 'cpus'");
  expect_error(replace(kSweep, "sets = [\"costs.ttwu_ns=300\"]", "sets = [\"costs.ttwu_ns=-3\"]"), 7,
               "costs.ttwu_ns = -3");
  expect_error(replace(kSweep, "noise.jitter_cov=0.02", "noise.jitter=0.02"), 4, "unknown key 'noise.jitter'");
  expect_error(replace(kSweep, "unit\"\n", "unit\"\nmachine = \"x\"\n"), 3, "unknown key 'machine' in [sweep]");
  expect_error(replace(kSweep, "features = \"IDLE_SPIN\"", "features = \"IDLE_SPIM\""), 10, "unknown feature 'IDLE_SPIM'");
  expect_error(replace(kSweep, "change.IDLE_SPIN.max_ns=20000", "change.IDLE_SPIN.maxx=1"), 10, "maxx");
  expect_error(replace(kSweep, "base = \"\"", "base = 3"), 11, "must be a feature list");
  expect_error(replace(kSweep, "{loops}\"", "{loop}\""), 15, "uses {loop}, which is not one of its params");
  expect_error(replace(kSweep, "{loops}\"", "{loops\""), 15, "'{' without '}'");
  expect_error(replace(kSweep, "-l {loops}\"", "-l 3\""), 14, "parameter 'loops' is not used");
  expect_error(replace(kSweep, "[300, 200]", "[300, 300]"), 16, "given twice");
  expect_error(replace(kSweep, "[300, 200]", "[300, true]"), 16, "strings or numbers");
  expect_error(replace(kSweep, "[300, 200]", "[300, -5]"), 15, "workload 'pipe' (loops=-5) on machine 'tiny-4'");
  expect_error(replace(kSweep, "-g 1 -l 20", "-g 1 -Q 20"), 20, "workload 'hb' on machine 'tiny-4'");
  expect_error(replace(kSweep, "counters_cpu = \"0-1\"", "counters_cpu = \"0-7\""), 21, "workload 'hb' on machine 'tiny-4'");
  expect_error(replace(kSweep, "[100, 200]", "[100, -200]"), 24, "costs.ipi_send_ns=-200");
  expect_error(replace(kSweep, "\"costs.ipi_send_ns\"", "\"costs.ipi_send\""), 24, "unknown key 'costs.ipi_send'");
  expect_error(replace(kSweep, "test = \"spin\"", "test = \"spun\""), 28, "no such feature set in [features] (base, spin)");
  expect_error(replace(kSweep, "test = \"spin\"", "test = \"base\""), 28, "base and test are both 'base'");
  expect_error(replace(kSweep, "[features]\n", "[features]\nlonely = \"SM_IDLE\"\n"), 10,
               "'lonely' is in no [[compare]]");
  expect_error(replace(kSweep, "[[compare]]\nbase = \"base\"\ntest = \"spin\"\n", ""), 0, "missing [[compare]]");
  expect_error(replace(kSweep, "runs = 3", "runs = 100000"), 1, "expands to 2400000 cells");
}

TEST_F(SweepFile, ManifestRoundTrips) {
  Sweep s = parse(kSweep);
  std::string text = manifest_text(s);
  Sweep m = parse_manifest(text, "sweep.json");
  EXPECT_EQ(manifest_text(m), text);
  ASSERT_EQ(m.cells.size(), s.cells.size());
  EXPECT_EQ(m.cells[7].id, s.cells[7].id);
  EXPECT_EQ(m.cells[7].seed, s.cells[7].seed);
  EXPECT_EQ(m.groups[4].counter_cpus, s.groups[4].counter_cpus);
  EXPECT_THROW(parse_manifest("{\"schema\": \"other\"}", "sweep.json"), SweepError);
  EXPECT_THROW(parse_manifest("not json", "sweep.json"), SweepError);
}

TEST(SweepShard, ParsesIOfN) {
  Shard s = parse_shard("--shard", "2/7");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 7);
  for (const char* bad : {"7/7", "1", "-1/3", "a/3", "1/0", "1/", "/3", "1/3/4", " 1/3"})
    EXPECT_THROW(parse_shard("--shard", bad), SweepError) << bad;
}

TEST_F(SweepFile, SlurmScripts) {
  Sweep s = parse(kSweep);
  SlurmOptions o;
  o.schedlab = "/opt/schedlab's/bin/schedlab";
  o.sweep_file = "/data/sweep.toml";
  o.out_dir = "/data/out";
  o.shards = 7;
  o.jobs = 4;
  o.partition = "batch";
  o.time = "1-00:30:00";
  SlurmScripts sc = slurm_scripts(s, o);
  EXPECT_NE(sc.array.find("#SBATCH --array=0-6\n"), std::string::npos) << sc.array;
  EXPECT_NE(sc.array.find("#SBATCH --cpus-per-task=4\n"), std::string::npos);
  EXPECT_NE(sc.array.find("#SBATCH --partition=batch\n"), std::string::npos);
  EXPECT_NE(sc.array.find("#SBATCH --time=1-00:30:00\n"), std::string::npos);
  EXPECT_NE(sc.array.find("#SBATCH --output=/data/out/logs/shard-%a.log\n"), std::string::npos);
  EXPECT_NE(sc.array.find("exec '/opt/schedlab'\\''s/bin/schedlab' sweep run '/data/sweep.toml' --shard "
                          "\"${SLURM_ARRAY_TASK_ID}/7\" --out '/data/out' --jobs \"${SLURM_CPUS_PER_TASK:-4}\"\n"),
            std::string::npos)
      << sc.array;
  EXPECT_NE(sc.merge.find("sweep merge '/data/out' -o '/data/out/merge.txt'\n"), std::string::npos) << sc.merge;
  EXPECT_NE(sc.merge.find("#SBATCH --partition=batch\n"), std::string::npos);
  EXPECT_NE(sc.submit.find("--dependency=afterok:\"$array\" --kill-on-invalid-dep=yes '/data/out/slurm/merge.sbatch'"),
            std::string::npos)
      << sc.submit;
  o.time = "";
  o.partition = "";
  sc = slurm_scripts(s, o);
  EXPECT_EQ(sc.array.find("--partition"), std::string::npos);
  EXPECT_EQ(sc.array.find("--time"), std::string::npos);
  for (const char* t : {"10", "10:30", "1:00:00", "2-12", "2-12:30", "2-12:30:00", "UNLIMITED"}) {
    o.time = t;
    EXPECT_NO_THROW(slurm_scripts(s, o)) << t;
  }
  for (const char* t : {"1h", "-1", "1:2:3:4", "ten", "1-", "1 2"}) {
    o.time = t;
    EXPECT_THROW(slurm_scripts(s, o), SweepError) << t;
  }
  o.time = "";
  for (const char* p : {"a b", "a;b", "x,,y", "a'b"}) {
    o.partition = p;
    EXPECT_THROW(slurm_scripts(s, o), SweepError) << p;
  }
  o.partition = "";
  o.out_dir = "/data/my out";
  EXPECT_THROW(slurm_scripts(s, o), SweepError);
  o.out_dir = "/data/out";
  o.shards = 73;
  EXPECT_THROW(slurm_scripts(s, o), SweepError);  // more shards than cells
}

// The shipped examples parse and expand to the sizes their comments state.
TEST(SweepExamples, ParseAndExpand) {
  Sweep a = load_sweep(kSource + "/examples/sweeps/sm_idle_ipistorm.toml");
  EXPECT_EQ(a.cells.size(), 40u);
  ASSERT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(a.groups[0].machine, "epyc-milan-2s");
  EXPECT_EQ(a.groups[0].idle_disable, (std::vector<std::string>{"C2"}));
  EXPECT_EQ(a.groups[1].machine, "spr-2s");
  EXPECT_EQ(a.groups[1].counter_cpus, (std::vector<int>{16}));
  EXPECT_EQ(a.seeds.size(), 10u);
  Sweep b = load_sweep(kSource + "/examples/sweeps/idle_spin_tbench.toml");
  EXPECT_EQ(b.cells.size(), 50u);
  ASSERT_EQ(b.groups.size(), 5u);
  EXPECT_EQ(b.groups[4].command, (std::vector<std::string>{"tbench", "-t", "1", "16"}));
}
