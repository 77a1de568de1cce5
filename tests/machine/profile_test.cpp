#include <gtest/gtest.h>

#include "machine/machine.hpp"

using namespace schedlab::machine;

TEST(machineProfile, Tiny4Loads) {
  Machine m = load_profile("tiny-4");
  EXPECT_EQ(m.name, "tiny-4");
  EXPECT_EQ(m.topo.nr_cpus(), 4);
  ASSERT_EQ(m.idle_states.size(), 3u);
  EXPECT_NO_THROW(validate(m));
}

TEST(machineProfile, Tiny4RoundTrips) {
  Machine m = load_profile("tiny-4");
  Machine back = parse_profile(to_toml(m), m.source_path);
  EXPECT_EQ(back, m);
}
