// `schedlab compare --format perf-sched-stats a.txt [b.txt]`: a file of /proc/schedstat
// snapshots, as a recording, reported alone and diffed against itself.
#include "fuzz/harness.hpp"
#include "report/schedstat.hpp"

using namespace schedlab;

SCHEDLAB_FUZZ_TARGET(text) {
  fuzz::expect<report::SampleError>([&] {
    namespace ss = report::schedstat;
    const ss::Snapshot r = ss::recording_of_file("a.txt", std::string(text));
    (void)ss::perf_sched_stats(r, nullptr);
    (void)ss::perf_sched_stats(r, &r);
    (void)ss::parse("a.txt", ss::to_text(r));
  });
}
