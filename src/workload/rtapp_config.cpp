// rt-app's grammar, modeled on src/rt-app_parse_config.c: events are the keys of a phase that
// start with an event name (so "run0", "sleep_a" work), in file order; properties are looked up
// by name; defaults are rt-app's. See rtapp_config.hpp.
#include "workload/rtapp_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>

#include "workload/json_reader.hpp"
#include "workload/workload.hpp"

namespace schedlab::workload::rtapp {

using json::Value;
using Type = json::Value::Type;

const char* policy_name(Policy p) { return p == Policy::Fifo ? "SCHED_FIFO" : "SCHED_OTHER"; }

const char* event_name(Ev e) {
  switch (e) {
    case Ev::Run: return "run";
    case Ev::Runtime: return "runtime";
    case Ev::Sleep: return "sleep";
    case Ev::Timer: return "timer";
    case Ev::Lock: return "lock";
    case Ev::Unlock: return "unlock";
    case Ev::Wait: return "wait";
    case Ev::Signal: return "signal";
    case Ev::Broad: return "broad";
    case Ev::Sync: return "sync";
    case Ev::Barrier: return "barrier";
    case Ev::Suspend: return "suspend";
    case Ev::Resume: return "resume";
    case Ev::Yield: return "yield";
    case Ev::Fork: return "fork";
    case Ev::Mem: return "mem";
    case Ev::Iorun: return "iorun";
    case Ev::SemPost: return "sem_post";
    case Ev::SemWait: return "sem_wait";
  }
  return "?";
}

bool Task::runs_forever() const {
  if (loop == 0) return false;
  if (loop < 0) return true;
  for (const auto& p : phases)
    if (p.loop <= 0) return true;
  return false;
}

int Config::initial_threads() const {
  int n = 0;
  for (const auto& t : tasks) n += t.instances;
  return n;
}

namespace {

constexpr int kDefaultRtPriority = 10;  // rt-app's DEFAULT_THREAD_PRIORITY
// __setparam_fair() clamps a custom slice to [0.1 ms, 100 ms] (kernel/sched/syscalls.c).
constexpr int64_t kMinSliceNs = 100000, kMaxSliceNs = 100000000;

// How rt-app tells an event from a property: the key starts with an event's name, checked in
// parse_task_event_data()'s order (so "runtime" is runtime, "memory" is mem, "unlock1" unlock).
enum class KeyKind { Event, Memrun, Other };
KeyKind classify(const std::string& k, Ev* ev) {
  auto starts = [&](const char* p) { return k.rfind(p, 0) == 0; };
  struct P {
    const char* prefix;
    Ev ev;
  };
  if (starts("run") || starts("sleep")) {
    *ev = starts("sleep") ? Ev::Sleep : starts("runtime") ? Ev::Runtime : Ev::Run;
    return KeyKind::Event;
  }
  if (starts("memrun")) return KeyKind::Memrun;
  static const P order[] = {
      {"mem", Ev::Mem},         {"iorun", Ev::Iorun},     {"lock", Ev::Lock},
      {"unlock", Ev::Unlock},   {"signal", Ev::Signal},   {"broad", Ev::Broad},
      {"wait", Ev::Wait},       {"sync", Ev::Sync},       {"barrier", Ev::Barrier},
      {"timer", Ev::Timer},     {"resume", Ev::Resume},   {"suspend", Ev::Suspend},
      {"yield", Ev::Yield},     {"fork", Ev::Fork},       {"sem_post", Ev::SemPost},
      {"sem_wait", Ev::SemWait},
  };
  for (const auto& p : order)
    if (starts(p.prefix)) {
      *ev = p.ev;
      return KeyKind::Event;
    }
  return KeyKind::Other;
}

const std::set<std::string> kPhaseKeys = {"loop", "cpus", "nodes_membind", "policy", "priority",
                                          "dl-runtime", "dl-period", "dl-deadline", "util_min",
                                          "util_max", "taskgroup"};
const std::set<std::string> kTaskKeys = {"instance", "delay", "phases", "period", "deadline",
                                         "runtime"};

// What a "policy"/"priority" pair (and a custom slice) of a thread or phase object asks for.
struct SchedSpec {
  std::optional<Policy> policy;
  std::optional<int> prio;
  int64_t runtime_us = 0;  // dl-runtime (or the legacy "runtime" of a thread object)
  int line = 0;            // of the first key that asks for a change
  std::string key;
  int prio_line = 0;       // of "priority", if given
  std::string prio_key;
};

struct Held {
  int res;
  int line;
};

class Reader {
 public:
  Reader(const std::string& file, int nr_cpus, int64_t duration_s)
      : file_(file), nr_cpus_(nr_cpus), duration_override_(duration_s) {
    cfg_.file = file;
  }

