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
#include <array>
#include <cstring>
#include <memory>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/output.hpp"
#include "trace/spill.hpp"
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

// A resolved slice as flows look it up (fixed size, kept in a temporary file).
struct TrackRec {
  int64_t b, e;
  int32_t depth, pid;
  uint8_t cat;
  uint8_t pad[7];
};
static_assert(sizeof(TrackRec) == 32);

// Every event is kept in memory-bounded sorters (detail::SpillSorter, on disk beyond their
// limit) until end(): kernel slices by (CPU, start, -end), task/idle intervals by (CPU,
// start), instants by time, flows in order. end() resolves one CPU's track at a time.
class JsonWriter : public TraceSink {
 public:
  JsonWriter(std::string path, std::optional<TraceWindow> window)
      : path_(std::move(path)), window_(window) {
    detail::check_writable(path_);
    w0_ = window_ ? window_->first.count() : INT64_MIN;
    w1_ = window_ ? window_->second.count() : INT64_MAX;
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
    render_and_write();
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
        add_flow(f);
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
      add_flow(f);
    }
  }

  void ipi_exit(Time, int cpu, IpiKind) override { ensure_cpu(cpu); }

  void lock_contended(Time b, Time e, int cpu, LockClass cls, int id, int holder) override {
    ensure_cpu(cpu);
    std::string args = fmt::format(R"({{"lock":"{}:{}","holder":{}}})", lock_class_name(cls), id, holder);
    instant(b, cpu, "contention_begin", args);
    instant(e, cpu, "contention_end", args);
  }

  void wake_idle_without_ipi(Time t, int cpu, int target_cpu) override {
    ensure_cpu(cpu);
    instant(t, cpu, "sched_wake_idle_without_ipi", fmt::format(R"({{"cpu":{}}})", target_cpu));
  }

  // Clipped to the window here: the order below is that of the clipped slices.
  void kernel_slice(int cpu, Time b, Time e, KernelPath path) override {
    ensure_cpu(cpu);
    if (e < b) return;
    int64_t sb = b.count(), se = e.count();
    bool zero = sb == se;
    sb = std::max(sb, w0_);
    se = std::min(se, w1_);
    if (!(se > sb || (zero && sb == se && sb >= w0_ && sb < w1_))) return;
    char p = static_cast<char>(path);
    kernel_.add({cpu, sb, -se, 0}, std::string_view(&p, 1));
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;  // bytes per write of the file

  struct Cpu {
    bool running = false;  // a task other than idle is current
    int pid = 0, prio = 0;
    std::string comm;
    int64_t since = 0;
    bool in_idle = false;
    int idle_state = 0;
    int64_t idle_since = 0;
    std::deque<Flow> pending_ipis[2];  // raised, not yet entered; by IpiKind, FIFO
  };

  void ensure_cpu(int cpu) {
    if (cpu < 0) throw std::invalid_argument(fmt::format("trace: negative cpu {}", cpu));
    if (cpu >= static_cast<int>(cpus_.size())) cpus_.resize(cpu + 1);
  }

  // A task / idle interval: payload end, cat, pid, prio, name.
  static std::string slice_payload(int64_t e, Cat cat, int pid, int prio, std::string_view name) {
    std::string s(17, '\0');
    std::memcpy(s.data(), &e, 8);
    s[8] = static_cast<char>(cat);
    std::memcpy(s.data() + 9, &pid, 4);
    std::memcpy(s.data() + 13, &prio, 4);
    s.append(name);
    return s;
  }
  static Slice slice_of(int64_t b, std::string_view p) {
    Slice s{b, 0, Cat::Task};
    std::memcpy(&s.e, p.data(), 8);
    s.cat = static_cast<Cat>(p[8]);
    std::memcpy(&s.pid, p.data() + 9, 4);
    std::memcpy(&s.prio, p.data() + 13, 4);
    s.name = std::string(p.substr(17));
    return s;
  }

  void close_task(int cpu, int64_t t) {
    Cpu& c = cpus_[cpu];
    if (!c.running) return;
    c.running = false;
    if (t > c.since) base_.add({cpu, c.since, 0, 0}, slice_payload(t, Cat::Task, c.pid, c.prio, c.comm));
  }

  void close_idle(int cpu, int64_t t) {
    Cpu& c = cpus_[cpu];
    if (!c.in_idle) return;
    c.in_idle = false;
    std::string name = c.idle_state < static_cast<int>(idle_names_.size())
                           ? idle_names_[c.idle_state]
                           : fmt::format("state {}", c.idle_state);
    if (t > c.idle_since) base_.add({cpu, c.idle_since, 0, 0}, slice_payload(t, Cat::Idle, -1, 0, name));
  }

  void instant(Time t, int cpu, const char* name, const std::string& args) {
    std::string p(4, '\0');
    int32_t c = cpu;
    std::memcpy(p.data(), &c, 4);
    p += name;
    p += '\0';
    p += args;
    instants_.add({t.count(), 0, 0, 0}, p);
  }

  void add_flow(const Flow& f) {
    flows_.add({0, 0, 0, 0}, std::string_view(reinterpret_cast<const char*>(&f), sizeof f));
  }

  bool in_window(int64_t t) const { return detail::in_window(window_, Time::ns(t)); }

  // One CPU's final, properly nested slice list (sorted by start, parents first) into `out`,
  // keyed (start, depth, -end, 0 for kernel / 1 for task and idle): the order a stable sort of
  // the kernel slices followed by the task/idle pieces gives.
  void resolve(int cpu, detail::SpillSorter& out) {
    // Kernel slices (clipped to the window when added), sorted by (start, -end), nested by a
    // stack; partial overlaps clipped to the enclosing slice.
    detail::SpillSorter top(limit_);  // top-level busy intervals, in order
    std::vector<std::pair<int64_t, int64_t>> stack;  // the open kernel slices
    for (; kernel_.valid() && kernel_.key()[0] == cpu; kernel_.next()) {
      int64_t b = kernel_.key()[1], e = -kernel_.key()[2];
      while (!stack.empty() && stack.back().second <= b && !(e == b && stack.back().first == b))
        stack.pop_back();
      if (!stack.empty() && e > stack.back().second) e = stack.back().second;
      int64_t depth = static_cast<int64_t>(stack.size());
      out.add({b, depth, -e, 0}, slice_payload(e, Cat::Kernel, -1, 0,
                                              kernel_path_name(static_cast<KernelPath>(
                                                  kernel_.payload()[0]))));
      if (depth == 0 && e > b) {
        int64_t be[2] = {b, e};
        top.add({0, 0, 0, 0}, std::string_view(reinterpret_cast<const char*>(be), sizeof be));
      }
      stack.emplace_back(b, e);
    }
    top.finish();
    // Task / idle intervals: sorted, made disjoint, clipped to the window, then split around
    // the top-level kernel slices (those that overlap the interval, held in `win`).
    std::deque<std::pair<int64_t, int64_t>> win;
    auto pull = [&] {
      if (!top.valid()) return false;
      int64_t be[2];
      std::memcpy(be, top.payload().data(), sizeof be);
      win.emplace_back(be[0], be[1]);
      top.next();
      return true;
    };
    int64_t last_end = INT64_MIN;
    for (; base_.valid() && base_.key()[0] == cpu; base_.next()) {
      Slice s = slice_of(base_.key()[1], base_.payload());
      s.b = std::max({s.b, w0_, last_end});
      s.e = std::min(s.e, w1_);
      if (s.e <= s.b) continue;
      last_end = s.e;
      for (;;) {
        if (win.empty() && !pull()) break;
        if (win.front().second > s.b) break;
        win.pop_front();
      }
      while ((win.empty() || win.back().first < s.e) && pull()) {
      }
      auto piece = [&](int64_t b, int64_t e) {
        out.add({b, 0, -e, 1}, slice_payload(e, s.cat, s.pid, s.prio, s.name));
      };
      int64_t cur = s.b;
      for (size_t j = 0; j < win.size() && win[j].first < s.e; ++j) {
        if (win[j].first > cur) piece(cur, win[j].first);
        cur = std::max(cur, win[j].second);
      }
      if (cur < s.e) piece(cur, s.e);
    }
    out.finish();
  }

  // A CPU's resolved slices as flows look them up: records [first, first + n) of tracks_.
  struct Track {
    uint64_t first = 0, n = 0;
  };

  // Record i of tracks_, through a small direct-mapped cache of blocks.
  const TrackRec& rec(uint64_t i) {
    constexpr uint64_t kBlock = 256;
    constexpr size_t kSlots = 64;
    uint64_t blk = i / kBlock;
    auto& slot = cache_[blk % kSlots];
    if (slot.first != blk || slot.second.empty()) {
      slot.first = blk;
      slot.second.resize(kBlock);
      size_t got = tracks_->read(blk * kBlock * sizeof(TrackRec),
                                 reinterpret_cast<char*>(slot.second.data()),
                                 kBlock * sizeof(TrackRec));
      slot.second.resize(got / sizeof(TrackRec));
    }
    return slot.second[i % kBlock];
  }

  // Where a flow endpoint at time t on a track goes so that it binds to the intended slice:
  // strictly inside the deepest slice containing t (or, for a wakee, its first task slice
  // starting at or after t). Returns false when there is no such slice.
  // Tracks are sorted by start; top-level slices are disjoint and nested ones lie inside
  // them, so both searches look at a handful of slices around t.
  bool place(const Track& tr, int64_t t, int pid, int64_t* at) {
    auto bound = [&](bool upper) {  // first index with b >= t (lower) or b > t (upper)
      uint64_t lo = 0, hi = tr.n;
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t b = rec(tr.first + mid).b;
        if (upper ? !(t < b) : b < t) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    if (pid >= 0) {
      // The wakee's first task slice at or after t: the first task slice there (kernel slices
      // such as the rest of schedule() come before it).
      for (uint64_t i = bound(false); i < tr.n; ++i) {
        const TrackRec& r = rec(tr.first + i);
        if (r.cat == static_cast<uint8_t>(Cat::Kernel)) continue;
        if (r.cat == static_cast<uint8_t>(Cat::Task) && r.pid == pid) {
          *at = r.e - r.b > 1 ? r.b + 1 : r.b;
          return true;
        }
        break;
      }
    }
    // The deepest slice containing t: walk back from the last slice starting at or before t
    // to the top-level slice that contains them.
    bool found = false;
    TrackRec best{};
    for (uint64_t i = bound(true); i > 0;) {
      --i;
      TrackRec r = rec(tr.first + i);
      if (r.b <= t && t < r.e && (!found || r.depth > best.depth)) {
        best = r;
        found = true;
      }
      if (r.depth == 0) break;
    }
    if (!found) return false;
    *at = (t == best.b && best.e - best.b > 1) ? t + 1 : t;
    return true;
  }

  void render_and_write() {
    io::AtomicFile file("--trace", path_);
    std::string o = "{\"traceEvents\":[\n";
    bool first = true;
    auto emit = [&](const std::string& ev) {
      if (!first) o += ",\n";
      first = false;
      o += ev;
      if (o.size() >= kChunk) {
        file.write(o);
        o.clear();
      }
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
    // The slices, one CPU at a time; each CPU's resolved track is kept for the flows.
    kernel_.finish();
    base_.finish();
    tracks_ = std::make_unique<detail::TempFile>();
    std::vector<Track> tracks(n);
    for (int cpu = 0; cpu < n; ++cpu) {
      detail::SpillSorter out(limit_);
      resolve(cpu, out);
      tracks[cpu].first = tracks_->size() / sizeof(TrackRec);
      for (; out.valid(); out.next()) {
        const auto& k = out.key();
        Slice s = slice_of(k[0], out.payload());
        TrackRec r{s.b, s.e, static_cast<int32_t>(k[1]), s.pid, static_cast<uint8_t>(s.cat), {}};
        tracks_->append(std::string_view(reinterpret_cast<const char*>(&r), sizeof r));
        ++tracks[cpu].n;
        const char* cat = s.cat == Cat::Task ? "task" : s.cat == Cat::Idle ? "idle" : "kernel";
        std::string args = s.cat == Cat::Task
                               ? fmt::format(R"(,"args":{{"pid":{},"prio":{}}})", s.pid, s.prio)
                               : std::string();
        emit(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})",
                         cat, json_escape(s.name), pid_of(cpu), cpu, us(s.b), us(s.e - s.b), args));
      }
    }
    instants_.finish();
    for (; instants_.valid(); instants_.next()) {
      int64_t t = instants_.key()[0];
      if (!in_window(t)) continue;
      std::string_view p = instants_.payload();
      int32_t cpu;
      std::memcpy(&cpu, p.data(), 4);
      p.remove_prefix(4);
      size_t z = p.find('\0');
      emit(fmt::format(R"({{"ph":"i","s":"t","cat":"sched","name":"{}","pid":{},"tid":{},"ts":{},"args":{}}})",
                       p.substr(0, z), pid_of(cpu), cpu, us(t), p.substr(z + 1)));
    }
    flows_.finish();
    for (; flows_.valid(); flows_.next()) {
      Flow f;
      std::memcpy(&f, flows_.payload().data(), sizeof f);
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
    file.write(o);
    file.commit();
  }

  std::string path_;
  std::optional<TraceWindow> window_;
  size_t limit_ = detail::spill_memory_limit();  // of each sorter, read when opened
  int64_t w0_, w1_;
  machine::Topology topo_;
  bool have_topo_ = false;
  std::vector<std::string> idle_names_;
  std::vector<Cpu> cpus_;
  detail::SpillSorter kernel_;    // kernel slices: (cpu, start, -end), payload the path
  detail::SpillSorter base_;      // task / idle intervals: (cpu, start)
  detail::SpillSorter instants_;  // (time): cpu, name, args
  detail::SpillSorter flows_;     // in the order they completed
  std::unique_ptr<detail::TempFile> tracks_;
  std::array<std::pair<uint64_t, std::vector<TrackRec>>, 64> cache_;
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
