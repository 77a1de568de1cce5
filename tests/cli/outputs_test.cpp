// Every output path (--json, --trace, --output of validate and host) is checked before any
// simulation or real benchmark starts: no results printed, no directory created, exit 2.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "../common/process.hpp"
#include "../common/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace schedlab::fixture;

namespace {

class CliOutputs : public TempDirTest {
 protected:
  // Exit 2 before any work: stdout empty, one error line containing `want`.
  void expect_early_error(const std::string& args, const std::string& want) {
    auto r = run_schedlab(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args << ": results were printed before the error";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << "\nwant: " << want << "\ngot:  " << r.err;
  }
  const std::string bench_ = " -- hackbench -g 1 -l 10";
};

}  // namespace

TEST_F(CliOutputs, RunChecksJsonAndTraceFirst) {
  expect_early_error("run --json " + p("nodir/sub/x.json") + bench_, "--json '" + p("nodir/sub/x.json") + "': directory '" + p("nodir/sub") + "' does not exist");
  EXPECT_FALSE(fs::exists(p("nodir"))) << "the missing directory must not be created";
  expect_early_error("run --trace " + p("nodir/t.dat") + bench_, "--trace '" + p("nodir/t.dat") + "': directory");
  expect_early_error("run --json /proc/schedlab-x.json" + bench_, "cannot create a file in '/proc'");
  expect_early_error("run --json ''" + bench_, "--json: empty file name");
  expect_early_error("run --trace ''" + bench_, "--trace: empty file name");
  expect_early_error("run --json " + dir_.string() + bench_, "is a directory");
  expect_early_error("run --json " + p("x.json") + " --trace " + p("x.json") + bench_,
                     "--json and --trace name the same file");
  expect_early_error("run --trace " + p("t.xyz") + bench_, "unknown trace format '.xyz'");
  EXPECT_EQ(entries(), 0);
}

TEST_F(CliOutputs, ReadOnlyDirectoryUnlessRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write into a read-only directory";
  fs::create_directories(p("ro"));
  chmod(p("ro").c_str(), 0555);
  expect_early_error("run --json " + p("ro/x.json") + bench_, "Permission denied");
  chmod(p("ro").c_str(), 0755);
}

TEST_F(CliOutputs, RunWritesBothAndDevNullWorks) {
  auto r = run_schedlab("run --machine tiny-4 --json " + p("x.json") + " --trace " + p("t.txt") + bench_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(p("x.json")));
  EXPECT_TRUE(fs::is_regular_file(p("t.txt")));
  EXPECT_EQ(entries(), 2) << "no temporary file left";
  auto n = run_schedlab("run --machine tiny-4 --json /dev/null" + bench_);
  EXPECT_EQ(n.status, 0) << n.err;
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(CliOutputs, ValidateChecksOutputBeforeAnyRealBenchmark) {
  // Before the fix these were found only after every real benchmark had run.
  expect_early_error("validate --quick --machine tiny-4 -o ''", "-o: empty file name");
  expect_early_error("validate --quick --machine tiny-4 -o " + p("nodir/v.md"), "directory '" + p("nodir") + "' does not exist");
  expect_early_error("validate --quick --machine tiny-4 -o /proc/v.txt", "cannot create a file in '/proc'");
  EXPECT_FALSE(fs::exists(p("nodir")));
}

TEST_F(CliOutputs, HostChecksOutputBeforeRunningOrProbing) {
  expect_early_error("host bench --runs 1 -o " + p("nodir/s.txt") + " -- hackbench -g 1 -l 10", "does not exist");
  expect_early_error("host bench --runs 1 -o '' -- hackbench", "-o: empty file name");
  expect_early_error("host probe -o " + p("nodir/h.toml"), "does not exist");
  expect_early_error("host calibrate --quick -o " + p("nodir/h.toml"), "does not exist");
  EXPECT_FALSE(fs::exists(p("nodir")));
  // host bench's benchmark flags after -- are the benchmark's (-n / -o are also host bench's).
  expect_early_error("host bench --runs 1 -o " + p("nodir/s.txt") + " -- perf bench sched pipe -l 10 -o x", "does not exist");
}

// rt-app's logs are outputs too: those of the threads created at start are checked with --json
// before the simulation (forked threads' logs are named during the run and checked before any
// file is written).
TEST_F(CliOutputs, RtappLogsAreCheckedWithTheOtherOutputs) {
  std::ofstream(p("uc.json")) << R"({ "global": { "calibration": 100, "logdir": ")" << dir_.string()
                              << R"(" }, "tasks": { "t": { "loop": 3, "run": 100 } } })";
  expect_early_error("run --machine tiny-4 --json " + p("rt-app-t-0.log") + " -- rt-app " + p("uc.json"),
                     "--json and rt-app log name the same file '" + p("rt-app-t-0.log") + "'");
  std::ofstream(p("proc.json")) << R"({ "global": { "calibration": 100, "logdir": "/proc" },
                                       "tasks": { "t": { "loop": 3, "run": 100 } } })";
  expect_early_error("run --machine tiny-4 -- rt-app " + p("proc.json"), "rt-app log '/proc/rt-app-t-0.log': cannot create a file in '/proc'");
  EXPECT_EQ(entries(), 2) << "only the two use cases";
  auto ok = run_schedlab("run --machine tiny-4 --json " + p("out.json") + " -- rt-app " + p("uc.json"));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(fs::is_regular_file(p("rt-app-t-0.log")));
}
