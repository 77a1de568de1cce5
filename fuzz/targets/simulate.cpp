// Short simulations of fuzzed benchmark command lines under --check: a command line that parses
// runs on tiny-4 (or emag-32) for at most 1 ms of simulated time with the model's invariants
// checked after every event. A broken invariant (kernel::CheckError) or a crash is a bug.
// Leading words "+LIST" set the features, "@emag" picks the arm64 machine (no polling idle),
// "%KEY=VALUE" is a --set (extreme costs within their ranges, or a scheduler change's tunable:
// "%change.IDLE_SPIN.max_ns=...").
#include <cctype>

#include "experiment/run.hpp"
#include "fuzz/harness.hpp"

using namespace schedlab;

namespace {
// Counts in the command line bound the work: a fuzzer's `hackbench -g 4096 -f 1024` asks for
// 8 M tasks, which is memory, not a bug. Inputs with a number above this are skipped.
constexpr long kMaxNumber = 64;

bool small_numbers(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    long v = 0;
    size_t digits = 0;
    for (char c : a + " ") {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        if (++digits > 3) return false;
        v = v * 10 + (c - '0');
      } else {
        if (v > kMaxNumber) return false;
        v = 0, digits = 0;
      }
    }
  }
  return true;
}
}  // namespace

SCHEDLAB_FUZZ_TARGET(text) {
  static const machine::Machine tiny = machine::load_profile("tiny-4");
  static const machine::Machine emag = machine::load_profile("emag-32");
  auto argv = fuzz::words(text);
  experiment::RunSpec spec;
  spec.check = true;
  spec.max_simulated_ns = 1'000'000;
  const machine::Machine* base = &tiny;
  std::vector<std::string> sets;
  while (!argv.empty() && (argv[0][0] == '+' || argv[0][0] == '%' || argv[0] == "@emag")) {
    if (argv[0] == "@emag")
      base = &emag;
    else if (argv[0][0] == '%' && kernel::Features::is_change_set(argv[0].substr(1)))
      spec.sets.push_back(argv[0].substr(1));  // applied by run_one (run_features)
    else if (argv[0][0] == '%')
      sets.push_back(argv[0].substr(1));
    else
      spec.features = argv[0].substr(1);
    argv.erase(argv.begin());
  }
  if (argv.empty() || !small_numbers(argv)) return;
  spec.command = argv;
  machine::Machine m = *base;
  fuzz::expect<machine::ProfileError, workload::WorkloadError, experiment::SpecError, experiment::DidNotFinish>([&] {
    for (const auto& a : sets) machine::apply_set(m, a);
    experiment::run_one(m, spec);
  });
}
