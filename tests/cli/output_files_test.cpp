// Output files are written as shell redirection writes them: through a symbolic link onto its
// target, and an existing file keeps its mode.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../common/process.hpp"

using namespace schedlab::fixture;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedlab_outfiles_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST(CliOutputFiles, JsonOntoASymlinkWritesThroughIt) {
  const fs::path d = scratch("link");
  fs::create_directories(d / "real");
  std::FILE* f = std::fopen((d / "real" / "out.json").c_str(), "w");
  std::fputs("old\n", f);
  std::fclose(f);
  fs::create_symlink(d / "real" / "out.json", d / "link.json");
  auto r = run_schedlab("run --machine tiny-4 --json " + (d / "link.json").string() + " -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(d / "link.json")));
  const std::string text = slurp((d / "real" / "out.json").string());
  EXPECT_EQ(text.rfind("{", 0), 0u) << text.substr(0, 100);
  // No temporary file left in either directory.
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(d)) n += e.is_regular_file() || e.is_symlink();
  EXPECT_EQ(n, 2u);
  fs::remove_all(d);
}

TEST(CliOutputFiles, AnExistingFileKeepsItsMode) {
  const fs::path d = scratch("mode");
  const fs::path p = d / "out.json";
  std::FILE* f = std::fopen(p.c_str(), "w");
  std::fclose(f);
  ::chmod(p.c_str(), 0600);
  auto r = run_schedlab("run --machine tiny-4 --json " + p.string() + " -- hackbench -g 1 -l 10");
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_FALSE(slurp(p.string()).empty());
  fs::remove_all(d);
}
