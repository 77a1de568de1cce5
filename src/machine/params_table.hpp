// Internal to the machine layer: the rows behind params(), used by the loader, `--set`,
// validate() and to_toml().
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "machine/machine.hpp"

namespace schedlab::machine::detail {

constexpr int kMaxCpus = 4096;  // largest machine the model accepts

using FieldRef = std::variant<int64_t*, double*, bool*>;

// One field of Costs, Tunables or Noise.
struct Field {
  const char* table;  // "costs", "tunables", "noise"
  const char* name;   // field name == TOML key inside the table
  FieldRef (*ref)(Machine&);
  const char* unit;
  double min;
  double max;
  const char* help;
  std::vector<int64_t> choices;  // if non-empty: the only accepted values (e.g. CONFIG_HZ)
  bool optional = false;         // may be left out of a profile (then its default applies)

  std::string key() const { return std::string(table) + "." + name; }
};
const std::vector<Field>& fields();

// One numeric/bool field of an [[idle_state]] table (name and desc are strings, handled apart).
struct IdleField {
  const char* name;
  FieldRef (*ref)(IdleState&);
  const char* unit;
  double min;
  double max;
  const char* help;
};
const std::vector<IdleField>& idle_fields();

struct TopoField {
  const char* name;
  int Topology::*member;
  int64_t min;
  int64_t max;
  const char* help;
  bool optional = false;  // may be left out of a profile (then 0: not known) and is not written at 0
};
const std::vector<TopoField>& topo_fields();

// A Recorded member of a [guest] or [[background]] table, with its fixed unit (unit "bool":
// true/false) and accepted range.
template <class Section>
struct RecordedField {
  const char* name;
  Recorded Section::*member;
  const char* unit;
  double min;
  double max;
  const char* help;
  bool optional = false;  // may be absent (then unknown)
};
using GuestField = RecordedField<Guest>;
using BackgroundField = RecordedField<BackgroundActivity>;
const std::vector<GuestField>& guest_fields();
// The text entries of [guest] ({ value = "...", source = "..." }).
struct GuestTextField {
  const char* name;
  RecordedText Guest::*member;
  const char* help;
};
const std::vector<GuestTextField>& guest_text_fields();

// [kernel] (KernelInfo): its Recorded and its text entries.
using KernelField = RecordedField<KernelInfo>;
const std::vector<KernelField>& kernel_fields();
struct KernelTextField {
  const char* name;
  RecordedText KernelInfo::*member;
  const char* help;
};
const std::vector<KernelTextField>& kernel_text_fields();

// The Recorded entries of one [[background]] table.
const std::vector<BackgroundField>& background_fields();
extern const std::vector<std::string> kBackgroundKinds;   // irq, softirq, kthread, steal, task
extern const std::vector<std::string> kBackgroundScopes;  // per_cpu, system

}  // namespace schedlab::machine::detail
