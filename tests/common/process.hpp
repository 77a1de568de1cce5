// Runs the schedlab binary for end-to-end tests.
#pragma once
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace schedlab::fixture {

struct ProcResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `SCHEDLAB_BINARY <args>` through the shell (args are passed verbatim), in directory
// `cwd` if one is given.
inline ProcResult run_schedlab(const std::string& args, const std::string& cwd = "") {
  static int counter = 0;
  std::string base = std::string("/tmp/schedlab_test_") + std::to_string(::getpid()) + "_" +
                     std::to_string(counter++);
  std::string cmd = (cwd.empty() ? std::string() : "cd '" + cwd + "' && ") + std::string(SCHEDLAB_BINARY) +
                    " " + args + " >" + base + ".out 2>" + base + ".err </dev/null";
  int rc = std::system(cmd.c_str());
  ProcResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

inline bool file_exists(const std::string& p) { return std::ifstream(p).good(); }

}  // namespace schedlab::fixture
