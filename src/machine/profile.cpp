// Machine profiles: TOML loading, validation, `--set`, `--idle-disable` and serialisation.
// Every error is one line naming the file and line (or the flag) at fault.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "util/read.hpp"
#include "machine/machine.hpp"
#include "machine/params_table.hpp"
#include "machine/toml_reader.hpp"
#include "util/text.hpp"

namespace schedlab::machine {

namespace fs = std::filesystem;
using detail::Field;
using detail::FieldRef;

namespace {

const std::vector<std::string> kKnownArches = {"x86_64", "arm64"};
const std::vector<std::string> kKnownGovernors = {"menu", "teo", "haltpoll", "ladder"};
const char* const kProfileExt = ".toml";

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string fmt_num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", (int64_t)v);
  return fmt::format("{}", v);
}

std::string state_names(const Machine& m) {
  std::vector<std::string> names;
  for (const auto& s : m.idle_states) names.push_back(s.name);
  return names.empty() ? "none" : join(names);
}

// ---- consistency checks (shared by parse_profile, validate and apply_set) -------------------

// A problem found in a Machine: what is wrong, and the TOML key path it belongs to (used by the
// loader to find the line; e.g. "costs.ipi_send_ns", "idle_state[2].exit_latency_ns").
struct Problem {
  std::string what;
  std::string where;
};

std::optional<Problem> range_problem(const std::string& key, double v, double min, double max,
                                     const char* unit, const std::string& where) {
  if (!std::isfinite(v)) return Problem{fmt::format("{} must be a finite number", key), where};
  if (v < min)
    return Problem{fmt::format("{} = {} is below the minimum {} {}", key, fmt_num(v), fmt_num(min), unit),
                   where};
  if (v > max)
    return Problem{fmt::format("{} = {} is absurd (maximum {} {})", key, fmt_num(v), fmt_num(max), unit),
                   where};
  return std::nullopt;
}

double as_double(const FieldRef& r) {
  return std::visit([](auto* p) { return static_cast<double>(*p); }, r);
}

std::optional<Problem> check_topology(const Topology& t) {
  for (const auto& f : detail::topo_fields()) {
    std::string key = std::string("topology.") + f.name;
    int64_t v = t.*f.member;
    if (v < f.min || v > f.max)
      return Problem{fmt::format("{} = {} is out of range [{}, {}]", key, v, f.min, f.max), key};
  }
  if (t.cores_per_llc > t.cores_per_socket || t.cores_per_socket % t.cores_per_llc != 0)
    return Problem{fmt::format("topology.cores_per_llc = {} does not divide topology.cores_per_socket = {}",
                               t.cores_per_llc, t.cores_per_socket),
                   "topology.cores_per_llc"};
  int64_t cpus = int64_t(t.sockets) * t.cores_per_socket * t.threads_per_core;
  if (cpus > detail::kMaxCpus)
    return Problem{fmt::format("topology gives {} CPUs ({} sockets x {} cores x {} threads); the model "
                               "supports at most {}",
                               cpus, t.sockets, t.cores_per_socket, t.threads_per_core, detail::kMaxCpus),
                   "topology"};
  return std::nullopt;
}

std::optional<Problem> check_idle_states(const Machine& m) {
  if (m.idle_states.empty())
    return Problem{"no idle states (add at least one [[idle_state]] table)", "idle_state"};
  if (m.idle_states.size() > kMaxIdleStates)
    return Problem{fmt::format("{} idle states; the kernel allows at most {} (CPUIDLE_STATE_MAX)",
                               m.idle_states.size(), kMaxIdleStates),
                   fmt::format("idle_state[{}]", kMaxIdleStates)};
  std::set<std::string> seen;
  for (size_t i = 0; i < m.idle_states.size(); ++i) {
    IdleState s = m.idle_states[i];
    std::string at = fmt::format("idle_state[{}]", i);
    if (s.name.empty()) return Problem{fmt::format("idle state {} has an empty name", i), at + ".name"};
    if (!seen.insert(s.name).second)
      return Problem{fmt::format("duplicate idle state name '{}'", s.name), at + ".name"};
    for (const auto& f : detail::idle_fields()) {
      std::string key = fmt::format("idle_state.{}.{}", s.name, f.name);
      if (auto p = range_problem(key, as_double(f.ref(s)), f.min, f.max, f.unit, at + "." + f.name)) return p;
    }
    if (s.is_poll()) {
      if (i != 0)
        return Problem{fmt::format("idle state {} must be state 0 (it is state {})", kPollStateName, i),
                       at + ".name"};
      if (!s.polling)
        return Problem{fmt::format("idle state {} must have polling = true", kPollStateName), at + ".polling"};
      if (s.exit_latency_ns != 0)
        return Problem{fmt::format("idle state {} must have exit_latency_ns = 0", kPollStateName),
                       at + ".exit_latency_ns"};
    }
  }
  return std::nullopt;
}

std::optional<Problem> check_fields(Machine m) {  // a copy: FieldRef needs a mutable machine
  for (const auto& f : detail::fields()) {
    double v = as_double(f.ref(m));
    if (auto p = range_problem(f.key(), v, f.min, f.max, f.unit, f.key())) return p;
    if (!f.choices.empty() &&
        std::find(f.choices.begin(), f.choices.end(), static_cast<int64_t>(v)) == f.choices.end()) {
      std::vector<std::string> c;
      for (auto x : f.choices) c.push_back(std::to_string(x));
      return Problem{fmt::format("{} = {} is not one of {}", f.key(), fmt_num(v), join(c)), f.key()};
    }
  }
  return std::nullopt;
}

std::optional<Problem> check_strings(const Machine& m) {
  if (std::find(kKnownArches.begin(), kKnownArches.end(), m.arch) == kKnownArches.end())
    return Problem{fmt::format("machine.arch = '{}' is not one of {}", m.arch, join(kKnownArches)),
                   "machine.arch"};
  if (std::find(kKnownGovernors.begin(), kKnownGovernors.end(), m.governor) == kKnownGovernors.end())
    return Problem{fmt::format("machine.governor = '{}' is not one of {}", m.governor, join(kKnownGovernors)),
                   "machine.governor"};
  if (m.cpuidle_driver.empty()) return Problem{"machine.cpuidle_driver is empty", "machine.cpuidle_driver"};
  return std::nullopt;
}

bool one_of(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::optional<Problem> check_recorded(const std::string& key, const Recorded& r, double min, double max,
                                      const char* unit) {
  if (!r.known()) return std::nullopt;
  return range_problem(key, r.value, min, max, unit, key);
}

std::optional<Problem> check_guest(const Machine& m) {
  if (!m.guest.present) return std::nullopt;
  if (!m.guest.hypervisor.known() || m.guest.hypervisor.value.empty())
    return Problem{"[guest] needs hypervisor = { value = \"...\", source = \"...\" }", "guest"};
  for (const auto& f : detail::guest_fields())
    if (auto p = check_recorded(std::string("guest.") + f.name, m.guest.*f.member, f.min, f.max, f.unit)) return p;
  return std::nullopt;
}

std::optional<Problem> check_kernel(const Machine& m) {
  if (!m.kernel.present) return std::nullopt;
  for (const auto& f : detail::kernel_fields())
    if (auto p = check_recorded(std::string("kernel.") + f.name, m.kernel.*f.member, f.min, f.max, f.unit)) return p;
  return std::nullopt;
}

std::optional<Problem> check_background(const Machine& m) {
  for (size_t i = 0; i < m.background.size(); ++i) {
    const auto& a = m.background[i];
    std::string at = fmt::format("background[{}]", i);
    if (a.name.empty()) return Problem{fmt::format("background activity {} has an empty name", i), at + ".name"};
    if (!one_of(detail::kBackgroundKinds, a.kind))
      return Problem{fmt::format("background '{}': kind = '{}' is not one of {}", a.name, a.kind,
                                 join(detail::kBackgroundKinds)),
                     at + ".kind"};
    if (!one_of(detail::kBackgroundScopes, a.scope))
      return Problem{fmt::format("background '{}': scope = '{}' is not one of {}", a.name, a.scope,
                                 join(detail::kBackgroundScopes)),
                     at + ".scope"};
    for (const auto& f : detail::background_fields()) {
      const Recorded& r = a.*f.member;
      std::string key = fmt::format("background.{}.{}", a.name, f.name);
      if (!r.known() && f.optional) continue;
      if (!r.known()) return Problem{fmt::format("{} is missing", key), at};
      if (auto p = range_problem(key, r.value, f.min, f.max, f.unit, at + "." + f.name)) return p;
    }
  }
  return std::nullopt;
}

std::optional<Problem> check_machine(const Machine& m) {
  if (auto p = check_topology(m.topo)) return p;
  if (auto p = check_strings(m)) return p;
  if (auto p = check_idle_states(m)) return p;
  if (auto p = check_fields(m)) return p;
  if (auto p = check_guest(m)) return p;
  if (auto p = check_kernel(m)) return p;
  if (auto p = check_background(m)) return p;
  return std::nullopt;
}

// ---- TOML reading --------------------------------------------------------------------------

class Reader : public TomlReader<ProfileError> {
 public:
  using TomlReader::TomlReader;

  // { value = X, unit = "U", source = "S" }; unit must be `unit` ("bool": X is true/false).
  Recorded get_recorded(const toml::node& n, const std::string& path, const std::string& key, const char* unit) {
    if (!n.is_table())
      fail(n, fmt::format("{} must be {{ value = ..., unit = \"{}\", source = \"...\" }}, not {}", key, unit,
                          type_name(n.type())));
    const auto& t = *n.as_table();
    reject_unknown(t, key, {"value", "unit", "source"});
    Recorded r;
    const auto& v = require(t, path, "value", key);
    if (std::string(unit) == "bool") r.value = get_bool(v, key + ".value") ? 1 : 0;
    else r.value = get_real(v, key + ".value");
    const auto& u = require(t, path, "unit", key);
    std::string us = get_string(u, key + ".unit");
    if (us != unit) fail(u, fmt::format("{} is in {}, not '{}'", key, unit, us));
    const auto& src = require(t, path, "source", key);
    r.source = get_string(src, key + ".source");
    if (r.source.empty()) fail(src, fmt::format("{}.source is empty (say where the value came from)", key));
    return r;
  }
  // { value = "X", source = "S" }
  RecordedText get_recorded_text(const toml::node& n, const std::string& path, const std::string& key) {
    if (!n.is_table())
      fail(n, fmt::format("{} must be {{ value = \"...\", source = \"...\" }}, not {}", key, type_name(n.type())));
    const auto& t = *n.as_table();
    reject_unknown(t, key, {"value", "source"});
    RecordedText r;
    r.value = get_string(require(t, path, "value", key), key + ".value");
    const auto& src = require(t, path, "source", key);
    r.source = get_string(src, key + ".source");
    if (r.source.empty()) fail(src, fmt::format("{}.source is empty (say where the value came from)", key));
    return r;
  }

  void read_ref(const toml::node& n, const std::string& key, const FieldRef& ref) const {
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, int64_t>) *p = get_int(n, key);
          else if constexpr (std::is_same_v<T, double>) *p = get_real(n, key);
          else *p = get_bool(n, key);
        },
        ref);
  }
};

