// A machine profile (profiles/*.toml, --machine FILE): malformed input is a ProfileError; an
// accepted profile serialises back to TOML that parses to the same machine.
#include "fuzz/harness.hpp"
#include "machine/machine.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<machine::ProfileError>([&] {
    machine::Machine m = machine::parse_profile(std::string(text), "fuzz.toml");
    machine::Machine again = machine::parse_profile(machine::to_toml(m), "fuzz.toml");
    FUZZ_CHECK(again == m);
  });
}
