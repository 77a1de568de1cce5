// `--set KEY=VALUE` (one assignment per input line) and `--idle-disable NAMES` (a line starting
// with '!'): a rejected one leaves the machine as it was, an accepted one leaves it valid. A
// `--set change.NAME.KEY=VALUE` line sets a scheduler change's tunable: a rejected one leaves
// every tunable as it was, an accepted one is within its [min, max].
#include <stdexcept>

#include "fuzz/harness.hpp"
#include "kernel/change.hpp"
#include "kernel/features.hpp"
#include "machine/machine.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  static const machine::Machine base = machine::load_profile("tiny-4");
  machine::Machine m = base;
  kernel::Features f;
  auto tunables = [](const kernel::Features& x) {
    std::vector<int64_t> out;
    for (const auto* c : kernel::change_types())
      for (size_t i = 0; i < c->info.tunables.size(); ++i) {
        int64_t v = x.tunable(c->index, static_cast<int>(i));
        FUZZ_CHECK(v >= c->info.tunables[i].min && v <= c->info.tunables[i].max);
        out.push_back(v);
      }
    return out;
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    machine::Machine before = m;
    if (kernel::Features::is_change_set(line)) {
      std::vector<int64_t> old = tunables(f);
      try {
        f.apply_set(line);
      } catch (const std::invalid_argument&) {
        FUZZ_CHECK(tunables(f) == old);
      }
      tunables(f);
    } else {
      try {
        if (!line.empty() && line[0] == '!')
          machine::disable_idle_states(m, {line.substr(1)});
        else
          machine::apply_set(m, line);
        machine::validate(m);  // must not throw: an accepted --set leaves a valid machine
      } catch (const machine::ProfileError&) {
        FUZZ_CHECK(m == before);
      }
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  machine::Machine again = machine::parse_profile(machine::to_toml(m), m.source_path);
  FUZZ_CHECK(again == m);
}