std::string file_stem(const std::string& path) { return fs::path(path).stem().string(); }

// [machine]: description, arch, cpuidle_driver, governor (all required).
void read_machine_table(Reader& rd, const toml::table& root, Machine& m) {
  const auto& t = rd.table(root, "machine");
  const std::vector<std::pair<std::string, std::string*>> keys = {
      {"description", &m.description},
      {"arch", &m.arch},
      {"cpuidle_driver", &m.cpuidle_driver},
      {"governor", &m.governor}};
  std::vector<std::string> allowed;
  for (const auto& [k, p] : keys) allowed.push_back(k);
  rd.reject_unknown(t, "[machine]", allowed);
  for (const auto& [k, p] : keys) *p = rd.get_string(rd.require(t, "machine", k, "[machine]"), "machine." + k);
}

// [topology]: every topo_fields() key, in range.
void read_topology(Reader& rd, const toml::table& root, Machine& m) {
  const auto& t = rd.table(root, "topology");
  std::vector<std::string> allowed;
  for (const auto& f : detail::topo_fields()) allowed.push_back(f.name);
  rd.reject_unknown(t, "[topology]", allowed);
  for (const auto& f : detail::topo_fields()) {
    std::string key = std::string("topology.") + f.name;
    if (f.optional && !t.get(f.name)) continue;
    const auto& n = rd.require(t, "topology", f.name, "[topology]");
    int64_t v = rd.get_int(n, key);
    if (v < f.min || v > f.max) rd.fail(n, fmt::format("{} = {} is out of range [{}, {}]", key, v, f.min, f.max));
    m.topo.*f.member = static_cast<int>(v);
  }
}

