#include "experiment/catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "experiment/run.hpp"
#include "machine/machine.hpp"
#include "machine/toml_reader.hpp"
#include "workload/workload.hpp"

namespace schedlab::experiment {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFeaturesFile = "features.toml";
constexpr double kPctTolerance = 1.5;  // printed pct vs base/test, in percentage points (rounding)
constexpr int kMaxRuns = 1000;

using CatalogueReader = machine::TomlReader<CatalogueError>;

std::vector<std::string> split_command_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogueError(fmt::format("{}: cannot open for reading", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads the keys of one table into strings / numbers, rejecting unknown keys.
class TableReader {
 public:
  TableReader(CatalogueReader& rd, const toml::table& t, std::string path, std::vector<std::string> required,
              std::vector<std::string> optional = {})
      : rd_(rd), t_(t), path_(std::move(path)) {
    std::vector<std::string> allowed = required;
    allowed.insert(allowed.end(), optional.begin(), optional.end());
    rd_.reject_unknown(t_, label(), allowed);
    for (const auto& k : required) rd_.require(t_, path_, k, label());
    for (const auto& k : optional)
      if (const toml::node* n = t_.get(k)) rd_.note(path_ + "." + k, *n);
  }
  std::string label() const { return "[" + path_ + "]"; }
  std::string key(const std::string& k) const { return path_ + "." + k; }
  const toml::node* get(const std::string& k) const { return t_.get(k); }
  uint32_t line(const std::string& k) const { return rd_.line_of(key(k)); }

  std::string str(const std::string& k, bool nonempty = true) const {
    std::string v = rd_.get_string(*t_.get(k), key(k));
    if (nonempty && v.find_first_not_of(" \t") == std::string::npos)
      rd_.fail_where(key(k), fmt::format("{} must not be empty", key(k)));
    return v;
  }
  std::string opt_str(const std::string& k, std::string def = "") const {
    return t_.get(k) ? rd_.get_string(*t_.get(k), key(k)) : def;
  }
  std::vector<std::string> strs(const std::string& k) const {
    return t_.get(k) ? rd_.get_strings(*t_.get(k), key(k)) : std::vector<std::string>{};
  }
  double num(const std::string& k) const { return rd_.get_real(*t_.get(k), key(k)); }
  int64_t integer(const std::string& k) const { return rd_.get_int(*t_.get(k), key(k)); }
  bool boolean(const std::string& k) const { return rd_.get_bool(*t_.get(k), key(k)); }

 private:
  CatalogueReader& rd_;
  const toml::table& t_;
  std::string path_;
};

double finite_positive(CatalogueReader& rd, const TableReader& t, const std::string& k) {
  double v = t.num(k);
  if (!std::isfinite(v) || v <= 0) rd.fail_where(t.key(k), fmt::format("{} must be a positive number", t.key(k)));
  return v;
}

BandDirection parse_direction(CatalogueReader& rd, const TableReader& t) {
  std::string d = t.str("direction");
  if (d == "better") return BandDirection::Better;
  if (d == "worse") return BandDirection::Worse;
  if (d == "none") return BandDirection::None;
  rd.fail_where(t.key("direction"), fmt::format("band direction '{}' (use better, worse or none)", d));
}

// Checks each feature name against the model; a name the model lacks must be planned.
void check_features(CatalogueReader& rd, const std::string& where, const std::string& list,
                    const std::vector<PlannedFeature>& planned, std::vector<std::string>& missing) {
  std::vector<std::string> items;
  try {
    items = kernel::Features::split(list, where);
  } catch (const kernel::FeatureError& e) {
    rd.fail_where(where, e.what());
  }
  for (const auto& item : items) {
    std::string name = item.rfind("NO_", 0) == 0 ? item.substr(3) : item;
    if (kernel::Features::known(name)) continue;
    auto it = std::find_if(planned.begin(), planned.end(),
                           [&](const PlannedFeature& p) { return p.name == name; });
    if (it == planned.end())
      rd.fail_where(where, fmt::format("unknown feature '{}' (neither in `schedlab features` nor in {})", item,
                                       kFeaturesFile));
    if (it->kind != "feature")
      rd.fail_where(where, fmt::format("'{}' is a capability in {}: list it in [model] needs, not in features",
                                       name, kFeaturesFile));
    std::string m = "feature " + item;
    if (std::find(missing.begin(), missing.end(), m) == missing.end()) missing.push_back(m);
  }
}

}  // namespace

std::string to_string(BandDirection d) {
  switch (d) {
    case BandDirection::Better: return "better";
    case BandDirection::Worse: return "worse";
    case BandDirection::None: return "none";
  }
  return "?";
}

std::pair<double, double> Band::interval(double published_gain) const {
  return {published_gain / factor, published_gain * factor};
}

bool Band::contains(double published_gain, double model_gain, double model_pct) const {
  if (!std::isfinite(model_gain) || !std::isfinite(model_pct)) return false;
  if (direction == BandDirection::None) return std::fabs(model_pct) <= max_change_pct;
  if (direction == BandDirection::Better && !(model_gain > 1)) return false;
  if (direction == BandDirection::Worse && !(model_gain < 1)) return false;
  auto [lo, hi] = interval(published_gain);
  return model_gain >= lo && model_gain <= hi;
}

std::string Band::describe(double published_gain) const {
  if (direction == BandDirection::None) return fmt::format("none, within {:g} %", max_change_pct);
  auto [lo, hi] = interval(published_gain);
  // The direction caps the interval at 1.
  if (direction == BandDirection::Better) lo = std::max(lo, 1.0);
  if (direction == BandDirection::Worse) hi = std::min(hi, 1.0);
  return fmt::format("{}, gain {:.3f}..{:.3f}", to_string(direction), lo, hi);
}

bool Band::direction_only(double published_gain) const {
  auto [lo, hi] = interval(published_gain);
  if (direction == BandDirection::Better) return lo <= 1.0;
  if (direction == BandDirection::Worse) return hi >= 1.0;
  return false;
}

double PublishedResult::gain() const { return higher_is_better ? test / base : base / test; }

double PublishedResult::pct_imp() const {
  if (pct) return *pct;
  return (higher_is_better ? (test - base) : (base - test)) / base * 100.0;
}

const Case* Catalogue::find(const std::string& name) const {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

// The source tree's directory, from a file CMake generates (CMakeLists.txt).
extern const char* const kBuiltinPublishedDir;

std::string default_catalogue_dir() {
  if (const char* env = std::getenv("SCHEDLAB_PUBLISHED"); env && *env) return env;
  return kBuiltinPublishedDir;
}

std::vector<PlannedFeature> parse_planned_features(const std::string& text, const std::string& file) {
  CatalogueReader rd(file);
  toml::table root = rd.parse(text);
  rd.reject_unknown(root, file, {"feature"});
  std::vector<PlannedFeature> out;
  const toml::node* arr = root.get("feature");
  if (!arr) return out;
  if (!arr->is_array_of_tables()) rd.fail(*arr, "'feature' must be an array of tables ([[feature]])");
  std::set<std::string> names;
  int i = 0;
  for (const auto& n : *arr->as_array()) {
    const auto& t = *n.as_table();
    std::string path = fmt::format("feature[{}]", i++);
    rd.note(path, n);
    TableReader tr(rd, t, path, {"name", "kind", "summary", "notes"}, {"default_on", "implemented"});
    PlannedFeature f;
    f.name = tr.str("name");
    f.kind = tr.str("kind");
    f.summary = tr.str("summary");
    f.notes = tr.str("notes");
    if (!names.insert(f.name).second) rd.fail_where(tr.key("name"), fmt::format("feature '{}' listed twice", f.name));
    if (f.kind == "feature") {
      if (!t.get("default_on")) rd.fail_where(path, fmt::format("missing key 'default_on' in [[feature]] {}", f.name));
      if (t.get("implemented"))
        rd.fail_where(tr.key("implemented"), "a feature is implemented when `schedlab features` knows it: drop 'implemented'");
      f.default_on = tr.boolean("default_on");
    } else if (f.kind == "capability") {
      if (!t.get("implemented")) rd.fail_where(path, fmt::format("missing key 'implemented' in [[feature]] {}", f.name));
      if (t.get("default_on")) rd.fail_where(tr.key("default_on"), "a capability has no default_on");
      f.implemented = tr.boolean("implemented");
    } else {
      rd.fail_where(tr.key("kind"), fmt::format("kind '{}' (use feature or capability)", f.kind));
    }
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// The steps of parse_case, one per table of the case file, in the order the file lists them.

void parse_source(CatalogueReader& rd, const toml::table& root, const std::string& dir, CaseSource& s) {
  TableReader t(rd, rd.table(root, "source"), "source", {"thread", "message_id", "url", "date", "author", "notes"});
  s = {t.str("thread"), t.str("message_id"), t.str("url"), t.str("date"), t.str("author"), t.str("notes")};
  if (s.message_id.find('@') == std::string::npos || s.message_id.find_first_of(" <>") != std::string::npos)
    rd.fail_where("source.message_id", fmt::format("message_id '{}' is not a Message-ID (id@host, no brackets)",
                                                   s.message_id));
  if (s.url.rfind("https://", 0) != 0 && s.url.rfind("http://", 0) != 0)
    rd.fail_where("source.url", "url must start with https:// or http://");
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  if (!std::regex_match(s.date, kDate)) rd.fail_where("source.date", "date must be YYYY-MM-DD");
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(dir) / s.notes, ec))
    rd.fail_where("source.notes", fmt::format("notes file '{}' not found in {}", s.notes, dir));
}

// Reads [machine] and returns the profile it names, whose shape must match the one described.
machine::Machine parse_machine(CatalogueReader& rd, const toml::table& root, CaseMachine& cm) {
  TableReader t(rd, rd.table(root, "machine"), "machine",
                {"profile", "cpu", "sockets", "cores_per_socket", "threads_per_core", "llc", "idle_states", "boost",
                 "governor"});
  cm.profile = t.str("profile");
  cm.cpu = t.str("cpu");
  cm.llc = t.str("llc");
  cm.idle_states = t.str("idle_states");
  cm.boost = t.str("boost");
  cm.governor = t.str("governor");
  cm.sockets = static_cast<int>(t.integer("sockets"));
  cm.cores_per_socket = static_cast<int>(t.integer("cores_per_socket"));
  cm.threads_per_core = static_cast<int>(t.integer("threads_per_core"));
  machine::Machine m;
  try {
    m = machine::load_profile(cm.profile);
  } catch (const machine::ProfileError& e) {
    rd.fail_where("machine.profile", e.what());
  }
  if (m.topo.sockets != cm.sockets || m.topo.cores_per_socket != cm.cores_per_socket ||
      m.topo.threads_per_core != cm.threads_per_core)
    rd.fail_where("machine.sockets",
                  fmt::format("the machine is {}x{}x{} (sockets x cores x threads) but profile '{}' is {}x{}x{}",
                              cm.sockets, cm.cores_per_socket, cm.threads_per_core, cm.profile, m.topo.sockets,
                              m.topo.cores_per_socket, m.topo.threads_per_core));
  return m;
}

void parse_published(CatalogueReader& rd, const toml::table& root, PublishedResult& p) {
  TableReader t(rd, rd.table(root, "published"), "published",
                {"commands", "statistic", "runs", "higher_is_better", "unit", "base", "test", "doubts"}, {"pct"});
  p.commands = t.strs("commands");
  if (p.commands.empty()) rd.fail_where("published.commands", "published.commands must list at least one command");
  p.statistic = t.str("statistic");
  p.runs = t.str("runs");
  p.higher_is_better = t.boolean("higher_is_better");
  p.unit = t.str("unit");
  p.doubts = t.str("doubts");
  p.base = finite_positive(rd, t, "base");
  p.test = finite_positive(rd, t, "test");
  if (t.get("pct")) {
    double pct = t.num("pct");
    p.pct.reset();
    double computed = p.pct_imp();
    if (!std::isfinite(pct) || std::fabs(pct - computed) > kPctTolerance)
      rd.fail_where("published.pct", fmt::format("pct {:g} does not match base {:g} and test {:g} ({:.2f} with {})",
                                                 pct, p.base, p.test, computed,
                                                 p.higher_is_better ? "higher is better" : "lower is better"));
    p.pct = pct;
  }
}

// Reads [absolute]: the published base in absolute terms (base, unit, scale, source) or `none`,
// saying why there is none; never both. In the published unit the figure is [published] base.
void parse_absolute(CatalogueReader& rd, const toml::table& root, const PublishedResult& p, AbsoluteBase& a) {
  const toml::table& tab = rd.table(root, "absolute");
  if (tab.get("none")) {
    TableReader t(rd, tab, "absolute", {"none"});
    a.none = t.str("none");
    return;
  }
  TableReader t(rd, tab, "absolute", {"base", "unit", "scale", "source"});
  a.given = true;
  a.base = finite_positive(rd, t, "base");
  a.unit = t.str("unit");
  a.unit_line = t.line("unit");
  a.scale = finite_positive(rd, t, "scale");
  a.source = t.str("source");
  if (a.unit == p.unit && a.base != p.base)
    rd.fail_where("absolute.base", fmt::format("absolute.base {:g} {} but published.base is {:g} {}", a.base, a.unit,
                                               p.base, p.unit));
}

// Every setting of [model] must apply to the case's machine (as `--set` / `--idle-disable` would).
void check_model_settings(CatalogueReader& rd, const CaseModel& mo, const machine::Machine& m) {
  auto apply = [&](const std::string& key, const std::vector<std::string>& sets,
                   const std::vector<std::string>& idle, machine::Machine& mm) {
    try {
      for (const auto& s : sets) machine::apply_set(mm, s);
      if (!idle.empty()) machine::disable_idle_states(mm, idle);
    } catch (const machine::ProfileError& e) {
      rd.fail_where(key, e.what());
    }
  };
  machine::Machine both = m;
  apply("model.sets", mo.sets, {}, both);
  apply("model.idle_disable", {}, mo.idle_disable, both);
  for (bool test : {false, true}) {
    machine::Machine side = both;
    apply(test ? "model.test_sets" : "model.base_sets", test ? mo.test_sets : mo.base_sets, {}, side);
    apply(test ? "model.test_idle_disable" : "model.base_idle_disable", {},
          test ? mo.test_idle_disable : mo.base_idle_disable, side);
  }
}

// The command, the features and the capabilities [model] needs; what is planned but not
// implemented yet goes into `missing`.
void check_model_needs(CatalogueReader& rd, const CaseModel& mo, const machine::Machine& m,
                       const std::vector<PlannedFeature>& planned, std::vector<std::string>& missing) {
  try {
    workload::parse_workload(mo.command, m.topo.nr_cpus());
  } catch (const workload::WorkloadError& e) {
    rd.fail_where("model.command", e.what());
  }
  check_features(rd, "model.base_features", mo.base_features, planned, missing);
  check_features(rd, "model.test_features", mo.test_features, planned, missing);
  for (const auto& need : mo.needs) {
    auto it = std::find_if(planned.begin(), planned.end(), [&](const PlannedFeature& p) { return p.name == need; });
    if (it == planned.end())
      rd.fail_where("model.needs", fmt::format("'{}' is not listed in {}", need, kFeaturesFile));
    if (it->kind != "capability")
      rd.fail_where("model.needs", fmt::format("'{}' is a feature: name it in base_features / test_features", need));
    if (!it->implemented) missing.push_back("capability " + need);
  }
  bool same = mo.base_features == mo.test_features && mo.base_sets == mo.test_sets &&
              mo.base_idle_disable == mo.test_idle_disable && mo.needs.empty();
  if (same) rd.fail_where("model.test_features", "the base and test sides are the same");
}

void parse_model(CatalogueReader& rd, const toml::table& root, const machine::Machine& m,
                 const std::vector<PlannedFeature>& planned, Case& c) {
  TableReader t(rd, rd.table(root, "model"), "model",
                {"command", "metric", "base_features", "test_features", "runs", "scaling", "lacks",
                 "simulated_s", "published_length"},
                {"sets", "idle_disable", "base_sets", "test_sets", "base_idle_disable", "test_idle_disable",
                 "needs"});
  auto& mo = c.model;
  mo.command_line = t.str("command");
  mo.command = split_command_words(mo.command_line);
  mo.metric = t.str("metric");
  mo.metric_line = t.line("metric");
  mo.base_features = t.str("base_features", false);
  mo.test_features = t.str("test_features", false);
  mo.scaling = t.str("scaling");
  mo.lacks = t.str("lacks");
  mo.simulated_s = t.num("simulated_s");
  if (!(mo.simulated_s > 0) || !std::isfinite(mo.simulated_s))
    rd.fail_where("model.simulated_s", "simulated_s must be a positive number of seconds");
  mo.published_length = t.str("published_length");
  int64_t runs = t.integer("runs");
  if (runs < 2 || runs > kMaxRuns)
    rd.fail_where("model.runs", fmt::format("model.runs {} out of range (2..{})", runs, kMaxRuns));
  mo.runs = static_cast<int>(runs);
  mo.sets = t.strs("sets");
  mo.idle_disable = t.strs("idle_disable");
  mo.base_sets = t.strs("base_sets");
  mo.test_sets = t.strs("test_sets");
  mo.base_idle_disable = t.strs("base_idle_disable");
  mo.test_idle_disable = t.strs("test_idle_disable");
  mo.needs = t.strs("needs");
  check_model_settings(rd, mo, m);
  check_model_needs(rd, mo, m, planned, c.missing);
}

// Reads [band]; its direction must agree with the published gain.
void parse_band(CatalogueReader& rd, const toml::table& root, double published_gain, Band& b) {
  TableReader t(rd, rd.table(root, "band"), "band", {"direction", "justification"},
                {"factor", "max_change_pct", "direction_only"});
  b.direction = parse_direction(rd, t);
  b.justification = t.str("justification");
  double g = published_gain;
  if (b.direction == BandDirection::None) {
    if (t.get("factor")) rd.fail_where("band.factor", "direction none takes max_change_pct, not factor");
    if (t.get("direction_only")) rd.fail_where("band.direction_only", "direction none has no direction to label");
    if (!t.get("max_change_pct")) rd.fail_where("band", "direction none needs max_change_pct");
    b.max_change_pct = t.num("max_change_pct");
    if (!(b.max_change_pct > 0) || !std::isfinite(b.max_change_pct))
      rd.fail_where("band.max_change_pct", "max_change_pct must be a positive number");
  } else {
    if (t.get("max_change_pct")) rd.fail_where("band.max_change_pct", "direction better/worse takes factor, not max_change_pct");
    if (!t.get("factor")) rd.fail_where("band", "direction better/worse needs factor");
    b.factor = t.num("factor");
    if (!(b.factor >= 1) || !std::isfinite(b.factor)) rd.fail_where("band.factor", "factor must be a number >= 1");
    bool better = b.direction == BandDirection::Better;
    if ((better && !(g > 1)) || (!better && !(g < 1)))
      rd.fail_where("band.direction", fmt::format("direction {} but the published gain is {:.3f} ({})",
                                                  to_string(b.direction), g,
                                                  g > 1 ? "better" : g < 1 ? "worse" : "no change"));
    // A band that reaches gain 1.0 is met by any change in the published direction: only as a
    // case labelled direction_only (counted apart), never as a reproduction of the size.
    auto [lo, hi] = b.interval(g);
    b.labelled_direction_only = t.get("direction_only") && t.boolean("direction_only");
    if (b.direction_only(g) && !b.labelled_direction_only)
      rd.fail_where("band.factor", fmt::format("the band {:.3f}..{:.3f} reaches gain 1.0, so any change in the "
                                               "published direction meets it: narrow it, or label the case "
                                               "direction_only = true",
                                               better ? std::max(lo, 1.0) : lo, better ? hi : std::min(hi, 1.0)));
    if (!b.direction_only(g) && b.labelled_direction_only)
      rd.fail_where("band.direction_only", "direction_only = true but the band does not reach gain 1.0");
  }
}

}  // namespace

Case parse_case(const std::string& text, const std::string& file, const std::string& dir,
                const std::vector<PlannedFeature>& planned) {
  CatalogueReader rd(file);
  toml::table root = rd.parse(text);
  Case c;
  c.file = file;
  c.name = fs::path(file).stem().string();
  rd.reject_unknown(root,
                    "the case (keys: title; tables [source], [machine], [kernel], [published], [absolute], [model], "
                    "[band])",
                    {"title", "source", "machine", "kernel", "published", "absolute", "model", "band"});
  for (const char* k : {"title", "source", "machine", "kernel", "published", "absolute", "model", "band"})
    if (!root.get(k)) rd.fail_at(1, k == std::string("title") ? "missing key 'title'" : fmt::format("missing [{}] table", k));
  c.title = rd.get_string(*root.get("title"), "title");
  if (c.title.find_first_not_of(" \t") == std::string::npos) rd.fail(*root.get("title"), "title must not be empty");

  parse_source(rd, root, dir, c.source);
  machine::Machine m = parse_machine(rd, root, c.machine);
  {
    TableReader t(rd, rd.table(root, "kernel"), "kernel", {"base", "test"});
    c.kernel_base = t.str("base");
    c.kernel_test = t.str("test");
  }
  parse_published(rd, root, c.published);
  parse_absolute(rd, root, c.published, c.absolute);
  parse_model(rd, root, m, planned, c);
  parse_band(rd, root, c.published.gain(), c.band);
  return c;
}

Catalogue load_catalogue(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CatalogueError(fmt::format("{}: catalogue directory not found", dir));
  Catalogue cat;
  cat.dir = dir;
  std::string features = (fs::path(dir) / kFeaturesFile).string();
  if (fs::is_regular_file(features, ec)) cat.planned = parse_planned_features(read_file(features), features);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".toml" && e.path().filename() != kFeaturesFile)
      files.push_back(e.path().string());
  if (ec) throw CatalogueError(fmt::format("{}: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  for (const auto& f : files) cat.cases.push_back(parse_case(read_file(f), f, dir, cat.planned));
  return cat;
}

}  // namespace schedlab::experiment
