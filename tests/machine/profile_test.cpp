#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "helpers.hpp"
#include "machine/machine.hpp"

using namespace schedlab::machine;
using namespace schedlab::machine::testing;

namespace {
const std::vector<std::string> kProfiles = {"emag-32",      "epyc-bergamo-2s", "epyc-milan-2s",
                                            "icx-2s",       "kvm-arm64-guest", "scale-4096",
                                            "spr-1s-56c",   "spr-2s",          "thunderx2-2s",
                                            "tiny-4"};
}

TEST(machineProfile, ListsBuiltInProfiles) { EXPECT_EQ(list_profiles(), kProfiles); }

TEST(machineProfile, EveryProfileLoadsAndValidates) {
  for (const auto& name : list_profiles()) {
    SCOPED_TRACE(name);
    Machine m = load_profile(name);
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(m.source_path, profile_dir() + "/" + name + ".toml");
    EXPECT_FALSE(m.description.empty());
    EXPECT_NO_THROW(validate(m));
  }
}

TEST(machineProfile, LoadsByPath) {
  Machine m = load_profile(profile_path("tiny-4"));
  EXPECT_EQ(m.name, "tiny-4");
  EXPECT_EQ(m, parse_profile(profile_text("tiny-4"), profile_path("tiny-4")));
}

TEST(machineProfile, EpycMilanIdleStates) {
  Machine m = load_profile("epyc-milan-2s");
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_EQ(m.cpuidle_driver, "acpi_idle");
  ASSERT_EQ(m.idle_states.size(), 3u);
  EXPECT_EQ(m.idle_states[0].name, "POLL");
  EXPECT_TRUE(m.idle_states[0].polling);
  const IdleState* c1 = m.idle_state("C1");
  ASSERT_NE(c1, nullptr);
  EXPECT_TRUE(c1->polling);
  EXPECT_EQ(c1->exit_latency_ns, 1000);
  EXPECT_EQ(c1->target_residency_ns, 2000);
  const IdleState* c2 = m.idle_state("C2");
  ASSERT_NE(c2, nullptr);
  EXPECT_FALSE(c2->polling);  // I/O-port C2: waker must send an IPI
  EXPECT_EQ(c2->exit_latency_ns, 400000);
  EXPECT_EQ(c2->target_residency_ns, 800000);
  EXPECT_EQ(m.tunables.hz, 250);
}

TEST(machineProfile, SprIdleStates) {
  Machine m = load_profile("spr-2s");
  std::vector<std::string> names;
  for (const auto& s : m.idle_states) {
    names.push_back(s.name);
    EXPECT_TRUE(s.polling) << s.name;  // POLL and MWAIT states
  }
  EXPECT_EQ(names, (std::vector<std::string>{"POLL", "C1", "C1E", "C6"}));
  EXPECT_EQ(m.idle_state("C6")->exit_latency_ns, 290000);
  EXPECT_EQ(m.idle_state("C6")->target_residency_ns, 800000);
  EXPECT_EQ(m.tunables.hz, 1000);
}

TEST(machineProfile, EmagHasNoPollingState) {
  Machine m = load_profile("emag-32");
  EXPECT_EQ(m.arch, "arm64");
  EXPECT_EQ(m.cpuidle_driver, "psci_idle");
  EXPECT_EQ(m.idle_state("POLL"), nullptr);
  ASSERT_FALSE(m.idle_states.empty());
  EXPECT_EQ(m.idle_states[0].name, "WFI");
  for (const auto& s : m.idle_states) EXPECT_FALSE(s.polling) << s.name;
  EXPECT_EQ(m.topo.threads_per_core, 1);
}

// The scale profile: the largest machine the model accepts, with epyc-milan-2s's costs.
TEST(machineProfile, Scale4096) {
  Machine m = load_profile("scale-4096");
  EXPECT_EQ(m.topo.nr_cpus(), 4096);
  EXPECT_EQ(m.topo.sockets, 8);
  EXPECT_EQ(m.topo.llc_size(), 32);
  EXPECT_EQ(m.topo.nr_llcs(), 128);
  EXPECT_EQ(m.topo.distance(0, 2048), Distance::Smt);
  EXPECT_EQ(m.topo.distance(0, 15), Distance::Llc);
  EXPECT_EQ(m.topo.distance(0, 16), Distance::OtherLlc);
  EXPECT_EQ(m.topo.distance(0, 256), Distance::OtherSocket);
  Machine milan = load_profile("epyc-milan-2s");
  EXPECT_EQ(m.costs, milan.costs);
  EXPECT_EQ(m.tunables, milan.tunables);
  EXPECT_EQ(m.idle_states, milan.idle_states);
}

TEST(machineProfile, EveryProfileRoundTrips) {
  for (const auto& name : kProfiles) {
    SCOPED_TRACE(name);
    Machine m = load_profile(name);
    std::string text = to_toml(m, "written by a test\nsecond line");
    EXPECT_EQ(text.rfind("# written by a test\n# second line\n", 0), 0u);
    EXPECT_EQ(parse_profile(text, m.source_path), m);
  }
}

