// Every [TAG] a profile's comments cite has an entry in docs/sources.md, and every entry is cited.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "machine/machine.hpp"

using namespace schedlab::machine;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(machineSources, EveryCitedTagHasAnEntry) {
  const std::string sources = slurp(std::string(SCHEDLAB_SOURCE_DIR) + "/docs/sources.md");
  ASSERT_FALSE(sources.empty());
  std::set<std::string> entries;
  static const std::regex kEntry(R"(\n\| ([A-Z0-9][A-Z0-9-]+) \|)");
  for (auto it = std::sregex_iterator(sources.begin(), sources.end(), kEntry); it != std::sregex_iterator(); ++it)
    entries.insert((*it)[1]);
  ASSERT_GT(entries.size(), 10u);
  std::set<std::string> cited;
  static const std::regex kTag(R"(\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+|[A-Z]{3,})\])");
  int profiles_with_tags = 0;
  for (const auto& name : list_profiles()) {
    std::string text = slurp(profile_dir() + "/" + name + ".toml");
    bool any = false;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kTag); it != std::sregex_iterator(); ++it) {
      std::string tag = (*it)[1];
      any = true;
      cited.insert(tag);
      EXPECT_TRUE(entries.count(tag)) << name << ".toml cites [" << tag << "], which docs/sources.md lacks";
    }
    if (any) ++profiles_with_tags;
  }
  EXPECT_GE(profiles_with_tags, 5);
  for (const auto& e : entries) EXPECT_TRUE(cited.count(e)) << "docs/sources.md entry " << e << " is cited by no profile";
}
