// trace-cmd "trace.dat" writer, file format version 6 (man 5 trace-cmd.dat.v6), flyrecord
// layout: the header holds the kernel's header_page/header_event descriptions and the format
// files of the events written (as a 6.x x86_64 kernel prints them under
// /sys/kernel/tracing/events), the IPI reason strings as printk formats and the pid -> comm
// table; then one run of ring-buffer pages per CPU, each page a u64 timestamp, a u64 commit
// (bytes used) and events with 5-bit type_len / 27-bit time deltas (time-extend events when a
// delta does not fit), little endian, 64-bit longs, 4096-byte pages.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "io/output.hpp"
#include "trace/spill.hpp"
#include "trace/writer_common.hpp"

namespace schedlab::trace {
namespace {

using detail::TempFile;

constexpr uint32_t kPageSize = 4096;
constexpr uint32_t kPageHeader = 16;  // u64 timestamp + local_t commit
constexpr uint32_t kPageData = kPageSize - kPageHeader;
constexpr uint32_t kTypeTimeExtend = 30;
constexpr uint32_t kMaxSmallData = 28 * 4;  // RB_MAX_SMALL_DATA: longer events store their length
constexpr uint32_t kMaxRecord = 1024;        // our longest: ipi_raise on 8000 CPUs
constexpr uint64_t kDeltaMask = (1u << 27) - 1;

// Event ids (the common_type values; any distinct ids work, these are a 6.1 x86_64 kernel's
// neighbourhood).
enum : uint16_t {
  kIdSchedSwitch = 314,
  kIdSchedWakeup = 316,
  kIdSchedWaking = 318,
  kIdSchedMigrateTask = 311,
  kIdSchedWakeIdleWithoutIpi = 300,
  kIdCpuIdle = 482,
  kIdIpiRaise = 520,
  kIdIpiEntry = 519,
  kIdIpiExit = 518,
};

// Addresses the IPI reason strings get in the printk_formats table (const char * fields).
constexpr uint64_t kReasonAddr[] = {0xffffffff82a0c0a0ull, 0xffffffff82a0c0c0ull};
uint64_t reason_addr(IpiKind k) { return kReasonAddr[static_cast<int>(k)]; }

// TASK_REPORT bits as sched_switch records prev_state; TASK_REPORT_MAX marks preemption.
long prev_state_bits(PrevState s) {
  switch (s) {
    case PrevState::Running: return 0;
    case PrevState::Sleeping: return 0x01;   // TASK_INTERRUPTIBLE "S"
    case PrevState::Dead: return 0x10;       // EXIT_DEAD "X"
    case PrevState::Preempted: return 0x100; // TASK_REPORT_MAX: "R+"
  }
  return 0;
}

const char* kCommonFields =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n";

std::string event_format(const char* name, int id, const char* fields, const char* print) {
  return fmt::format("name: {}\nID: {}\nformat:\n{}{}\nprint fmt: {}\n", name, id,
                     kCommonFields, fields, print);
}

const char* kWakeFields =
    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";
const char* kWakePrint =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
    "REC->target_cpu";

// TASK_REPORT_MAX spelled as the kernel's macro expansion prints it.
#define SL_TASK_REPORT                                                                     \
  "0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040"

std::vector<std::pair<std::string, std::vector<std::string>>> event_systems() {
  return {
      {"sched",
       {
           event_format(
               "sched_switch", kIdSchedSwitch,
               "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
               "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
               "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
               "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
               "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
               "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
               "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
               "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
               "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
               "(REC->prev_state & ((((" SL_TASK_REPORT ") + 1) << 1) - 1)) ? "
               "__print_flags(REC->prev_state & ((((" SL_TASK_REPORT ") + 1) << 1) - 1), \"|\", "
               "{ 0x0001, \"S\" }, { 0x0002, \"D\" }, { 0x0004, \"T\" }, "
               "{ 0x0008, \"t\" }, { 0x0010, \"X\" }, { 0x0020, \"Z\" }, "
               "{ 0x0040, \"P\" }, { 0x0080, \"I\" }) : \"R\", "
               "REC->prev_state & (((" SL_TASK_REPORT ") + 1) << 1) ? \"+\" : \"\", "
               "REC->next_comm, REC->next_pid, REC->next_prio"),
           event_format("sched_waking", kIdSchedWaking, kWakeFields, kWakePrint),
           event_format("sched_wakeup", kIdSchedWakeup, kWakeFields, kWakePrint),
           event_format(
               "sched_migrate_task", kIdSchedMigrateTask,
               "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
               "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
               "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
               "\tfield:int orig_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
               "\tfield:int dest_cpu;\toffset:36;\tsize:4;\tsigned:1;\n",
               "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, "
               "REC->prio, REC->orig_cpu, REC->dest_cpu"),
           event_format("sched_wake_idle_without_ipi", kIdSchedWakeIdleWithoutIpi,
                        "\tfield:int cpu;\toffset:8;\tsize:4;\tsigned:1;\n",
                        "\"cpu=%d\", REC->cpu"),
       }},
      {"power",
       {
           event_format("cpu_idle", kIdCpuIdle,
                        "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n"
                        "\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
                        "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, "
                        "(unsigned long)REC->cpu_id"),
       }},
      {"ipi",
       {
           event_format("ipi_raise", kIdIpiRaise,
                        "\tfield:__data_loc unsigned long[] target_cpus;\toffset:8;\tsize:4;"
                        "\tsigned:0;\n"
                        "\tfield:const char * reason;\toffset:16;\tsize:8;\tsigned:0;\n",
                        "\"target_mask=%s (%s)\", __get_bitmask(target_cpus), REC->reason"),
           event_format("ipi_entry", kIdIpiEntry,
                        "\tfield:const char * reason;\toffset:8;\tsize:8;\tsigned:0;\n",
                        "\"(%s)\", REC->reason"),
           event_format("ipi_exit", kIdIpiExit,
                        "\tfield:const char * reason;\toffset:8;\tsize:8;\tsigned:0;\n",
                        "\"(%s)\", REC->reason"),
       }},
  };
}
#undef SL_TASK_REPORT

// ring_buffer_print_page_header() for a 64-bit kernel with 4096-byte pages.
const char* kHeaderPage =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

// ring_buffer_print_entry_header().
const char* kHeaderEvent =
    "# compressed entry header\n"
    "\ttype_len    :    5 bits\n"
    "\ttime_delta  :   27 bits\n"
    "\tarray       :   32 bits\n"
    "\n"
    "\tpadding     : type == 29\n"
    "\ttime_extend : type == 30\n"
    "\ttime_stamp : type == 31\n"
    "\tdata max type_len  == 28\n";

class Bytes {
 public:
  std::string& s;
  explicit Bytes(std::string& out) : s(out) {}
  void u8(uint8_t v) { s.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void str0(std::string_view v) {
    s.append(v);
    s.push_back('\0');
  }
  void raw(const void* p, size_t n) { s.append(static_cast<const char*>(p), n); }
};
static_assert(std::endian::native == std::endian::little, "the .dat writer assumes little endian");

// One event's payload (common fields + event fields), built in a fixed buffer.
class Record {
 public:
  Record(uint16_t id, const detail::EventContext& c, size_t size) : size_(size) {
    put<uint16_t>(0, id);
    buf_[2] = c.flags;
    buf_[3] = c.preempt_count;
    put<int32_t>(4, c.pid);
  }
  template <class T>
  void put(size_t off, T v) {
    std::memcpy(buf_ + off, &v, sizeof v);
  }
  void comm(size_t off, std::string_view s) {
    s = detail::clip_comm(s);
    std::memcpy(buf_ + off, s.data(), s.size());  // NUL-padded to 16 by the memset
  }
  void resize(size_t n) { size_ = n; }
  std::string_view bytes() const { return {reinterpret_cast<const char*>(buf_), size_}; }

