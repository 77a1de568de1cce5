// Sweep results: the result directory, cell files, running a shard, merging.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>

#include "experiment/sweep.hpp"
#include "io/output.hpp"
#include "kernel/change.hpp"
#include "machine/machine.hpp"
#include "machine/toml_reader.hpp"
#include "trace/writers.hpp"
#include "util/text.hpp"
#include "workload/workload.hpp"

namespace schedlab::experiment {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr const char* kCellSchema = "schedlab.sweep.cell.v1";
constexpr const char* kMergeSchema = "schedlab.sweep.merge.v1";
constexpr size_t kNamedPerKind = 5;  // refusals named in the one error line, per kind

std::string slurp(const fs::path& p, const std::string& what) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw SweepError(fmt::format("{} '{}': cannot open for reading", what, p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw SweepError(fmt::format("{} '{}': read error", what, p.string()));
  return ss.str();
}

// ---- counters, as stored: every stored field by its X-macro name, the changes' by name ----------

ordered_json counters_to_json(const kernel::CpuCounters& c) {
  using namespace kernel;
  ordered_json j;
#define SCHEDLAB_SWEEP_STORED(name, unit, show, ...) j[#name] = c.name;
#define SCHEDLAB_SWEEP_ARRAY(name, storage, unit, show, ...) j[#name] = c.name;
#define SCHEDLAB_SWEEP_DERIVED(...)
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_SWEEP_STORED, SCHEDLAB_SWEEP_ARRAY, SCHEDLAB_SWEEP_DERIVED)
#undef SCHEDLAB_SWEEP_STORED
#undef SCHEDLAB_SWEEP_ARRAY
#undef SCHEDLAB_SWEEP_DERIVED
  ordered_json ch = ordered_json::object();
  for (const ChangeType* t : change_types())
    for (size_t i = 0; i < t->info.counters.size(); ++i) {
      const ChangeCounter& cc = t->info.counters[i];
      if (cc.derive) continue;
      size_t slot = t->counter_base + i;
      ch[cc.name] = slot < c.change.size() ? c.change[slot] : 0;
    }
  j["change"] = ch;
  return j;
}

template <class T>
void read_field(const ordered_json& j, const char* name, T& v) {
  const ordered_json& x = j.at(name);
  if constexpr (std::is_same_v<T, int64_t>) {
    v = x.get<int64_t>();
  } else if constexpr (std::is_same_v<T, kernel::PerIdleState>) {
    v = x.get<kernel::PerIdleState>();
  } else {
    if (!x.is_array() || x.size() != v.size())
      throw SweepError(fmt::format("counter '{}' has {} elements, this schedlab {}", name, x.size(), v.size()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = x[i].get<int64_t>();
  }
}

kernel::CpuCounters counters_from_json(const ordered_json& j) {
  using namespace kernel;
  CpuCounters c;
#define SCHEDLAB_SWEEP_STORED(name, unit, show, ...) read_field(j, #name, c.name);
#define SCHEDLAB_SWEEP_ARRAY(name, storage, unit, show, ...) read_field(j, #name, c.name);
#define SCHEDLAB_SWEEP_DERIVED(...)
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_SWEEP_STORED, SCHEDLAB_SWEEP_ARRAY, SCHEDLAB_SWEEP_DERIVED)
#undef SCHEDLAB_SWEEP_STORED
#undef SCHEDLAB_SWEEP_ARRAY
#undef SCHEDLAB_SWEEP_DERIVED
  c.change.assign(nr_change_counters(), 0);
  const ordered_json& ch = j.at("change");
  size_t known = 0;
  for (const ChangeType* t : change_types())
    for (size_t i = 0; i < t->info.counters.size(); ++i) {
      const ChangeCounter& cc = t->info.counters[i];
      if (cc.derive) continue;
      auto it = ch.find(cc.name);
      if (it == ch.end()) throw SweepError(fmt::format("no counter '{}' (a schedlab without change {})", cc.name, t->info.name));
      c.change[t->counter_base + i] = it->get<int64_t>();
      ++known;
    }
  if (ch.size() != known) throw SweepError("change counters this schedlab does not have");
  return c;
}

ordered_json result_to_json(const RunResult& r, const std::vector<int>& cpus) {
  ordered_json j;
  j["machine"] = r.machine;
  j["features"] = r.features;
  j["seed"] = r.seed;
  j["command"] = r.command;
  j["simulated_ns"] = r.simulated_ns;
  j["events"] = r.events;
  j["nr_cpus"] = r.nr_cpus;
  j["idle_state_names"] = r.idle_state_names;
  ordered_json ms = ordered_json::array();
  for (const auto& m : r.metrics)
    ms.push_back({{"name", m.name}, {"unit", m.unit}, {"value", m.value}, {"higher_is_better", m.higher_is_better}});
  j["metrics"] = ms;
  j["report"] = r.report;
  j["counters"] = counters_to_json(r.total);
  j["counter_cpus"] = cpus;
  ordered_json per = ordered_json::array();
  for (int c : cpus) per.push_back(counters_to_json(r.per_cpu.at(c)));
  j["per_cpu"] = per;
  return j;
}

// The stored result; per_cpu holds the counter_cpus CPUs only, in that order.
RunResult result_from_json(const ordered_json& j) {
  RunResult r;
  r.machine = j.at("machine").get<std::string>();
  r.features = j.at("features").get<std::string>();
  r.seed = j.at("seed").get<uint64_t>();
  r.command = j.at("command").get<std::string>();
  r.simulated_ns = j.at("simulated_ns").get<int64_t>();
  r.events = j.at("events").get<uint64_t>();
  r.nr_cpus = j.at("nr_cpus").get<int>();
  r.idle_state_names = j.at("idle_state_names").get<std::vector<std::string>>();
  for (const auto& m : j.at("metrics")) {
    workload::Metric x;
    x.name = m.at("name").get<std::string>();
    x.unit = m.at("unit").get<std::string>();
    x.value = m.at("value").is_null() ? std::nan("") : m.at("value").get<double>();
    x.higher_is_better = m.at("higher_is_better").get<bool>();
    r.metrics.push_back(std::move(x));
  }
  r.report = j.at("report").get<std::string>();
  r.total = counters_from_json(j.at("counters"));
  for (const auto& c : j.at("per_cpu")) r.per_cpu.push_back(counters_from_json(c));
  if (r.per_cpu.size() != j.at("counter_cpus").size()) throw SweepError("per_cpu does not match counter_cpus");
  return r;
}

std::string join_list(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string seeds_text(const std::vector<uint64_t>& seeds) {
  bool consecutive = true;
  for (size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[0] + i;
  if (consecutive && seeds.size() > 2) return fmt::format("{}..{}", seeds.front(), seeds.back());
  std::string s;
  for (auto x : seeds) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::string cell_file_name(const SweepCell& c) { return c.id + kCellSuffix; }

std::string cell_result_text(const Sweep& s, const SweepCell& c, const RunResult& r) {
  const SweepGroup& g = s.groups[c.group];
  ordered_json j;
  j["schema"] = kCellSchema;
  j["id"] = c.id;
  j["schedlab_version"] = s.version;
  j["profile_fnv1a64"] = g.profile_hash;
  j["text"] = c.text;
  j["result"] = result_to_json(r, g.counter_cpus);
  return j.dump(1) + "\n";
}

Shard parse_shard(const std::string& flag, const std::string& text) {
  auto slash = text.find('/');
  auto num = [&](const std::string& x, long long& v) {
    if (x.empty() || x.size() > 9 || x.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoll(x);
    return true;
  };
  long long i = 0, n = 0;
  if (slash == std::string::npos || !num(text.substr(0, slash), i) || !num(text.substr(slash + 1), n))
    throw SweepError(fmt::format("{} '{}': give I/N (shard I of N, 0 <= I < N: the cells whose index is I mod N)",
                                 flag, machine::one_line(text)));
  if (n < 1 || n > kSweepMaxCells)
    throw SweepError(fmt::format("{} '{}': N must be 1 to {}", flag, text, kSweepMaxCells));
  if (i >= n) throw SweepError(fmt::format("{} '{}': I must be 0 to {} (shards are numbered from 0)", flag, text, n - 1));
  return {static_cast<int>(i), static_cast<int>(n)};
}

void prepare_result_dir(const Sweep& s, const std::string& dir) {
  if (dir.empty()) throw io::OutputError("--out: empty path");
  fs::path d(dir);
  std::error_code ec;
  if (fs::exists(d, ec)) {
    if (!fs::is_directory(d, ec)) throw io::OutputError(fmt::format("--out '{}': not a directory", dir));
  } else {
    fs::path parent = d.parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw io::OutputError(fmt::format("--out '{}': its parent directory does not exist", dir));
    if (!fs::create_directory(d, ec) && !fs::is_directory(d))
      throw io::OutputError(fmt::format("--out '{}': cannot create the directory: {}", dir, ec.message()));
  }
  const std::string text = manifest_text(s);
  const fs::path mf = d / kManifestFile;
  if (fs::exists(mf, ec)) {
    std::string existing = slurp(mf, "--out");
    if (existing == text) return;
    Sweep other;
    try {
      other = parse_manifest(existing, mf.string());
    } catch (const SweepError&) {
      throw SweepError(fmt::format("--out '{}': {} is not a sweep manifest; give another directory", dir, mf.string()));
    }
    std::map<std::string, int> ids;
    for (const auto& c : s.cells) ids[c.id] = c.index;
    size_t common = 0;
    for (const auto& c : other.cells) common += ids.count(c.id);
    throw SweepError(fmt::format(
        "--out '{}': holds another sweep ({}: sweep '{}', {} cells, {} of them among this sweep's {}); give another "
        "directory, or remove {} to reuse the finished cells that match",
        dir, mf.string(), other.name, other.cells.size(), common, s.cells.size(), mf.string()));
  }
  io::write_file_atomic("--out", mf.string(), text);
}

ShardPlan plan_shard(const Sweep& s, const Shard& shard, const std::string& dir) {
  ShardPlan p;
  for (const auto& c : s.cells) {
    if (c.index % shard.count != shard.index) continue;
    ++p.in_shard;
    std::error_code ec;
    if (fs::exists(fs::path(dir) / cell_file_name(c), ec))
      ++p.finished;
    else
      p.todo.push_back(c.index);
  }
  return p;
}

void run_shard(const Sweep& s, const ShardPlan& plan, const std::string& dir, int jobs,
               const std::function<void(int, int)>& progress) {
  const int total = static_cast<int>(plan.todo.size());
  std::atomic<int> next{0};
  std::mutex mu;
  int done = 0;
  std::exception_ptr err;
  int err_pos = total;
  auto worker = [&] {
    for (;;) {
      int i = next.fetch_add(1);
      if (i >= total) return;
      {
        std::lock_guard<std::mutex> g(mu);
        if (i > err_pos) return;
      }
      const SweepCell& cell = s.cells[plan.todo[i]];
      try {
        try {
          RunResult r = run_one(s.cell_spec(cell));
          io::write_file_atomic("--out", (fs::path(dir) / cell_file_name(cell)).string(), cell_result_text(s, cell, r));
        } catch (const io::OutputError&) {
          throw;
        } catch (const SpecError& e) {
          throw SweepError(fmt::format("cell {}: {}", s.describe(cell), e.what()));
        } catch (const DidNotFinish& e) {
          throw SweepError(fmt::format("cell {}: {}", s.describe(cell), e.what()));
        } catch (const workload::WorkloadError& e) {
          throw SweepError(fmt::format("cell {}: {}", s.describe(cell), e.what()));
        } catch (const machine::ProfileError& e) {
          throw SweepError(fmt::format("cell {}: {}", s.describe(cell), e.what()));
        }
        std::lock_guard<std::mutex> g(mu);
        ++done;
        if (progress) progress(done, total);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (i < err_pos) err = std::current_exception(), err_pos = i;
      }
    }
  };
  int n = std::max(1, std::min(jobs, total));
  std::vector<std::thread> threads;
  for (int j = 0; j < n; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (err) std::rethrow_exception(err);
}

// ---- merge -------------------------------------------------------------------------------------

namespace {

// The *.cell.json files under DIR (subdirectories included, hidden ones and temporary files of
// an unfinished write skipped), in path order so that every message is the same on every file
// system.
std::vector<fs::path> cell_files(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (name.size() > std::string_view(kCellSuffix).size() && name.ends_with(kCellSuffix) && it->is_regular_file(ec))
      files.push_back(it->path());
  }
  if (ec) throw SweepError(fmt::format("sweep merge '{}': {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// What the cell files of a directory hold, cell by cell, and what is wrong with them.
class Gathering {
 public:
  Gathering(const Sweep& s, std::string dir) : s_(s), dir_(std::move(dir)) {
    found.resize(s.cells.size());
    results.resize(s.cells.size());
    for (const auto& c : s.cells) {
      by_id_[c.id] = c.index;
      by_text_[c.text] = c.index;
    }
  }

  std::vector<std::string> found;   // per cell: the file (relative to DIR) it was read from
  std::vector<RunResult> results;   // per cell
  std::vector<std::string> duplicates, foreign;

  void add(const fs::path& f) {
    const std::string rel = f.lexically_relative(dir_).string();
    std::string id, version, profile, text;
    ordered_json result;
    try {
      auto j = ordered_json::parse(slurp(f, "sweep merge"));
      if (!j.is_object() || j.value("schema", "") != kCellSchema) return foreign.push_back(rel + " (not a sweep cell file)");
      id = j.at("id").get<std::string>();
      version = j.at("schedlab_version").get<std::string>();
      profile = j.at("profile_fnv1a64").get<std::string>();
      text = j.at("text").get<std::string>();
      result = j.at("result");
    } catch (const nlohmann::json::exception& e) {
      return foreign.push_back(machine::one_line(fmt::format("{} (malformed: {})", rel, e.what())));
    }
    if (f.filename().string() != id + kCellSuffix) return foreign.push_back(fmt::format("{} (holds cell {})", rel, id));
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return foreign.push_back(rel + " (" + why_foreign(text, version, profile) + ")");
    const int idx = it->second;
    if (!found[idx].empty()) return duplicates.push_back(fmt::format("cell #{} in {} and {}", idx, found[idx], rel));
    try {
      results[idx] = result_from_json(result);
      found[idx] = rel;
    } catch (const std::exception& e) {  // nlohmann's or SweepError
      foreign.push_back(machine::one_line(fmt::format("{} (a result this schedlab cannot read, from another build?: {})", rel, e.what())));
    }
  }

  // One line naming the missing cells, the duplicates and the foreign files (the first few of
  // each kind) and what to do; "" when there is nothing to refuse.
  std::string refusal() const {
    std::vector<std::string> missing;
    for (const auto& c : s_.cells)
      if (found[c.index].empty()) missing.push_back(s_.describe(c));
    if (missing.empty() && duplicates.empty() && foreign.empty()) return "";
    auto part = [](const std::vector<std::string>& v, const char* one, const char* many) {
      std::string p = fmt::format("{} {}: ", v.size(), v.size() == 1 ? one : many);
      for (size_t i = 0; i < v.size() && i < kNamedPerKind; ++i) p += (i ? ", " : "") + v[i];
      if (v.size() > kNamedPerKind) p += fmt::format(" and {} more", v.size() - kNamedPerKind);
      return p;
    };
    std::vector<std::string> parts;
    if (!missing.empty()) parts.push_back(part(missing, "missing cell", "missing cells"));
    if (!duplicates.empty()) parts.push_back(part(duplicates, "duplicate", "duplicates"));
    if (!foreign.empty()) parts.push_back(part(foreign, "foreign file", "foreign files"));
    std::string hint;
    if (!missing.empty()) hint = " (run the missing cells: schedlab sweep run FILE --out DIR)";
    if (!duplicates.empty() || !foreign.empty()) hint += " (move the duplicate or foreign files out of DIR)";
    return machine::one_line(fmt::format("sweep merge '{}': refused, {}{}", dir_, join_list(parts, "; "), hint));
  }

 private:
  // A cell file whose id is none of this sweep's: a cell of another sweep, or one of this
  // sweep's cells run by another schedlab version or with another content of its profile.
  std::string why_foreign(const std::string& text, const std::string& version, const std::string& profile) const {
    auto t = by_text_.find(text);
    if (t == by_text_.end()) return "a cell of another sweep";
    const SweepCell& c = s_.cells[t->second];
    const SweepGroup& g = s_.groups[c.group];
    if (version != s_.version)
      return fmt::format("cell #{} run by schedlab {}, this sweep's is {}", c.index, version, s_.version);
    if (profile != g.profile_hash)
      return fmt::format("cell #{} run with another content of profile '{}': fnv1a64 {}, this sweep's {}", c.index,
                         g.machine_name, profile, g.profile_hash);
    return "its id does not match its contents";
  }

  const Sweep& s_;
  std::string dir_;
  std::map<std::string, int> by_id_, by_text_;
};

// The tables: group-major, then the comparisons in file order; the runs of both sides by seed.
std::vector<SweepTable> build_tables(const Sweep& s, const Gathering& got, const std::string& dir,
                                     const std::string& manifest) {
  std::map<std::tuple<int, int, int>, int> at;
  for (const auto& c : s.cells) at[{c.group, c.side, c.run}] = c.index;
  auto cell_of = [&](int g, int side, int run) {
    auto it = at.find({g, side, run});
    if (it == at.end())
      throw SweepError(fmt::format("{}: malformed manifest: no cell for group {} side {} run {}", manifest, g, side, run));
    return it->second;
  };
  std::vector<SweepTable> tables;
  for (size_t gi = 0; gi < s.groups.size(); ++gi) {
    const SweepGroup& g = s.groups[gi];
    for (size_t ci = 0; ci < s.comparisons.size(); ++ci) {
      const SweepComparison& c = s.comparisons[ci];
      SweepTable t;
      t.group = static_cast<int>(gi);
      t.comparison = static_cast<int>(ci);
      t.spec = s.ab_spec(g, c);
      t.spec.counter_cpus.clear();
      for (size_t k = 0; k < g.counter_cpus.size(); ++k) t.spec.counter_cpus.push_back(static_cast<int>(k));
      const int first = cell_of(static_cast<int>(gi), c.base, 0);
      const RunResult& ref = got.results[first];
      for (size_t r = 0; r < s.seeds.size(); ++r)
        for (int side : {c.base, c.test}) {
          const int idx = cell_of(static_cast<int>(gi), side, static_cast<int>(r));
          const RunResult& x = got.results[idx];
          // ab_metrics reads metric k of every run by position: the runs must agree.
          bool same = x.metrics.size() == ref.metrics.size() && x.per_cpu.size() == g.counter_cpus.size();
          for (size_t k = 0; same && k < x.metrics.size(); ++k) same = x.metrics[k].name == ref.metrics[k].name;
          if (!same)
            throw SweepError(fmt::format("sweep merge '{}': cells #{} and #{} report different metrics ({} and {})", dir,
                                         first, idx, got.found[first], got.found[idx]));
          (side == c.base ? t.result.base : t.result.test).push_back(x);
        }
      tables.push_back(std::move(t));
    }
  }
  return tables;
}

}  // namespace

MergedSweep merge_sweep(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw SweepError(fmt::format("sweep merge '{}': not a directory", dir));
  const fs::path mf = fs::path(dir) / kManifestFile;
  if (!fs::exists(mf, ec))
    throw SweepError(fmt::format("sweep merge '{}': no {} (not a result directory of `schedlab sweep run`)", dir,
                                 kManifestFile));
  MergedSweep m;
  m.sweep = parse_manifest(slurp(mf, "sweep merge"), mf.string());
  Gathering got(m.sweep, dir);
  for (const auto& f : cell_files(dir)) got.add(f);
  if (std::string why = got.refusal(); !why.empty()) throw SweepError(why);
  m.tables = build_tables(m.sweep, got, dir, mf.string());
  return m;
}

std::vector<report::Metric> table_metrics(const MergedSweep& m, const SweepTable& t, size_t* nbench) {
  std::vector<report::Metric> ms = ab_metrics(t.spec, t.result);
  const SweepComparison& c = m.sweep.comparisons[t.comparison];
  for (auto& x : ms) {
    x.sets[0].label = m.sweep.sides[c.base].label;
    x.sets[1].label = m.sweep.sides[c.test].label;
  }
  if (nbench) *nbench = t.result.base.empty() ? 0 : t.result.base.front().metrics.size();
  return ms;
}

std::string table_header(const MergedSweep& m, const SweepTable& t) {
  const Sweep& s = m.sweep;
  const SweepGroup& g = s.groups[t.group];
  const SweepComparison& c = s.comparisons[t.comparison];
  std::string h = fmt::format("# schedlab sweep {}: machine={}", s.name, g.machine);
  if (g.machine != g.machine_name) h += fmt::format(" ({})", g.machine_name);
  h += " workload=" + g.workload;
  for (const auto& [k, v] : g.params) h += fmt::format(" {}={}", k, v);
  for (const auto& x : g.sets) h += " set=" + x;
  if (!g.idle_disable.empty()) h += " idle_disable=" + join_list(g.idle_disable);
  for (int side : {c.base, c.test}) {
    const SweepSide& x = s.sides[side];
    const char* role = side == c.base ? "base" : "test";
    h += fmt::format(" {}={} (\"{}\")", role, x.label, x.features);
    for (const auto& y : x.sets) h += fmt::format(" {}_set={}", role, y);
    if (!x.idle_disable.empty()) h += fmt::format(" {}_idle_disable={}", role, join_list(x.idle_disable));
  }
  if (!g.counters_cpu.empty()) h += " counters_cpu=" + g.counters_cpu;
  h += fmt::format(" runs={} seeds={} -- {}\n", s.seeds.size(), seeds_text(s.seeds), workload::join(g.command));
  return h;
}

std::string render_merge_json(const MergedSweep& m) {
  const Sweep& s = m.sweep;
  ordered_json j;
  j["schema"] = kMergeSchema;
  j["sweep"] = s.name;
  j["description"] = s.description;
  j["schedlab_version"] = s.version;
  j["cells"] = s.cells.size();
  j["seeds"] = s.seeds;
  ordered_json tables = ordered_json::array();
  for (const auto& t : m.tables) {
    const SweepGroup& g = s.groups[t.group];
    const SweepComparison& c = s.comparisons[t.comparison];
    auto side = [&](int i) {
      const SweepSide& x = s.sides[i];
      return ordered_json{{"label", x.label}, {"features", x.features}, {"sets", x.sets}, {"idle_disable", x.idle_disable}};
    };
    ordered_json o;
    o["machine"] = g.machine;
    o["machine_name"] = g.machine_name;
    o["workload"] = g.workload;
    ordered_json params = ordered_json::object();
    for (const auto& [k, v] : g.params) params[k] = v;
    o["params"] = params;
    ordered_json axes = ordered_json::object();
    for (const auto& [k, v] : g.axes) axes[k] = v;
    o["set_axes"] = axes;
    o["command"] = workload::join(g.command);
    o["sets"] = g.sets;
    o["idle_disable"] = g.idle_disable;
    o["counters_cpu"] = g.counters_cpu;
    o["base"] = side(c.base);
    o["test"] = side(c.test);
    o["runs"] = s.seeds.size();
    o["report"] = ordered_json::parse(report::render(table_metrics(m, t), report::Format::Json));
    tables.push_back(std::move(o));
  }
  j["tables"] = tables;
  return j.dump(2) + "\n";
}

std::string render_merge_csv(const MergedSweep& m) {
  const Sweep& s = m.sweep;
  std::string out;
  for (size_t ti = 0; ti < m.tables.size(); ++ti) {
    const SweepTable& t = m.tables[ti];
    const SweepGroup& g = s.groups[t.group];
    const SweepComparison& c = s.comparisons[t.comparison];
    std::string csv = report::render(table_metrics(m, t), report::Format::Csv);
    size_t nl = csv.find('\n');
    if (ti == 0) out += "machine,workload,params,set_axes,base,test," + csv.substr(0, nl + 1);
    auto kv = [](const std::vector<std::pair<std::string, std::string>>& v) {
      std::string x;
      for (const auto& [k, val] : v) x += (x.empty() ? "" : ";") + k + "=" + val;
      return x;
    };
    const std::string prefix = util::csv_field(g.machine) + "," + util::csv_field(g.workload) + "," +
                               util::csv_field(kv(g.params)) + "," + util::csv_field(kv(g.axes)) + "," +
                               util::csv_field(s.sides[c.base].label) + "," + util::csv_field(s.sides[c.test].label) + ",";
    for (size_t p = nl + 1; p < csv.size();) {
      size_t e = csv.find('\n', p);
      if (e == std::string::npos) e = csv.size() - 1;
      out += prefix + csv.substr(p, e - p + 1);
      p = e + 1;
    }
  }
  return out;
}

}  // namespace schedlab::experiment
