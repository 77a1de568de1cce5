// Background activity of an otherwise idle machine: what runs on it when nothing of ours does
// (interrupts, kernel threads, other processes), and what a running task loses to it (the tick,
// other interrupts, the host stealing the vCPU). Recorded by `schedlab host calibrate` into the
// profile's [[background]] tables (docs/variance.md, "Background activity"); no tracefs needed:
// /proc/interrupts, /proc/softirqs, /proc/stat and every task's stat/schedstat, read twice, plus a
// gap scan (a pinned thread per CPU reading the clock in a loop and keeping every gap).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::host {

// ---- /proc snapshots (parsers take the file text, so tests feed recorded files) ----------------

struct IrqLine {
  std::string name;               // "LOC", "RES", "36", ...
  std::string desc;               // "Local timer interrupts", "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0"
  std::vector<long long> per_cpu;
};
// /proc/interrupts; lines without per-CPU counts (ERR, MIS) are left out.
std::vector<IrqLine> parse_interrupts(const std::string& text);
// /proc/softirqs: name -> per-CPU counts.
std::map<std::string, std::vector<long long>> parse_softirqs(const std::string& text);

struct TaskSample {
  int pid = 0, tid = 0;
  std::string comm;
  bool kthread = false;      // PF_KTHREAD in the stat flags
  int cpu = -1;              // last CPU it ran on
  long long run_ns = 0;      // schedstat: time on the CPU
  long long wait_ns = 0;     // schedstat: time runnable, waiting
  long long slices = 0;      // schedstat: times it ran (timeslices)
  long long start_ticks = -1;  // stat field 22 (starttime, clock ticks after boot): with the tid,
                               // what tells the same task apart in two snapshots (-1: unknown)
};
// One task from /proc/PID/task/TID/stat and .../schedstat texts; false if malformed.
// A kworker's comm names the workqueue it last ran ("kworker/0:1-events" one moment,
// "kworker/0:1-mm_percpu_wq" the next): tasks are matched between snapshots by tid and
// starttime, never by comm.
bool parse_task(const std::string& stat, const std::string& schedstat, TaskSample* t);

struct ProcSnapshot {
  double wall_s = 0;
  double busy_s = -1;  // /proc/stat `cpu` line: all CPUs' non-idle time (user .. softirq), s; -1: unknown
  std::vector<IrqLine> irqs;
  std::map<std::string, std::vector<long long>> softirqs;
  std::vector<TaskSample> tasks;
  int nr_cpus = 0;
};
// Reads this machine's snapshot; tasks of process `skip_pid` (ours) are left out. `proc_root`
// is /proc, or a fixture tree laid out like it (stat, interrupts, softirqs, PID/task/TID/...).
ProcSnapshot read_proc_snapshot(int skip_pid, const std::string& proc_root = "/proc");

// ---- gap scan ------------------------------------------------------------------------------

struct GapScan {
  int cpu = -1;
  double seconds = 0;
  double read_ns = 0;                 // mean cost of one clock read (the resolution)
  std::vector<int64_t> start_ns;      // gap start, from the scan's start
  std::vector<int64_t> length_ns;     // gap length
  long long involuntary_switches = 0; // the scanning thread's, during the scan
  long long irqs = 0;                 // interrupts on this CPU during the scan (/proc/interrupts)
  long long local_timer = 0;          // of which LOC (local timer: the tick and hrtimers)
  long long steal_ticks = 0;          // /proc/stat steal of this CPU during the scan (USER_HZ)
};
// Spins on every given CPU at once for `seconds`, keeping gaps longer than `threshold_ns`.
std::vector<GapScan> scan_gaps(const std::vector<int>& cpus, double seconds, int64_t threshold_ns = 500);

// The gaps of one scan split into those phase-locked to the tick (start within +-2% of the tick
// period of the most common phase) and the rest.
struct GapClasses {
  std::vector<double> tick;   // ns
  std::vector<double> other;  // ns
  double tick_phase_ns = 0;   // where in the tick period the tick gaps start
};
GapClasses classify_gaps(const GapScan& g, int64_t tick_period_ns);

// ---- the [[background]] tables -----------------------------------------------------------------

struct BackgroundInput {
  ProcSnapshot idle_before, idle_after;  // around an idle phase (nothing of ours runs)
  std::vector<GapScan> scans;            // the gap scan, one per CPU
  int64_t tick_period_ns = 4000000;
  int64_t short_gap_ns = 50000;          // scans without counts: non-tick gaps below this are interrupts
};
struct BackgroundResult {
  std::vector<machine::BackgroundActivity> activities;
  // The tick as a running task sees it (median and lognormal sigma of the tick gaps); 0 if no
  // tick was found.
  double tick_ns = 0, tick_sigma = 0;
  int tick_gaps = 0;
  std::vector<std::string> notes;  // one line per finding, for the profile header
  std::vector<std::string> warnings;  // findings that make the tables doubtful (calibrate warns)
};
BackgroundResult background_from(const BackgroundInput& in);

}  // namespace schedlab::host
