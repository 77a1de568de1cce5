// `schedlab sweep` end to end: the merge is byte-identical whatever the shard count, the shard
// order and --jobs, and its tables are `schedlab ab`'s; a killed shard resumes; merge refuses
// missing, duplicate and foreign cells (another sweep, another profile content) in one line;
// malformed sweep files; the Slurm scripts; the shipped examples run.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "../common/process.hpp"
#include "../common/temp_dir.hpp"

extern char** environ;

namespace fs = std::filesystem;
using schedlab::fixture::ProcResult;
using schedlab::fixture::run_schedlab;
using schedlab::fixture::slurp;

namespace {

const std::string kSource = SCHEDLAB_SOURCE_DIR;

// 2 machines x (2 + 1) workload instances x 2 feature sets x 3 seeds = 36 cells. The labels
// are the ones `schedlab ab` gives these feature lists, so that its tables can be compared.
const std::string kSweep = R"([sweep]
name = "identity"
machines = [{ name = "tiny-4", sets = ["noise.jitter_cov=0.02"] }, "emag-32"]
runs = 3

[features]
base = ""
IDLE_SPIN = "IDLE_SPIN"

[[workload]]
name = "pipe"
command = "perf bench sched pipe -l {loops}"
params = { loops = [200, 400] }

[[workload]]
name = "hackbench"
command = "hackbench -g 1 -l 20"
counters_cpu = "0-1"

[[compare]]
base = "base"
test = "IDLE_SPIN"
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

// The *.cell.json files of a directory (not its subdirectories), by name, with their bytes.
std::map<std::string, std::string> cells(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.size() > 10 && name.ends_with(".cell.json")) out[name] = slurp(e.path().string());
  }
  return out;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class Sweep : public schedlab::fixture::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    write("s.toml", kSweep);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(p(name)) << text; }
  ProcResult sweep(const std::string& args) const { return run_schedlab("sweep " + args, dir_.string()); }
  // Runs a shell command line with $S set to the binary, in the test's directory.
  int shell(const std::string& cmd) const {
    std::string full = "cd '" + dir_.string() + "' && S='" + SCHEDLAB_BINARY + "' && " + cmd;
    int rc = std::system(full.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  // The merge's three outputs.
  struct Merged {
    std::string text, json, csv;
  };
  Merged merge(const std::string& d) const {
    ProcResult r = sweep("merge " + d);
    EXPECT_EQ(r.status, 0) << r.err;
    return {r.out, slurp(p(d + "/merge.json")), slurp(p(d + "/merge.csv"))};
  }
  // Starts `schedlab sweep run ...` in the background; returns its pid.
  pid_t spawn_run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{SCHEDLAB_BINARY, "sweep", "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, p("spawned.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&fa, dir_.c_str());
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, SCHEDLAB_BINARY, &fa, nullptr, cargv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  }
  // Waits until DIR holds at least n cell files (or the process ended).
  void wait_for_cells(pid_t pid, const std::string& d, size_t n) const {
    for (int i = 0; i < 6000; ++i) {
      if (fs::exists(p(d)) && cells(p(d)).size() >= n) return;
      int st = 0;
      if (waitpid(pid, &st, WNOHANG) == pid) FAIL() << "the run ended before " << n << " cells: " << slurp(p("spawned.err"));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "no cell file after 60 s";
  }
};

}  // namespace