// [[idle_state]]: at least one; name, desc and every idle_fields() key (`disabled` optional).
void read_idle_states(Reader& rd, const toml::table& root, Machine& m) {
  const toml::node* n = root.get("idle_state");
  if (!n || (n->is_array() && n->as_array()->empty()))
    rd.fail_at(n ? n->source().begin.line : 0, "no idle states (add at least one [[idle_state]] table)");
  if (!n->is_array_of_tables())
    rd.fail(*n, fmt::format("'idle_state' must be an array of tables ([[idle_state]]), not {}",
                            type_name(n->type())));
  rd.note("idle_state", *n);
  const auto& arr = *n->as_array();
  std::vector<std::string> allowed = {"name", "desc"};
  for (const auto& f : detail::idle_fields()) allowed.push_back(f.name);
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& t = *arr.get(i)->as_table();
    std::string path = fmt::format("idle_state[{}]", i);
    std::string label = fmt::format("[[idle_state]] #{}", i);
    rd.note(path, t);
    rd.reject_unknown(t, label, allowed);
    IdleState s;
    s.name = rd.get_string(rd.require(t, path, "name", label), "idle_state.name");
    if (const toml::node* d = t.get("desc")) {
      rd.note(path + ".desc", *d);
      s.desc = rd.get_string(*d, "idle_state." + s.name + ".desc");
    }
    for (const auto& f : detail::idle_fields()) {
      std::string key = fmt::format("idle_state.{}.{}", s.name, f.name);
      const toml::node* fn = t.get(f.name);
      // `disabled` is optional (sysfs default 0); every other field is required.
      if (!fn && std::string(f.name) == "disabled") continue;
      if (!fn) fn = &rd.require(t, path, f.name, label);
      rd.note(path + "." + f.name, *fn);
      rd.read_ref(*fn, key, f.ref(s));
    }
    m.idle_states.push_back(std::move(s));
  }
}