 private:
  uint8_t buf_[kMaxRecord]{};
  size_t size_;
};

class DatWriter : public TraceSink {
 public:
  DatWriter(std::string path, std::optional<TraceWindow> window)
      : path_(std::move(path)), window_(window) {
    detail::check_writable(path_);
  }

  void begin(const machine::Machine& m) override {
    tracker_.begin(m);
    ensure_cpu(m.topo.nr_cpus() - 1);
  }

  void end(Time) override {
    if (done_) return;
    done_ = true;
    render_and_write();
  }

  void sched_switch(Time t, int cpu, const TaskInfo& prev, PrevState st,
                    const TaskInfo& next) override {
    auto c = tracker_.on_switch(cpu, prev, next);
    if (!keep(t, cpu)) return;
    Record r(kIdSchedSwitch, c, 64);
    r.comm(8, detail::switch_comm(prev, cpu));
    r.put<int32_t>(24, prev.pid);
    r.put<int32_t>(28, prev.prio);
    r.put<int64_t>(32, prev_state_bits(st));
    r.comm(40, detail::switch_comm(next, cpu));
    r.put<int32_t>(56, next.pid);
    r.put<int32_t>(60, next.prio);
    add(t, cpu, r);
  }

  void sched_waking(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    auto c = tracker_.on_waking(cpu, p);
    if (keep(t, cpu)) add(t, cpu, wake(kIdSchedWaking, c, p, target_cpu));
  }

  void sched_wakeup(Time t, int cpu, const TaskInfo& p, int target_cpu) override {
    auto c = tracker_.on_wakeup(cpu, p);
    if (keep(t, cpu)) add(t, cpu, wake(kIdSchedWakeup, c, p, target_cpu));
  }

