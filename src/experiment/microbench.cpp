#include "experiment/microbench.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "machine/toml_reader.hpp"

namespace schedlab::experiment {

namespace {

using FiguresReader = machine::TomlReader<FiguresError>;

// One [[figure]] table; `n` is its position (1-based) for messages before its key is known.
Figure read_figure(FiguresReader& rd, const toml::node& node, size_t n) {
  Figure f;
  f.line = static_cast<int>(node.source().begin.line);
  if (!node.is_table()) rd.fail(node, fmt::format("figure {} must be a table ([[figure]]), not {}", n, machine::type_name(node.type())));
  const toml::table& t = *node.as_table();
  const std::string label = fmt::format("figure {}", n);
  rd.reject_unknown(t, label, {"key", "value_ns", "what", "source", "role", "note", "iterations", "statistic"});
  auto need = [&](const char* k) -> const toml::node& {
    const toml::node* v = t.get(k);
    if (!v) rd.fail_at(static_cast<uint32_t>(f.line), fmt::format("{}: missing key '{}'", label, k));
    return *v;
  };
  const toml::node& kn = need("key");
  f.key = rd.get_string(kn, "key");
  static const std::regex key_re("[A-Za-z0-9_]+");
  if (!std::regex_match(f.key, key_re))
    rd.fail(kn, fmt::format("{}: key '{}' must be letters, digits and '_' (a calibration key or idle_exit_<STATE>)",
                            label, f.key));
  if (f.key.rfind("membarrier_noipi_", 0) == 0)
    rd.fail(kn, fmt::format("{}: give the IPI round trip itself as membarrier_ipi_<class>, not '{}'", label, f.key));
  const std::string who = fmt::format("figure '{}'", f.key);
  const toml::node& vn = need("value_ns");
  f.value_ns = rd.get_real(vn, who + ": value_ns");
  if (!std::isfinite(f.value_ns) || f.value_ns <= 0 || f.value_ns > 1e9)
    rd.fail(vn, fmt::format("{}: value_ns must be a time in ns, > 0 and at most 1e9 (got {})", who, f.value_ns));
  f.what = rd.get_string(need("what"), who + ": what");
  const toml::node& sn = need("source");
  f.source = rd.get_string(sn, who + ": source");
  if (f.source.empty()) rd.fail(sn, who + ": source must name a tag of docs/sources.md");
  const toml::node& on = need("role");
  f.role = rd.get_string(on, who + ": role");
  if (f.role != "check" && f.role != "cost")
    rd.fail(on, fmt::format("{}: role must be \"check\" (simulated from several costs) or \"cost\" (the figure a "
                            "profile cost was taken from), not \"{}\"",
                            who, f.role));
  if (const toml::node* nn = t.get("note")) f.note = rd.get_string(*nn, who + ": note");
  // The published run's shape: only the wake-up figures are simulated from a run of a chosen length.
  const bool wake = is_wake_key(f.key);
  if (const toml::node* in = t.get("iterations")) {
    if (!wake) rd.fail(*in, fmt::format("{}: iterations applies only to wake_latency_* and wake_syscall_* figures", who));
    f.iterations = rd.get_int(*in, who + ": iterations");
    if (f.iterations < 2 || f.iterations > kMaxFigureIterations)
      rd.fail(*in, fmt::format("{}: iterations must be 2 to {} (got {})", who, kMaxFigureIterations, f.iterations));
  }
  if (const toml::node* sn2 = t.get("statistic")) {
    if (!wake) rd.fail(*sn2, fmt::format("{}: statistic applies only to wake_latency_* and wake_syscall_* figures", who));
    f.statistic = rd.get_string(*sn2, who + ": statistic");
    if (f.statistic != "median" && f.statistic != "mean")
      rd.fail(*sn2, fmt::format("{}: statistic must be \"median\" or \"mean\", not \"{}\"", who, f.statistic));
  }
  return f;
}

}  // namespace

FigureSet read_figures(const std::string& text, const std::string& file) {
  FiguresReader rd(file);
  toml::table root = rd.parse(text);
  rd.reject_unknown(root, "the top level (machine, [[figure]])", {"machine", "figure"});
  FigureSet set;
  const toml::node* mn = root.get("machine");
  if (!mn) rd.fail_at(0, "missing key 'machine' (the profile the figures are for)");
  set.machine = rd.get_string(*mn, "machine");
  const toml::node* fn = root.get("figure");
  if (!fn) rd.fail_at(0, "no [[figure]] tables");
  if (!fn->is_array()) rd.fail(*fn, fmt::format("figure must be [[figure]] tables, not {}", machine::type_name(fn->type())));
  std::set<std::string> seen;
  size_t n = 0;
  for (const toml::node& node : *fn->as_array()) {
    Figure f = read_figure(rd, node, ++n);
    if (!seen.insert(f.key).second)
      rd.fail_at(static_cast<uint32_t>(f.line), fmt::format("figure '{}': key given twice", f.key));
    set.figures.push_back(std::move(f));
  }
  if (set.figures.empty()) rd.fail(*fn, "no [[figure]] tables");
  return set;
}

std::string figures_path(const std::string& machine_name) {
  return (std::filesystem::path(machine::profile_dir()) / "microbench" / (machine_name + ".toml")).string();
}

std::vector<CheckRow> published_check(const machine::Machine& m, const FigureSet& set) {
  host::CalibrationResult r;
  for (const auto& f : set.figures) {
    host::Measurement x;
    x.key = f.key;
    x.value_ns = x.median_ns = f.value_ns;
    x.what = f.what;
    r.measurements.push_back(x);
  }
  std::map<std::string, RunShape> shapes;
  for (const auto& f : set.figures)
    if (f.iterations > 0 || f.statistic != "median") shapes[f.key] = RunShape{f.iterations, f.statistic == "mean"};
  std::vector<CheckRow> rows = self_check(m, r, kSelfCheckGapUs, &shapes);
  for (CheckRow& row : rows) {
    const Figure* fp = nullptr;
    for (const auto& f : set.figures)
      if (f.key == row.key) fp = &f;
    if (!fp) continue;
    const Figure& f = *fp;
    row.source = f.source;
    if (f.role == "cost") row.how += " (the figure is the cost's source)";
    if (!f.note.empty()) row.how += "; " + f.note;
  }
  return rows;
}

}  // namespace schedlab::experiment
