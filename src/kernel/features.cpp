#include "kernel/features.hpp"

#include <charconv>
#include <sstream>
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

void Features::apply(const std::string& list) {
  std::stringstream ss(list);
  std::string item;
  const std::vector<FeatureInfo> table = feature_table();
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    bool value = true;
    std::string name = item;
    if (name.rfind("NO_", 0) == 0) {
      value = false;
      name = name.substr(3);
    }
    bool found = false;
    for (size_t i = 0; i < table.size(); ++i) {
      if (name != table[i].name) continue;
      if (table[i].change < 0)
        set(static_cast<Feature>(i), value);
      else
        set_change(table[i].change, value);
      found = true;
    }
    if (!found)
      throw std::invalid_argument("--features: unknown feature '" + item +
                                  "' (see `schedlab features`)");
  }
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
