// Chrome/Perfetto trace-event JSON: one track (thread) per CPU, grouped in one process per
// LLC ("socket S / LLC L"). Complete ("X") slices for the running task, kernel paths and idle
// states; instant ("i") events for wakeups, migrations, IPIs sent and polling wakes; flow
// arrows ("s"/"f") from sched_waking to the wakee's first run and from ipi_raise to ipi_entry.
//
// Slices on a track nest properly: kernel slices are the top level (a kernel slice partially
// overlapping an enclosing one is clipped to it), and task / idle-state slices are split
// around them, so an IPI handler interrupting a task shows as task | ipi_handler | task.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/writer_common.hpp"

namespace schedlab::trace {
namespace {

enum class Cat : uint8_t { Task, Idle, Kernel };

struct Slice {
  int64_t b, e;
  Cat cat;
  int depth = 0;
  std::string name;
  int pid = -1;  // task slices
  int prio = 0;
};

struct Instant {
  int64_t t;
  int cpu;
  std::string name;
  std::string args;  // JSON object text
};

struct Flow {
  int64_t id;
  const char* name;
  int src_cpu;
  int64_t src_t;
  int dst_cpu;
  int64_t dst_t;
  int dst_pid;  // wakee (-1: bind to whatever encloses dst_t)
};

std::string json_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) o += fmt::format("\\u{:04x}", c);
        else o += ch;
    }
  }
  return o;
}