TEST(machineProfile, RoundTripsOddValues) {
  Machine m = load_profile("tiny-4");
  m.description = "quote \" backslash \\ tab \t newline \n unicode \xc2\xb5s";
  m.idle_states[1].desc = "";
  m.idle_states[2].disabled = true;
  m.costs.smt_pair_throughput = 1.0;  // must be written as a float
  m.noise.jitter_cov = 0.1 + 0.2;     // needs full precision
  m.tunables.idle_poll = true;
  validate(m);
  EXPECT_EQ(parse_profile(to_toml(m), m.source_path), m);
}

TEST(machineProfile, OptionalIdleStateKeys) {
  // desc and disabled may be left out (sysfs defaults: empty, enabled).
  std::string text = replace(profile_text("tiny-4"), "desc = \"MWAIT 0x00\"\n", "");
  text = replace(text, "disabled = false", "", "name = \"C1\"");
  Machine m = parse_profile(text, "x.toml");
  EXPECT_EQ(m.idle_state("C1")->desc, "");
  EXPECT_FALSE(m.idle_state("C1")->disabled);
}

TEST(machineProfile, ResidencyBelowExitLatencyIsAllowed) {
  std::string text = replace(profile_text("tiny-4"), "target_residency_ns = 1000", "target_residency_ns = 500",
                             "name = \"C1\"");
  EXPECT_EQ(parse_profile(text, "x.toml").idle_state("C1")->target_residency_ns, 500);
}

TEST(machineProfile, ParamsCoverEveryField) {
  auto ps = params();
  std::set<std::string> keys;
  for (const auto& p : ps) {
    SCOPED_TRACE(p.key);
    EXPECT_TRUE(keys.insert(p.key).second) << "duplicate";
    EXPECT_LE(p.min, p.max);
    EXPECT_FALSE(p.unit.empty());
    EXPECT_FALSE(p.help.empty());
    bool prefixed = p.key.rfind("costs.", 0) == 0 || p.key.rfind("tunables.", 0) == 0 ||
                    p.key.rfind("noise.", 0) == 0;
    EXPECT_TRUE(prefixed);
  }
  // 50 int64 costs + smt_pair_throughput + 10 optional costs, 9 tunables, 3 noise fields (see
  // struct Costs etc.).
  EXPECT_EQ(ps.size(), 61u + 9u + 3u);
  EXPECT_TRUE(keys.count("costs.ipi_send_ns"));
  EXPECT_TRUE(keys.count("costs.smt_pair_throughput"));
  EXPECT_TRUE(keys.count("tunables.hz"));
  EXPECT_TRUE(keys.count("tunables.idle_poll"));
  EXPECT_TRUE(keys.count("noise.jitter_cov"));
  // Every key appears in every profile, with a source comment on the line.
  for (const auto& name : kProfiles) {
    std::string text = profile_text(name);
    for (const auto& p : ps) {
      std::string field = p.key.substr(p.key.find('.') + 1);
      size_t pos = text.find("\n" + field + " = ");
      ASSERT_NE(pos, std::string::npos) << name << ": " << p.key;
      std::string line = text.substr(pos + 1, text.find('\n', pos + 1) - pos - 1);
      EXPECT_NE(line.find('#'), std::string::npos) << name << ": no source comment: " << line;
    }
  }
  EXPECT_EQ(idle_state_params().size(), 5u);
}

TEST(machineProfile, ReadmeDocumentsEveryKey) {
  std::string readme = read_text(std::string(SCHEDLAB_SOURCE_DIR) + "/profiles/README.md");
  ASSERT_FALSE(readme.empty());
  for (const auto& p : params()) EXPECT_NE(readme.find("`" + p.key + "`"), std::string::npos) << p.key;
  for (const auto& p : idle_state_params())
    EXPECT_NE(readme.find(p.key.substr(p.key.rfind('.') + 1)), std::string::npos) << p.key;
}

TEST(machineProfile, ProfileDirFromEnvironment) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "schedlab_machine_profiles_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(profile_path("tiny-4"), dir / "mine.toml");
  std::ofstream(dir / "notes.txt") << "not a profile\n";
  ASSERT_EQ(setenv("SCHEDLAB_PROFILES", dir.c_str(), 1), 0);
  EXPECT_EQ(profile_dir(), dir.string());
  EXPECT_EQ(list_profiles(), (std::vector<std::string>{"mine"}));
  EXPECT_EQ(load_profile("mine").name, "mine");
  EXPECT_THROW(load_profile("tiny-4"), ProfileError);
  unsetenv("SCHEDLAB_PROFILES");
  fs::remove_all(dir);
  EXPECT_EQ(list_profiles(), kProfiles);
}