// [costs], [tunables] or [noise]: the fields() rows of that table (optional ones may be absent).
void read_param_table(Reader& rd, const toml::table& root, const char* table, Machine& m) {
  const auto& t = rd.table(root, table);
  std::vector<const Field*> mine;
  std::vector<std::string> allowed;
  for (const auto& f : detail::fields())
    if (std::string(f.table) == table) {
      mine.push_back(&f);
      allowed.push_back(f.name);
    }
  std::string label = fmt::format("[{}]", table);
  if (std::string(table) == "tunables")
    if (const auto* old = t.get("unix_capacity_msgs"))
      rd.fail(*old, "tunables.unix_capacity_msgs was replaced by unix_sndbuf_bytes and unix_skb_truesize_bytes "
                    "(the AF_UNIX send buffer in bytes of skb truesize, docs/model.md): edit the profile or "
                    "calibrate again");
  rd.reject_unknown(t, label, allowed);
  for (const Field* f : mine) {
    if (f->optional && !t.get(f->name)) continue;
    const auto& n = rd.require(t, table, f->name, label);
    rd.read_ref(n, f->key(), f->ref(m));
  }
}

// [guest] (optional): what `schedlab host` recognised and measured of a virtual machine.
void read_guest(Reader& rd, const toml::table& root, Machine& m) {
  const toml::node* g = root.get("guest");
  if (!g) return;
  if (!g->is_table()) rd.fail(*g, fmt::format("'guest' must be a table, not {}", type_name(g->type())));
  rd.note("guest", *g);
  const auto& t = *g->as_table();
  std::vector<std::string> allowed;
  for (const auto& f : detail::guest_text_fields()) allowed.push_back(f.name);
  for (const auto& f : detail::guest_fields()) allowed.push_back(f.name);
  rd.reject_unknown(t, "[guest]", allowed);
  m.guest.present = true;
  for (const auto& f : detail::guest_text_fields())
    if (const toml::node* n = t.get(f.name)) {
      std::string path = std::string("guest.") + f.name;
      rd.note(path, *n);
      m.guest.*f.member = rd.get_recorded_text(*n, path, path);
    }
  for (const auto& f : detail::guest_fields())
    if (const toml::node* n = t.get(f.name)) {
      std::string path = std::string("guest.") + f.name;
      rd.note(path, *n);
      m.guest.*f.member = rd.get_recorded(*n, path, path, f.unit);
    }
}

