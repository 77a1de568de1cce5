// rt-app's JSON grammar (github.com/scheduler-tools/rt-app, doc/tutorial.txt and
// src/rt-app_parse_config.c) read into a use case: global settings, tasks with their phases
// and events, and the named resources the events share. What rt-app rejects, and what the
// model cannot express, is one WorkloadError naming FILE:LINE and the key; what rt-app accepts
// but has no meaning in the model is a warning. docs/workloads.md lists the grammar.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace schedlab::workload::rtapp {

enum class Policy { Other, Fifo };  // the modeled ones (SCHED_OTHER, SCHED_FIFO)

const char* policy_name(Policy p);  // "SCHED_OTHER", "SCHED_FIFO"

// A thread's scheduling attributes.
struct Sched {
  Policy policy = Policy::Other;
  int prio = 0;          // nice (-20..19) for SCHED_OTHER, 1..99 for SCHED_FIFO
  int64_t slice_ns = 0;  // SCHED_OTHER custom slice (sched_attr.sched_runtime); 0 = the default
  bool operator==(const Sched&) const = default;
};

enum class Ev {
  Run, Runtime, Sleep, Timer, Lock, Unlock, Wait, Signal, Broad, Sync, Barrier, Suspend, Resume,
  Yield, Fork, Mem, Iorun, SemPost, SemWait,
};
const char* event_name(Ev e);  // rt-app's event name: "run", "timer", "broad", ...

enum class ResKind { Mutex, Cond, Timer, Barrier, Sem };

// A named resource shared by every thread (rt-app's global resource table). Resources of
// different kinds with the same name are distinct, as in rt-app (suspend "T" uses the condition
// and the mutex named T).
struct Resource {
  ResKind kind = ResKind::Mutex;
  std::string name;
  int line = 0;            // first use
  bool relative = true;    // Timer: false once any use says "mode": "absolute"
  int barrier_users = 0;   // Barrier: rt-app's count (instances, summed over every use)
};

struct Event {
  Ev type = Ev::Run;
  std::string key;     // as written ("run2")
  int line = 0;
  int64_t us = 0;      // run, runtime, sleep: duration; timer: period (usec)
  int64_t bytes = 0;   // mem, iorun
  int res = -1;        // Resource index (mutex, condition, timer, barrier, semaphore)
  int dep = -1;        // the mutex of wait, sync, suspend, resume
  bool unique = false; // timer whose ref starts with "unique": `res` indexes Task::local_timers
  int fork_task = -1;  // fork: index of the task to create
  std::string ref;     // the name as written (messages)
};

struct Phase {
  std::string name;
  int line = 0;
  int64_t loop = 1;    // <= 0: forever (rt-app's phase_loop never reaches it)
  std::vector<Event> events;
  std::vector<int> cpus;  // the thread's affinity in this phase ("cpus" of the phase, else the
                          // thread's; ascending; empty = the default set)
};

struct Task {
  std::string name;
  int line = 0;
  int instances = 1;
  int64_t delay_us = 0;
  int64_t loop = -1;   // times the phases run; -1 (any negative): forever; 0: not at all
  std::vector<Phase> phases;
  Sched sched;                 // in effect from the thread's creation
  std::vector<int> cpus;       // affinity (ascending); empty = the default (all, or taskset's)
  std::vector<Resource> local_timers;  // "unique" timers: one set per thread
  bool has_timer = false;      // some phase uses a timer event
  bool forked = false;         // some fork event creates threads of this task
  bool runs_forever() const;
};

enum class LogMode { Disabled, File, Buffer };

struct Global {
  bool present = false;
  int64_t duration_s = -1;       // <= 0: until every thread has finished
  Policy default_policy = Policy::Other;
  int64_t ns_per_loop = 0;       // "calibration": N; 0 = calibrate on calib_cpu
  int calib_cpu = 0;
  bool calibration_set = false;  // rt-app complains when a global object lacks it
  bool lock_pages = true;
  LogMode log = LogMode::Disabled;
  int64_t log_buffer_bytes = 0;  // LogMode::Buffer: per-thread circular buffer
  std::string logdir = "./";
  std::string log_basename = "rt-app";
  bool cumulative_slack = false;
  std::string io_device = "/dev/null";
  int64_t mem_buffer_size = 4 * 1024 * 1024;
};

struct Config {
  std::string file;
  Global global;
  std::vector<Task> tasks;
  std::vector<Resource> resources;
  std::vector<std::string> warnings;  // "FILE:LINE: key: ..." for stderr
  int initial_threads() const;
};

// Largest number of threads the model creates at start (rt-app has no limit; this keeps a
// mistyped "instance" from exhausting memory).
inline constexpr int kMaxThreads = 65536;

// Parses and checks a use case. Throws workload::WorkloadError "FILE:LINE: KEY: what" on
// malformed JSON, on what rt-app rejects and on what the model cannot express; CPUs must be
// below nr_cpus. Touches no file: the caller checks that logdir exists.
// duration_s > 0 replaces global.duration (rt-app's `--duration`, a schedlab extension: a use case
// that loops forever then runs for that long).
Config parse_config(const std::string& text, const std::string& file_name, int nr_cpus, int64_t duration_s = 0);

}  // namespace schedlab::workload::rtapp