// Nanoseconds as microseconds with three decimals, exactly.
std::string us(int64_t ns) {
  if (ns < 0) return fmt::format("-{}.{:03}", (-ns) / 1000, (-ns) % 1000);
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

class JsonWriter : public TraceSink {
 public:
  JsonWriter(std::string path, std::optional<TraceWindow> window)
      : path_(std::move(path)), window_(window) {
    detail::check_writable(path_);
  }

  void begin(const machine::Machine& m) override {
    topo_ = m.topo;
    have_topo_ = true;
    for (const auto& s : m.idle_states) idle_names_.push_back(s.name);
    ensure_cpu(m.topo.nr_cpus() - 1);
  }

  void end(Time t) override {
    if (done_) return;
    done_ = true;
    int64_t te = t.count();
    for (size_t c = 0; c < cpus_.size(); ++c) {
      close_task(static_cast<int>(c), te);
      close_idle(static_cast<int>(c), te);
    }
    detail::write_file_atomically(path_, render());
  }

  void sched_switch(Time t, int cpu, const TaskInfo& prev, PrevState,
                    const TaskInfo& next) override {
    ensure_cpu(cpu);
    int64_t ts = t.count();
    close_task(cpu, ts);
    // A waking that found the task still running (ttwu_runnable) ends with no new run: no arrow.
    if (prev.pid != 0) pending_wake_.erase(prev.pid);
    Cpu& c = cpus_[cpu];
    if (next.pid != 0) {
      c.running = true;
      c.pid = next.pid;
      c.prio = next.prio;
      c.comm = std::string(detail::clip_comm(next.comm));
      c.since = ts;
      auto w = pending_wake_.find(next.pid);
      if (w != pending_wake_.end()) {
        Flow f = w->second;
        f.dst_cpu = cpu;
        f.dst_t = ts;
        flows_.push_back(f);
        pending_wake_.erase(w);
      }
    }
  }

  void sched_waking(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    ensure_cpu(cpu);
    instant(t, cpu, "sched_waking",
            fmt::format(R"({{"comm":"{}","pid":{},"prio":{},"target_cpu":{}}})",
                        json_escape(detail::clip_comm(p.comm)), p.pid, p.prio, target_cpu));
    pending_wake_[p.pid] = Flow{next_flow_id_++, "wakeup", cpu, t.count(), -1, 0, p.pid};
  }

  void sched_wakeup(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    ensure_cpu(cpu);
    instant(t, cpu, "sched_wakeup",
            fmt::format(R"({{"comm":"{}","pid":{},"prio":{},"target_cpu":{}}})",
                        json_escape(detail::clip_comm(p.comm)), p.pid, p.prio, target_cpu));
  }

  void sched_migrate_task(Time t, int cpu, const TaskInfo& p, int orig, int dest) override {
    ensure_cpu(cpu);
    instant(t, cpu, "sched_migrate_task",
            fmt::format(R"({{"comm":"{}","pid":{},"prio":{},"orig_cpu":{},"dest_cpu":{}}})",
                        json_escape(detail::clip_comm(p.comm)), p.pid, p.prio, orig, dest));
  }

  void cpu_idle(Time t, int cpu, int state) override {
    ensure_cpu(cpu);
    int64_t ts = t.count();
    close_idle(cpu, ts);
    if (state >= 0) {
      Cpu& c = cpus_[cpu];
      c.in_idle = true;
      c.idle_state = state;
      c.idle_since = ts;
    }
  }

  void ipi_raise(Time t, int cpu, int target_cpu, IpiKind kind) override {
    ensure_cpu(cpu);
    ensure_cpu(target_cpu);
    instant(t, cpu, "ipi_raise",
            fmt::format(R"({{"target_cpu":{},"reason":"{}"}})", target_cpu, ipi_reason(kind)));
    cpus_[target_cpu].pending_ipis[static_cast<int>(kind)].push_back(
        Flow{next_flow_id_++, "ipi", cpu, t.count(), target_cpu, 0, -1});
  }

  void ipi_entry(Time t, int cpu, IpiKind kind) override {
    ensure_cpu(cpu);
    auto& q = cpus_[cpu].pending_ipis[static_cast<int>(kind)];
    if (!q.empty()) {
      Flow f = q.front();
      q.pop_front();
      f.dst_t = t.count();
      flows_.push_back(f);
    }
  }

  void ipi_exit(Time, int cpu, IpiKind) override { ensure_cpu(cpu); }

  void wake_idle_without_ipi(Time t, int cpu, int target_cpu) override {
    ensure_cpu(cpu);
    instant(t, cpu, "sched_wake_idle_without_ipi", fmt::format(R"({{"cpu":{}}})", target_cpu));
  }

  void kernel_slice(int cpu, Time b, Time e, KernelPath path) override {
    ensure_cpu(cpu);
    if (e < b) return;
    cpus_[cpu].kernel.push_back(Slice{b.count(), e.count(), Cat::Kernel, 0,
                                      kernel_path_name(path)});
  }

 private:
  struct Cpu {
    bool running = false;  // a task other than idle is current
    int pid = 0, prio = 0;
    std::string comm;
    int64_t since = 0;
    bool in_idle = false;
    int idle_state = 0;
    int64_t idle_since = 0;
    std::vector<Slice> base;    // task and idle-state intervals
    std::vector<Slice> kernel;  // kernel paths
    std::deque<Flow> pending_ipis[2];  // raised, not yet entered; by IpiKind, FIFO
  };

  void ensure_cpu(int cpu) {
    if (cpu < 0) throw std::invalid_argument(fmt::format("trace: negative cpu {}", cpu));
    if (cpu >= static_cast<int>(cpus_.size())) cpus_.resize(cpu + 1);
  }

  void close_task(int cpu, int64_t t) {
    Cpu& c = cpus_[cpu];
    if (!c.running) return;
    c.running = false;
    if (t > c.since) c.base.push_back(Slice{c.since, t, Cat::Task, 0, c.comm, c.pid, c.prio});
  }

  void close_idle(int cpu, int64_t t) {
    Cpu& c = cpus_[cpu];
    if (!c.in_idle) return;
    c.in_idle = false;
    std::string name = c.idle_state < static_cast<int>(idle_names_.size())
                           ? idle_names_[c.idle_state]
                           : fmt::format("state {}", c.idle_state);
    if (t > c.idle_since) c.base.push_back(Slice{c.idle_since, t, Cat::Idle, 0, name});
  }

  void instant(Time t, int cpu, const char* name, std::string args) {
    instants_.push_back(Instant{t.count(), cpu, name, std::move(args)});
  }

  bool in_window(int64_t t) const { return detail::in_window(window_, Time::ns(t)); }

  // Builds the final, properly nested slice list of one CPU (sorted by start, parents first).
  std::vector<Slice> resolve(Cpu& c) const {
    int64_t w0 = window_ ? window_->first.count() : INT64_MIN;
    int64_t w1 = window_ ? window_->second.count() : INT64_MAX;
    std::vector<Slice> out;
    // Kernel slices, clipped to the window, nested by a stack; partial overlaps clipped.
    std::vector<Slice> k;
    for (Slice s : c.kernel) {
      bool zero = s.b == s.e;
      s.b = std::max(s.b, w0);
      s.e = std::min(s.e, w1);
      if (s.e > s.b || (zero && s.b == s.e && s.b >= w0 && s.b < w1)) k.push_back(s);
    }
    std::stable_sort(k.begin(), k.end(), [](const Slice& a, const Slice& b) {
      return a.b != b.b ? a.b < b.b : a.e > b.e;
    });
    std::vector<size_t> stack;  // indices into `out` of the open kernel slices
    std::vector<std::pair<int64_t, int64_t>> top;  // top-level busy intervals
    for (Slice s : k) {
      while (!stack.empty() && out[stack.back()].e <= s.b &&
             !(s.e == s.b && out[stack.back()].b == s.b))
        stack.pop_back();
      if (!stack.empty() && s.e > out[stack.back()].e)
        s.e = out[stack.back()].e;  // partial overlap: clip to the enclosing slice
      s.depth = static_cast<int>(stack.size());
      out.push_back(s);
      if (s.depth == 0 && s.e > s.b) top.emplace_back(s.b, s.e);
      stack.push_back(out.size() - 1);
    }
    // Base (task / idle) intervals: sorted, made disjoint, clipped to the window, then split
    // around the top-level kernel slices.
    std::vector<Slice> base = c.base;
    std::stable_sort(base.begin(), base.end(),
                     [](const Slice& a, const Slice& b) { return a.b < b.b; });
    int64_t last_end = INT64_MIN;
    size_t ti = 0;
    for (Slice s : base) {
      s.b = std::max({s.b, w0, last_end});
      s.e = std::min(s.e, w1);
      if (s.e <= s.b) continue;
      last_end = s.e;
      while (ti < top.size() && top[ti].second <= s.b) ++ti;
      int64_t cur = s.b;
      for (size_t j = ti; j < top.size() && top[j].first < s.e; ++j) {
        if (top[j].first > cur) {
          Slice p = s;
          p.b = cur;
          p.e = top[j].first;
          out.push_back(p);
        }
        cur = std::max(cur, top[j].second);
      }
      if (cur < s.e) {
        Slice p = s;
        p.b = cur;
        out.push_back(p);
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Slice& a, const Slice& b) {
      if (a.b != b.b) return a.b < b.b;
      if (a.depth != b.depth) return a.depth < b.depth;
      return a.e > b.e;
    });
    return out;
  }

  // Where a flow endpoint at time t on a track goes so that it binds to the intended slice:
  // strictly inside the deepest slice containing t (or, for a wakee, its first task slice
  // starting at or after t). Returns false when there is no such slice.
  // Tracks are sorted by start; top-level slices are disjoint and nested ones lie inside
  // them, so both searches look at a handful of slices around t.
  static bool place(const std::vector<Slice>& track, int64_t t, int pid, int64_t* at) {
    auto by_start = [](const Slice& s, int64_t v) { return s.b < v; };
    if (pid >= 0) {
      // The wakee's first task slice at or after t: the first task slice there (kernel slices
      // such as the rest of schedule() come before it).
      for (auto it = std::lower_bound(track.begin(), track.end(), t, by_start);
           it != track.end(); ++it) {
        if (it->cat == Cat::Kernel) continue;
        if (it->cat == Cat::Task && it->pid == pid) {
          *at = it->e - it->b > 1 ? it->b + 1 : it->b;
          return true;
        }
        break;
      }
    }
    // The deepest slice containing t: walk back from the last slice starting at or before t
    // to the top-level slice that contains them.
    auto end = std::upper_bound(track.begin(), track.end(), t,
                                [](int64_t v, const Slice& s) { return v < s.b; });
    const Slice* best = nullptr;
    for (auto it = end; it != track.begin();) {
      --it;
      if (it->b <= t && t < it->e && (!best || it->depth > best->depth)) best = &*it;
      if (it->depth == 0) break;
    }
    if (!best) return false;
    *at = (t == best->b && best->e - best->b > 1) ? t + 1 : t;
    return true;
  }

  std::string render() {
    std::string o;
    o += "{\"traceEvents\":[\n";
    bool first = true;
    auto emit = [&](const std::string& ev) {
      if (!first) o += ",\n";
      first = false;
      o += ev;
    };
    int n = static_cast<int>(cpus_.size());
    auto pid_of = [&](int cpu) {
      return have_topo_ && cpu < topo_.nr_cpus() ? topo_.llc_of(cpu) + 1 : 1;
    };
    // Metadata: processes (LLC groups) and threads (CPUs).
    std::map<int, std::string> procs;
    for (int cpu = 0; cpu < n; ++cpu) {
      int p = pid_of(cpu);
      if (!procs.count(p)) {
        procs[p] = have_topo_ && cpu < topo_.nr_cpus()
                       ? fmt::format("socket {} / LLC {}", topo_.socket_of(cpu), p - 1)
                       : std::string("CPUs");
      }
    }
    for (const auto& [p, name] : procs) {
      emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"{}"}}}})",
                       p, json_escape(name)));
      emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                       p, p));
    }
    for (int cpu = 0; cpu < n; ++cpu) {
      emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"CPU {}"}}}})",
                       pid_of(cpu), cpu, cpu));
      emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                       pid_of(cpu), cpu, cpu));
    }
    std::vector<std::vector<Slice>> tracks(n);
    for (int cpu = 0; cpu < n; ++cpu) tracks[cpu] = resolve(cpus_[cpu]);
    for (int cpu = 0; cpu < n; ++cpu) {
      for (const Slice& s : tracks[cpu]) {
        const char* cat = s.cat == Cat::Task ? "task" : s.cat == Cat::Idle ? "idle" : "kernel";
        std::string args = s.cat == Cat::Task
                               ? fmt::format(R"(,"args":{{"pid":{},"prio":{}}})", s.pid, s.prio)
                               : std::string();
        emit(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})",
                         cat, json_escape(s.name), pid_of(cpu), cpu, us(s.b), us(s.e - s.b), args));
      }
    }
    std::stable_sort(instants_.begin(), instants_.end(),
                     [](const Instant& a, const Instant& b) { return a.t < b.t; });
    for (const Instant& i : instants_) {
      if (!in_window(i.t)) continue;
      emit(fmt::format(R"({{"ph":"i","s":"t","cat":"sched","name":"{}","pid":{},"tid":{},"ts":{},"args":{}}})",
                       i.name, pid_of(i.cpu), i.cpu, us(i.t), i.args));
    }
    for (const Flow& f : flows_) {
      if (!in_window(f.src_t) || !in_window(f.dst_t)) continue;
      int64_t a, b;
      if (!place(tracks[f.src_cpu], f.src_t, -1, &a)) continue;
      if (!place(tracks[f.dst_cpu], f.dst_t, f.dst_pid, &b)) continue;
      if (b < a) b = a;
      emit(fmt::format(R"({{"ph":"s","cat":"{}","name":"{}","id":{},"pid":{},"tid":{},"ts":{}}})",
                       f.name, f.name, f.id, pid_of(f.src_cpu), f.src_cpu, us(a)));
      emit(fmt::format(R"({{"ph":"f","bp":"e","cat":"{}","name":"{}","id":{},"pid":{},"tid":{},"ts":{}}})",
                       f.name, f.name, f.id, pid_of(f.dst_cpu), f.dst_cpu, us(b)));
    }
    o += "\n],\"displayTimeUnit\":\"ns\"}\n";
    return o;
  }

  std::string path_;
  std::optional<TraceWindow> window_;
  machine::Topology topo_;
  bool have_topo_ = false;
  std::vector<std::string> idle_names_;
  std::vector<Cpu> cpus_;
  std::vector<Instant> instants_;
  std::vector<Flow> flows_;
  std::unordered_map<int, Flow> pending_wake_;
  int64_t next_flow_id_ = 1;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<TraceSink> make_json_writer(const std::string& path,
                                            std::optional<TraceWindow> window) {
  return std::make_unique<JsonWriter>(path, window);
}

}  // namespace schedlab::trace