// [kernel] (optional): the running kernel's scheduler settings, as `schedlab host probe` read
// them. kernel.features is checked where it is used (experiment::run_one: the machine layer does
// not know the feature names).
void read_kernel(Reader& rd, const toml::table& root, Machine& m) {
  const toml::node* k = root.get("kernel");
  if (!k) return;
  if (!k->is_table()) rd.fail(*k, fmt::format("'kernel' must be a table, not {}", type_name(k->type())));
  rd.note("kernel", *k);
  const auto& t = *k->as_table();
  std::vector<std::string> allowed;
  for (const auto& f : detail::kernel_text_fields()) allowed.push_back(f.name);
  for (const auto& f : detail::kernel_fields()) allowed.push_back(f.name);
  rd.reject_unknown(t, "[kernel]", allowed);
  m.kernel.present = true;
  for (const auto& f : detail::kernel_text_fields())
    if (const toml::node* n = t.get(f.name)) {
      std::string path = std::string("kernel.") + f.name;
      rd.note(path, *n);
      m.kernel.*f.member = rd.get_recorded_text(*n, path, path);
    }
  for (const auto& f : detail::kernel_fields())
    if (const toml::node* n = t.get(f.name)) {
      std::string path = std::string("kernel.") + f.name;
      rd.note(path, *n);
      m.kernel.*f.member = rd.get_recorded(*n, path, path, f.unit);
    }
}

// [[background]] (optional): the activity besides the benchmark, one table per source.
void read_background(Reader& rd, const toml::table& root, Machine& m) {
  const toml::node* b = root.get("background");
  if (!b) return;
  if (!b->is_array_of_tables())
    rd.fail(*b, fmt::format("'background' must be an array of tables ([[background]]), not {}", type_name(b->type())));
  rd.note("background", *b);
  const auto& arr = *b->as_array();
  std::vector<std::string> allowed = {"name", "kind", "scope"};
  for (const auto& f : detail::background_fields()) allowed.push_back(f.name);
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& t = *arr.get(i)->as_table();
    std::string path = fmt::format("background[{}]", i);
    std::string label = fmt::format("[[background]] #{}", i);
    rd.note(path, t);
    rd.reject_unknown(t, label, allowed);
    BackgroundActivity a;
    for (auto [k, p] : {std::pair{"name", &a.name}, std::pair{"kind", &a.kind}, std::pair{"scope", &a.scope}})
      *p = rd.get_string(rd.require(t, path, k, label), std::string("background.") + k);
    for (const auto& f : detail::background_fields()) {
      if (f.optional && !t.get(f.name)) continue;
      const auto& n = rd.require(t, path, f.name, label);
      a.*f.member = rd.get_recorded(n, path + "." + f.name, fmt::format("background.{}.{}", a.name, f.name), f.unit);
    }
    m.background.push_back(std::move(a));
  }
}

}  // namespace

