#include "host/calib_stats.hpp"

#include "stats/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace schedlab::host {

double quantile(const std::vector<double>& v, double p) {
  if (v.empty()) return NAN;
  return stats::quantile(v, std::clamp(p, 0.0, 1.0));
}

double median_of(const std::vector<double>& v) { return quantile(v, 0.5); }

double robust_cov(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double med = median_of(v);
  if (!(med > 0)) return 0;
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - med));
  return 1.4826 * median_of(dev) / med;
}

double lognormal_sigma(const std::vector<double>& v) {
  constexpr double kZ90 = 1.2815515655446004;  // standard normal 0.9 quantile
  if (v.size() < 2) return 0;
  double lo = quantile(v, 0.10), hi = quantile(v, 0.90);
  if (!(lo > 0) || !(hi > 0)) return 0;
  return (std::log(hi) - std::log(lo)) / (2 * kZ90);
}

Estimate estimate(const std::vector<double>& v, double q) {
  Estimate e;
  e.n = static_cast<int>(v.size());
  if (v.empty()) return e;
  e.value = quantile(v, q);
  e.median = median_of(v);
  e.spread = robust_cov(v);
  e.min = *std::min_element(v.begin(), v.end());
  e.max = *std::max_element(v.begin(), v.end());
  return e;
}

Distribution distribution(const std::vector<double>& s) {
  Distribution d;
  d.n = static_cast<int>(s.size());
  if (s.empty()) return d;
  d.p10 = quantile(s, 0.10);
  d.p50 = quantile(s, 0.50);
  d.p90 = quantile(s, 0.90);
  d.p99 = quantile(s, 0.99);
  d.sigma = lognormal_sigma(s);
  return d;
}

// ---- load check ------------------------------------------------------------------------------

bool parse_proc_stat_cpu(const std::string& text, CpuSnapshot* s) {
  std::istringstream in(text);
  std::string label;
  if (!(in >> label) || label != "cpu") return false;
  long long v[8] = {0};
  int n = 0;
  for (; n < 8 && (in >> v[n]); ++n) {
  }
  if (n < 4) return false;
  // user nice system idle iowait irq softirq steal
  s->total_ticks = 0;
  for (int i = 0; i < n; ++i) s->total_ticks += v[i];
  s->busy_ticks = s->total_ticks - v[3] - (n > 4 ? v[4] : 0);
  s->steal_ticks = n > 7 ? v[7] : 0;
  return true;
}

double other_busy_pct(const CpuSnapshot& a, const CpuSnapshot& b, int nr_cpus, long user_hz) {
  double wall = b.wall_s - a.wall_s;
  if (!(wall > 0) || nr_cpus < 1 || user_hz < 1) return 0;
  double busy = static_cast<double>(b.busy_ticks - a.busy_ticks) / static_cast<double>(user_hz);
  double own = b.self_cpu_s - a.self_cpu_s;
  return std::clamp(100.0 * (busy - own) / (wall * nr_cpus), 0.0, 100.0);
}

double steal_pct(const CpuSnapshot& a, const CpuSnapshot& b) {
  long long total = b.total_ticks - a.total_ticks;
  if (total <= 0) return 0;
  return 100.0 * static_cast<double>(b.steal_ticks - a.steal_ticks) / static_cast<double>(total);
}

LoadVerdict judge_load(const LoadReading& r, const LoadLimits& lim) {
  // The busy share is measured now; the load average lags by a minute (and counts tasks waiting
  // for I/O), so on its own it only warns.
  if (r.other_busy_pct > lim.refuse_pct) return LoadVerdict::TooBusy;
  if (r.other_busy_pct > lim.warn_pct || r.loadavg1 > r.nr_cpus) return LoadVerdict::Busy;
  return LoadVerdict::Quiet;
}

std::string describe_load(const LoadReading& r, double over_s) {
  return fmt::format("other processes kept {:.1f}% of {} CPU(s) busy over {:.1f} s (load average {:.2f})",
                     r.other_busy_pct, r.nr_cpus, over_s, r.loadavg1);
}

// ---- rounds ----------------------------------------------------------------------------------

std::vector<double> RoundsResult::usable(size_t b, size_t o, const RoundPlan& plan, bool* used_loaded) const {
  const auto& all = values[b][o];
  std::vector<double> quiet;
  for (size_t k = 0; k < all.size(); ++k)
    if (!loaded[b][k]) quiet.push_back(all[k]);
  bool fallback = static_cast<int>(quiet.size()) < plan.min_quiet_rounds && quiet.size() < all.size();
  if (used_loaded) *used_loaded = fallback;
  return fallback ? all : quiet;
}

RoundsResult run_rounds(const std::vector<RoundBench>& benches, const RoundPlan& plan,
                        const std::function<double()>& now_s, const std::function<double()>& round_load) {
  RoundsResult r;
  const size_t nb = benches.size();
  r.values.resize(nb);
  r.loaded.resize(nb);
  r.failed.assign(nb, false);
  for (size_t b = 0; b < nb; ++b) r.values[b].resize(benches[b].outputs);
  const double deadline = now_s() + plan.budget_s;
  if (round_load) round_load();  // prime
  auto stable = [&](size_t b) {
    if (r.failed[b]) return true;
    for (size_t o = 0; o < r.values[b].size(); ++o) {
      auto v = r.usable(b, o, plan);
      if (static_cast<int>(v.size()) < plan.min_rounds || robust_cov(v) >= plan.target_spread) return false;
    }
    return true;
  };
  for (int round = 0; round < plan.max_rounds; ++round) {
    std::vector<size_t> ran;
    for (size_t b = 0; b < nb; ++b) {
      if (r.failed[b]) continue;
      if (now_s() > deadline && round > 0) {
        r.budget_exhausted = true;
        break;
      }
      auto vals = benches[b].batch();
      if (!vals || static_cast<int>(vals->size()) != benches[b].outputs) {
        r.failed[b] = true;
        continue;
      }
      for (size_t o = 0; o < vals->size(); ++o) r.values[b][o].push_back((*vals)[o]);
      ran.push_back(b);
    }
    double busy = round_load ? round_load() : 0;
    r.round_busy_pct.push_back(busy);
    for (size_t b : ran) r.loaded[b].push_back(busy > plan.round_busy_pct);
    r.rounds = round + 1;
    if (r.budget_exhausted) break;
    bool all = true;
    for (size_t b = 0; b < nb; ++b) all = all && stable(b);
    if (all) {
      r.converged = true;
      break;
    }
    if (now_s() > deadline) {
      r.budget_exhausted = true;
      break;
    }
  }
  if (!r.converged) {
    bool all = true;
    for (size_t b = 0; b < nb; ++b) all = all && stable(b);
    r.converged = all;
  }
  return r;
}

}  // namespace schedlab::host