// Acceptance: N in {1, 2, 3, 7} shards, run in any order, one after the other or at once, with
// any --jobs: the same cell files and the same merge, byte for byte.
TEST_F(Sweep, MergeIsTheSameWhateverTheShards) {
  ASSERT_EQ(shell("$S sweep run s.toml --out d1 --jobs 1 2>/dev/null"), 0);
  const auto ref_cells = cells(p("d1"));
  ASSERT_EQ(ref_cells.size(), 36u);
  const Merged ref = merge("d1");
  EXPECT_NE(ref.text.find("# schedlab sweep identity: 36 cells, 6 tables\n"), std::string::npos) << ref.text;
  // Two shards in reverse order; three at once; seven at once, each on one thread.
  ASSERT_EQ(shell("$S sweep run s.toml --shard 1/2 --out d2 --jobs 2 2>/dev/null && "
                  "$S sweep run s.toml --shard 0/2 --out d2 --jobs 2 2>/dev/null"),
            0);
  ASSERT_EQ(shell("for i in 2 0 1; do $S sweep run s.toml --shard $i/3 --out d3 --jobs 1 2>/dev/null & done; wait"), 0);
  ASSERT_EQ(shell("for i in 6 5 4 3 2 1 0; do $S sweep run s.toml --shard $i/7 --out d7 --jobs 1 2>/dev/null & done; "
                  "wait"),
            0);
  for (const char* d : {"d2", "d3", "d7"}) {
    SCOPED_TRACE(d);
    EXPECT_EQ(cells(p(d)), ref_cells);
    EXPECT_EQ(slurp(p(std::string(d) + "/sweep.json")), slurp(p("d1/sweep.json")));
    const Merged m = merge(d);
    EXPECT_EQ(m.text, ref.text);
    EXPECT_EQ(m.json, ref.json);
    EXPECT_EQ(m.csv, ref.csv);
  }
  // Shard I of N runs exactly the cells whose index is I mod N (round-robin), as listed.
  ASSERT_EQ(shell("$S sweep run s.toml --shard 3/7 --out one 2>/dev/null"), 0);
  ProcResult l = sweep("list s.toml --shard 3/7");
  ASSERT_EQ(l.status, 0) << l.err;
  std::set<std::string> listed;
  std::istringstream in(l.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream w(line);
    int index = 0;
    std::string id;
    w >> index >> id;
    EXPECT_EQ(index % 7, 3) << line;
    listed.insert(id + ".cell.json");
  }
  std::set<std::string> ran;
  for (const auto& [name, text] : cells(p("one"))) ran.insert(name);
  EXPECT_EQ(ran, listed);
  EXPECT_EQ(ran.size(), 5u);  // indices 3, 10, 17, 24, 31
  // The JSON and CSV hold every table.
  EXPECT_NE(ref.json.find("\"schema\": \"schedlab.sweep.merge.v1\""), std::string::npos);
  EXPECT_EQ(ref.csv.rfind("machine,workload,params,set_axes,base,test,metric,", 0), 0u) << ref.csv.substr(0, 200);
  EXPECT_NE(ref.csv.find("\nemag-32,hackbench,,,base,IDLE_SPIN,"), std::string::npos);
}

// The merged tables are `schedlab ab`'s for the same machine, command, sides and seeds, byte for
// byte (the stored results are the runs' values exactly; the key counters of counters_cpu too).
TEST_F(Sweep, TablesAreThoseOfAb) {
  ASSERT_EQ(shell("$S sweep run s.toml --out d --jobs 2 2>/dev/null"), 0);
  const std::string merged = merge("d").text;
  struct Case {
    std::string header_part, ab_args;
  };
  for (const Case& c :
       {Case{"machine=tiny-4 workload=pipe loops=400 set=noise.jitter_cov=0.02 ",
             "--machine tiny-4 --set noise.jitter_cov=0.02 --runs 3 -- perf bench sched pipe -l 400"},
        Case{"machine=emag-32 workload=hackbench ", "--machine emag-32 --runs 3 --counters-cpu 0-1 -- hackbench -g 1 -l 20"}}) {
    SCOPED_TRACE(c.ab_args);
    ProcResult ab = run_schedlab("ab --base '' --test IDLE_SPIN --jobs 2 " + c.ab_args);
    ASSERT_EQ(ab.status, 0) << ab.err;
    const std::string tables = ab.out.substr(ab.out.find("\n\n") + 2);  // after ab's header
    auto h = merged.find(c.header_part);
    ASSERT_NE(h, std::string::npos) << merged;
    auto body = merged.find('\n', h) + 1;
    EXPECT_EQ(merged.substr(body, 1 + tables.size()), "\n" + tables);
  }
  EXPECT_NE(merged.find("Key counters per run of CPU 0-1"), std::string::npos);
  // --format mmtests: ab's mmtests table after each header (both significance rules).
  for (const char* rule : {"ci", "ttest"}) {
    ProcResult mm = sweep(std::string("merge d --format mmtests --mmtests-significance ") + rule);
    ASSERT_EQ(mm.status, 0) << mm.err;
    ProcResult ab = run_schedlab(std::string("ab --base '' --test IDLE_SPIN --jobs 2 --format mmtests --mmtests-significance ") +
                                 rule + " --machine emag-32 --runs 3 -- hackbench -g 1 -l 20");
    ASSERT_EQ(ab.status, 0) << ab.err;
    auto h = mm.out.find("machine=emag-32 workload=hackbench ");
    ASSERT_NE(h, std::string::npos) << mm.out;
    auto body = mm.out.find('\n', h) + 1;
    EXPECT_EQ(mm.out.substr(body, 1 + ab.out.size()), "\n" + ab.out) << rule;
  }
  ProcResult bad = sweep("merge d --format mmtest");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--format: unknown format 'mmtest'"), std::string::npos) << bad.err;
}

