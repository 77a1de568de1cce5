// sweep.toml: parsing, checking against the model and expansion into cells; the manifest.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "experiment/sweep.hpp"
#include "machine/machine.hpp"
#include "machine/toml_reader.hpp"
#include "workload/options.hpp"
#include "workload/workload.hpp"

namespace schedlab::experiment {

namespace fs = std::filesystem;

uint64_t fnv1a64(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

std::string SweepGroup::describe() const {
  std::string s = machine + " " + workload;
  for (const auto& [k, v] : params) s += " " + k + "=" + v;
  for (const auto& [k, v] : axes) s += " " + k + "=" + v;
  return s;
}

RunSpec Sweep::cell_spec(const SweepCell& c) const {
  const SweepGroup& g = groups[c.group];
  const SweepSide& side = sides[c.side];
  RunSpec r;
  r.machine = g.machine_ref.empty() ? g.machine_name : g.machine_ref;
  r.features = side.features;
  r.seed = c.seed;
  r.sets = g.sets;
  r.sets.insert(r.sets.end(), side.sets.begin(), side.sets.end());
  r.idle_disable = g.idle_disable;
  r.idle_disable.insert(r.idle_disable.end(), side.idle_disable.begin(), side.idle_disable.end());
  r.command = g.command;
  return r;
}

AbSpec Sweep::ab_spec(const SweepGroup& g, const SweepComparison& c) const {
  AbSpec a;
  a.base.machine = g.machine_ref.empty() ? g.machine_name : g.machine_ref;
  a.base.sets = g.sets;
  a.base.idle_disable = g.idle_disable;
  a.base.command = g.command;
  const SweepSide& b = sides[c.base];
  const SweepSide& t = sides[c.test];
  a.base_features = b.features;
  a.test_features = t.features;
  a.base_sets = b.sets;
  a.test_sets = t.sets;
  a.base_idle_disable = b.idle_disable;
  a.test_idle_disable = t.idle_disable;
  a.counter_cpus = g.counter_cpus;
  a.runs = static_cast<int>(seeds.size());
  a.first_seed = seeds.empty() ? 1 : seeds.front();
  return a;
}

std::string Sweep::describe(const SweepCell& c) const {
  return fmt::format("#{} {} {} seed {} ({})", c.index, groups[c.group].describe(), sides[c.side].label, c.seed,
                     c.id);
}

namespace {

using Reader = machine::TomlReader<SweepError>;

constexpr size_t kMaxLabel = 64;

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SweepError(fmt::format("{}: file not found", path));
  if (fs::is_directory(path, ec)) throw SweepError(fmt::format("{}: is a directory, not a sweep file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SweepError(fmt::format("{}: cannot open for reading", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw SweepError(fmt::format("{}: read error", path));
  return ss.str();
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool valid_label(const std::string& s) {
  if (s.empty() || s.size() > kMaxLabel || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool has_control(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// A parameter or set-axis value: a string, an integer or a float, as text.
std::string value_text(const Reader& rd, const toml::node& n, const std::string& what) {
  if (n.is_string()) {
    std::string v = n.as_string()->get();
    if (has_control(v)) rd.fail(n, fmt::format("{}: a value must not hold control characters", what));
    return v;
  }
  if (n.is_integer()) return fmt::format("{}", n.as_integer()->get());
  if (n.is_floating_point()) {
    double v = n.as_floating_point()->get();
    if (!std::isfinite(v)) rd.fail(n, fmt::format("{}: {} is not a finite number", what, v));
    return fmt::format("{}", v);
  }
  rd.fail(n, fmt::format("{}: values must be strings or numbers, not {}", what, machine::type_name(n.type())));
}

struct MachineEntry {
  std::string label, name, ref;
  std::vector<std::string> sets, idle_disable;
  uint32_t line = 0;
};

struct WorkloadEntry {
  std::string name, command, counters_cpu;
  std::vector<std::pair<std::string, std::vector<std::string>>> params;  // names sorted
  uint32_t line = 0, command_line = 0, counters_line = 0;
};

struct AxisEntry {
  std::string key;
  std::vector<std::string> values;
  uint32_t line = 0;
};

class SweepParser {
 public:
  SweepParser(const std::string& text, const std::string& file, const std::string& dir, int max_cells)
      : rd_(file), dir_(dir), root_(rd_.parse(text)), max_cells_(max_cells) {}

  Sweep parse() {
    rd_.reject_unknown(root_, file(), {"sweep", "features", "workload", "set_axes", "compare"});
    parse_sweep_table();
    parse_features();
    parse_workloads();
    parse_axes();
    parse_comparisons();
    check_and_expand();
    return std::move(s_);
  }

 private:
  const std::string& file() const { return rd_.file(); }
  uint32_t line(const toml::node& n) const { return n.source().begin.line; }

  std::vector<std::string> strings(const toml::node& n, const std::string& key) {
    std::vector<std::string> v = rd_.get_strings(n, key);
    for (const auto& x : v)
      if (has_control(x)) rd_.fail(n, fmt::format("{}: strings must not hold control characters", key));
    return v;
  }
  std::string string(const toml::node& n, const std::string& key) {
    std::string v = rd_.get_string(n, key);
    if (has_control(v)) rd_.fail(n, fmt::format("{}: strings must not hold control characters", key));
    return v;
  }
  std::string label(const toml::node& n, const std::string& key) {
    std::string v = rd_.get_string(n, key);
    if (!valid_label(v))
      rd_.fail(n, fmt::format("{} '{}': a name is 1 to {} letters, digits, '_', '-' or '.', starting with a letter "
                              "or digit",
                              key, machine::one_line(v), kMaxLabel));
    return v;
  }

  void parse_sweep_table() {
    const toml::table& t = rd_.table(root_, "sweep");
    sweep_line_ = rd_.line_of("sweep");
    rd_.reject_unknown(t, "[sweep]",
                       {"name", "description", "machines", "runs", "first_seed", "seeds", "sets", "idle_disable"});
    s_.name = label(rd_.require(t, "sweep", "name", "[sweep]"), "sweep.name");
    if (const toml::node* n = t.get("description")) s_.description = string(*n, "sweep.description");
    // Seeds: runs (+ first_seed) or an explicit list.
    const toml::node* runs = t.get("runs");
    const toml::node* first = t.get("first_seed");
    const toml::node* seeds = t.get("seeds");
    if (runs && seeds) rd_.fail(*seeds, "[sweep]: give runs (and first_seed) or seeds, not both");
    if (first && !runs) rd_.fail(*first, "[sweep]: first_seed goes with runs");
    if (!runs && !seeds) rd_.fail_at(sweep_line_, "missing key 'runs' (or 'seeds') in [sweep]");
    if (runs) {
      int64_t n = rd_.get_int(*runs, "sweep.runs");
      if (n < 2 || n > kSweepMaxRuns)
        rd_.fail(*runs, fmt::format("sweep.runs = {}: must be 2 to {} (seeds per side)", n, kSweepMaxRuns));
      int64_t f = first ? rd_.get_int(*first, "sweep.first_seed") : 1;
      if (f < 0) rd_.fail(*first, fmt::format("sweep.first_seed = {}: must not be negative", f));
      for (int64_t i = 0; i < n; ++i) s_.seeds.push_back(static_cast<uint64_t>(f) + static_cast<uint64_t>(i));
    } else {
      if (!seeds->is_array()) rd_.fail(*seeds, "sweep.seeds must be an array of integers");
      std::set<uint64_t> seen;
      for (const auto& e : *seeds->as_array()) {
        int64_t v = rd_.get_int(e, "sweep.seeds");
        if (v < 0) rd_.fail(e, fmt::format("sweep.seeds: {} is negative", v));
        if (!seen.insert(static_cast<uint64_t>(v)).second) rd_.fail(e, fmt::format("sweep.seeds: {} is given twice", v));
        s_.seeds.push_back(static_cast<uint64_t>(v));
      }
      if (s_.seeds.size() < 2 || s_.seeds.size() > static_cast<size_t>(kSweepMaxRuns))
        rd_.fail(*seeds, fmt::format("sweep.seeds: {} seeds; give 2 to {}", s_.seeds.size(), kSweepMaxRuns));
    }
    if (const toml::node* n = t.get("sets")) {
      sweep_sets_ = strings(*n, "sweep.sets");
      sets_line_ = line(*n);
    }
    if (const toml::node* n = t.get("idle_disable")) {
      sweep_idle_ = strings(*n, "sweep.idle_disable");
      sets_line_ = sets_line_ ? sets_line_ : line(*n);
    }
    const toml::node& ms = rd_.require(t, "sweep", "machines", "[sweep]");
    if (!ms.is_array() || ms.as_array()->empty())
      rd_.fail(ms, "sweep.machines must be a non-empty array of profile names (or inline tables)");
    std::set<std::string> labels;
    for (const auto& e : *ms.as_array()) {
      MachineEntry m;
      m.line = line(e);
      if (e.is_string()) {
        m.name = string(e, "sweep.machines");
      } else if (e.is_table()) {
        const toml::table& mt = *e.as_table();
        rd_.reject_unknown(mt, "a machine of sweep.machines", {"name", "label", "sets", "idle_disable"});
        const toml::node* name = mt.get("name");
        if (!name) rd_.fail(e, "a machine table needs name = \"PROFILE\"");
        m.name = string(*name, "sweep.machines name");
        if (const toml::node* l = mt.get("label")) m.label = label(*l, "sweep.machines label");
        if (const toml::node* n = mt.get("sets")) m.sets = strings(*n, "sweep.machines sets");
        if (const toml::node* n = mt.get("idle_disable")) m.idle_disable = strings(*n, "sweep.machines idle_disable");
      } else {
        rd_.fail(e, fmt::format("sweep.machines: an entry is a profile name or a table, not {}",
                                machine::type_name(e.type())));
      }
      if (m.name.empty()) rd_.fail(e, "sweep.machines: empty machine name");
      if (m.label.empty()) m.label = m.name;
      if (!labels.insert(m.label).second)
        rd_.fail(e, fmt::format("sweep.machines: '{}' is given twice (give the entries different labels)", m.label));
      bool is_path = m.name.find('/') != std::string::npos || fs::path(m.name).extension() == ".toml";
      m.ref = is_path && fs::path(m.name).is_relative() ? (fs::path(dir_) / m.name).lexically_normal().string()
                                                         : m.name;
      machines_.push_back(std::move(m));
    }
  }

  void parse_features() {
    const toml::table& t = rd_.table(root_, "features");
    for (auto&& [k, v] : t) {
      SweepSide side;
      side.label = std::string(k.str());
      uint32_t l = k.source().begin.line ? k.source().begin.line : line(v);
      if (!valid_label(side.label))
        rd_.fail_at(l, fmt::format("[features] '{}': a label is 1 to {} letters, digits, '_', '-' or '.'",
                                   machine::one_line(side.label), kMaxLabel));
      const std::string where = "features." + side.label;
      if (v.is_string()) {
        side.features = string(v, where);
      } else if (v.is_table()) {
        const toml::table& st = *v.as_table();
        rd_.reject_unknown(st, "[" + where + "]", {"features", "sets", "idle_disable"});
        if (const toml::node* n = st.get("features")) side.features = string(*n, where + ".features");
        if (const toml::node* n = st.get("sets")) side.sets = strings(*n, where + ".sets");
        if (const toml::node* n = st.get("idle_disable")) side.idle_disable = strings(*n, where + ".idle_disable");
      } else {
        rd_.fail_at(l, fmt::format("{} must be a feature list (\"SM_IDLE,NO_SIS_UTIL\") or a table, not {}", where,
                                   machine::type_name(v.type())));
      }
      try {
        experiment::parse_features(side.features, where);
      } catch (const SpecError& e) {
        rd_.fail_at(l, e.what());
      }
      side_lines_.push_back(l);
      s_.sides.push_back(std::move(side));  // toml++ tables iterate in key order: sorted labels
    }
    if (s_.sides.size() < 2)
      rd_.fail_at(rd_.line_of("features"), "[features] needs at least two feature sets (the sides compared)");
  }

  void parse_workloads() {
    const toml::node* arr = root_.get("workload");
    if (!arr) rd_.fail_at(0, "missing [[workload]] (at least one benchmark command)");
    if (!arr->is_array_of_tables()) rd_.fail(*arr, "'workload' must be an array of tables ([[workload]])");
    std::set<std::string> names;
    for (const auto& n : *arr->as_array()) {
      const toml::table& t = *n.as_table();
      WorkloadEntry w;
      w.line = line(n);
      rd_.reject_unknown(t, "[[workload]]", {"name", "command", "params", "counters_cpu"});
      const toml::node* name = t.get("name");
      if (!name) rd_.fail_at(w.line, "missing key 'name' in [[workload]]");
      w.name = label(*name, "workload.name");
      w.line = line(*name);
      if (!names.insert(w.name).second) rd_.fail(*name, fmt::format("workload '{}' is given twice", w.name));
      const toml::node* cmd = t.get("command");
      if (!cmd) rd_.fail_at(w.line, fmt::format("missing key 'command' in workload '{}'", w.name));
      w.command = string(*cmd, "workload.command");
      w.command_line = line(*cmd);
      if (split_words(w.command).empty()) rd_.fail(*cmd, fmt::format("workload '{}': empty command", w.name));
      if (const toml::node* c = t.get("counters_cpu")) {
        w.counters_cpu = string(*c, "workload.counters_cpu");
        w.counters_line = line(*c);
      }
      if (const toml::node* p = t.get("params")) {
        if (!p->is_table()) rd_.fail(*p, "workload.params must be a table: NAME = [values]");
        for (auto&& [k, v] : *p->as_table()) {
          std::string key(k.str());
          uint32_t l = k.source().begin.line ? k.source().begin.line : line(v);
          if (key.empty() || !(std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') ||
              !std::all_of(key.begin(), key.end(),
                           [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
            rd_.fail_at(l, fmt::format("workload '{}': parameter '{}': a name is letters, digits and '_'", w.name,
                                       machine::one_line(key)));
          if (!v.is_array() || v.as_array()->empty())
            rd_.fail_at(l, fmt::format("workload '{}': parameter '{}' must be a non-empty array of values", w.name, key));
          std::vector<std::string> vals;
          for (const auto& e : *v.as_array()) {
            std::string x = value_text(rd_, e, fmt::format("workload '{}' parameter '{}'", w.name, key));
            if (std::find(vals.begin(), vals.end(), x) != vals.end())
              rd_.fail(e, fmt::format("workload '{}': parameter '{}': value '{}' is given twice", w.name, key, x));
            vals.push_back(std::move(x));
          }
          w.params.emplace_back(key, std::move(vals));
        }
      }
      // The template: each {name} a parameter, each parameter used.
      std::set<std::string> used;
      for (const std::string* tmpl : {&w.command, &w.counters_cpu}) {
        std::map<std::string, std::string> dummy;
        for (const auto& [k, v] : w.params) dummy[k] = v.front();
        std::string err;
        substitute(*tmpl, dummy, &used, &err);
        if (!err.empty())
          rd_.fail_at(tmpl == &w.command ? w.command_line : w.counters_line,
                      fmt::format("workload '{}': {}", w.name, err));
      }
      for (const auto& [k, v] : w.params)
        if (!used.count(k))
          rd_.fail_at(w.line, fmt::format("workload '{}': parameter '{}' is not used in its command (write {{{}}})",
                                          w.name, k, k));
      workloads_.push_back(std::move(w));
    }
  }

  void parse_axes() {
    const toml::node* n = root_.get("set_axes");
    if (!n) return;
    if (!n->is_table()) rd_.fail(*n, "'set_axes' must be a table: \"KEY\" = [values]");
    rd_.note("set_axes", *n);
    for (auto&& [k, v] : *n->as_table()) {
      AxisEntry a;
      a.key = std::string(k.str());
      a.line = k.source().begin.line ? k.source().begin.line : line(v);
      if (a.key.empty() || has_control(a.key) || a.key.find('=') != std::string::npos ||
          a.key.find(' ') != std::string::npos)
        rd_.fail_at(a.line, fmt::format("[set_axes] '{}': a key is a --set KEY (see `schedlab machines --params`)",
                                        machine::one_line(a.key)));
      if (!v.is_array() || v.as_array()->empty())
        rd_.fail_at(a.line, fmt::format("[set_axes] '{}' must be a non-empty array of values", a.key));
      for (const auto& e : *v.as_array()) {
        std::string x = value_text(rd_, e, fmt::format("[set_axes] '{}'", a.key));
        if (std::find(a.values.begin(), a.values.end(), x) != a.values.end())
          rd_.fail(e, fmt::format("[set_axes] '{}': value '{}' is given twice", a.key, x));
        a.values.push_back(std::move(x));
      }
      axes_.push_back(std::move(a));
    }
  }

  void parse_comparisons() {
    const toml::node* arr = root_.get("compare");
    if (!arr) rd_.fail_at(0, "missing [[compare]] (base = \"LABEL\", test = \"LABEL\" from [features])");
    if (!arr->is_array_of_tables()) rd_.fail(*arr, "'compare' must be an array of tables ([[compare]])");
    std::set<std::pair<int, int>> seen;
    std::set<int> used;
    for (const auto& n : *arr->as_array()) {
      const toml::table& t = *n.as_table();
      uint32_t l = line(n);
      rd_.reject_unknown(t, "[[compare]]", {"base", "test"});
      auto side = [&](const char* key) {
        const toml::node* v = t.get(key);
        if (!v) rd_.fail_at(l, fmt::format("missing key '{}' in [[compare]]", key));
        l = line(*v);
        std::string lab = rd_.get_string(*v, fmt::format("compare.{}", key));
        for (size_t i = 0; i < s_.sides.size(); ++i)
          if (s_.sides[i].label == lab) return static_cast<int>(i);
        std::string known;
        for (const auto& s : s_.sides) known += (known.empty() ? "" : ", ") + s.label;
        rd_.fail(*v, fmt::format("compare.{} = '{}': no such feature set in [features] ({})", key,
                                 machine::one_line(lab), known));
      };
      SweepComparison c;
      c.base = side("base");
      c.test = side("test");
      if (c.base == c.test) rd_.fail_at(l, fmt::format("[[compare]]: base and test are both '{}'", s_.sides[c.base].label));
      if (!seen.insert({c.base, c.test}).second)
        rd_.fail_at(l, fmt::format("[[compare]] {} vs {} is given twice", s_.sides[c.base].label, s_.sides[c.test].label));
      used.insert(c.base);
      used.insert(c.test);
      s_.comparisons.push_back(c);
    }
    for (size_t i = 0; i < s_.sides.size(); ++i)
      if (!used.count(static_cast<int>(i)))
        rd_.fail_at(side_lines_[i], fmt::format("[features] '{}' is in no [[compare]] (its runs would not be reported)",
                                                s_.sides[i].label));
  }

 public:
  // Replaces each {name} by its value; "{{" and "}}" are literal braces. Records the names used;
  // sets *err on a malformed template or an unknown name.
  static std::string substitute(const std::string& tmpl, const std::map<std::string, std::string>& vals,
                                std::set<std::string>* used, std::string* err) {
    std::string out;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      char c = tmpl[i];
      if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
        out += c;
        ++i;
        continue;
      }
      if (c == '}') {
        *err = fmt::format("'{}': a lone '}}' (write '}}}}' for a brace)", tmpl);
        return out;
      }
      if (c != '{') {
        out += c;
        continue;
      }
      size_t end = tmpl.find('}', i);
      if (end == std::string::npos) {
        *err = fmt::format("'{}': '{{' without '}}' (write '{{{{' for a brace)", tmpl);
        return out;
      }
      std::string name = tmpl.substr(i + 1, end - i - 1);
      auto it = vals.find(name);
      if (it == vals.end()) {
        *err = fmt::format("'{}' uses {{{}}}, which is not one of its params", tmpl, name);
        return out;
      }
      if (used) used->insert(name);
      out += it->second;
      i = end;
    }
    return out;
  }

 private:
  template <class F>
  void blame(uint32_t l, const std::string& what, F&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {  // SpecError
      rd_.fail_at(l, fmt::format("{}: {}", what, e.what()));
    } catch (const std::runtime_error& e) {  // machine::ProfileError, workload::WorkloadError
      if (dynamic_cast<const SweepError*>(&e)) throw;
      rd_.fail_at(l, fmt::format("{}: {}", what, e.what()));
    }
  }

  // Checks every combination against the model and expands the cells in canonical order:
  // machines, workloads (file order), parameter values (names sorted, values in file order),
  // set-axis points (keys sorted), feature sets (labels sorted), seeds.
  void check_and_expand() {
    s_.version = schedlab_version();
    // Count first: refuse a sweep too large before loading anything.
    double ncells = static_cast<double>(machines_.size()) * s_.sides.size() * s_.seeds.size();
    double ninst = 0;
    for (const auto& w : workloads_) {
      double k = 1;
      for (const auto& [name, v] : w.params) k *= static_cast<double>(v.size());
      ninst += k;
    }
    double npoints = 1;
    for (const auto& a : axes_) npoints *= static_cast<double>(a.values.size());
    ncells *= ninst * npoints;
    if (ncells > max_cells_)
      rd_.fail_at(sweep_line_, fmt::format("the sweep expands to {:.0f} cells (at most {}): split it", ncells,
                                           max_cells_));
    // The set-axis points, keys sorted (toml++ iterates a table in key order).
    std::vector<std::vector<std::pair<std::string, std::string>>> points{{}};
    for (const auto& a : axes_) {
      std::vector<std::vector<std::pair<std::string, std::string>>> next;
      for (const auto& p : points)
        for (const auto& v : a.values) {
          auto q = p;
          q.emplace_back(a.key, v);
          next.push_back(std::move(q));
        }
      points = std::move(next);
    }
    for (const auto& me : machines_) {
      // The machine alone, with the sweep's settings, with its own, with each set-axis point and
      // each side's: each load blames the line that added what failed.
      RunSpec spec;
      spec.machine = me.ref;
      machine::Machine m;
      blame(me.line, fmt::format("machine '{}'", me.name), [&] { m = load_machine(spec); });
      std::string profile_hash = hex64(fnv1a64(read_text(m.source_path)));
      spec.sets = sweep_sets_;
      spec.idle_disable = sweep_idle_;
      blame(sets_line_ ? sets_line_ : sweep_line_, fmt::format("on machine '{}'", me.label), [&] {
        load_machine(spec);
        run_features(spec);
      });
      spec.sets.insert(spec.sets.end(), me.sets.begin(), me.sets.end());
      spec.idle_disable.insert(spec.idle_disable.end(), me.idle_disable.begin(), me.idle_disable.end());
      blame(me.line, fmt::format("machine '{}'", me.label), [&] {
        load_machine(spec);
        run_features(spec);
      });
      // Each set-axis value alone, then each point (a combination of values).
      for (const auto& a : axes_)
        for (const auto& v : a.values) {
          RunSpec one = spec;
          one.sets.push_back(a.key + "=" + v);
          blame(a.line, fmt::format("[set_axes] {}={} on machine '{}'", a.key, v, me.label), [&] {
            load_machine(one);
            run_features(one);
          });
        }
      for (const auto& point : points) {
        RunSpec ps = spec;
        std::string where;
        for (const auto& [k, v] : point) {
          ps.sets.push_back(k + "=" + v);
          where += (where.empty() ? "" : " ") + k + "=" + v;
        }
        if (point.size() > 1)
          blame(rd_.line_of("set_axes"), fmt::format("[set_axes] {} on machine '{}'", where, me.label), [&] {
            load_machine(ps);
            run_features(ps);
          });
        for (size_t si = 0; si < s_.sides.size(); ++si) {
          RunSpec ss = ps;
          const SweepSide& side = s_.sides[si];
          ss.features = side.features;
          ss.sets.insert(ss.sets.end(), side.sets.begin(), side.sets.end());
          ss.idle_disable.insert(ss.idle_disable.end(), side.idle_disable.begin(), side.idle_disable.end());
          blame(side_lines_[si],
                fmt::format("[features] '{}' on machine '{}'{}", side.label, me.label,
                            where.empty() ? "" : " with " + where),
                [&] {
                  if (!side.sets.empty() || !side.idle_disable.empty()) load_machine(ss);
                  run_features(ss);
                });
        }
      }
      const int nr_cpus = m.topo.nr_cpus();
      for (const auto& w : workloads_) expand_workload(me, w, spec, points, profile_hash, nr_cpus);
    }
  }

  void expand_workload(const MachineEntry& me, const WorkloadEntry& w, const RunSpec& spec,
                       const std::vector<std::vector<std::pair<std::string, std::string>>>& points,
                       const std::string& profile_hash, int nr_cpus) {
    // The parameter product: first name outermost.
    std::vector<std::vector<std::pair<std::string, std::string>>> insts{{}};
    for (const auto& [k, vals] : w.params) {
      std::vector<std::vector<std::pair<std::string, std::string>>> next;
      for (const auto& p : insts)
        for (const auto& v : vals) {
          auto q = p;
          q.emplace_back(k, v);
          next.push_back(std::move(q));
        }
      insts = std::move(next);
    }
    for (const auto& inst : insts) {
      std::map<std::string, std::string> vals(inst.begin(), inst.end());
      std::string err;
      SweepGroup g;
      g.machine = me.label;
      g.machine_name = me.name;
      g.machine_ref = me.ref;
      g.profile_hash = profile_hash;
      g.workload = w.name;
      g.params = inst;
      g.command = split_words(substitute(w.command, vals, nullptr, &err));
      g.counters_cpu = std::string(util_trim(substitute(w.counters_cpu, vals, nullptr, &err)));
      g.idle_disable = spec.idle_disable;
      std::string what = fmt::format("workload '{}'{} on machine '{}'", w.name, params_text(inst), me.label);
      if (g.command.empty()) rd_.fail_at(w.command_line, fmt::format("{}: empty command", what));
      blame(w.command_line, what, [&] {
        auto wl = workload::parse_workload(g.command, nr_cpus);
        g.warnings = wl->warnings();
      });
      if (!g.counters_cpu.empty())
        blame(w.counters_line, what, [&] {
          g.counter_cpus = workload::parse_cpulist("counters_cpu", g.counters_cpu, nr_cpus);
        });
      for (const auto& point : points) {
        SweepGroup pg = g;
        pg.axes = point;
        pg.sets = spec.sets;
        for (const auto& [k, v] : point) pg.sets.push_back(k + "=" + v);
        const int gi = static_cast<int>(s_.groups.size());
        for (size_t si = 0; si < s_.sides.size(); ++si)
          for (size_t ri = 0; ri < s_.seeds.size(); ++ri) {
            SweepCell c;
            c.index = static_cast<int>(s_.cells.size());
            c.group = gi;
            c.side = static_cast<int>(si);
            c.run = static_cast<int>(ri);
            c.seed = s_.seeds[ri];
            c.text = cell_text(pg, s_.sides[si], c.seed);
            c.id = hex64(fnv1a64(identity_suffix(s_.version, profile_hash), fnv1a64(c.text)));
            s_.cells.push_back(std::move(c));
          }
        s_.groups.push_back(std::move(pg));
      }
    }
  }

  static std::string_view util_trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    return std::string_view(s).substr(b, s.find_last_not_of(" \t") - b + 1);
  }

  static std::string params_text(const std::vector<std::pair<std::string, std::string>>& inst) {
    std::string s;
    for (const auto& [k, v] : inst) s += (s.empty() ? " (" : " ") + k + "=" + v;
    return s.empty() ? s : s + ")";
  }

 public:
  // The canonical text of a cell: what it runs (machine as written, features, every --set and
  // idle state in the order applied, seed, command) and what it stores (the counters' CPUs).
  static std::string cell_text(const SweepGroup& g, const SweepSide& side, uint64_t seed) {
    std::string t = "schedlab sweep cell\n";
    t += "machine " + g.machine_name + "\n";
    t += "features " + side.features + "\n";
    for (const auto& x : g.sets) t += "set " + x + "\n";
    for (const auto& x : side.sets) t += "set " + x + "\n";
    for (const auto& x : g.idle_disable) t += "idle_disable " + x + "\n";
    for (const auto& x : side.idle_disable) t += "idle_disable " + x + "\n";
    if (!g.counters_cpu.empty()) t += "counters_cpu " + g.counters_cpu + "\n";
    t += fmt::format("seed {}\n", seed);
    t += "command " + workload::join(g.command) + "\n";
    return t;
  }
  // What the id adds to the canonical text: the version and the profile's contents' hash.
  static std::string identity_suffix(const std::string& version, const std::string& profile_hash) {
    return "schedlab_version " + version + "\nprofile_fnv1a64 " + profile_hash + "\n";
  }

 private:
  Reader rd_;
  std::string dir_;
  toml::table root_;
  int max_cells_;
  Sweep s_;
  uint32_t sweep_line_ = 0, sets_line_ = 0;
  std::vector<std::string> sweep_sets_, sweep_idle_;
  std::vector<MachineEntry> machines_;
  std::vector<uint32_t> side_lines_;
  std::vector<WorkloadEntry> workloads_;
  std::vector<AxisEntry> axes_;
};

}  // namespace

Sweep parse_sweep(const std::string& text, const std::string& file, const std::string& dir, int max_cells) {
  return SweepParser(text, file, dir, max_cells).parse();
}

Sweep load_sweep(const std::string& path) {
  std::string text = read_text(path);
  std::string dir = fs::path(path).parent_path().string();
  return parse_sweep(text, path, dir.empty() ? "." : dir);
}

// ---- the manifest ------------------------------------------------------------------------------

namespace {
constexpr const char* kManifestSchema = "schedlab.sweep.v1";

nlohmann::ordered_json pairs_json(const std::vector<std::pair<std::string, std::string>>& v) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const auto& [k, x] : v) o[k] = x;
  return o;
}
std::vector<std::pair<std::string, std::string>> pairs_from(const nlohmann::ordered_json& o) {
  std::vector<std::pair<std::string, std::string>> v;
  for (auto it = o.begin(); it != o.end(); ++it) v.emplace_back(it.key(), it.value().get<std::string>());
  return v;
}
}  // namespace

std::string manifest_text(const Sweep& s) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema"] = kManifestSchema;
  j["schedlab_version"] = s.version;
  j["name"] = s.name;
  j["description"] = s.description;
  j["seeds"] = s.seeds;
  ordered_json sides = ordered_json::array();
  for (const auto& x : s.sides)
    sides.push_back({{"label", x.label}, {"features", x.features}, {"sets", x.sets}, {"idle_disable", x.idle_disable}});
  j["sides"] = sides;
  ordered_json cmps = ordered_json::array();
  for (const auto& c : s.comparisons)
    cmps.push_back({{"base", s.sides[c.base].label}, {"test", s.sides[c.test].label}});
  j["comparisons"] = cmps;
  ordered_json groups = ordered_json::array();
  for (const auto& g : s.groups) {
    ordered_json o;
    o["machine"] = g.machine;
    o["machine_name"] = g.machine_name;
    o["profile_fnv1a64"] = g.profile_hash;
    o["workload"] = g.workload;
    o["params"] = pairs_json(g.params);
    o["set_axes"] = pairs_json(g.axes);
    o["command"] = g.command;
    o["sets"] = g.sets;
    o["idle_disable"] = g.idle_disable;
    o["counters_cpu"] = g.counters_cpu;
    o["counter_cpus"] = g.counter_cpus;
    groups.push_back(std::move(o));
  }
  j["groups"] = groups;
  ordered_json cells = ordered_json::array();
  for (const auto& c : s.cells)
    cells.push_back({{"id", c.id}, {"group", c.group}, {"side", c.side}, {"run", c.run}, {"text", c.text}});
  j["cells"] = cells;
  return j.dump(1) + "\n";
}

Sweep parse_manifest(const std::string& text, const std::string& file) {
  Sweep s;
  try {
    auto j = nlohmann::ordered_json::parse(text);
    if (j.at("schema").get<std::string>() != kManifestSchema)
      throw SweepError(fmt::format("{}: not a sweep manifest (schema '{}', expected '{}')", file,
                                   j.at("schema").get<std::string>(), kManifestSchema));
    s.version = j.at("schedlab_version").get<std::string>();
    s.name = j.at("name").get<std::string>();
    s.description = j.at("description").get<std::string>();
    s.seeds = j.at("seeds").get<std::vector<uint64_t>>();
    for (const auto& x : j.at("sides")) {
      s.sides.push_back({x.at("label").get<std::string>(), x.at("features").get<std::string>(),
                         x.at("sets").get<std::vector<std::string>>(),
                         x.at("idle_disable").get<std::vector<std::string>>()});
      for (size_t i = 0; i + 1 < s.sides.size(); ++i)
        if (s.sides[i].label == s.sides.back().label)
          throw SweepError(fmt::format("{}: malformed manifest: side '{}' given twice", file, s.sides[i].label));
    }
    auto side_index = [&](const std::string& label) {
      for (size_t i = 0; i < s.sides.size(); ++i)
        if (s.sides[i].label == label) return static_cast<int>(i);
      throw SweepError(fmt::format("{}: malformed manifest: comparison of unknown side '{}'", file, label));
    };
    for (const auto& x : j.at("comparisons"))
      s.comparisons.push_back({side_index(x.at("base").get<std::string>()), side_index(x.at("test").get<std::string>())});
    for (const auto& x : j.at("groups")) {
      SweepGroup g;
      g.machine = x.at("machine").get<std::string>();
      g.machine_name = x.at("machine_name").get<std::string>();
      g.profile_hash = x.at("profile_fnv1a64").get<std::string>();
      g.workload = x.at("workload").get<std::string>();
      g.params = pairs_from(x.at("params"));
      g.axes = pairs_from(x.at("set_axes"));
      g.command = x.at("command").get<std::vector<std::string>>();
      g.sets = x.at("sets").get<std::vector<std::string>>();
      g.idle_disable = x.at("idle_disable").get<std::vector<std::string>>();
      g.counters_cpu = x.at("counters_cpu").get<std::string>();
      g.counter_cpus = x.at("counter_cpus").get<std::vector<int>>();
      s.groups.push_back(std::move(g));
    }
    const auto& cells = j.at("cells");
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto& x = cells[i];
      SweepCell c;
      c.index = static_cast<int>(i);
      c.id = x.at("id").get<std::string>();
      c.group = x.at("group").get<int>();
      c.side = x.at("side").get<int>();
      c.run = x.at("run").get<int>();
      c.text = x.at("text").get<std::string>();
      if (c.group < 0 || c.group >= static_cast<int>(s.groups.size()) || c.side < 0 ||
          c.side >= static_cast<int>(s.sides.size()) || c.run < 0 || c.run >= static_cast<int>(s.seeds.size()))
        throw SweepError(fmt::format("{}: malformed manifest: cell {} refers to no group, side or seed", file, i));
      c.seed = s.seeds[c.run];
      s.cells.push_back(std::move(c));
    }
    std::set<std::string> ids;
    std::set<std::tuple<int, int, int>> slots;
    for (const auto& c : s.cells)
      if (!ids.insert(c.id).second || !slots.insert({c.group, c.side, c.run}).second)
        throw SweepError(fmt::format("{}: malformed manifest: cell {} given twice", file, c.id));
  } catch (const nlohmann::json::exception& e) {
    throw SweepError(machine::one_line(fmt::format("{}: malformed manifest: {}", file, e.what())));
  }
  return s;
}

}  // namespace schedlab::experiment
