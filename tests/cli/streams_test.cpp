// Standard output and standard error are checked like any output file: a write into /dev/full
// or onto a closed stdout is an error (one line, exit 2), never a silent exit 0.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <string>
#include <vector>

#include "../common/process.hpp"

using namespace schedlab::fixture;

namespace {

// Runs `schedlab <args>` with stdout redirected as `redirect` says ("> /dev/full", ">&-");
// returns the exit status and stderr.
ProcResult run_redirected(const std::string& args, const std::string& redirect) {
  static int counter = 0;
  const std::string err = "/tmp/schedlab_streams_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = std::string(SCHEDLAB_BINARY) + " " + args + " " + redirect + " 2>" + err + " </dev/null";
  int rc = std::system(cmd.c_str());
  ProcResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.err = slurp(err);
  std::remove(err.c_str());
  return r;
}

// Removed when the test program exits.
std::string sample_file(const std::string& name, const std::string& text) {
  static std::vector<std::string> made;
  static const struct Cleanup {
    ~Cleanup() {
      for (const auto& f : made) std::remove(f.c_str());
    }
  } cleanup;
  const std::string p = "/tmp/schedlab_streams_" + std::to_string(::getpid()) + "_" + name;
  made.push_back(p);
  FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return p;
}

std::vector<std::string> commands() {
  return {
    "machines",
    "machines --params",
    "features",
    "--help",
    "run --help",
    "run --machine tiny-4 -- hackbench -g 1 -l 10",
    "ab --machine tiny-4 --base '' --test SM_IDLE --runs 2 --jobs 1 -- hackbench -g 1 -l 10",
    "compare " + sample_file("a.txt", "1\n2\n3\n") + " " + sample_file("b.txt", "2\n3\n4\n"),
  };
}

}  // namespace

TEST(CliStreams, WritingIntoDevFullIsOneError) {
  for (const auto& args : commands()) {
    auto r = run_redirected(args, "> /dev/full");
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("schedlab: error: writing standard output: No space left on device\n"), std::string::npos)
        << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(CliStreams, WritingOntoAClosedStdoutIsOneError) {
  for (const auto& args : commands()) {
    auto r = run_redirected(args, ">&-");
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("schedlab: error: writing standard output: Bad file descriptor\n"), std::string::npos)
        << args << "\n" << r.err;
  }
}

// A closed stdout does not become the descriptor of an output file: --json gets its own file
// and the text that was meant for stdout is reported as not written.
TEST(CliStreams, ClosedStdoutDoesNotCaptureAnOutputFile) {
  const std::string json = "/tmp/schedlab_streams_" + std::to_string(::getpid()) + ".json";
  auto r = run_redirected("run --machine tiny-4 --json " + json + " -- hackbench -g 1 -l 10", ">&-");
  EXPECT_EQ(r.status, 2) << r.err;
  // The failed stdout is found before the file is written: nothing is published.
  EXPECT_FALSE(file_exists(json));
  std::remove(json.c_str());
}

TEST(CliStreams, AnUnwritableStderrIsTheExitStatus) {
  // Nothing to say on stderr: success stays success.
  auto status = [](const std::string& args) {
    int rc = std::system((std::string(SCHEDLAB_BINARY) + " " + args + " >/dev/null 2>/dev/full </dev/null").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(status("machines"), 0);
  // An error whose message cannot be written still exits 2.
  EXPECT_EQ(status("frobnicate"), 2);
}

// `--json -`: stdout is the JSON document alone (it parses whole); the benchmark's text and the
// `schedlab:` summary are on stderr.
TEST(CliStreams, JsonOnStdoutIsAllOfStdout) {
  auto r = run_schedlab("run --machine tiny-4 --json - -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 200);
  EXPECT_NE(r.err.find("Time: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("schedlab: machine=tiny-4"), std::string::npos) << r.err;
  auto s = run_schedlab("run --machine tiny-4 --schedstat - -- hackbench -g 1 -l 10");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out.rfind("version 17\n", 0), 0u) << s.out.substr(0, 200);
  EXPECT_EQ(s.out.find("schedlab:"), std::string::npos);
  auto both = run_schedlab("run --machine tiny-4 --json - --schedstat - -- hackbench -g 1 -l 10");
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.out, "");
  EXPECT_NE(both.err.find("only one of them can be standard output"), std::string::npos) << both.err;
}