// Acceptance: a shard killed mid-way (SIGKILL: no clean-up) resumes, skipping the finished cells
// without rewriting them, and the merge is that of an uninterrupted run. SIGTERM ends a shard
// with status 143 and no temporary file.
TEST_F(Sweep, ResumesAfterAKilledShard) {
  // 24 cells: 6 slower ones per machine, and the hackbench ones.
  write("slow.toml", replace(kSweep, "loops = [200, 400]", "loops = [20000]"));
  pid_t pid = spawn_run({"slow.toml", "--out", "k", "--jobs", "1"});
  wait_for_cells(pid, "k", 1);
  ::kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st));
  const auto before = cells(p("k"));
  ASSERT_GE(before.size(), 1u);
  ASSERT_LT(before.size(), 24u);
  std::map<std::string, ino_t> inodes;
  for (const auto& [name, text] : before) {
    struct stat sb {};
    ASSERT_EQ(::stat(p("k/" + name).c_str(), &sb), 0);
    inodes[name] = sb.st_ino;
  }
  // A temporary file of an interrupted write, as SIGKILL would leave one: not a cell.
  write("k/.0000000000000000.cell.json.tmp.1.0", "{\"partial");
  ProcResult r = sweep("run slow.toml --out k --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(", " + std::to_string(before.size()) + " already done, " + std::to_string(24 - before.size()) +
                       " to run"),
            std::string::npos)
      << r.err;
  for (const auto& [name, ino] : inodes) {
    struct stat sb {};
    ASSERT_EQ(::stat(p("k/" + name).c_str(), &sb), 0);
    EXPECT_EQ(sb.st_ino, ino) << name << " was rewritten";
  }
  ASSERT_EQ(shell("$S sweep run slow.toml --out whole --jobs 2 2>/dev/null"), 0);
  EXPECT_EQ(cells(p("k")), cells(p("whole")));
  const Merged a = merge("k"), b = merge("whole");
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.json, b.json);
  EXPECT_EQ(a.csv, b.csv);
  // Nothing left to run: says so.
  r = sweep("run slow.toml --out k");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("nothing to run"), std::string::npos) << r.err;

  pid = spawn_run({"slow.toml", "--out", "t", "--jobs", "1"});
  wait_for_cells(pid, "t", 1);
  ::kill(pid, SIGTERM);
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 143);
  for (const auto& e : fs::directory_iterator(p("t")))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

