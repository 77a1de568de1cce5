// `--set KEY=VALUE` (one assignment per input line) and `--idle-disable NAMES` (a line starting
// with '!'): a rejected one leaves the machine as it was, an accepted one leaves it valid.
#include "fuzz/harness.hpp"
#include "machine/machine.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  static const machine::Machine base = machine::load_profile("tiny-4");
  machine::Machine m = base;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    machine::Machine before = m;
    try {
      if (!line.empty() && line[0] == '!')
        machine::disable_idle_states(m, {line.substr(1)});
      else
        machine::apply_set(m, line);
      machine::validate(m);  // must not throw: an accepted --set leaves a valid machine
    } catch (const machine::ProfileError&) {
      FUZZ_CHECK(m == before);
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  machine::Machine again = machine::parse_profile(machine::to_toml(m), m.source_path);
  FUZZ_CHECK(again == m);
}