  void sched_migrate_task(Time t, int cpu, const TaskInfo& p, int orig, int dest) override {
    auto c = tracker_.on_migrate(cpu, p);
    if (!keep(t, cpu)) return;
    Record r(kIdSchedMigrateTask, c, 40);
    r.comm(8, detail::switch_comm(p, orig));
    r.put<int32_t>(24, p.pid);
    r.put<int32_t>(28, p.prio);
    r.put<int32_t>(32, orig);
    r.put<int32_t>(36, dest);
    add(t, cpu, r);
  }

  void cpu_idle(Time t, int cpu, int state) override {
    auto c = tracker_.on_cpu_idle(cpu);
    if (!keep(t, cpu)) return;
    Record r(kIdCpuIdle, c, 16);
    r.put<uint32_t>(8, static_cast<uint32_t>(state));
    r.put<uint32_t>(12, static_cast<uint32_t>(cpu));
    add(t, cpu, r);
  }

  void ipi_raise(Time t, int cpu, int target_cpu, IpiKind kind) override {
    auto c = tracker_.on_ipi_raise(cpu);
    if (!keep(t, cpu)) return;
    ensure_cpu(target_cpu);
    // __bitmask: nr_cpumask_bits rounded up to longs, stored after the fixed fields.
    int bits = std::max({nr_cpus_, target_cpu + 1, 1});
    size_t mask_bytes = static_cast<size_t>((bits + 63) / 64) * 8;
    if (24 + mask_bytes > kMaxRecord) mask_bytes = kMaxRecord - 24;
    Record r(kIdIpiRaise, c, 24 + mask_bytes);
    r.put<uint32_t>(8, static_cast<uint32_t>(mask_bytes << 16 | 24));  // __data_loc: len, off
    r.put<uint64_t>(16, reason_addr(kind));
    size_t word = static_cast<size_t>(target_cpu) / 64;
    if (8 * word < mask_bytes) r.put<uint64_t>(24 + 8 * word, 1ull << (target_cpu % 64));
    add(t, cpu, r);
  }

  void ipi_entry(Time t, int cpu, IpiKind kind) override {
    auto c = tracker_.on_ipi_entry(cpu);
    if (keep(t, cpu)) add(t, cpu, reason(kIdIpiEntry, c, kind));
  }

  void ipi_exit(Time t, int cpu, IpiKind kind) override {
    auto c = tracker_.on_ipi_exit(cpu);
    if (keep(t, cpu)) add(t, cpu, reason(kIdIpiExit, c, kind));
  }

  void wake_idle_without_ipi(Time t, int cpu, int target_cpu) override {
    auto c = tracker_.on_wake_idle_without_ipi(cpu);
    if (!keep(t, cpu)) return;
    Record r(kIdSchedWakeIdleWithoutIpi, c, 12);
    r.put<int32_t>(8, target_cpu);
    add(t, cpu, r);
  }

 private:
  static Record wake(uint16_t id, const detail::EventContext& c, const TaskInfo& p, int target) {
    Record r(id, c, 36);
    r.comm(8, p.comm);
    r.put<int32_t>(24, p.pid);
    r.put<int32_t>(28, p.prio);
    r.put<int32_t>(32, target);
    return r;
  }

  static Record reason(uint16_t id, const detail::EventContext& c, IpiKind kind) {
    Record r(id, c, 16);
    r.put<uint64_t>(8, reason_addr(kind));
    return r;
  }

  void ensure_cpu(int cpu) { nr_cpus_ = std::max(nr_cpus_, cpu + 1); }

  bool keep(Time t, int cpu) {
    ensure_cpu(cpu);
    return detail::in_window(window_, t);
  }

  // Kept by (CPU, timestamp): each CPU's events sorted by time, stably, as its pages need.
  void add(Time t, int cpu, const Record& r) {
    events_.add({cpu, std::max<int64_t>(t.count(), 0), 0, 0}, r.bytes());
  }

