// Every [TAG] a profile's comments cite has an entry in docs/sources.md, and every entry is cited;
// every cost of every profile cites one; no profile cites a document outside the repository.
#include <gtest/gtest.h>

#include <filesystem>
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

const std::regex& tag_regex() {
  static const std::regex kTag(R"(\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+|[A-Z]{3,})\])");
  return kTag;
}

// The comment of one profile line (from the first '#'; profiles put no '#' inside strings).
std::string comment_of(const std::string& line) {
  auto hash = line.find('#');
  return hash == std::string::npos ? std::string() : line.substr(hash + 1);
}

// "file.toml:LINE: text" for a failure message.
std::string where(const std::string& name, int line_no, const std::string& line) {
  return name + ".toml:" + std::to_string(line_no) + ": " + line;
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
  const auto profiles = list_profiles();
  ASSERT_GE(profiles.size(), 9u);
  for (const auto& name : profiles) {
    std::string text = slurp(profile_dir() + "/" + name + ".toml");
    bool any = false;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), tag_regex()); it != std::sregex_iterator(); ++it) {
      std::string tag = (*it)[1];
      any = true;
      cited.insert(tag);
      EXPECT_TRUE(entries.count(tag)) << name << ".toml cites [" << tag << "], which docs/sources.md lacks";
    }
    EXPECT_TRUE(any) << name << ".toml cites no docs/sources.md tag";
  }
  // The published microbenchmarks (profiles/microbench/NAME.toml, machines --check) cite tags too.
  static const std::regex kSource(R"re(\nsource = "([A-Z0-9][A-Z0-9-]+)")re");
  int files = 0;
  for (const auto& name : profiles) {
    std::string text = slurp(profile_dir() + "/microbench/" + name + ".toml");
    if (text.empty()) continue;
    ++files;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kSource); it != std::sregex_iterator(); ++it) {
      cited.insert((*it)[1]);
      EXPECT_TRUE(entries.count((*it)[1])) << "microbench/" << name << ".toml cites " << (*it)[1]
                                           << ", which docs/sources.md lacks";
    }
  }
  EXPECT_GE(files, 7);
  for (const auto& e : entries) EXPECT_TRUE(cited.count(e)) << "docs/sources.md entry " << e << " is cited by no profile";
}

// A profile's sources are docs/sources.md entries, not notes outside the repository: a cited
// document (any *.md name) must exist in the repository, and the reference notes' names and
// directory are refused outright.
TEST(machineSources, NoProfileCitesADocumentOutsideTheRepository) {
  namespace fs = std::filesystem;
  const fs::path root(SCHEDLAB_SOURCE_DIR);
  static const std::regex kDoc(R"(([A-Za-z0-9_./-]+)\.md\b)");
  static const std::regex kOutside(R"(costs\.md|kernel-model\.md|design\.md|shared/docs|reference notes)");
  for (const auto& name : list_profiles()) {
    std::istringstream in(slurp(profile_dir() + "/" + name + ".toml"));
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      const std::string c = comment_of(line);
      EXPECT_FALSE(std::regex_search(c, kOutside)) << where(name, no, line) << "\n  cites the reference notes; cite a docs/sources.md tag";
      for (auto it = std::sregex_iterator(c.begin(), c.end(), kDoc); it != std::sregex_iterator(); ++it) {
        const std::string doc = (*it)[1].str() + ".md";
        EXPECT_TRUE(doc.front() != '/' && doc.find("..") == std::string::npos && fs::is_regular_file(root / doc))
            << where(name, no, line) << "\n  cites " << doc << ", which is not a file of this repository";
      }
    }
  }
}

// No magic numbers: every [costs] parameter of every profile cites its source with a tag, or
// says n/a (a cost of a level the machine does not have).
TEST(machineSources, EveryCostCitesATag) {
  static const std::regex kSection(R"(^\s*\[+\s*([A-Za-z_.]+)\s*\]+)");
  static const std::regex kKey(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=)");
  int costs_seen = 0;
  for (const auto& name : list_profiles()) {
    std::istringstream in(slurp(profile_dir() + "/" + name + ".toml"));
    std::string line, section;
    std::smatch m;
    for (int no = 1; std::getline(in, line); ++no) {
      if (std::regex_search(line, m, kSection)) {
        section = m[1];
        continue;
      }
      if (section != "costs" || !std::regex_search(line, m, kKey)) continue;
      ++costs_seen;
      const std::string c = comment_of(line);
      EXPECT_TRUE(std::regex_search(c, tag_regex()) || c.find("n/a") != std::string::npos)
          << where(name, no, line) << "\n  costs." << m[1] << " cites no docs/sources.md tag";
    }
  }
  EXPECT_GT(costs_seen, 9 * 40);  // the loop saw every profile's [costs]
}
