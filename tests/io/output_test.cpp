// io: output paths checked before any work, files written whole, temporary files removed on a
// signal.
#include "io/output.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

using IoTest = fixture::TempDirTest;

std::string error_of(const std::vector<io::OutputPath>& outs) {
  try {
    io::check_output_paths(outs);
  } catch (const io::OutputError& e) {
    return e.what();
  }
  return "";
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_F(IoTest, AcceptsWritablePathsAndLeavesNothing) {
  EXPECT_EQ(error_of({{"--json", p("a.json")}, {"--trace", p("a.dat")}}), "");
  EXPECT_EQ(error_of({{"-o", "-", true}}), "");
  EXPECT_EQ(error_of({{"--json", "/dev/null"}}), "");  // an existing device is written in place
  EXPECT_EQ(entries(), 0) << "the probe file must be removed";
}

TEST_F(IoTest, RejectsEmptyDirectoryMissingDirAndUncreatable) {
  EXPECT_EQ(error_of({{"--json", ""}}), "--json: empty file name");
  EXPECT_EQ(error_of({{"--trace", dir_.string()}}), "--trace '" + dir_.string() + "': is a directory (give a file name)");
  EXPECT_NE(error_of({{"--json", p("x/")}}).find("directory"), std::string::npos);
  std::string e = error_of({{"--json", p("nodir/sub/x.json")}});
  EXPECT_EQ(e, "--json '" + p("nodir/sub/x.json") + "': directory '" + p("nodir/sub") + "' does not exist");
  EXPECT_FALSE(fs::exists(p("nodir"))) << "no directory may be created";
  EXPECT_NE(error_of({{"--json", "/proc/schedlab-x.json"}}).find("cannot create a file in '/proc'"), std::string::npos);
  std::ofstream(p("file")) << "x";
  EXPECT_NE(error_of({{"--json", p("file/x.json")}}).find("is not a directory"), std::string::npos);
  EXPECT_NE(error_of({{"--trace", "-"}}).find("standard output"), std::string::npos);
}

TEST_F(IoTest, RejectsAReadOnlyDirectoryUnlessRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write into a read-only directory";
  fs::create_directories(p("ro"));
  chmod(p("ro").c_str(), 0555);
  EXPECT_NE(error_of({{"--json", p("ro/x.json")}}).find("Permission denied"), std::string::npos);
  chmod(p("ro").c_str(), 0755);
}

TEST_F(IoTest, RejectsTheSameFileTwice) {
  EXPECT_EQ(error_of({{"--json", p("x")}, {"--trace", p("x")}}),
            "--json and --trace name the same file '" + p("x") + "'");
  // Spelt differently, and through a symbolic link to an existing file.
  EXPECT_NE(error_of({{"--json", p("x")}, {"--trace", p("./sub/../x")}}), "");
  std::ofstream(p("real")) << "x";
  fs::create_symlink(p("real"), p("link"));
  EXPECT_NE(error_of({{"--json", p("real")}, {"--trace", p("link")}}), "");
  EXPECT_EQ(error_of({{"--json", "-", true}, {"--trace", p("y")}}), "");
}

TEST_F(IoTest, WritesWholeAndReplaces) {
  io::write_file_atomic("--json", p("out"), std::vector<std::string_view>{"ab", "", "cd"});
  EXPECT_EQ(slurp(p("out")), "abcd");
  io::write_file_atomic("--json", p("out"), "new");
  EXPECT_EQ(slurp(p("out")), "new");
  EXPECT_EQ(entries(), 1) << "no temporary file left";
  EXPECT_THROW(io::write_file_atomic("--json", p("nodir/out"), "x"), io::OutputError);
  EXPECT_FALSE(fs::exists(p("nodir")));
  EXPECT_NO_THROW(io::write_file_atomic("--json", "/dev/null", "x"));
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must not be replaced by a file";
}

TEST_F(IoTest, AtomicFileAppearsOnlyOnCommit) {
  {
    io::AtomicFile f("--trace", p("t.dat"));
    f.write("part");
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_FALSE(fs::exists(p("t.dat")));
  }  // destroyed uncommitted
  EXPECT_EQ(entries(), 0);
  io::AtomicFile g("--trace", p("t.dat"));
  g.write("whole");
  g.commit();
  EXPECT_EQ(slurp(p("t.dat")), "whole");
  EXPECT_EQ(entries(), 1);
}

// A signal while a file is being written (the child holds a temporary file open and waits):
// SIGINT/SIGTERM remove it, end the open progress line and exit with 130/143.
TEST_F(IoTest, SignalRemovesTheTemporaryFileAndExits128PlusSignal) {
  for (int sig : {SIGINT, SIGTERM}) {
    int ready[2], err[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(err), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(err[1], STDERR_FILENO);
      io::install_signal_handlers();
      io::AtomicFile f("--trace", p("t.dat"));
      f.write(std::string(1 << 20, 'x'));
      const std::string line = "\rab: 3/20 runs done";
      ssize_t n = write(STDERR_FILENO, line.data(), line.size());
      io::set_progress_line_open(true);
      n = write(ready[1], "r", 1);
      (void)n;
      for (;;) pause();
    }
    close(ready[1]);
    close(err[1]);
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    EXPECT_EQ(entries(), 1) << "the temporary file exists while it is written";
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_EQ(entries(), 0) << "neither the file nor its temporary may remain";
    std::string stderr_text;
    char buf[256];
    for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) stderr_text.append(buf, n);
    EXPECT_EQ(stderr_text, "\rab: 3/20 runs done\n") << "the progress line is ended";
    close(ready[0]);
    close(err[0]);
  }
}