// Acceptance: refusals, each one line naming what and where, exit status 2, no output file.
TEST_F(Sweep, MergeRefusesMissingDuplicateAndForeignCells) {
  ASSERT_EQ(shell("$S sweep run s.toml --out d --jobs 2 2>/dev/null"), 0);
  ProcResult l = sweep("list s.toml");
  std::string id7 = l.out.substr(l.out.find("\n7 ") + 3, 16);
  // A refused merge writes nothing: no output, and the outputs of an earlier merge (if any) as
  // they were.
  auto outputs = [&](const std::string& d) {
    std::string s;
    for (const char* f : {"/merge.json", "/merge.csv"}) s += fs::exists(p(d + f)) ? slurp(p(d + f)) + "\n--\n" : "none\n";
    return s;
  };
  auto refused = [&](const std::string& d, const std::string& what) {
    const std::string before = outputs(d);
    ProcResult r = sweep("merge " + d);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("schedlab: error: sweep merge '" + d + "': refused, ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(outputs(d), before);
  };
  EXPECT_EQ(outputs("d"), "none\nnone\n");
  // Missing.
  fs::rename(p("d/" + id7 + ".cell.json"), p("saved.json"));
  refused("d", "1 missing cell: #7 tiny-4 pipe loops=400 IDLE_SPIN seed 2 (" + id7 + ")");
  refused("d", "(run the missing cells: schedlab sweep run FILE --out DIR)");
  fs::rename(p("saved.json"), p("d/" + id7 + ".cell.json"));
  // Duplicate: the same cell gathered twice (another machine's copy in a subdirectory).
  fs::create_directories(p("d/node2"));
  fs::copy_file(p("d/" + id7 + ".cell.json"), p("d/node2/" + id7 + ".cell.json"));
  refused("d", "1 duplicate: cell #7 in " + id7 + ".cell.json and node2/" + id7 + ".cell.json");
  fs::remove(p("d/node2/" + id7 + ".cell.json"));
  // Foreign: a cell of another sweep file (other seeds).
  write("other.toml", replace(kSweep, "runs = 3", "runs = 3\nfirst_seed = 10"));
  ASSERT_EQ(shell("$S sweep run other.toml --shard 0/36 --out o 2>/dev/null"), 0);
  auto other = cells(p("o"));
  ASSERT_EQ(other.size(), 1u);
  fs::copy_file(p("o/" + other.begin()->first), p("d/node2/" + other.begin()->first));
  refused("d", "1 foreign file: node2/" + other.begin()->first + " (a cell of another sweep)");
  fs::remove(p("d/node2/" + other.begin()->first));
  // Foreign: not a cell, or a cell file renamed.
  write("d/node2/notes.cell.json", "[1, 2]");
  refused("d", "node2/notes.cell.json (not a sweep cell file)");
  fs::remove(p("d/node2/notes.cell.json"));
  fs::copy_file(p("d/" + id7 + ".cell.json"), p("d/node2/0123456789abcdef.cell.json"));
  refused("d", "node2/0123456789abcdef.cell.json (holds cell " + id7 + ")");
  fs::remove(p("d/node2/0123456789abcdef.cell.json"));
  write("d/node2/ffffffffffffffff.cell.json", "{\"schema\": \"schedlab.sweep.cell.v1\", \"id\": ");
  refused("d", "node2/ffffffffffffffff.cell.json (malformed: ");
  fs::remove(p("d/node2/ffffffffffffffff.cell.json"));
  ProcResult ok = sweep("merge d");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(outputs("d"), "none\nnone\n");
  fs::remove(p("d/merge.json"));
  fs::remove(p("d/merge.csv"));

  // Foreign: the same cell run with another content of its profile.
  std::ifstream in(kSource + "/profiles/tiny-4.toml", std::ios::binary);
  const std::string profile((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write("m.toml", profile);
  write("p.toml", replace(kSweep, "name = \"tiny-4\"", "name = \"m.toml\""));
  ASSERT_EQ(shell("$S sweep run p.toml --shard 0/36 --out pa 2>/dev/null"), 0);
  write("m.toml", replace(profile, "jitter_cov = 0.0 ", "jitter_cov = 0.01"));
  ASSERT_EQ(shell("$S sweep run p.toml --shard 0/36 --out pb 2>/dev/null"), 0);
  auto a = cells(p("pa")), b = cells(p("pb"));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(a.begin()->first, b.begin()->first);
  fs::copy_file(p("pb/" + b.begin()->first), p("pa/" + b.begin()->first));
  refused("pa", b.begin()->first + " (cell #0 run with another content of profile 'm.toml'");
  // ... and the result directory of the first content refuses the run of the second.
  ProcResult r = sweep("run p.toml --out pa");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--out 'pa': holds another sweep (pa/sweep.json: sweep 'identity', 36 cells, 18 of them among "
                       "this sweep's 36)"),
            std::string::npos)
      << r.err;
  // Several kinds at once: one line, each kind counted, the first few named.
  fs::remove(p("d/" + id7 + ".cell.json"));
  for (const auto& [name, text] : cells(p("d"))) {
    fs::remove(p("d/" + name));
    if (cells(p("d")).size() < 20) break;
  }
  const auto left = cells(p("d"));
  fs::copy_file(p("d/" + left.begin()->first), p("d/node2/" + left.begin()->first));
  write("d/node2/notes.cell.json", "[1, 2]");
  refused("d", "refused, 17 missing cells: #");
  refused("d", " and 12 more; 1 duplicate: cell #");
  refused("d", "; 1 foreign file: node2/notes.cell.json (not a sweep cell file) (run the missing cells");
}

// Acceptance: a malformed sweep file is one error naming the file and line, before any
// directory or file is made.
TEST_F(Sweep, MalformedSweepFileNamesFileAndLine) {
  write("bad.toml", replace(kSweep, "IDLE_SPIN = \"IDLE_SPIN\"", "IDLE_SPIN = \"IDLE_SPIN,,\""));
  ProcResult r = sweep("run bad.toml --out never");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "schedlab: error: bad.toml:8: features.IDLE_SPIN 'IDLE_SPIN,,': empty item in the feature list\n");
  EXPECT_FALSE(fs::exists(p("never")));
  write("bad.toml", replace(kSweep, "runs = 3", "runs = 3\nruns = 4"));
  r = sweep("slurm bad.toml --shards 2 --out never");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("schedlab: error: bad.toml:5: TOML syntax error", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(p("never")));
  r = sweep("run s.toml --shard 2/2 --out never");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "schedlab: error: --shard '2/2': I must be 0 to 1 (shards are numbered from 0)\n");
  r = sweep("run s.toml --out no/such/dir");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("its parent directory does not exist"), std::string::npos) << r.err;
  r = sweep("merge nowhere");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "schedlab: error: sweep merge 'nowhere': not a directory\n");
}

