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

namespace fs = std::filesystem;
using namespace schedlab;

namespace {

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schedlab-io-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  int entries() const {
    int n = 0;
    for (auto& e : fs::directory_iterator(dir_)) (void)e, ++n;
    return n;
  }
  fs::path dir_;
};

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
  EXPECT_EQ(error_of({{"--json", path("a.json")}, {"--trace", path("a.dat")}}), "");
  EXPECT_EQ(error_of({{"-o", "-", true}}), "");
  EXPECT_EQ(error_of({{"--json", "/dev/null"}}), "");  // an existing device is written in place
  EXPECT_EQ(entries(), 0) << "the probe file must be removed";
}

TEST_F(IoTest, RejectsEmptyDirectoryMissingDirAndUncreatable) {
  EXPECT_EQ(error_of({{"--json", ""}}), "--json: empty file name");
  EXPECT_EQ(error_of({{"--trace", dir_.string()}}), "--trace '" + dir_.string() + "': is a directory (give a file name)");
  EXPECT_NE(error_of({{"--json", path("x/")}}).find("directory"), std::string::npos);
  std::string e = error_of({{"--json", path("nodir/sub/x.json")}});
  EXPECT_EQ(e, "--json '" + path("nodir/sub/x.json") + "': directory '" + path("nodir/sub") + "' does not exist");
  EXPECT_FALSE(fs::exists(path("nodir"))) << "no directory may be created";
  EXPECT_NE(error_of({{"--json", "/proc/schedlab-x.json"}}).find("cannot create a file in '/proc'"), std::string::npos);
  std::ofstream(path("file")) << "x";
  EXPECT_NE(error_of({{"--json", path("file/x.json")}}).find("is not a directory"), std::string::npos);
  EXPECT_NE(error_of({{"--trace", "-"}}).find("standard output"), std::string::npos);
}

TEST_F(IoTest, RejectsAReadOnlyDirectoryUnlessRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write into a read-only directory";
  fs::create_directories(path("ro"));
  chmod(path("ro").c_str(), 0555);
  EXPECT_NE(error_of({{"--json", path("ro/x.json")}}).find("Permission denied"), std::string::npos);
  chmod(path("ro").c_str(), 0755);
}

TEST_F(IoTest, RejectsTheSameFileTwice) {
  EXPECT_EQ(error_of({{"--json", path("x")}, {"--trace", path("x")}}),
            "--json and --trace name the same file '" + path("x") + "'");
  // Spelt differently, and through a symbolic link to an existing file.
  EXPECT_NE(error_of({{"--json", path("x")}, {"--trace", path("./sub/../x")}}), "");
  std::ofstream(path("real")) << "x";
  fs::create_symlink(path("real"), path("link"));
  EXPECT_NE(error_of({{"--json", path("real")}, {"--trace", path("link")}}), "");
  EXPECT_EQ(error_of({{"--json", "-", true}, {"--trace", path("y")}}), "");
}

TEST_F(IoTest, WritesWholeAndReplaces) {
  io::write_file_atomic("--json", path("out"), std::vector<std::string_view>{"ab", "", "cd"});
  EXPECT_EQ(slurp(path("out")), "abcd");
  io::write_file_atomic("--json", path("out"), "new");
  EXPECT_EQ(slurp(path("out")), "new");
  EXPECT_EQ(entries(), 1) << "no temporary file left";
  EXPECT_THROW(io::write_file_atomic("--json", path("nodir/out"), "x"), io::OutputError);
  EXPECT_FALSE(fs::exists(path("nodir")));
  EXPECT_NO_THROW(io::write_file_atomic("--json", "/dev/null", "x"));
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must not be replaced by a file";
}

TEST_F(IoTest, AtomicFileAppearsOnlyOnCommit) {
  {
    io::AtomicFile f("--trace", path("t.dat"));
    f.write("part");
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_FALSE(fs::exists(path("t.dat")));
  }  // destroyed uncommitted
  EXPECT_EQ(entries(), 0);
  io::AtomicFile g("--trace", path("t.dat"));
  g.write("whole");
  g.commit();
  EXPECT_EQ(slurp(path("t.dat")), "whole");
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
      io::AtomicFile f("--trace", path("t.dat"));
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
