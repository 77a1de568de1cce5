// The registry of scheduler changes (change.hpp) and the services a change uses.
#include "kernel/change.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "kernel/cpu.hpp"
#include "kernel/deferred.hpp"
#include "kernel/features.hpp"
#include "kernel/sched.hpp"

namespace schedlab::kernel {

const char* hook_name(Hook h) {
  switch (h) {
#define SCHEDLAB_HOOK_NAME(name) \
  case Hook::name:               \
    return #name;
    SCHEDLAB_CHANGE_HOOKS(SCHEDLAB_HOOK_NAME)
#undef SCHEDLAB_HOOK_NAME
    case Hook::COUNT: break;
  }
  return "?";
}

namespace {

struct Registry {
  std::vector<std::unique_ptr<ChangeType>> owned;
  std::vector<const ChangeType*> sorted;
  bool closed = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

bool valid_name(std::string_view n) {
  if (n.empty() || n.rfind("NO_", 0) == 0) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool valid_key(std::string_view n) {
  return !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Sorts by name, lays out the counters, and checks every name once.
void close(Registry& r) {
  r.closed = true;
  for (auto& t : r.owned) r.sorted.push_back(t.get());
  std::sort(r.sorted.begin(), r.sorted.end(), [](const ChangeType* a, const ChangeType* b) {
    return std::string_view(a->info.name) < std::string_view(b->info.name);
  });
  std::set<std::string> features, counters;
#define SCHEDLAB_FEATURE_NAME(name, on, meaning) features.insert(#name);
  SCHEDLAB_FEATURES(SCHEDLAB_FEATURE_NAME)
#undef SCHEDLAB_FEATURE_NAME
#define SCHEDLAB_COUNTER_NAME(name, ...) counters.insert(#name);
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_COUNTER_NAME, SCHEDLAB_COUNTER_NAME, SCHEDLAB_COUNTER_NAME)
#undef SCHEDLAB_COUNTER_NAME
  int base = 0;
  for (size_t i = 0; i < r.sorted.size(); ++i) {
    auto* t = const_cast<ChangeType*>(r.sorted[i]);
    const ChangeInfo& in = t->info;
    std::string who = std::string("scheduler change '") + (in.name ? in.name : "") + "'";
    if (!in.name || !valid_name(in.name))
      throw std::logic_error(who + ": a name is upper case letters, digits and '_', not NO_...");
    if (!features.insert(in.name).second)
      throw std::logic_error(who + ": the name is taken by another feature or change");
    if (!in.help || !*in.help || !in.origin || !*in.origin)
      throw std::logic_error(who + ": needs a one-line description and its origin");
    for (const auto& c : in.counters)
      if (!c.name || !valid_key(c.name) || !counters.insert(c.name).second)
        throw std::logic_error(who + ": counter '" + (c.name ? c.name : "") +
                               "' is not a lower-case name or is taken by another counter");
    std::set<std::string> keys;
    for (const auto& tu : in.tunables)
      if (!tu.key || !valid_key(tu.key) || !keys.insert(tu.key).second || tu.min > tu.max ||
          tu.value < tu.min || tu.value > tu.max)
        throw std::logic_error(who + ": tunable '" + (tu.key ? tu.key : "") +
                               "' has a bad or repeated key, or its default is outside [min, max]");
    t->index = static_cast<int>(i);
    t->counter_base = base;
    base += static_cast<int>(in.counters.size());
  }
}

}  // namespace

void register_change(ChangeType t) {
  Registry& r = registry();
  if (r.closed)
    throw std::logic_error(std::string("scheduler change '") + t.info.name +
                           "' registered after the registry was first used");
  r.owned.push_back(std::make_unique<ChangeType>(std::move(t)));
}

const std::vector<const ChangeType*>& change_types() {
  Registry& r = registry();
  if (!r.closed) close(r);
  return r.sorted;
}

const ChangeType* find_change(std::string_view name) {
  for (const ChangeType* t : change_types())
    if (name == t->info.name) return t;
  return nullptr;
}

int nr_change_counters() {
  const auto& ts = change_types();
  return ts.empty() ? 0
                    : ts.back()->counter_base + static_cast<int>(ts.back()->info.counters.size());
}

int64_t change_counter(const CpuCounters& c, std::string_view name) {
  for (const ChangeType* t : change_types())
    for (size_t i = 0; i < t->info.counters.size(); ++i) {
      const ChangeCounter& cc = t->info.counters[i];
      if (name != cc.name) continue;
      if (cc.derive) return cc.derive(c);
      size_t slot = t->counter_base + i;
      return slot < c.change.size() ? c.change[slot] : 0;
    }
  throw std::out_of_range("no change counter '" + std::string(name) + "'");
}

// --- what a change uses -------------------------------------------------------------------------

int64_t& Change::counter(Rq& rq, int i) { return rq.c.change[type_.counter_base + i]; }

int64_t Change::tunable(int i) const { return k.f.tunable(type_.index, i); }

void Change::run_steps(Cpu& cpu, uint8_t point) {
  cpu.run_steps(Continuation::change(this, point));
}

void Change::arm(ChangeEvent& e, Time t) { k.ev.schedule(e, t); }
void Change::disarm(ChangeEvent& e) { k.ev.deschedule(e); }

void Change::defer(Time t, int cpu, Task* p, int64_t arg, uint8_t kind) {
  DeferredEvent& e = k.deferred(DeferredEvent::ChangeCall, cpu, p, arg);
  e.change = this;
  e.change_kind = kind;
  k.ev.schedule(e, t);
}

}  // namespace schedlab::kernel