Machine parse_profile(const std::string& toml_text, const std::string& source_name) {
  Reader rd(source_name);
  toml::table root = rd.parse(toml_text);

  Machine m;
  m.name = file_stem(source_name);
  m.source_path = source_name;

  rd.reject_unknown(root, "the profile (tables are [machine], [topology], [[idle_state]], [costs], "
                          "[tunables], [noise], [guest], [kernel], [[background]])",
                    {"machine", "topology", "idle_state", "costs", "tunables", "noise", "guest", "kernel", "background"});
  read_machine_table(rd, root, m);
  read_topology(rd, root, m);
  read_idle_states(rd, root, m);
  for (const char* table : {"costs", "tunables", "noise"}) read_param_table(rd, root, table, m);
  read_guest(rd, root, m);
  read_kernel(rd, root, m);
  read_background(rd, root, m);

  if (auto p = check_machine(m)) rd.fail_where(p->where, p->what);
  return m;
}

void validate(const Machine& m) {
  if (auto p = check_machine(m))
    throw ProfileError(one_line(fmt::format("{}: {}", m.source_path.empty() ? m.name : m.source_path, p->what)));
}

// ---- profile files -------------------------------------------------------------------------

// The source tree's directory, from a file CMake generates (CMakeLists.txt).
extern const char* const kBuiltinProfileDir;

std::string profile_dir() {
  if (const char* env = std::getenv("SCHEDLAB_PROFILES"); env && *env) return env;
  return kBuiltinProfileDir;
}

std::vector<std::string> list_profiles() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(profile_dir(), ec))
    if (e.is_regular_file(ec) && e.path().extension() == kProfileExt) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

