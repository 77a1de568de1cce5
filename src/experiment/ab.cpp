#include "experiment/ab.hpp"

#include <atomic>
#include <mutex>
#include <thread>

namespace schedlab::experiment {

namespace {
constexpr int kCallFunc = static_cast<int>(trace::IpiKind::CallFunctionSingle);
constexpr int kResched = static_cast<int>(trace::IpiKind::Reschedule);
double per_run(double v) { return v; }
}  // namespace

const std::vector<CounterMetric>& ab_counters() {
  static const std::vector<CounterMetric> c = {
      {"context_switches", "count",
       [](const RunResult& r) { return per_run(r.total.context_switches); }},
      {"migrations", "count", [](const RunResult& r) { return per_run(r.total.migrations); }},
      {"ipi_reschedule", "count",
       [](const RunResult& r) { return per_run(r.total.ipi_sent[kResched]); }},
      {"ipi_call_function", "count",
       [](const RunResult& r) { return per_run(r.total.ipi_sent[kCallFunc]); }},
      {"wake_polling_no_ipi", "count",
       [](const RunResult& r) { return per_run(r.total.wake_polling_no_ipi); }},
      {"pick_next_task_from_idle", "count",
       [](const RunResult& r) { return per_run(r.total.pick_next_task_from_idle); }},
      {"newidle_balance_ms", "ms",
       [](const RunResult& r) {
         return r.total.kernel_ns[static_cast<int>(trace::KernelPath::NewidleBalance)] / 1e6;
       }},
      {"sis_scanned_per_call", "cpus",
       [](const RunResult& r) {
         return r.total.sis_calls ? static_cast<double>(r.total.sis_scanned) / r.total.sis_calls
                                  : 0.0;
       }},
      {"avg_scan_cost_ns", "ns",
       [](const RunResult& r) {
         return r.total.sis_calls ? static_cast<double>(r.total.sis_scan_ns) / r.total.sis_calls
                                  : 0.0;
       }},
      {"idle_entries", "count",
       [](const RunResult& r) {
         int64_t s = 0;
         for (auto u : r.total.idle_usage) s += u;
         return static_cast<double>(s);
       }},
      {"idle_spin_ms", "ms",
       [](const RunResult& r) {
         return r.total.kernel_ns[static_cast<int>(trace::KernelPath::Spin)] / 1e6;
       }},
      {"kernel_time_pct", "%",
       [](const RunResult& r) {
         double t = static_cast<double>(r.simulated_ns) * r.nr_cpus;
         return t > 0 ? 100.0 * r.total.kernel_total_ns() / t : 0.0;
       }},
  };
  return c;
}

namespace {
RunSpec side_spec(const AbSpec& spec, bool test) {
  RunSpec s = spec.base;
  const auto& sets = test ? spec.test_sets : spec.base_sets;
  const auto& idle = test ? spec.test_idle_disable : spec.base_idle_disable;
  s.sets.insert(s.sets.end(), sets.begin(), sets.end());
  s.idle_disable.insert(s.idle_disable.end(), idle.begin(), idle.end());
  s.features = test ? spec.test_features : spec.base_features;
  return s;
}
}  // namespace

AbResult run_ab(const AbSpec& spec, const std::function<void(int, int)>& progress) {
  const RunSpec side[2] = {side_spec(spec, false), side_spec(spec, true)};
  const machine::Machine m[2] = {load_machine(side[0]), load_machine(side[1])};
  const int n = spec.runs;
  const int total = 2 * n;
  AbResult r;
  r.base.resize(n);
  r.test.resize(n);
  std::atomic<int> next{0};
  std::mutex mu;
  int done = 0;
  std::exception_ptr err;
  auto worker = [&] {
    for (;;) {
      int i = next.fetch_add(1);
      if (i >= total) return;
      {
        std::lock_guard<std::mutex> g(mu);
        if (err) return;
      }
      int idx = i / 2;
      bool test = i % 2 == 1;
      RunSpec s = side[test];
      s.seed = spec.first_seed + idx;
      s.sink = nullptr;
      try {
        RunResult res = run_one(m[test], s);
        std::lock_guard<std::mutex> g(mu);
        (test ? r.test : r.base)[idx] = std::move(res);
        ++done;
        if (progress) progress(done, total);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (!err) err = std::current_exception();
        return;
      }
    }
  };
  int jobs = std::max(1, std::min(spec.jobs, total));
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (err) std::rethrow_exception(err);
  return r;
}

std::vector<report::Metric> ab_metrics(const AbSpec& spec, const AbResult& r) {
  std::string la = spec.base_features.empty() ? "base" : spec.base_features;
  std::string lb = spec.test_features.empty() ? "test" : spec.test_features;
  if (la == lb) {
    la = "base";
    lb = "test";
  }
  std::vector<report::Metric> out;
  if (r.base.empty()) return out;
  for (size_t k = 0; k < r.base[0].metrics.size(); ++k) {
    const auto& m0 = r.base[0].metrics[k];
    report::Metric m;
    m.name = m0.name;
    m.unit = m0.unit;
    m.dir = m0.higher_is_better ? report::Direction::HigherIsBetter
                                : report::Direction::LowerIsBetter;
    report::SampleSet a{la, {}}, b{lb, {}};
    for (const auto& x : r.base) a.values.push_back(x.metrics[k].value);
    for (const auto& x : r.test) b.values.push_back(x.metrics[k].value);
    m.sets = {a, b};
    out.push_back(std::move(m));
  }
  for (const auto& c : ab_counters()) {
    report::Metric m;
    m.name = c.name;
    m.unit = c.unit;
    m.dir = report::Direction::LowerIsBetter;
    report::SampleSet a{la, {}}, b{lb, {}};
    for (const auto& x : r.base) a.values.push_back(c.get(x));
    for (const auto& x : r.test) b.values.push_back(c.get(x));
    m.sets = {a, b};
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace schedlab::experiment
