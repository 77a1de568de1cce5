#include "experiment/run.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "host/probe.hpp"
#include "trace/writers.hpp"

namespace schedlab::experiment {

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
  } catch (const machine::ProfileError& e) {
    // The machine layer knows only profiles/; `host` is resolved here.
    std::string what = e.what();
    if (what.rfind("unknown machine '", 0) == 0)
      throw machine::ProfileError(what + "; or 'host' for this machine's profile (`schedlab host probe`)");
    throw;
  }
  for (const auto& s : spec.sets) machine::apply_set(m, s);
  if (!spec.idle_disable.empty()) machine::disable_idle_states(m, spec.idle_disable);
  return m;
}

kernel::Features parse_features(const std::string& list) {
  kernel::Features f;
  f.apply(list);
  return f;
}

RunResult run_one(const RunSpec& spec) { return run_one(load_machine(spec), spec); }

RunResult run_one(const machine::Machine& m, const RunSpec& spec) {
  kernel::Features f = parse_features(spec.features);
  auto w = workload::parse_workload(spec.command, m.topo.nr_cpus());
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
    throw std::invalid_argument("--trace-window: needs --trace FILE");
  }
  kernel::KernelOptions ko;
  ko.seed = spec.seed;
  ko.sink = sink;
  ko.check = spec.check;
  kernel::Kernel k(m, f, ko);
  k.set_default_affinity(w->affinity());
  w->setup(k.api());
  k.run(w->time_limit());
  if (!w->finished())
    throw std::runtime_error(fmt::format("benchmark did not finish within {} s of simulated time",
                                         w->time_limit().seconds()));
  RunResult r;
  r.machine = m.name;
  r.features = f.describe();
  r.seed = spec.seed;
  r.command = workload::join(spec.command);
  r.report = w->report();
  r.files = w->output_files();
  r.warnings = w->warnings();
  r.metrics = w->metrics();
  r.total = k.total();
  for (int c = 0; c < k.nr_cpus(); ++c) r.per_cpu.push_back(k.rq(c).c);
  for (const auto& s : m.idle_states) r.idle_state_names.push_back(s.name);
  r.idle_state_names.push_back(m.tunables.idle_poll ? "poll(idle=poll)" : "default_idle");
  r.simulated_ns = k.end_time().count();
  r.events = k.events_run();
  r.nr_cpus = k.nr_cpus();
  return r;
}

nlohmann::ordered_json counters_json(const kernel::CpuCounters& c,
                                     const std::vector<std::string>& idle_names) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["busy_ns"] = c.busy_ns;
  ordered_json k;
  for (int i = 0; i < kernel::kNumKernelPaths; ++i)
    k[trace::kernel_path_name(static_cast<trace::KernelPath>(i))] = c.kernel_ns[i];
  j["kernel_ns"] = k;
  j["kernel_total_ns"] = c.kernel_total_ns();
  ordered_json idle, usage;
  for (size_t i = 0; i < c.idle_ns.size() && i < idle_names.size(); ++i) {
    idle[idle_names[i]] = c.idle_ns[i];
    usage[idle_names[i]] = c.idle_usage[i];
  }
  j["idle_ns"] = idle;
  j["idle_total_ns"] = c.idle_total_ns();
  j["idle_usage"] = usage;
  j["context_switches"] = c.context_switches;
  j["mm_switches"] = c.mm_switches;
  j["schedule_calls"] = c.schedule_calls;
  j["schedule_idle_calls"] = c.schedule_idle_calls;
  j["pick_next_task_calls"] = c.pick_next_task_calls;
  j["pick_next_task_from_idle"] = c.pick_next_task_from_idle;
  j["sm_idle_fastpath"] = c.sm_idle_fastpath;
  j["ttwu_local"] = c.ttwu_local;
  j["ttwu_remote"] = c.ttwu_remote;
  j["ttwu_wakelist"] = c.ttwu_wakelist;
  j["ipi_sent"] = {{"reschedule", c.ipi_sent[0]}, {"call_function_single", c.ipi_sent[1]}};
  j["ipi_received"] = {{"reschedule", c.ipi_received[0]},
                       {"call_function_single", c.ipi_received[1]}};
  j["wake_polling_no_ipi"] = c.wake_polling_no_ipi;
  j["select_idle_cpu_calls"] = c.sis_calls;
  j["select_idle_cpu_scanned"] = c.sis_scanned;
  j["select_idle_cpu_found"] = c.sis_found;
  j["select_idle_cpu_scan_ns"] = c.sis_scan_ns;
  j["avg_scan_cost_ns"] = c.sis_calls ? static_cast<double>(c.sis_scan_ns) / c.sis_calls : 0.0;
  j["idle_cpumask_stale"] = c.idle_cpumask_stale;
  j["newidle_balance_calls"] = c.newidle_calls;
  j["newidle_balance_skipped"] = c.newidle_skipped;
  j["newidle_balance_ns"] = c.kernel_ns[static_cast<int>(trace::KernelPath::NewidleBalance)];
  j["newidle_balance_pulled"] = c.newidle_pulled;
  j["load_balance_calls"] = c.lb_calls;
  j["load_balance_pulled"] = c.lb_pulled;
  j["migrations"] = c.migrations;
  j["call_functions_run"] = c.csd_run;
  j["ticks"] = c.ticks;
  j["idle_spin"] = c.idle_spin;
  j["idle_spin_hit"] = c.idle_spin_hit;
  j["idle_spin_ns"] = c.kernel_ns[static_cast<int>(trace::KernelPath::Spin)];
  j["idle_spin_hidden_ns"] = c.idle_spin_hidden_ns;
  j["wasted_idle_ns"] = c.wasted_idle_ns;
  return j;
}

nlohmann::ordered_json to_json(const RunResult& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schedlab_version"] = "0.1.0";
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
  const auto& c = r.total;
  double total = static_cast<double>(r.simulated_ns) * r.nr_cpus;
  auto pct = [&](int64_t v) { return total > 0 ? 100.0 * v / total : 0.0; };
  std::string s = fmt::format(
      "schedlab: machine={} cpus={} features={} seed={} simulated={:.6f}s events={}\n",
      r.machine, r.nr_cpus, r.features.empty() ? "default" : r.features, r.seed,
      r.simulated_ns * 1e-9, r.events);
  s += fmt::format(
      "schedlab: busy={:.1f}% kernel={:.1f}% idle={:.1f}% ctxsw={} migrations={} "
      "ipi_resched={} ipi_callfunc={} polling_wakes={} sis_scanned={} newidle={}/{}\n",
      pct(c.busy_ns), pct(c.kernel_total_ns()), pct(c.idle_total_ns()), c.context_switches,
      c.migrations, c.ipi_sent[0], c.ipi_sent[1], c.wake_polling_no_ipi, c.sis_scanned,
      c.newidle_calls, c.newidle_pulled);
  return s;
}

}  // namespace schedlab::experiment