  Config run(const std::string& text) {
    Value root = json::parse(text, file_);
    if (!root.is(Type::Object)) fail(root.line, "(top level)", "must be an object with \"tasks\"");
    std::set<std::string> seen;
    const Value* global = nullptr;
    const Value* tasks = nullptr;
    for (const auto& [k, v] : root.members) {
      if (!seen.insert(k).second) {
        warn(v.line, k, "repeated; rt-app (after workgen renames it) reads the first one");
        continue;
      }
      if (k == "global") global = &v;
      else if (k == "tasks") tasks = &v;
      else if (k == "resources") resources(v);
      else warn(v.line, k, "unknown top-level key, ignored as rt-app does");
    }
    parse_global(global);
    if (duration_override_ > 0) cfg_.global.duration_s = duration_override_;
    if (!tasks) fail(1, "tasks", "missing: rt-app needs a \"tasks\" object");
    if (!tasks->is(Type::Object)) type_error(*tasks, "tasks", "an object");
    if (tasks->members.empty()) fail(tasks->line, "tasks", "no task defined");
    tasks_line_ = tasks->line;
    for (const auto& [name, v] : renamed(tasks->members, "tasks")) parse_task(name, *v);
    check();
    return std::move(cfg_);
  }

 private:
  // ---- errors and warnings -----------------------------------------------------------------
  [[noreturn]] void fail(int line, const std::string& key, const std::string& what) const {
    throw WorkloadError(fmt::format("{}:{}: {}: {}", file_, line, key, what));
  }
  [[noreturn]] void type_error(const Value& v, const std::string& key, const char* want) const {
    fail(v.line, key, fmt::format("must be {}, not {}", want, json::type_name(v.type)));
  }
  void warn(int line, const std::string& key, const std::string& what) {
    cfg_.warnings.push_back(fmt::format("{}:{}: {}: {}", file_, line, key, what));
  }

  // ---- typed values -----------------------------------------------------------------------
  int64_t integer(const Value& v, const std::string& key, int64_t lo, int64_t hi) const {
    if (!v.is(Type::Int)) type_error(v, key, "an integer");
    if (v.i < lo || v.i > hi) fail(v.line, key, fmt::format("{} is out of range [{}, {}]", v.i, lo, hi));
    return v.i;
  }
  const std::string& string(const Value& v, const std::string& key) const {
    if (!v.is(Type::String)) type_error(v, key, "a string");
    return v.s;
  }
  bool boolean(const Value& v, const std::string& key) const {
    if (!v.is(Type::Bool)) type_error(v, key, "a boolean");
    return v.b;
  }

  // workgen makes repeated keys of one object unique by appending a number, so repeated task or
  // phase names become distinct tasks or phases: "t", "t" -> "t", "t1".
  std::vector<std::pair<std::string, const Value*>> renamed(
      const std::vector<Value::Member>& members, const std::string& where) {
    std::vector<std::pair<std::string, const Value*>> out;
    std::set<std::string> names;
    int curid = 1;
    for (const auto& [k, v] : members) {
      std::string name = k;
      if (names.count(name)) {
        name = k + std::to_string(curid);
        while (names.count(name)) name = k + std::to_string(++curid);
        warn(v.line, where + "." + k, fmt::format("repeated; renamed '{}' as workgen does", name));
      }
      names.insert(name);
      out.emplace_back(name, &v);
    }
    return out;
  }

  // ---- global -----------------------------------------------------------------------------
  Policy policy(const Value& v, const std::string& key) const {
    const std::string& s = string(v, key);
    if (s == "SCHED_OTHER") return Policy::Other;
    if (s == "SCHED_FIFO") return Policy::Fifo;
    if (s == "SCHED_RR")
      fail(v.line, key, "SCHED_RR is not modeled (the model has no round-robin time slice); use SCHED_FIFO");
    if (s == "SCHED_DEADLINE")
      fail(v.line, key, "SCHED_DEADLINE is not modeled (the model has no deadline class)");
    if (s == "SCHED_BATCH" || s == "SCHED_IDLE")
      fail(v.line, key, fmt::format("{} is not modeled (the model's fair class has no batch/idle policy); use SCHED_OTHER with a nice value in \"priority\"", s));
    fail(v.line, key, fmt::format("invalid policy '{}' (rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR, SCHED_FIFO, SCHED_DEADLINE)", s));
  }

  // "calibration": ns per loop, or the CPU rt-app calibrates on.
  void global_calibration(const Value& v, const std::string& key) {
    Global& gl = cfg_.global;
    if (v.is(Type::Int)) {
      gl.ns_per_loop = integer(v, key, 0, 1000000);
    } else {
      const std::string& s = string(v, key);
      int cpu = -1;
      if (s.rfind("CPU", 0) != 0 || s.size() == 3 ||
          s.find_first_not_of("0123456789", 3) != std::string::npos || s.size() > 9)
        fail(v.line, key, fmt::format("'{}' is neither \"CPU<n>\" nor an integer (ns per loop)", s));
      cpu = std::stoi(s.substr(3));
      if (cpu >= nr_cpus_)
        warn(v.line, key, fmt::format("CPU{} is beyond the machine ({} CPUs); rt-app calibrates where it runs", cpu, nr_cpus_));
      gl.calib_cpu = cpu < nr_cpus_ ? cpu : 0;
    }
  }