Machine load_profile(const std::string& name_or_path) {
  bool is_path = name_or_path.find('/') != std::string::npos ||
                 fs::path(name_or_path).extension() == kProfileExt;
  std::string path = name_or_path;
  if (!is_path) {
    path = (fs::path(profile_dir()) / (name_or_path + kProfileExt)).string();
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)  // a name too long for a file name
      throw UnknownMachine(fmt::format("unknown machine '{}{}' ({} characters): {}", name_or_path.substr(0, 40),
                                       name_or_path.size() > 40 ? "..." : "", name_or_path.size(), ec.message()));
    if (!exists) {
      auto known = list_profiles();
      throw UnknownMachine(one_line(fmt::format("unknown machine '{}' (known in {}: {}; or give a path to a {} file)",
                                              name_or_path, profile_dir(), known.empty() ? "none" : join(known),
                                              kProfileExt)));
    }
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw ProfileError(fmt::format("{}{}: {}", path.substr(0, 60), path.size() > 60 ? "..." : "", ec.message()));
    throw ProfileError(fmt::format("{}: file not found", path));
  }
  if (fs::is_directory(path, ec)) throw ProfileError(fmt::format("{}: is a directory, not a profile", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ProfileError(fmt::format("{}: cannot open for reading", path));
  auto text = util::read_capped(in);
  if (!text) throw ProfileError(fmt::format("{}: larger than {}, the limit for a profile", path, util::kMaxInputText));
  return parse_profile(*text, path);
}

// ---- command-line overrides ----------------------------------------------------------------

namespace {

// Parses `text` into *ref; returns an error message or "".
std::string parse_value(const std::string& text, const FieldRef& ref) {
  return std::visit(
      [&](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        const char* b = text.data();
        const char* e = b + text.size();
        if constexpr (std::is_same_v<T, bool>) {
          if (text == "1" || text == "true") *p = true;
          else if (text == "0" || text == "false") *p = false;
          else return fmt::format("'{}' is not a boolean (use 0, 1, true or false)", text);
        } else {
          T v{};
          auto [ptr, ec] = std::from_chars(b, e, v);
          if (ec != std::errc() || ptr != e)
            return fmt::format("'{}' is not {}", text, std::is_same_v<T, int64_t> ? "an integer" : "a number");
          if constexpr (std::is_floating_point_v<T>)
            if (!std::isfinite(v)) return fmt::format("'{}' is not a finite number", text);
          *p = v;
        }
        return "";
      },
      ref);
}

}  // namespace

void apply_set(Machine& m, const std::string& assignment) {
  auto fail = [&](const std::string& what) {
    throw ProfileError(one_line(fmt::format("--set {}: {}", assignment, what)));
  };
  auto eq = assignment.find('=');
  if (eq == std::string::npos) fail("expected KEY=VALUE");
  std::string key(util::trim(std::string_view(assignment).substr(0, eq)));
  std::string value(util::trim(std::string_view(assignment).substr(eq + 1)));
  if (key.empty()) fail("empty key");
  if (value.empty()) fail("empty value");

  Machine copy = m;
  const std::string idle_prefix = "idle_state.";
  const std::string guest_prefix = "guest.";
  if (key.rfind(guest_prefix, 0) == 0) {
    // A [guest] value: replaces what the probe recorded, its source saying so.
    std::string field = key.substr(guest_prefix.size());
    const detail::GuestField* f = nullptr;
    std::vector<std::string> names;
    for (const auto& x : detail::guest_fields()) {
      names.push_back(x.name);
      if (field == x.name) f = &x;
    }
    if (!f) fail(fmt::format("unknown [guest] key '{}' (keys: {})", field, join(names)));
    if (!m.guest.present) fail(fmt::format("{} is not a virtual machine (the profile has no [guest] section)", m.name));
    double v = 0;
    if (std::string(f->unit) == "bool") {
      bool b = false;
      if (auto err = parse_value(value, &b); !err.empty()) fail(err);
      v = b;
    } else if (auto err = parse_value(value, &v); !err.empty()) {
      fail(err);
    }
    copy.guest.*f->member = Recorded{v, "--set " + assignment};
  } else if (key.rfind(idle_prefix, 0) == 0) {
    std::string rest = key.substr(idle_prefix.size());
    auto dot = rest.rfind('.');
    if (dot == std::string::npos) fail("expected idle_state.<NAME>.<field>");
    std::string name = rest.substr(0, dot), field = rest.substr(dot + 1);
    auto it = std::find_if(copy.idle_states.begin(), copy.idle_states.end(),
                           [&](const IdleState& s) { return s.name == name; });
    if (it == copy.idle_states.end())
      fail(fmt::format("unknown idle state '{}' on {} (states: {})", name, m.name, state_names(m)));
    const detail::IdleField* f = nullptr;
    std::vector<std::string> names;
    for (const auto& x : detail::idle_fields()) {
      names.push_back(x.name);
      if (field == x.name) f = &x;
    }
    if (!f) fail(fmt::format("unknown idle-state field '{}' (fields: {})", field, join(names)));
    if (auto err = parse_value(value, f->ref(*it)); !err.empty()) fail(err);
  } else {
    std::vector<const Field*> hits;
    for (const auto& f : detail::fields())
      if (f.key() == key) hits = {&f};
    if (hits.empty())
      for (const auto& f : detail::fields())
        if (key == f.name) hits.push_back(&f);
    if (hits.empty())
      fail(fmt::format("unknown key '{}' (keys are costs.*, tunables.*, noise.*, guest.*, idle_state.<NAME>.*, "
                       "change.<FEATURE>.*; see `schedlab machines --params`)",
                       key));
    if (hits.size() > 1) {
      std::vector<std::string> ks;
      for (auto* f : hits) ks.push_back(f->key());
      fail(fmt::format("ambiguous key '{}' (could be {})", key, join(ks)));
    }
    if (auto err = parse_value(value, hits[0]->ref(copy)); !err.empty()) fail(err);
  }
  if (auto p = check_machine(copy)) fail(p->what);
  m = std::move(copy);
}

void disable_idle_states(Machine& m, const std::vector<std::string>& names) {
  std::vector<std::string> split;
  for (const auto& n : names) {
    std::stringstream ss(n);
    std::string part;
    bool any = false;
    while (std::getline(ss, part, ',')) {
      split.emplace_back(util::trim(part));
      any = true;
    }
    if (!any) split.emplace_back(util::trim(n));
  }
  Machine copy = m;
  for (const auto& n : split) {
    auto it = std::find_if(copy.idle_states.begin(), copy.idle_states.end(),
                           [&](const IdleState& s) { return s.name == n; });
    if (it == copy.idle_states.end())
      throw ProfileError(one_line(fmt::format("--idle-disable {}: unknown idle state on {} (states: {})", n,
                                              m.name, state_names(m))));
    it->disabled = true;
  }
  m = std::move(copy);
}

// ---- serialisation -------------------------------------------------------------------------

namespace {

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04X}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string toml_value(const FieldRef& ref) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool>) return *p ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(*p);
        else {
          std::string s = fmt::format("{}", *p);  // shortest form that reads back exactly
          if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
          return s;
        }
      },
      ref);
}

}  // namespace

