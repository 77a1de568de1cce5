#include "experiment/run.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "host/probe.hpp"
#include "io/output.hpp"
#include "kernel/kernel.hpp"
#include "report/schedstat.hpp"
#include "trace/writers.hpp"

#ifndef SCHEDLAB_VERSION
#error "SCHEDLAB_VERSION (CMake's PROJECT_VERSION) must be defined for the experiment layer"
#endif

namespace schedlab::experiment {

const char* schedlab_version() { return SCHEDLAB_VERSION; }

std::string resolve_machine(const std::string& name) {
  if (name != kHostMachine) return name;
  std::string path = host::default_host_profile_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw machine::ProfileError(fmt::format("--machine host: no profile at {}; run 'schedlab host probe' (and "
                                            "'schedlab host calibrate') first",
                                            path));
  return path;
}

machine::Machine load_machine(const RunSpec& spec) {
  machine::Machine m;
  try {
    m = machine::load_profile(resolve_machine(spec.machine));
  } catch (const machine::UnknownMachine& e) {
    // The machine layer knows only profiles/; `host` is resolved here.
    throw machine::UnknownMachine(std::string(e.what()) + "; or 'host' for this machine's profile (`schedlab host probe`)");
  }
  for (const auto& s : spec.sets)
    if (!kernel::Features::is_change_set(s)) machine::apply_set(m, s);
  if (!spec.idle_disable.empty()) machine::disable_idle_states(m, spec.idle_disable);
  return m;
}

kernel::Features parse_features(const std::string& list, const std::string& flag) {
  try {
    return kernel::Features::parse(list, flag);
  } catch (const kernel::FeatureError& e) {
    throw SpecError(e.what());
  }
}

namespace {
double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
constexpr double kProgressAfterS = 3;    // wall seconds before a run shows progress
constexpr double kProgressEveryS = 0.5;  // between terminal updates
std::string eta(double s) {
  long long t = static_cast<long long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}
}  // namespace

RunProgress::RunProgress()
    : tty_(isatty(2) != 0), forced_(false), start_(wall_seconds()) {
  const char* v = std::getenv("SCHEDLAB_PROGRESS");
  forced_ = v && std::string_view(v) == "1";
}

void RunProgress::operator()(double fraction, sim::Time simulated, uint64_t events) {
  double now = wall_seconds(), spent = now - start_;
  if (!forced_ && spent < kProgressAfterS) return;
  bool known = fraction > 0 && fraction <= 1;
  std::string what = known ? fmt::format("run: {}% done", static_cast<int>(fraction * 100))
                           : fmt::format("run: {:.3f} s simulated, {} events", simulated.seconds(), events);
  // The ETA from the rate so far (the wall time per fraction done); not shown when forced, so
  // that the lines do not depend on the machine's speed.
  std::string tail = known && !forced_ ? fmt::format(", ETA {}", eta(spent * (1 - fraction) / fraction)) : "";
  if (tty_ && !forced_) {
    if (last_print_ >= 0 && now - last_print_ < kProgressEveryS) return;
    last_print_ = now;
    io::set_progress_line_open(true);
    open_ = true;
    fmt::print(stderr, "\r{}{}\x1b[K", what, tail);
    return;
  }
  int bucket = known ? static_cast<int>(fraction * 10) : 0;
  if (known ? bucket > last_bucket_ : (last_print_ < 0 || now - last_print_ >= 30)) {
    last_bucket_ = bucket;
    last_print_ = now;
    fmt::print(stderr, "{}{}\n", what, tail);
  }
}

void RunProgress::finish() {
  if (!open_) return;
  fmt::print(stderr, "\n");
  io::set_progress_line_open(false);
  open_ = false;
}

RunResult run_one(const RunSpec& spec) { return run_one(load_machine(spec), spec); }

kernel::Features run_features(const RunSpec& spec, const machine::Machine* m) {
  kernel::Features f;
  try {
    // The profile's default features (a host profile's [kernel] features: the running kernel's
    // settings where they differ from the model's defaults), then --features over them.
    if (m && m->kernel.features.known())
      f.apply(m->kernel.features.value,
              fmt::format("{}: kernel.features", m->source_path.empty() ? m->name : m->source_path));
    f.apply(spec.features);
  } catch (const kernel::FeatureError& e) {
    throw SpecError(e.what());
  }
  for (const auto& s : spec.sets) {
    if (!kernel::Features::is_change_set(s)) continue;
    try {
      f.apply_set(s);
    } catch (const std::invalid_argument& e) {
      throw SpecError(e.what());  // bad input by type, like the machine's --set errors
    }
  }
  return f;
}

std::vector<std::string> unused_change_sets(const std::vector<std::string>& sets,
                                            const std::vector<kernel::Features>& sides, const std::string& flag) {
  std::vector<std::string> out;
  for (const auto& s : sets) {
    if (!kernel::Features::is_change_set(s)) continue;
    const std::string rest = s.substr(std::string("change.").size());
    const std::string name = rest.substr(0, rest.find('.'));
    const kernel::ChangeType* c = kernel::find_change(name);
    if (!c) continue;  // an error elsewhere
    if (std::any_of(sides.begin(), sides.end(), [&](const kernel::Features& f) { return f.change_on(c->index); }))
      continue;
    out.push_back(fmt::format("{} {}: scheduler change {} is off, so this value is not used (turn it on with "
                              "--features {})",
                              flag, s, name, name));
  }
  return out;
}

MemoryEstimate estimate_memory(const machine::Machine& m, const workload::Workload& w) {
  using workload::heap_bytes;
  const int64_t cpus = m.topo.nr_cpus();
  const workload::Footprint fp = w.footprint();
  // The task table holds unique_ptrs and grows by doubling: up to two slots per task.
  const int64_t per_kernel_task = heap_bytes(sizeof(kernel::Task)) + 2 * static_cast<int64_t>(sizeof(void*));
  // A runnable task's pointer on a runqueue, and one pooled deferred event (a wakeup's IPI, a
  // sleep's hrtimer) with its pointer in the pool.
  const int64_t per_task = per_kernel_task + static_cast<int64_t>(sizeof(kernel::Task*)) +
                           heap_bytes(sizeof(kernel::DeferredEvent)) + 2 * static_cast<int64_t>(sizeof(void*));
  const int64_t levels = static_cast<int64_t>(kernel::SdLevel::NUMA) + 1;
  const int64_t per_cpu = static_cast<int64_t>(sizeof(kernel::Rq) + sizeof(kernel::Cpu) + sizeof(kernel::CpuidleDevice) +
                                               sizeof(kernel::MenuDevice) + sizeof(kernel::TickSched) +
                                               sizeof(kernel::SoftirqCpu)) +
                          heap_bytes(levels * static_cast<int64_t>(sizeof(kernel::SchedDomain))) +
                          2 * per_kernel_task;  // the idle task and ksoftirqd
  MemoryEstimate e;
  e.tasks = fp.tasks;
  e.bytes = fp.tasks * per_task + fp.bytes + cpus * per_cpu;
  e.bytes_per_task = fp.tasks > 0 ? (fp.tasks * per_task + fp.bytes) / fp.tasks : 0;
  return e;
}

int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

std::string format_bytes(int64_t b) {
  const double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  if (b >= gib) return fmt::format("{:.1f} GiB", static_cast<double>(b) / gib);
  if (b >= mib) return fmt::format("{:.0f} MiB", static_cast<double>(b) / mib);
  return fmt::format("{:.0f} KiB", static_cast<double>(b) / kib);
}

namespace {
// Refuses a run whose estimate exceeds the limit, before anything (a trace file) is opened.
void check_memory(const machine::Machine& m, const workload::Workload& w, const RunSpec& spec) {
  if (spec.memory_limit_bytes <= 0) return;
  MemoryEstimate e = estimate_memory(m, w);
  if (e.bytes <= spec.memory_limit_bytes) return;
  throw SpecError(fmt::format(
      "'{}' needs about {} of memory ({} tasks at about {} bytes each, {} CPUs), more than the {} of {}; ask "
      "for fewer tasks (groups, threads) or set --max-memory SIZE",
      workload::join(spec.command), format_bytes(e.bytes), e.tasks, e.bytes_per_task, m.topo.nr_cpus(),
      format_bytes(spec.memory_limit_bytes), spec.memory_limit_source));
}
}  // namespace

RunResult run_one(const machine::Machine& m, const RunSpec& spec) {
  kernel::Features f = run_features(spec, &m);
  auto w = workload::parse_workload(spec.command, m.topo.nr_cpus());
  check_memory(m, *w, spec);
  std::unique_ptr<trace::TraceSink> file_sink;
  std::unique_ptr<trace::TeeSink> tee;
  trace::TraceSink* sink = spec.sink;
  if (!spec.trace_path.empty()) {
    std::optional<trace::TraceWindow> window;
    if (!spec.trace_window.empty()) window = trace::parse_trace_window(spec.trace_window);
    file_sink = trace::open_trace(spec.trace_path, window);
    if (sink) {
      tee = std::make_unique<trace::TeeSink>(std::vector<trace::TraceSink*>{sink, file_sink.get()});
      sink = tee.get();
    } else {
      sink = file_sink.get();
    }
  } else if (!spec.trace_window.empty()) {
    throw SpecError("--trace-window: needs --trace FILE");
  }
  kernel::KernelOptions ko;
  ko.seed = spec.seed;
  ko.sink = sink;
  ko.check = spec.check;
  ko.cold = spec.cold;
  kernel::Kernel k(m, f, ko);
  k.set_default_affinity(w->affinity());
  w->setup(k.api());
  sim::Time limit = w->time_limit();
  if (spec.max_simulated_ns > 0 && spec.max_simulated_ns < limit.count()) limit = sim::Time::ns(spec.max_simulated_ns);
  if (spec.progress)
    k.ev.set_periodic([&] { spec.progress(w->progress(), k.now(), k.events_run()); });
  k.run(limit);
  k.ev.set_periodic(nullptr);
  if (!w->finished()) {
    std::string sets;
    for (const auto& a : spec.sets) sets += " --set " + a;
    throw DidNotFinish(fmt::format(
        "'{}' did not finish within {} s of simulated time, the limit of one run ({} events "
        "simulated{}); ask for less work (fewer loops, groups or seconds){}",
        workload::join(spec.command), limit.seconds(), k.events_run(),
        sets.empty() ? "" : ", with" + sets, sets.empty() ? "" : " or smaller costs"));
  }
  RunResult r;
  r.machine = m.name;
  r.features = f.describe();
  r.seed = spec.seed;
  r.command = workload::join(spec.command);
  r.report = w->report();
  r.files = w->output_files();
  r.warnings = w->warnings();
  for (auto& u : unused_change_sets(spec.sets, {f}, "--set")) r.warnings.push_back(std::move(u));
  r.metrics = w->metrics();
  r.total = k.total();
  for (int c = 0; c < k.nr_cpus(); ++c) r.per_cpu.push_back(k.rq(c).c);
  for (const auto& s : m.idle_states) r.idle_state_names.push_back(s.name);
  r.idle_state_names.push_back(m.tunables.idle_poll ? "poll(idle=poll)" : "default_idle");
  r.simulated_ns = k.end_time().count();
  r.events = k.events_run();
  r.nr_cpus = k.nr_cpus();
  r.tick_period_ns = m.tick_period_ns();
  if (spec.schedstat) {
    r.sd.resize(static_cast<size_t>(k.nr_cpus()));
    for (int c = 0; c < k.nr_cpus(); ++c)
      for (const auto& sd : k.rq(c).sd)
        r.sd[static_cast<size_t>(c)].push_back(
            {static_cast<int>(sd.level), sd.name(), report::schedstat::cpumask_hex(sd.span, k.nr_cpus())});
  }
  return r;
}

namespace {
// One counter's --json value: a number, or an object for an array counter.
nlohmann::ordered_json json_value(int64_t v, const std::vector<std::string>&) { return v; }
nlohmann::ordered_json json_value(double v, const std::vector<std::string>&) { return v; }
template <size_t N>
nlohmann::ordered_json json_value(const std::array<int64_t, N>& a, const std::vector<std::string>&) {
  nlohmann::ordered_json o;
  for (size_t i = 0; i < N; ++i) o[kernel::array_key(a, static_cast<int>(i))] = a[i];
  return o;
}
nlohmann::ordered_json json_value(const kernel::PerIdleState& a,
                                  const std::vector<std::string>& idle_names) {
  nlohmann::ordered_json o;
  for (size_t i = 0; i < a.size() && i < idle_names.size(); ++i) o[idle_names[i]] = a[i];
  return o;
}
}  // namespace

nlohmann::ordered_json counters_json(const kernel::CpuCounters& c,
                                     const std::vector<std::string>& idle_names) {
  using namespace kernel;
  nlohmann::ordered_json j;
#define SCHEDLAB_JSON_STORED(name, unit, show, ...) \
  if ((show) & kJson) j[#name] = json_value(c.name, idle_names);
#define SCHEDLAB_JSON_ARRAY(name, storage, unit, show, ...) \
  if ((show) & kJson) j[#name] = json_value(c.name, idle_names);
#define SCHEDLAB_JSON_DERIVED(name, unit, show, ...) \
  if ((show) & kJson) j[#name] = json_value(derived::name(c), idle_names);
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_JSON_STORED, SCHEDLAB_JSON_ARRAY, SCHEDLAB_JSON_DERIVED)
#undef SCHEDLAB_JSON_STORED
#undef SCHEDLAB_JSON_ARRAY
#undef SCHEDLAB_JSON_DERIVED
  for (const ChangeType* t : change_types())
    for (const auto& cc : t->info.counters) j[cc.name] = change_counter(c, cc.name);
  return j;
}

nlohmann::ordered_json to_json(const RunResult& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schedlab_version"] = schedlab_version();
  j["machine"] = r.machine;
  j["features"] = r.features;
  j["seed"] = r.seed;
  j["command"] = r.command;
  j["simulated_ns"] = r.simulated_ns;
  j["events"] = r.events;
  ordered_json ms = ordered_json::array();
  for (const auto& m : r.metrics)
    ms.push_back({{"name", m.name},
                  {"unit", m.unit},
                  {"value", m.value},
                  {"higher_is_better", m.higher_is_better}});
  j["metrics"] = ms;
  j["counters"] = counters_json(r.total, r.idle_state_names);
  ordered_json per = ordered_json::array();
  for (size_t c = 0; c < r.per_cpu.size(); ++c) {
    ordered_json e = counters_json(r.per_cpu[c], r.idle_state_names);
    e["cpu"] = c;
    per.push_back(e);
  }
  j["per_cpu"] = per;
  return j;
}

std::string summary(const RunResult& r) {
  using namespace kernel;
  const auto& c = r.total;
  double total = static_cast<double>(r.simulated_ns) * r.nr_cpus;
  auto pct = [&](int64_t v) { return total > 0 ? 100.0 * v / total : 0.0; };
  std::string s = fmt::format(
      "schedlab: machine={} cpus={} features={} seed={} simulated={:.6f}s events={}\n",
      r.machine, r.nr_cpus, r.features.empty() ? "default" : r.features, r.seed,
      r.simulated_ns * 1e-9, r.events);
  s += fmt::format("schedlab: busy={:.1f}% kernel={:.1f}% idle={:.1f}%", pct(c.busy_ns),
                   pct(derived::kernel_total_ns(c)), pct(derived::idle_total_ns(c)));
  auto item = [&s](const std::string& name, auto v) { s += fmt::format(" {}={}", name, v); };
  auto items = [&](const char* name, const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, int64_t>) {
      item(name, v);
    } else if constexpr (!std::is_same_v<V, PerIdleState>) {  // (idle states: by machine)
      for (size_t i = 0; i < v.size(); ++i)
        item(std::string(name) + "." + array_key(v, static_cast<int>(i)), v[i]);
    }
  };
#define SCHEDLAB_SUMMARY_STORED(name, unit, show, ...) \
  if ((show) & kSummary) items(#name, c.name);
#define SCHEDLAB_SUMMARY_ARRAY(name, storage, unit, show, ...) \
  if ((show) & kSummary) items(#name, c.name);
#define SCHEDLAB_SUMMARY_DERIVED(name, unit, show, ...) \
  if ((show) & kSummary) item(#name, derived::name(c));
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_SUMMARY_STORED, SCHEDLAB_SUMMARY_ARRAY, SCHEDLAB_SUMMARY_DERIVED)
#undef SCHEDLAB_SUMMARY_STORED
#undef SCHEDLAB_SUMMARY_ARRAY
#undef SCHEDLAB_SUMMARY_DERIVED
  s += "\n";
  return s;
}

}  // namespace schedlab::experiment