  // "log_size": a buffer of N MiB, 0 or "disable" (no logs), "file" / "auto" (log files).
  void global_log_size(const Value& v, const std::string& key) {
    Global& gl = cfg_.global;
    if (v.is(Type::Int)) {
      int64_t mb = integer(v, key, INT32_MIN, 2047);
      if (mb > 0) {
        gl.log = LogMode::Buffer;
        gl.log_buffer_bytes = mb << 20;
      } else if (mb == 0) {
        gl.log = LogMode::Disabled;
      }
    } else {
      const std::string& s = string(v, key);
      if (s == "disable") {
        gl.log = LogMode::Disabled;
      } else if (s == "file" || s == "auto") {
        gl.log = LogMode::File;
      } else {
        gl.log = LogMode::Disabled;
        warn(v.line, key, fmt::format("'{}' is not \"disable\", \"file\" or \"auto\" (rt-app compares them in lower case): logs disabled, as rt-app leaves them", s));
      }
    }
  }

  // "ftrace": true/false or a list of categories; the model writes no trace_marker events.
  void global_ftrace(const Value& v, const std::string& key) {
    bool on = false;
    if (v.is(Type::Bool)) {
      on = v.b;
    } else {
      std::string s = string(v, key);
      size_t pos = 0;
      while (pos <= s.size()) {
        size_t c = s.find(',', pos);
        std::string cat = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        std::string lc = cat;
        for (auto& ch : lc) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lc == "main" || lc == "task" || lc == "loop" || lc == "event" || lc == "stats") on = true;
        else if (lc == "none") on = false;
        else if (!cat.empty()) fail(v.line, key, fmt::format("invalid ftrace category '{}' (main, task, loop, event, stats, none)", cat));
        if (c == std::string::npos) break;
        pos = c + 1;
      }
    }
    if (on)
      warn(v.line, key, "rt-app's trace_marker events are not written; schedlab --trace records the scheduler's events");
  }

  void parse_global(const Value* g) {
    Global& gl = cfg_.global;
    if (!g) {  // rt-app's defaults without a global object: no logs at all
      gl.log = LogMode::Disabled;
      return;
    }
    if (!g->is(Type::Object)) type_error(*g, "global", "an object");
    gl.present = true;
    gl.log = LogMode::File;
    bool calibration = false;
    std::set<std::string> seen;
    for (const auto& [k, v] : g->members) {
      std::string key = "global." + k;
      if (!seen.insert(k).second) {
        warn(v.line, key, "repeated; rt-app (after workgen renames it) reads the first one");
        continue;
      }
      if (k == "duration") {
        gl.duration_s = integer(v, key, INT32_MIN, INT32_MAX);
      } else if (k == "default_policy") {
        gl.default_policy = policy(v, key);
      } else if (k == "calibration") {
        calibration = true;
        global_calibration(v, key);
      } else if (k == "log_size") {
        global_log_size(v, key);
      } else if (k == "logdir") {
        if (v.is(Type::Null))
          fail(v.line, key, "null (rt-app then logs on stdout) is not supported: give a directory");
        gl.logdir = string(v, key);
      } else if (k == "log_basename") {
        gl.log_basename = string(v, key);
      } else if (k == "ftrace") {
        global_ftrace(v, key);
      } else if (k == "gnuplot") {
        if (boolean(v, key)) warn(v.line, key, "gnuplot scripts are not written (the logs are)");
      } else if (k == "lock_pages") {
        gl.lock_pages = boolean(v, key);
        warn(v.line, key, "no meaning in the model (no paging)");
      } else if (k == "pi_enabled") {
        if (boolean(v, key))
          fail(v.line, key, "priority-inheritance mutexes are not modeled (the model has no rt_mutex)");
      } else if (k == "io_device") {
        gl.io_device = string(v, key);
      } else if (k == "mem_buffer_size") {
        gl.mem_buffer_size = integer(v, key, 1, INT32_MAX);
      } else if (k == "cumulative_slack") {
        gl.cumulative_slack = boolean(v, key);
      } else {
        warn(v.line, key, "unknown key, ignored as rt-app does");
      }
    }
    gl.calibration_set = calibration;
  }

  void resources(const Value& v) {
    if (!v.is(Type::Object)) type_error(v, "resources", "an object");
    static const std::set<std::string> kinds = {"mutex", "wait", "signal", "broadcast", "sync",
                                                "sleep", "run", "timer", "barrier"};
    for (const auto& [name, r] : v.members) {
      std::string key = "resources." + name;
      if (!r.is(Type::Object)) type_error(r, key, "an object");
      if (const Value* t = r.find("type"); t && !kinds.count(string(*t, key + ".type")))
        fail(t->line, key + ".type", fmt::format("invalid type of resource '{}'", t->s));
    }
    warn(v.line, "resources", "accepted for backward compatibility; resources are created by the events that use them, as rt-app does");
  }