  // One CPU's events as ring-buffer pages, appended to `out` page by page. The events come
  // sorted by timestamp (stable: equal timestamps in the order they were recorded).
  class Pages {
   public:
    explicit Pages(TempFile& out) : out_(out) {}
    void add(int64_t ts, std::string_view data) {
      uint32_t elen = static_cast<uint32_t>(data.size());
      uint32_t len = (elen + 3) & ~3u;
      uint64_t delta = page_.empty() ? 0 : static_cast<uint64_t>(ts - last_);
      bool small = len <= kMaxSmallData;
      uint32_t need = (small ? 4 : 8) + len + (delta > kDeltaMask ? 8 : 0);
      if (page_.size() + need > kPageData) {
        flush();
        delta = 0;
      }
      if (page_.empty()) page_ts_ = ts;
      Bytes p(page_);
      if (delta > kDeltaMask) {
        p.u32(kTypeTimeExtend | static_cast<uint32_t>((delta & kDeltaMask) << 5));
        p.u32(static_cast<uint32_t>(delta >> 27));
        delta = 0;
      }
      if (small) {
        p.u32((len / 4) | static_cast<uint32_t>(delta << 5));
      } else {  // type_len 0: the length (including this word) in array[0]
        p.u32(static_cast<uint32_t>(delta << 5));
        p.u32(len + 4);
      }
      page_.append(data);
      page_.append(len - elen, '\0');
      last_ = ts;
    }
    void flush() {
      if (page_.empty()) return;
      std::string head;
      Bytes o(head);
      o.u64(static_cast<uint64_t>(page_ts_));
      o.u64(page_.size());  // commit: bytes of event data on the page
      out_.append(head);
      out_.append(page_);
      out_.append(std::string(kPageData - page_.size(), '\0'));
      page_.clear();
    }

   private:
    TempFile& out_;
    std::string page_;
    int64_t page_ts_ = 0, last_ = 0;
  };

  void render_and_write() {
    std::string h;
    Bytes o(h);
    o.raw("\x17\x08\x44tracing", 10);
    o.str0("6");
    o.u8(0);  // little endian
    o.u8(8);  // sizeof(long)
    o.u32(kPageSize);
    o.str0("header_page");
    o.u64(std::strlen(kHeaderPage));
    o.raw(kHeaderPage, std::strlen(kHeaderPage));
    o.str0("header_event");
    o.u64(std::strlen(kHeaderEvent));
    o.raw(kHeaderEvent, std::strlen(kHeaderEvent));
    o.u32(0);  // ftrace (plugin) event formats: none
    auto systems = event_systems();
    o.u32(static_cast<uint32_t>(systems.size()));
    for (const auto& [sys, formats] : systems) {
      o.str0(sys);
      o.u32(static_cast<uint32_t>(formats.size()));
      for (const auto& f : formats) {
        o.u64(f.size());
        o.raw(f.data(), f.size());
      }
    }
    o.u32(0);  // kallsyms: none
    std::string printk =
        fmt::format("0x{:x} : \"{}\"\n0x{:x} : \"{}\"\n", reason_addr(IpiKind::Reschedule),
                    ipi_reason(IpiKind::Reschedule), reason_addr(IpiKind::CallFunctionSingle),
                    ipi_reason(IpiKind::CallFunctionSingle));
    o.u32(static_cast<uint32_t>(printk.size()));
    o.raw(printk.data(), printk.size());
    std::string cmdlines;
    for (const auto& [pid, comm] : tracker_.cmdlines())
      cmdlines += fmt::format("{} {}\n", pid, comm);
    o.u64(cmdlines.size());
    o.raw(cmdlines.data(), cmdlines.size());
    uint32_t ncpus = static_cast<uint32_t>(std::max(nr_cpus_, 1));
    o.u32(ncpus);
    o.raw("options  ", 10);
    o.u16(0);  // no options
    o.raw("flyrecord", 10);
    // The pages of CPU 0, 1, ... one after the other in a temporary file: the header before
    // them gives each CPU's offset and size.
    TempFile data;
    std::vector<uint64_t> size(ncpus);
    events_.finish();
    for (uint32_t c = 0; c < ncpus; ++c) {
      uint64_t start = data.size();
      Pages p(data);
      for (; events_.valid() && events_.key()[0] == c; events_.next())
        p.add(events_.key()[1], events_.payload());
      p.flush();
      size[c] = data.size() - start;
    }
    uint64_t off = h.size() + 16ull * ncpus;
    off = (off + kPageSize - 1) / kPageSize * kPageSize;
    for (uint32_t c = 0; c < ncpus; ++c) {
      o.u64(size[c] == 0 ? 0 : off);
      o.u64(size[c]);
      off += size[c];
    }
    h.append((kPageSize - h.size() % kPageSize) % kPageSize, '\0');
    io::AtomicFile f("--trace", path_);
    f.write(h);
    data.copy_to(f, 0, data.size());
    f.commit();
  }

  std::string path_;
  std::optional<TraceWindow> window_;
  detail::CpuContextTracker tracker_;
  int nr_cpus_ = 0;
  detail::SpillSorter events_;  // record payloads; on disk beyond the sorter's memory limit
  bool done_ = false;
};

}  // namespace

std::unique_ptr<TraceSink> make_dat_writer(const std::string& path,
                                           std::optional<TraceWindow> window) {
  return std::make_unique<DatWriter>(path, window);
}

}  // namespace schedlab::trace
