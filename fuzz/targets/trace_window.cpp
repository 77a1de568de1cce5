// --trace-window START,END: bad input is a TraceError; an accepted window is non-empty.
#include "fuzz/harness.hpp"
#include "trace/writers.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<trace::TraceError>([&] {
    auto w = trace::parse_trace_window(std::string(text));
    FUZZ_CHECK(w.second > w.first);
    FUZZ_CHECK(w.first.count() >= 0);
  });
}
