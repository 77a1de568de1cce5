// schedlab::report::schedstat: /proc/schedstat (version 17) snapshots — written as the kernel's
// show_schedstat() prints them, read back from such files (schedlab's or a real kernel's) — and
// `perf sched stats` reports of recordings (a recording is the change between two snapshots):
// the diff of two recordings as `perf sched stats diff` prints it, or one as `perf sched stats
// report` does. docs/reports.md describes the fields and the layout's sources.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "report/samples.hpp"

namespace schedlab::report::schedstat {

inline constexpr int kVersion = 17;
inline constexpr int kCpuFields = 9;      // after "cpuN": yld_count 0 sched_count ... pcount
inline constexpr int kDomainFields = 45;  // after "domainN NAME MASK"
inline constexpr int kLbFields = 11;      // per idle type: lb_count ... lb_nobusyg
inline constexpr int kIdleTypes = 3;      // busy, idle, newly idle (v16+ order)

// Index of a CPU line's fields (v17).
enum CpuField : int {
  kYldCount, kArrayExp, kSchedCount, kSchedGoidle, kTtwuCount, kTtwuLocal, kRqCpuTime, kRunDelay,
  kPcount
};
// Index of a domain line's fields: lb fields at type * kLbFields + LbField, then the rest.
enum LbField : int {
  kLbCount, kLbBalanced, kLbFailed, kLbImbalanceLoad, kLbImbalanceUtil, kLbImbalanceTask,
  kLbImbalanceMisfit, kLbGained, kLbHotGained, kLbNobusyq, kLbNobusyg
};
enum DomainField : int {
  kAlbCount = kIdleTypes * kLbFields, kAlbFailed, kAlbPushed, kSbeCount, kSbeBalanced, kSbePushed,
  kSbfCount, kSbfBalanced, kSbfPushed, kTtwuWakeRemote, kTtwuMoveAffine, kTtwuMoveBalance
};

struct Domain {
  int index = 0;         // domainN, from the CPU's lowest domain up
  std::string name;      // SMT, MC, PKG, NUMA
  std::string cpumask;   // %*pb: hex, comma every 32 bits
  std::array<uint64_t, kDomainFields> v{};
};

struct Cpu {
  int cpu = 0;
  std::array<uint64_t, kCpuFields> v{};
  std::vector<Domain> domains;
};

struct Snapshot {
  int version = kVersion;
  uint64_t timestamp = 0;  // jiffies
  std::vector<Cpu> cpus;
};

// The text of one snapshot, as /proc/schedstat prints it.
std::string to_text(const Snapshot& s);
// Every snapshot in a text (each starts with its "version" line). Throws SampleError
// ("NAME:LINE: ...") on a version other than 17, a malformed line, or no snapshot.
std::vector<Snapshot> parse(const std::string& name, const std::string& text);
// A recording: after - before, field by field (the timestamp too). Throws SampleError naming
// `name` if the two do not have the same CPUs and domains, or a counter went backwards.
Snapshot recording(const std::string& name, const Snapshot& before, const Snapshot& after);
// The recording of a file: the change from its first snapshot to its last (a file needs two).
Snapshot recording_of_file(const std::string& name, const std::string& text);
// Two recordings of the same machine as one (counters and timestamps added).
Snapshot add(const Snapshot& a, const Snapshot& b);

// cpumask_pr_args() / %*pb: the CPUs as hex, most significant first, a comma every 32 bits; as
// many digits as nr_cpu_ids needs.
std::string cpumask_hex(std::span<const int> cpus, int nr_cpus);
// The CPU list of such a mask ("0-3,8").
std::string cpulist_of_mask(const std::string& hex);

// `perf sched stats diff` of two recordings (summary of all CPUs: each field's mean over the
// CPUs), or with `b` null `perf sched stats report` of one (the summary, then every CPU).
// Throws SampleError if the recordings' CPUs or domains do not match.
std::string perf_sched_stats(const Snapshot& a, const Snapshot* b);

}  // namespace schedlab::report::schedstat