// `sweep slurm` writes the array and merge scripts and submit.sh (valid shell), and checks its
// options before it writes anything.
TEST_F(Sweep, SlurmWritesScripts) {
  ProcResult r = sweep("slurm s.toml --shards 5 --out sl --partition debug --time 10:00 --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("submit with: bash " + p("sl") + "/slurm/submit.sh"), std::string::npos) << r.out;
  const std::string array = slurp(p("sl/slurm/array.sbatch"));
  EXPECT_NE(array.find("#SBATCH --array=0-4\n"), std::string::npos) << array;
  EXPECT_NE(array.find("--shard \"${SLURM_ARRAY_TASK_ID}/5\""), std::string::npos);
  EXPECT_NE(array.find("#SBATCH --time=10:00\n"), std::string::npos);
  std::string exec = fmt::format("'{}' sweep run '{}'", SCHEDLAB_BINARY, p("s.toml"));
  EXPECT_NE(array.find(exec), std::string::npos) << array;
  EXPECT_TRUE(fs::is_directory(p("sl/logs")));
  EXPECT_TRUE(fs::exists(p("sl/sweep.json")));
  for (const char* f : {"array.sbatch", "merge.sbatch", "submit.sh"})
    EXPECT_EQ(shell(std::string("bash -n sl/slurm/") + f), 0) << f;
  r = sweep("slurm s.toml --shards 5 --out sl2 --time 1h");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--time '1h'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p("sl2")));
  r = sweep("slurm s.toml --shards 37 --out sl2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("the sweep has 36 cells"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p("sl2")));
}

// The shipped examples: one shard of the SM_IDLE sweep runs (2 of its 40 cells); both list.
TEST_F(Sweep, ExamplesRun) {
  const std::string ex = kSource + "/examples/sweeps/";
  ProcResult r = sweep("run " + ex + "sm_idle_ipistorm.toml --shard 7/20 --out ex --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("sweep sm-idle-ipistorm: shard 7/20: 2 of 40 cells, 0 already done, 2 to run"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2/2 cells run"), std::string::npos) << r.err;
  EXPECT_EQ(cells(p("ex")).size(), 2u);
  r = sweep("list " + ex + "idle_spin_tbench.toml");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2 + 50);
  EXPECT_NE(r.out.find("\n49 "), std::string::npos);
  EXPECT_NE(r.out.find(" epyc-milan-2s tbench clients=16 idle_spin 5\n"), std::string::npos) << r.out;
}