std::string to_toml(const Machine& cm, const std::string& header_comment) {
  Machine m = cm;  // FieldRef needs a mutable machine; this copy is only read
  std::string out;
  std::string header = header_comment.empty() ? fmt::format("schedlab machine profile '{}'", m.name)
                                              : header_comment;
  std::stringstream hs(header);
  for (std::string line; std::getline(hs, line);)
    out += line.rfind("#", 0) == 0 ? line + "\n" : (line.empty() ? "#\n" : "# " + line + "\n");

  out += "\n[machine]\n";
  out += fmt::format("description = {}\n", toml_string(m.description));
  out += fmt::format("arch = {}\n", toml_string(m.arch));
  out += fmt::format("cpuidle_driver = {}\n", toml_string(m.cpuidle_driver));
  out += fmt::format("governor = {}\n", toml_string(m.governor));

  out += "\n[topology]\n";
  for (const auto& f : detail::topo_fields()) {
    if (f.optional && m.topo.*f.member == 0) continue;  // not known: not written (profiles stay as they were)
    out += fmt::format("{} = {}  # {}\n", f.name, m.topo.*f.member, f.help);
  }

  for (auto& s : m.idle_states) {
    out += "\n[[idle_state]]\n";
    out += fmt::format("name = {}\n", toml_string(s.name));
    out += fmt::format("desc = {}\n", toml_string(s.desc));
    for (const auto& f : detail::idle_fields()) out += fmt::format("{} = {}\n", f.name, toml_value(f.ref(s)));
  }

  const char* current = "";
  for (const auto& f : detail::fields()) {
    if (std::string(current) != f.table) {
      current = f.table;
      out += fmt::format("\n[{}]\n", f.table);
    }
    // An optional cost left at 0 (not modeled) is not written: profiles without it stay as they were.
    if (f.optional && std::string(f.table) == "costs" && toml_value(f.ref(m)) == "0") continue;
    out += fmt::format("{} = {}  # {}: {}\n", f.name, toml_value(f.ref(m)), f.unit, f.help);
  }

  auto recorded = [](const Recorded& r, const char* unit) {
    double v = r.value;
    std::string value = std::string(unit) == "bool" ? (v != 0 ? "true" : "false") : fmt_num(v);
    return fmt::format("{{ value = {}, unit = {}, source = {} }}", value, toml_string(unit), toml_string(r.source));
  };
  if (m.guest.present) {
    out += "\n[guest]\n";
    for (const auto& f : detail::guest_text_fields())
      if (const auto& r = m.guest.*f.member; r.known())
        out += fmt::format("{} = {{ value = {}, source = {} }}\n", f.name, toml_string(r.value), toml_string(r.source));
    for (const auto& f : detail::guest_fields())
      if (const auto& r = m.guest.*f.member; r.known())
        out += fmt::format("{} = {}  # {}\n", f.name, recorded(r, f.unit), f.help);
  }
  if (m.kernel.present) {
    out += "\n[kernel]\n";
    for (const auto& f : detail::kernel_text_fields())
      if (const auto& r = m.kernel.*f.member; r.known())
        out += fmt::format("{} = {{ value = {}, source = {} }}  # {}\n", f.name, toml_string(r.value),
                           toml_string(r.source), f.help);
    for (const auto& f : detail::kernel_fields())
      if (const auto& r = m.kernel.*f.member; r.known())
        out += fmt::format("{} = {}  # {}\n", f.name, recorded(r, f.unit), f.help);
  }
  for (const auto& a : m.background) {
    out += "\n[[background]]\n";
    out += fmt::format("name = {}\nkind = {}\nscope = {}\n", toml_string(a.name), toml_string(a.kind),
                       toml_string(a.scope));
    for (const auto& f : detail::background_fields())
      if (!f.optional || (a.*f.member).known())
        out += fmt::format("{} = {}\n", f.name, recorded(a.*f.member, f.unit));
  }
  return out;
}

}  // namespace schedlab::machine
