#include "trace/writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "trace/writer_common.hpp"
#include "util/text.hpp"

namespace schedlab::trace {

const char* event_type_name(EventType e) {
  switch (e) {
    case EventType::SchedSwitch: return "sched_switch";
    case EventType::SchedWaking: return "sched_waking";
    case EventType::SchedWakeup: return "sched_wakeup";
    case EventType::SchedMigrateTask: return "sched_migrate_task";
    case EventType::CpuIdle: return "cpu_idle";
    case EventType::IpiRaise: return "ipi_raise";
    case EventType::IpiEntry: return "ipi_entry";
    case EventType::IpiExit: return "ipi_exit";
    case EventType::WakeIdleWithoutIpi: return "sched_wake_idle_without_ipi";
    case EventType::KernelSlice: return "kernel_slice";
  }
  return "?";
}

int64_t EventCounts::tracepoints() const {
  int64_t s = 0;
  for (int i = 0; i < kNumEventTypes; ++i)
    if (i != static_cast<int>(EventType::KernelSlice)) s += n[i];
  return s;
}

void CountingSink::add(Time t, EventType e) {
  if (detail::in_window(window_, t)) ++counts_[e];
}

void CountingSink::kernel_slice(int, Time b, Time e, KernelPath) {
  if (!window_ || (e > window_->first && b < window_->second) ||
      (b == e && detail::in_window(window_, b)))
    ++counts_[EventType::KernelSlice];
}

void TeeSink::begin(const machine::Machine& m) {
  for (auto* s : sinks_) s->begin(m);
}
void TeeSink::end(Time t) {
  for (auto* s : sinks_) s->end(t);
}
void TeeSink::sched_switch(Time t, int cpu, const TaskInfo& prev, PrevState st,
                           const TaskInfo& next) {
  for (auto* s : sinks_) s->sched_switch(t, cpu, prev, st, next);
}
void TeeSink::sched_waking(Time t, int cpu, const TaskInfo& p, int target_cpu) {
  for (auto* s : sinks_) s->sched_waking(t, cpu, p, target_cpu);
}
void TeeSink::sched_wakeup(Time t, int cpu, const TaskInfo& p, int target_cpu) {
  for (auto* s : sinks_) s->sched_wakeup(t, cpu, p, target_cpu);
}
void TeeSink::sched_migrate_task(Time t, int cpu, const TaskInfo& p, int orig, int dest) {
  for (auto* s : sinks_) s->sched_migrate_task(t, cpu, p, orig, dest);
}
void TeeSink::cpu_idle(Time t, int cpu, int state) {
  for (auto* s : sinks_) s->cpu_idle(t, cpu, state);
}
void TeeSink::ipi_raise(Time t, int cpu, int target_cpu, IpiKind kind) {
  for (auto* s : sinks_) s->ipi_raise(t, cpu, target_cpu, kind);
}
void TeeSink::ipi_entry(Time t, int cpu, IpiKind kind) {
  for (auto* s : sinks_) s->ipi_entry(t, cpu, kind);
}
void TeeSink::ipi_exit(Time t, int cpu, IpiKind kind) {
  for (auto* s : sinks_) s->ipi_exit(t, cpu, kind);
}
void TeeSink::lock_contended(Time b, Time e, int cpu, LockClass cls, int id, int holder) {
  for (auto* s : sinks_) s->lock_contended(b, e, cpu, cls, id, holder);
}
void TeeSink::wake_idle_without_ipi(Time t, int cpu, int target_cpu) {
  for (auto* s : sinks_) s->wake_idle_without_ipi(t, cpu, target_cpu);
}
void TeeSink::kernel_slice(int cpu, Time b, Time e, KernelPath path) {
  for (auto* s : sinks_) s->kernel_slice(cpu, b, e, path);
}

namespace {

// "<digits>[.<digits>][unit]" -> nanoseconds, exactly (no floating point).
Time parse_time(const std::string& whole, const std::string& raw, const char* which) {
  std::string s(util::trim(raw));
  auto bad = [&](const std::string& why) {
    return TraceError(
        fmt::format("--trace-window '{}': bad {} time '{}': {}", whole, which, s, why));
  };
  if (s.empty()) throw bad("empty (expected e.g. 0.5s, 100ms, 1500us)");
  size_t i = 0;
  std::string ip, fp;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ip += s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) fp += s[i++];
  }
  if (ip.empty() && fp.empty()) {
    if (!s.empty() && s[0] == '-') throw bad("negative times are not allowed");
    throw bad("not a number (expected e.g. 0.5s, 100ms, 1500us)");
  }
  std::string unit(util::trim(std::string_view(s).substr(i)));
  int scale_digits;  // log10(ns per unit)
  if (unit.empty() || unit == "s") scale_digits = 9;
  else if (unit == "ms") scale_digits = 6;
  else if (unit == "us") scale_digits = 3;
  else if (unit == "ns") scale_digits = 0;
  else throw bad(fmt::format("unknown unit '{}' (use s, ms, us or ns)", unit));
  // At most 18 digits of nanoseconds (31 years) fit int64_t: "10000000001s" overflowed here
  // (found by the trace_window fuzzer).
  ip.erase(0, std::min(ip.find_first_not_of('0'), ip.size()));
  if (ip.size() + static_cast<size_t>(scale_digits) > 18) throw bad("too large (at most 999999999 s)");
  if (static_cast<int>(fp.size()) > scale_digits) {
    // Digits below a nanosecond must be zeros.
    if (fp.find_first_not_of('0', scale_digits) != std::string::npos)
      throw bad("finer than a nanosecond");
    fp.resize(scale_digits);
  }
  fp.append(scale_digits - fp.size(), '0');
  int64_t v = ip.empty() ? 0 : std::stoll(ip);
  for (int k = 0; k < scale_digits; ++k) v *= 10;
  if (!fp.empty()) v += std::stoll(fp);
  return Time::ns(v);
}

}  // namespace

TraceWindow parse_trace_window(const std::string& text) {
  auto comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw TraceError(fmt::format(
        "--trace-window '{}': expected START,END (e.g. 0.5s,0.6s or 100ms,200ms)", text));
  Time a = parse_time(text, text.substr(0, comma), "start");
  Time b = parse_time(text, text.substr(comma + 1), "end");
  if (!(b > a))
    throw TraceError(
        fmt::format("--trace-window '{}': END must be after START", text));
  return {a, b};
}

std::unique_ptr<TraceSink> open_trace(const std::string& path,
                                      std::optional<TraceWindow> window) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    ext = path.substr(dot);
  std::string lower = ext;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (window && !(window->second > window->first))
    throw TraceError(fmt::format("--trace {}: empty trace window", path));
  if (lower == ".dat") return make_dat_writer(path, window);
  if (lower == ".txt") return make_text_writer(path, window);
  if (lower == ".json") return make_json_writer(path, window);
  throw TraceError(fmt::format(
      "--trace {}: unknown trace format '{}' (use .dat for trace-cmd/KernelShark, .txt for "
      "ftrace text, .json for Perfetto/chrome://tracing)",
      path, ext.empty() ? std::string("no extension") : ext));
}

}  // namespace schedlab::trace