  // ---- tasks ------------------------------------------------------------------------------
  std::vector<int> cpus(const Value& v, const std::string& key) const {
    if (!v.is(Type::Array)) type_error(v, key, "an array of CPU numbers");
    if (v.items.empty()) fail(v.line, key, "empty CPU set (sched_setaffinity() would fail with EINVAL)");
    std::vector<int> out;
    for (const auto& c : v.items) {
      if (!c.is(Type::Int)) type_error(c, key, "an array of integers");
      if (c.i < 0 || c.i >= nr_cpus_)
        fail(c.line, key, fmt::format("invalid cpu {} (the machine has CPUs 0-{})", c.i, nr_cpus_ - 1));
      out.push_back(static_cast<int>(c.i));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (static_cast<int>(out.size()) == nr_cpus_) out.clear();  // every CPU: the default set
    return out;
  }

  SchedSpec sched_spec(const Value& obj, const std::string& path, bool thread_level) {
    SchedSpec s;
    auto note = [&](const Value& v, const std::string& k) {
      if (s.line == 0) {
        s.line = v.line;
        s.key = path + "." + k;
      }
    };
    if (const Value* v = obj.find("policy")) {
      s.policy = policy(*v, path + ".policy");
      note(*v, "policy");
    }
    if (const Value* v = obj.find("priority")) {
      s.prio = static_cast<int>(integer(*v, path + ".priority", INT32_MIN, INT32_MAX - 1));
      note(*v, "priority");
      s.prio_line = v->line;
      s.prio_key = path + ".priority";
    }
    if (const Value* v = obj.find("dl-runtime")) s.runtime_us = integer(*v, path + ".dl-runtime", 0, INT32_MAX);
    for (const char* k : {"dl-period", "dl-deadline"})
      if (const Value* v = obj.find(k)) {
        integer(*v, path + "." + k, 0, INT32_MAX);
        warn(v->line, path + "." + k, "only SCHED_DEADLINE uses it (not modeled); ignored");
      }
    if (thread_level) {
      // The legacy keys of a thread object, read when dl-* are absent (so a thread without
      // "phases" whose "runtime" event is also read as a custom slice, as rt-app does).
      if (const Value* v = obj.find("runtime"); v && s.runtime_us == 0 && v->is(Type::Int)) {
        s.runtime_us = integer(*v, path + ".runtime", 0, INT32_MAX);
        if (s.runtime_us > 0 && !obj.find("phases"))
          warn(v->line, path + ".runtime", "also read as the legacy dl-runtime (a SCHED_OTHER custom slice), as rt-app does");
      }
      for (const char* k : {"period", "deadline"})
        if (const Value* v = obj.find(k)) {
          integer(*v, path + "." + k, 0, INT32_MAX);
          warn(v->line, path + "." + k, "legacy SCHED_DEADLINE parameter (not modeled); ignored");
        }
    }
    for (const char* k : {"util_min", "util_max"})
      if (const Value* v = obj.find(k)) {
        int64_t u = integer(*v, path + "." + k, -1, INT32_MAX);
        if (u > 1024) fail(v->line, path + "." + k, fmt::format("invalid {} {} (>1024)", k, u));
        warn(v->line, path + "." + k, "uclamp has no meaning in the model (no capacity or frequency)");
      }
    if (const Value* v = obj.find("taskgroup")) {
      const std::string& tg = string(*v, path + ".taskgroup");
      if (!tg.empty() && tg[0] != '/')
        fail(v->line, path + ".taskgroup", fmt::format("taskgroup [{}] has to start with [/]", tg));
      if (!tg.empty())
        fail(v->line, path + ".taskgroup", "cgroup group scheduling is not modeled (the fair class has no task groups)");
    }
    if (const Value* v = obj.find("nodes_membind")) {
      if (!v->is(Type::Array)) type_error(*v, path + ".nodes_membind", "an array of node numbers");
      warn(v->line, path + ".nodes_membind", "no meaning in the model (no memory placement)");
    }
    return s;
  }

  // The attributes after an object asks for `s` (rt-app's set_thread_param()): a policy or a
  // priority changes them; a priority without a policy keeps the policy; a policy without a
  // priority takes that policy's default; dl-runtime alone changes nothing.
  Sched apply(const SchedSpec& s, const Sched& cur, const std::string& path) const {
    if (!s.policy && !s.prio) return cur;
    Sched n;
    n.policy = s.policy ? *s.policy : cur.policy;
    n.prio = s.prio ? *s.prio : (n.policy == Policy::Fifo ? kDefaultRtPriority : 0);
    int line = s.prio ? s.prio_line : s.line;
    const std::string& key = s.prio ? s.prio_key : path;
    if (n.policy == Policy::Fifo && (n.prio < 1 || n.prio > 99))
      fail(line, key, fmt::format("SCHED_FIFO priority {} is out of range [1, 99] (pthread_setschedparam() would fail)", n.prio));
    if (n.policy == Policy::Other && (n.prio < -20 || n.prio > 19))
      fail(line, key, fmt::format("nice {} is out of range [-20, 19] (rt-app: \"sched_setattr ... nice invalid\")", n.prio));
    n.slice_ns = cur.slice_ns;
    if (n.policy == Policy::Other && s.runtime_us > 0)
      n.slice_ns = std::clamp<int64_t>(s.runtime_us * 1000, kMinSliceNs, kMaxSliceNs);
    if (n.policy == Policy::Fifo) n.slice_ns = 0;
    return n;
  }

  int resource(ResKind kind, const std::string& name, int line) {
    for (size_t i = 0; i < cfg_.resources.size(); ++i)
      if (cfg_.resources[i].kind == kind && cfg_.resources[i].name == name) return static_cast<int>(i);
    cfg_.resources.push_back(Resource{kind, name, line});
    return static_cast<int>(cfg_.resources.size() - 1);
  }

  std::string ref_of(const Value& obj, const std::string& key, const char* member) {
    const Value* r = obj.find(member);
    if (!r) fail(obj.line, key, fmt::format("needs \"{}\" (rt-app would use a resource named \"unknown\")", member));
    return string(*r, key + "." + member);
  }

  // A "timer" event (its object's keys checked): its period, mode and timer, one per thread for
  // a name starting with "unique".
  void timer_event(Event& e, const Value& v, const std::string& key, Task& t) {
    e.ref = ref_of(v, key, "ref");
    const Value* p = v.find("period");
    e.us = p ? integer(*p, key + ".period", 0, INT32_MAX) : 0;
    if (e.us == 0) warn(v.line, key, "period 0: the timer never sleeps");
    bool absolute = false;
    if (const Value* m = v.find("mode")) {
      const std::string& ms = string(*m, key + ".mode");
      absolute = ms.rfind("absolute", 0) == 0;
      if (!absolute && ms != "relative")
        warn(m->line, key + ".mode", fmt::format("'{}' is not \"absolute\": relative, as rt-app reads it", ms));
    }
    Resource* r;
    if (e.ref.rfind("unique", 0) == 0) {  // one timer per thread
      e.unique = true;
      auto it = std::find_if(t.local_timers.begin(), t.local_timers.end(),
                             [&](const Resource& x) { return x.name == e.ref; });
      if (it == t.local_timers.end()) {
        t.local_timers.push_back(Resource{ResKind::Timer, e.ref, e.line});
        it = t.local_timers.end() - 1;
      }
      e.res = static_cast<int>(it - t.local_timers.begin());
      r = &*it;
    } else {
      e.res = resource(ResKind::Timer, e.ref, e.line);
      r = &cfg_.resources[static_cast<size_t>(e.res)];
    }
    if (absolute) r->relative = false;
    t.has_timer = true;
  }

  Event event(Ev type, const std::string& k, const Value& v, const std::string& key, Task& t) {
    Event e;
    e.type = type;
    e.key = k;
    e.line = v.line;
    auto str = [&]() -> const std::string& {
      if (!v.is(Type::String))
        fail(v.line, key, fmt::format("{} takes a string (the resource's name), not {}", event_name(type), json::type_name(v.type)));
      return v.s;
    };
    auto obj = [&](std::initializer_list<const char*> known) {
      if (!v.is(Type::Object)) fail(v.line, key, fmt::format("{} takes an object, not {}", event_name(type), json::type_name(v.type)));
      for (const auto& [mk, mv] : v.members) {
        bool ok = false;
        for (const char* kk : known) ok = ok || mk == kk;
        if (!ok) warn(mv.line, key + "." + mk, "unknown key, ignored as rt-app does");
      }
    };
    switch (type) {
      case Ev::Run:
      case Ev::Runtime:
      case Ev::Sleep:
        if (!v.is(Type::Int)) fail(v.line, key, fmt::format("{} takes an integer (usec), not {}", event_name(type), json::type_name(v.type)));
        e.us = integer(v, key, 0, INT32_MAX);
        break;
      case Ev::Mem:
      case Ev::Iorun:
        if (!v.is(Type::Int)) fail(v.line, key, fmt::format("{} takes an integer (bytes), not {}", event_name(type), json::type_name(v.type)));
        e.bytes = integer(v, key, 0, INT32_MAX);
        break;
      case Ev::Lock:
      case Ev::Unlock:
        e.ref = str();
        e.res = resource(ResKind::Mutex, e.ref, e.line);
        break;
      case Ev::Signal:
      case Ev::Broad:
        e.ref = str();
        e.res = resource(ResKind::Cond, e.ref, e.line);
        break;
      case Ev::Wait:
      case Ev::Sync: {
        obj({"ref", "mutex"});
        e.ref = ref_of(v, key, "ref");
        e.res = resource(ResKind::Cond, e.ref, e.line);
        e.dep = resource(ResKind::Mutex, ref_of(v, key, "mutex"), e.line);
        break;
      }
      case Ev::Barrier:
        e.ref = str();
        e.res = resource(ResKind::Barrier, e.ref, e.line);
        cfg_.resources[static_cast<size_t>(e.res)].barrier_users += t.instances;
        break;
      case Ev::Timer: {
        obj({"ref", "period", "mode"});
        timer_event(e, v, key, t);
        break;
      }
      case Ev::Suspend:  // waits on the condition named after the task (the value is ignored)
        e.ref = t.name;
        e.res = resource(ResKind::Cond, t.name, e.line);
        e.dep = resource(ResKind::Mutex, t.name, e.line);
        break;
      case Ev::Resume:
        e.ref = str();
        e.res = resource(ResKind::Cond, e.ref, e.line);
        e.dep = resource(ResKind::Mutex, e.ref, e.line);
        break;
      case Ev::Yield:
        break;
      case Ev::Fork:
        e.ref = str();
        break;
      case Ev::SemPost:
      case Ev::SemWait:
        e.ref = str();
        e.res = resource(ResKind::Sem, e.ref, e.line);
        break;
    }
    return e;
  }

  // A phase object (or a thread object without "phases"). Its events in file order.
  Phase parse_phase(const std::string& name, const Value& obj, const std::string& path, Task& t,
                    bool is_task) {
    Phase ph;
    ph.name = name;
    ph.line = obj.line;
    std::set<std::string> seen;
    for (const auto& [k, v] : obj.members) {
      std::string key = path + "." + k;
      Ev ev{};
      KeyKind kind = classify(k, &ev);
      if (kind == KeyKind::Memrun)
        fail(v.line, key, "memrun is not modeled (the model has no cache or memory hierarchy); use run, mem or iorun");
      if (kind == KeyKind::Event) {
        ph.events.push_back(event(ev, k, v, key, t));
        continue;
      }
      bool known = kPhaseKeys.count(k) || (is_task && kTaskKeys.count(k));
      if (!known) {
        if (!is_task && kTaskKeys.count(k))
          fail(v.line, key, fmt::format("'{}' is a task-level key (rt-app ignores it in a phase)", k));
        fail(v.line, key, fmt::format("unknown event '{}' (rt-app's events: run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, barrier, suspend, resume, yield, fork, mem, iorun, sem_post, sem_wait; rt-app would ignore the key)", k));
      }
      if (!seen.insert(k).second)
        warn(v.line, key, "repeated; rt-app (after workgen renames it) reads the first one");
    }
    if (const Value* l = obj.find("loop")) ph.loop = integer(*l, path + ".loop", INT32_MIN, INT32_MAX);
    if (ph.loop == 0) warn(obj.find("loop")->line, path + ".loop", "0: rt-app runs this phase forever (its loop count never reaches 0)");
    if (ph.events.empty())
      fail(obj.line, path, "no events found (rt-app: \"Task must have events or it's useless\")");
    return ph;
  }

  void parse_task(const std::string& name, const Value& obj) {
    std::string path = "tasks." + name;
    if (!obj.is(Type::Object)) type_error(obj, path, "an object");
    Task t;
    t.name = name;
    t.line = obj.line;
    if (const Value* v = obj.find("instance")) {
      t.instances = static_cast<int>(integer(*v, path + ".instance", 0, kMaxThreads));
    }
    if (const Value* v = obj.find("delay")) t.delay_us = integer(*v, path + ".delay", 0, INT32_MAX);
    std::vector<int> task_cpus;
    if (const Value* v = obj.find("cpus")) task_cpus = cpus(*v, path + ".cpus");
    Sched base;
    base.policy = cfg_.global.default_policy;
    base.prio = base.policy == Policy::Fifo ? kDefaultRtPriority : 0;
    SchedSpec ts = sched_spec(obj, path, true);
    if (!ts.policy) ts.policy = base.policy;  // a thread object falls back on default_policy
    Sched thread_sched = apply(ts, base, ts.key.empty() ? path : ts.key);
    if (thread_sched.policy == Policy::Fifo && ts.runtime_us > 0)
      warn(ts.line ? ts.line : obj.line, path, "dl-runtime (custom slice) applies to SCHED_OTHER only; ignored");

    struct PhaseAttrs {
      SchedSpec sched;
      std::optional<std::vector<int>> cpus;
      int cpus_line = 0;
    };
    std::vector<PhaseAttrs> attrs;
    if (const Value* phases = obj.find("phases")) {
      if (!phases->is(Type::Object)) type_error(*phases, path + ".phases", "an object");
      if (phases->members.empty()) fail(phases->line, path + ".phases", "no phase defined");
      for (const auto& [k, v] : obj.members) {
        Ev ev{};
        if (classify(k, &ev) == KeyKind::Event && !(k == "runtime" && v.is(Type::Int)))
          warn(v.line, path + "." + k, "an event beside \"phases\" is ignored, as rt-app does");
        else if (classify(k, &ev) == KeyKind::Other && !kPhaseKeys.count(k) && !kTaskKeys.count(k))
          warn(v.line, path + "." + k, "unknown key, ignored as rt-app does");
      }
      for (const auto& [pname, pv] : renamed(phases->members, path + ".phases")) {
        std::string ppath = path + ".phases." + pname;
        if (!pv->is(Type::Object)) type_error(*pv, ppath, "an object");
        t.phases.push_back(parse_phase(pname, *pv, ppath, t, false));
        PhaseAttrs a;
        a.sched = sched_spec(*pv, ppath, false);
        if (const Value* c = pv->find("cpus")) {
          a.cpus = cpus(*c, ppath + ".cpus");
          a.cpus_line = c->line;
        }
        attrs.push_back(std::move(a));
      }
      t.loop = -1;
      if (const Value* l = obj.find("loop")) t.loop = integer(*l, path + ".loop", INT32_MIN, INT32_MAX);
    } else {
      t.phases.push_back(parse_phase(name, obj, path, t, true));
      attrs.push_back(PhaseAttrs{});  // the thread's own attributes (rt-app drops the phase's copy)
      t.loop = obj.find("loop") ? 1 : -1;
    }

    // The attributes when the first phase starts are the thread's from its creation; the model
    // cannot change a running thread's policy (no sched_setattr on a running task), so every
    // later phase must keep it. Its affinity may change: each phase starts with
    // sched_setaffinity() to its cpus when they differ from the current ones (set_thread_affinity()).
    auto eff_cpus = [&](const PhaseAttrs& a) { return a.cpus ? *a.cpus : task_cpus; };
    t.sched = apply(attrs[0].sched, thread_sched, attrs[0].sched.key);
    t.cpus = eff_cpus(attrs[0]);
    for (size_t i = 0; i < attrs.size(); ++i) t.phases[i].cpus = eff_cpus(attrs[i]);
    for (size_t i = 1; i < attrs.size(); ++i) {  // (phase 0 again on the next loop: no change)
      const PhaseAttrs& a = attrs[i];
      const Phase& ph = t.phases[i];
      Sched n = apply(a.sched, t.sched, a.sched.key);
      if (n != t.sched)
        fail(a.sched.line, a.sched.key, fmt::format("changes the thread's scheduling from {} priority {} to {} priority {} at phase '{}': the model cannot change a running thread's policy (no sched_setattr()); give every phase the same", policy_name(t.sched.policy), t.sched.prio, policy_name(n.policy), n.prio, ph.name));
    }
    cfg_.tasks.push_back(std::move(t));
  }

  void resolve_fork(Event& e) {
    for (size_t i = 0; i < cfg_.tasks.size(); ++i)
      if (cfg_.tasks[i].name == e.ref) {
        e.fork_task = static_cast<int>(i);
        cfg_.tasks[i].forked = true;
        return;
      }
    fail(e.line, e.key, fmt::format("fork: no task named '{}' (rt-app: \"Can't fork unknown task\")", e.ref));
  }

  // ---- whole-use-case checks ----------------------------------------------------------------
  void check() {
    for (size_t ti = 0; ti < cfg_.tasks.size(); ++ti)
      for (size_t pi = 0; pi < cfg_.tasks[ti].phases.size(); ++pi)
        for (size_t ei = 0; ei < cfg_.tasks[ti].phases[pi].events.size(); ++ei)
          if (cfg_.tasks[ti].phases[pi].events[ei].type == Ev::Fork)
            resolve_fork(cfg_.tasks[ti].phases[pi].events[ei]);
    int64_t threads = 0;
    for (const auto& t : cfg_.tasks) {
      threads += t.instances;
      check_locks(t);
      if (cfg_.global.duration_s <= 0 && t.runs_forever() && (t.instances > 0 || t.forked))
        fail(t.line, "tasks." + t.name, fmt::format("the task loops forever and global.duration is {}: the run would never end (rt-app runs until killed); set global.duration (or rt-app --duration SECONDS) or a finite loop", cfg_.global.duration_s));
    }
    if (threads > kMaxThreads)
      fail(tasks_line_, "tasks", fmt::format("{} threads at start; the model takes at most {}", threads, kMaxThreads));
    if (threads == 0) fail(tasks_line_, "tasks", "every task has \"instance\": 0: no thread would run");
    check_barriers();
  }

  // Each thread's events in order: a mutex is locked once before it is unlocked, a wait or
  // sync holds its mutex (pthread_cond_wait() needs it), and nothing is left locked.
  void check_locks(const Task& t) {
    std::string path = "tasks." + t.name;
    std::vector<Held> held;
    auto is_held = [&](int r) {
      return std::find_if(held.begin(), held.end(), [&](const Held& h) { return h.res == r; }) != held.end();
    };
    auto name = [&](int r) { return cfg_.resources[static_cast<size_t>(r)].name; };
    for (const auto& ph : t.phases) {
      std::vector<Held> at_start = held;
      for (const auto& e : ph.events) {
        std::string key = path + (t.phases.size() > 1 || ph.name != t.name ? ".phases." + ph.name : "") + "." + e.key;
        switch (e.type) {
          case Ev::Lock:
            if (is_held(e.res)) fail(e.line, key, fmt::format("lock '{}': already held by this thread (it would wait for itself forever)", e.ref));
            held.push_back({e.res, e.line});
            break;
          case Ev::Unlock:
            if (!is_held(e.res)) fail(e.line, key, fmt::format("unlock '{}': not locked by this thread", e.ref));
            held.erase(std::find_if(held.begin(), held.end(), [&](const Held& h) { return h.res == e.res; }));
            break;
          case Ev::Wait:
          case Ev::Sync:
            if (!is_held(e.dep))
              fail(e.line, key, fmt::format("{} on '{}' with mutex '{}' not locked by this thread (pthread_cond_wait() needs it: put \"lock\": \"{}\" before)", event_name(e.type), e.ref, name(e.dep), name(e.dep)));
            break;
          case Ev::Suspend:
          case Ev::Resume:
            if (is_held(e.dep))
              fail(e.line, key, fmt::format("{} locks the mutex '{}', which this thread already holds", event_name(e.type), name(e.dep)));
            break;
          default:
            break;
        }
      }
      if (ph.loop != 1 && held.size() > at_start.size())
        fail(held.back().line, path, fmt::format("lock '{}' is not unlocked in phase '{}', which runs {} (its next iteration would lock it again)", name(held.back().res), ph.name, ph.loop > 1 ? fmt::format("{} times", ph.loop) : std::string("forever")));
      if (ph.loop != 1 && held.size() < at_start.size())
        fail(ph.line, path, fmt::format("phase '{}' runs {} but unlocks '{}', which it locked only once before", ph.name, ph.loop > 1 ? fmt::format("{} times", ph.loop) : std::string("forever"), name(at_start.back().res)));
    }
    if (!held.empty())
      fail(held.front().line, path, fmt::format("lock '{}' is never unlocked", name(held.front().res)));
  }

  // rt-app counts a barrier's users at parse time (instances, summed over every use). It opens
  // when that many threads wait, so a thread that uses it twice, or a thread that passes it
  // fewer times than the others, leaves the others waiting forever.
  void check_barriers() {
    for (size_t r = 0; r < cfg_.resources.size(); ++r) {
      const Resource& b = cfg_.resources[r];
      if (b.kind != ResKind::Barrier) continue;
      int threads = 0;
      struct Use {
        const Task* t;
        int64_t passes;  // -1: forever
        int line;
        std::string key;
      };
      std::vector<Use> uses;
      for (const auto& t : cfg_.tasks) {
        int64_t per_loop = 0;
        bool forever = false;
        int line = 0;
        std::string key;
        for (const auto& ph : t.phases) {
          int n = 0;
          for (const auto& e : ph.events)
            if (e.type == Ev::Barrier && e.res == static_cast<int>(r)) {
              ++n;
              if (!line) {
                line = e.line;
                key = "tasks." + t.name + (t.phases.size() > 1 || ph.name != t.name ? ".phases." + ph.name : "") + "." + e.key;
              }
            }
          if (n == 0) continue;
          if (ph.loop <= 0) forever = true;
          per_loop = sat_add(per_loop, sat_mul(n, ph.loop));
        }
        if (!line) continue;
        if (t.loop < 0) forever = true;
        if (t.forked && t.instances == 0)
          warn(line, key, fmt::format("barrier '{}' in a task created by fork: rt-app counts only the threads created at start, so its forks upset the count", b.name));
        if (t.instances == 0) continue;
        threads += t.instances;
        uses.push_back({&t, forever ? -1 : sat_mul(per_loop, std::max<int64_t>(t.loop, 0)), line, key});
      }
      if (b.barrier_users > threads)
        fail(b.line, "barrier " + b.name, fmt::format("counts {} users (one per use and instance) but only {} threads use it: it never opens (a thread using it twice counts twice)", b.barrier_users, threads));
      for (const auto& u : uses)
        if (u.passes != uses.front().passes)
          fail(u.line, u.key, fmt::format("barrier '{}' is reached {} by task '{}' but {} by task '{}': the threads left waiting are never released", b.name, times(u.passes), u.t->name, times(uses.front().passes), uses.front().t->name));
    }
  }
  static std::string times(int64_t n) { return n < 0 ? "forever" : fmt::format("{} times", n); }
  // Pass counts saturate (loops up to 2^31 each): equal large counts stay equal.
  static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
  }
  static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
  }

  const std::string& file_;
  int nr_cpus_;
  int64_t duration_override_ = 0;  // rt-app --duration (0: global.duration)
  int tasks_line_ = 1;
  Config cfg_;
};

}  // namespace

Config parse_config(const std::string& text, const std::string& file_name, int nr_cpus, int64_t duration_s) {
  return Reader(file_name, nr_cpus, duration_s).run(text);
}

}  // namespace schedlab::workload::rtapp
