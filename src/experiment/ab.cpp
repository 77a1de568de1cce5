#include "experiment/ab.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <type_traits>

#include "kernel/change.hpp"

namespace schedlab::experiment {

std::vector<CounterMetric> ab_counters(const AbSpec& spec) {
  using namespace kernel;
  std::vector<CounterMetric> out;
  const std::vector<int> cpus = spec.counter_cpus;
  auto counters = [cpus](const RunResult& r) {
    if (cpus.empty()) return r.total;
    CpuCounters c = r.per_cpu[cpus.front()];
    for (size_t i = 1; i < cpus.size(); ++i) c.add(r.per_cpu[cpus[i]]);
    return c;
  };
  auto dir_of = [](unsigned show) {
    return (show & kLower) ? stats::Direction::LowerIsBetter
           : (show & kHigher) ? stats::Direction::HigherIsBetter
                              : stats::Direction::Neutral;
  };
  auto row = [&](std::string name, const char* unit, std::function<double(const CpuCounters&)> f,
                 stats::Direction dir) {
    out.push_back({std::move(name), unit, [f, counters](const RunResult& r) { return f(counters(r)); }, dir});
  };
  auto rows = [&](const char* name, const char* unit, auto member, stats::Direction dir) {
    using V = std::decay_t<decltype(CpuCounters{}.*member)>;
    if constexpr (std::is_same_v<V, int64_t>) {
      row(name, unit, [member](const CpuCounters& c) { return static_cast<double>(c.*member); }, dir);
    } else if constexpr (!std::is_same_v<V, PerIdleState>) {  // (idle states: by machine)
      for (size_t i = 0; i < V{}.size(); ++i)
        row(std::string(name) + "." + array_key(V{}, static_cast<int>(i)), unit,
            [member, i](const CpuCounters& c) { return static_cast<double>((c.*member)[i]); }, dir);
    }
  };
#define SCHEDLAB_AB_STORED(name, unit, show, ...) \
  if ((show) & kAb) rows(#name, unit, &CpuCounters::name, dir_of(show));
#define SCHEDLAB_AB_ARRAY(name, storage, unit, show, ...) \
  if ((show) & kAb) rows(#name, unit, &CpuCounters::name, dir_of(show));
#define SCHEDLAB_AB_DERIVED(name, unit, show, ...)                                                   \
  if ((show) & kAb)                                                                                 \
    row(#name, unit, [](const CpuCounters& c) { return static_cast<double>(derived::name(c)); }, \
        dir_of(show));
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_AB_STORED, SCHEDLAB_AB_ARRAY, SCHEDLAB_AB_DERIVED)
#undef SCHEDLAB_AB_STORED
#undef SCHEDLAB_AB_ARRAY
#undef SCHEDLAB_AB_DERIVED
  // The key counters of the changes that are on in either side.
  const Features fa = parse_features(spec.base_features), fb = parse_features(spec.test_features);
  for (const ChangeType* t : change_types()) {
    if (!fa.change_on(t->index) && !fb.change_on(t->index)) continue;
    for (const auto& cc : t->info.counters) {
      if (!cc.key) continue;
      std::string name = cc.name;
      row(name, cc.unit, [name](const CpuCounters& c) {
        return static_cast<double>(change_counter(c, name));
      }, stats::Direction::Neutral);
    }
  }
  // The CFS era's counters (0 under EEVDF) when either side runs it.
  if (!fa.on(Feature::EEVDF) || !fb.on(Feature::EEVDF)) {
    rows("cfs_wakeup_preempt", "count", &CpuCounters::cfs_wakeup_preempt, stats::Direction::Neutral);
    rows("cfs_wakeup_within_gran", "count", &CpuCounters::cfs_wakeup_within_gran, stats::Direction::Neutral);
    rows("cfs_sleeper_capped", "count", &CpuCounters::cfs_sleeper_capped, stats::Direction::Neutral);
    rows("cfs_tick_preempt_slice", "count", &CpuCounters::cfs_tick_preempt_slice, stats::Direction::Neutral);
    rows("cfs_tick_preempt_ahead", "count", &CpuCounters::cfs_tick_preempt_ahead, stats::Direction::Neutral);
    rows("cfs_pick_next_buddy", "count", &CpuCounters::cfs_pick_next_buddy, stats::Direction::Neutral);
    rows("cfs_pick_last_buddy", "count", &CpuCounters::cfs_pick_last_buddy, stats::Direction::Neutral);
  }
  out.push_back({"kernel_time_pct", "%", [counters, cpus](const RunResult& r) {
                   double t = static_cast<double>(r.simulated_ns) *
                              (cpus.empty() ? r.nr_cpus : static_cast<int>(cpus.size()));
                   return t > 0 ? 100.0 * derived::kernel_total_ns(counters(r)) / t : 0.0;
                 }, stats::Direction::LowerIsBetter});
  return out;
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
  // A failed run stops the series; the error reported is that of the failed run with the lowest
  // index (every run before it is still run), so it does not depend on --jobs or on timing.
  std::exception_ptr err;
  int err_index = total;
  auto worker = [&] {
    for (;;) {
      int i = next.fetch_add(1);
      if (i >= total) return;
      {
        std::lock_guard<std::mutex> g(mu);
        if (i > err_index) return;
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
        if (i < err_index) err = std::current_exception(), err_index = i;
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
  for (const auto& c : ab_counters(spec)) {
    report::Metric m;
    m.name = c.name;
    m.unit = c.unit;
    m.dir = c.dir;
    report::SampleSet a{la, {}}, b{lb, {}};
    for (const auto& x : r.base) a.values.push_back(c.get(x));
    for (const auto& x : r.test) b.values.push_back(c.get(x));
    m.sets = {a, b};
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace schedlab::experiment
