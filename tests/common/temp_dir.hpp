// A fresh directory per test (named after it), removed afterwards, for tests about output files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace schedlab::fixture {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("schedlab-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  // Entries in the directory: outputs and any temporary file left behind.
  int entries() const {
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir_)) (void)e, ++n;
    return n;
  }
  std::filesystem::path dir_;
};

}  // namespace schedlab::fixture
