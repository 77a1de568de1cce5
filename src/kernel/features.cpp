#include "kernel/features.hpp"

#include <algorithm>
#include <charconv>
#include <utility>
#include <stdexcept>

#include "kernel/change.hpp"

namespace schedlab::kernel {

std::vector<FeatureInfo> feature_table() {
  std::vector<FeatureInfo> t = {
#define SCHEDLAB_FEATURE_ROW(name, on, meaning) {#name, on, meaning, -1},
      SCHEDLAB_FEATURES(SCHEDLAB_FEATURE_ROW)
#undef SCHEDLAB_FEATURE_ROW
  };
  for (const ChangeType* c : change_types())
    t.push_back({c->info.name, c->info.default_on, c->info.help, c->index});
  return t;
}

Features::Features() {
#define SCHEDLAB_FEATURE_DEFAULT(name, on, meaning) set(Feature::name, on);
  SCHEDLAB_FEATURES(SCHEDLAB_FEATURE_DEFAULT)
#undef SCHEDLAB_FEATURE_DEFAULT
  const auto& types = change_types();
  changes_.resize(types.size());
  tunables_.resize(types.size());
  for (const ChangeType* c : types) {
    changes_[c->index] = c->info.default_on;
    for (const auto& tu : c->info.tunables) tunables_[c->index].push_back(tu.value);
  }
}

namespace {

// Calls fn(item) for each item of a feature list, in order, trimmed, skipping `default`; an empty
// item throws.
template <class Fn>
void for_each_item(const std::string& list, const std::string& flag, Fn&& fn) {
  if (list.empty()) return;
  for (size_t pos = 0;;) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) throw FeatureError(flag + " '" + list + "': empty item in the feature list");
    // `default` (what --help shows as the flag's default) names the kernel defaults: no change.
    if (item != "default") fn(item);
    if (comma == std::string::npos) return;
    pos = comma + 1;
  }
}

}  // namespace

std::vector<std::string> Features::split(const std::string& list, const std::string& flag) {
  std::vector<std::string> items;
  for_each_item(list, flag, [&](const std::string& item) { items.push_back(item); });
  return items;
}

bool Features::known(const std::string& name) {
  for (const FeatureInfo& fi : feature_table())
    if (name == fi.name) return true;
  return false;
}

void Features::apply(const std::string& list, const std::string& flag) {
  // Every item is checked before anything changes, so that a typo such as "SM_IDLE,," or a
  // contradiction such as "SM_IDLE,NO_SM_IDLE" is an error and not silently the last word.
  const std::vector<FeatureInfo> table = feature_table();
  std::vector<std::pair<size_t, bool>> settings;  // table row, value
  std::vector<std::string> seen;                  // names without NO_
  for_each_item(list, flag, [&](const std::string& item) {
    const bool value = item.rfind("NO_", 0) != 0;
    const std::string name = value ? item : item.substr(3);
    size_t row = 0;
    while (row < table.size() && name != table[row].name) ++row;
    if (row == table.size())
      throw FeatureError(flag + ": unknown feature '" + item + "' (see `schedlab features`)");
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw FeatureError(flag + " '" + list + "': " + name + " is given more than once");
    seen.push_back(name);
    settings.emplace_back(row, value);
  });
  for (const auto& [row, value] : settings) {
    if (table[row].change < 0)
      set(static_cast<Feature>(row), value);
    else
      set_change(table[row].change, value);
  }
}

Features Features::parse(const std::string& list, const std::string& flag) {
  Features f;
  f.apply(list, flag);
  return f;
}

std::string Features::describe() const {
  std::string out;
  const std::vector<FeatureInfo> table = feature_table();
  for (size_t i = 0; i < table.size(); ++i) {
    const FeatureInfo& f = table[i];
    bool v = f.change < 0 ? on(static_cast<Feature>(i)) : change_on(f.change);
    if (v == f.default_on) continue;
    if (!out.empty()) out += ",";
    out += v ? f.name : std::string("NO_") + f.name;
  }
  return out;
}

bool Features::is_change_set(const std::string& assignment) {
  return assignment.rfind("change.", 0) == 0;
}

void Features::apply_set(const std::string& assignment) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("--set " + assignment + ": " + what);
  };
  auto eq = assignment.find('=');
  if (eq == std::string::npos) fail("expected change.NAME.KEY=VALUE");
  std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  while (!value.empty() && value.back() == ' ') value.pop_back();
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::string rest = key.substr(std::string("change.").size());
  auto dot = rest.find('.');
  if (dot == std::string::npos) fail("expected change.NAME.KEY=VALUE");
  std::string name = rest.substr(0, dot), tkey = rest.substr(dot + 1);
  const ChangeType* c = find_change(name);
  if (!c) fail("unknown scheduler change '" + name + "' (see `schedlab features`)");
  const auto& tus = c->info.tunables;
  for (size_t i = 0; i < tus.size(); ++i) {
    if (tkey != tus[i].key) continue;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size())
      fail("'" + value + "' is not an integer");
    if (v < tus[i].min || v > tus[i].max)
      fail(std::to_string(v) + " is outside [" + std::to_string(tus[i].min) + ", " +
           std::to_string(tus[i].max) + "] " + tus[i].unit);
    tunables_[c->index][i] = v;
    return;
  }
  std::string keys;
  for (const auto& tu : tus) keys += (keys.empty() ? "" : ", ") + std::string(tu.key);
  fail("unknown tunable '" + tkey + "' of " + name +
       (keys.empty() ? " (it has none)" : " (tunables: " + keys + ")"));
}

}  // namespace schedlab::kernel
