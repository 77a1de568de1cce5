#include "host/kernel_probe.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "host/procfs.hpp"
#include "util/text.hpp"

namespace schedlab::host {
namespace fs = std::filesystem;
using machine::KernelInfo;
using machine::Recorded;
using machine::RecordedText;

namespace {

// One feature switch of the model and the kernel release it appeared in by default; `on_before`
// is its setting before that release (what a kernel without it behaves like). Sources: the
// commits named in kernel/features.hpp's help texts.
struct VersionedFeature {
  const char* name;
  int major, minor;  // first release with the default `on_after`
  bool on_after, on_before;
};
const std::vector<VersionedFeature>& versioned_features() {
  static const std::vector<VersionedFeature> table = {
      {"TTWU_QUEUE", 0, 0, true, true},
      {"TTWU_QUEUE_IDLE", 6, 0, true, false},  // f3dd3f674555, model-only switch
      {"SIS_UTIL", 6, 0, true, false},         // v6.0
      {"SIS_PROP", 6, 0, false, true},         // default off from v6.0, removed in v6.7
      {"WA_IDLE", 0, 0, true, true},
      {"WA_WEIGHT", 0, 0, true, true},
      {"WA_BIAS", 0, 0, true, true},
      {"WAKEUP_PREEMPTION", 0, 0, true, true},
      {"EEVDF", 6, 6, true, false},            // 147f3efaa241, model-only switch
      {"RUN_TO_PARITY", 6, 6, true, false},    // 63304558ba5d
      {"PREEMPT_SHORT", 6, 12, true, false},   // v6.12
      {"DELAY_DEQUEUE", 6, 12, true, false},   // 152e11f6df29
      {"DELAY_ZERO", 6, 12, true, false},      // 54a58a787791
  };
  return table;
}

bool model_only(const std::string& name) { return name == "EEVDF" || name == "TTWU_QUEUE_IDLE"; }

std::string format_features(const std::map<std::string, bool>& on) {
  std::string out;
  for (const auto& f : versioned_features()) {
    auto it = on.find(f.name);
    if (it == on.end()) continue;
    out += fmt::format("{}{}{}", out.empty() ? "" : ",", it->second ? "" : "NO_", f.name);
  }
  return out;
}

std::map<std::string, bool> defaults_map(const KernelVersion& v) {
  std::map<std::string, bool> on;
  for (const auto& f : versioned_features()) on[f.name] = v.at_least(f.major, f.minor) ? f.on_after : f.on_before;
  return on;
}

std::optional<long long> parse_ll(const std::string& s) { return util::parse_whole_int(s); }

// "1.400000" (ms, as debug.c's SPLIT_NS prints it) -> 1400000 ns.
std::optional<int64_t> parse_split_ms(const std::string& s) {
  size_t dot = s.find('.');
  auto whole = parse_ll(s.substr(0, dot));
  if (!whole || *whole < 0) return std::nullopt;
  long long frac_ns = 0;
  if (dot != std::string::npos) {
    std::string frac = s.substr(dot + 1);
    if (frac.empty() || frac.size() > 6 || !std::all_of(frac.begin(), frac.end(), ::isdigit)) return std::nullopt;
    frac.resize(6, '0');
    frac_ns = std::atoll(frac.c_str());
  }
  return *whole * 1000000 + frac_ns;
}

// The value after "key ... :" on the line of `text` whose first word is `key`.
std::optional<std::string> colon_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string_view l = util::trim(line);
    if (l.rfind(key, 0) != 0 || l.size() == key.size() || (l[key.size()] != ' ' && l[key.size()] != ':')) continue;
    size_t colon = l.find(':');
    if (colon == std::string::npos) return std::string();
    return std::string(util::trim(l.substr(colon + 1)));
  }
  return std::nullopt;
}

// CONFIG_X=value in a kernel config text.
std::optional<std::string> config_value(const std::string& config, const std::string& key) {
  std::istringstream in(config);
  const std::string prefix = key + "=";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return std::string(util::trim(std::string_view(line).substr(prefix.size())));
  return std::nullopt;
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;)
    if (w == word || w.rfind(word + "=", 0) == 0) return true;
  return false;
}

std::optional<std::string> cmdline_value(const std::string& cmdline, const std::string& key) {
  std::istringstream in(cmdline);
  for (std::string w; in >> w;)
    if (w.rfind(key + "=", 0) == 0) return w.substr(key.size() + 1);
  return std::nullopt;
}

const std::vector<std::string> kPreemptModels = {"none", "voluntary", "full", "lazy", "rt"};

void probe_release(const fs::path& root, KernelInfo& k, std::vector<std::string>& warnings) {
  const fs::path p = root / "proc/sys/kernel/osrelease";
  if (auto rel = read_file_trimmed(p.string()); rel && !rel->empty()) {
    k.release = RecordedText{*rel, "/proc/sys/kernel/osrelease"};
    return;
  }
  if (std::error_code ec; fs::equivalent(root, "/", ec)) {
    struct utsname u;
    if (uname(&u) == 0) {
      k.release = RecordedText{u.release, "uname(2) release"};
      return;
    }
  }
  warnings.push_back(fmt::format("{}: cannot read the kernel release; no version defaults for the scheduler settings",
                                 p.string()));
}

// The base slice: debugfs base_slice_ns, else sched/debug's .sysctl_sched_base_slice, else
// se.slice of /proc/self/sched (the probe's own task: a task's slice is the base slice unless it
// set one with sched_setattr(), which schedlab does not), else the version's default.
void probe_base_slice(const fs::path& root, const std::optional<KernelVersion>& v, int nr_cpus, KernelInfo& k,
                      std::vector<std::string>& warnings) {
  auto accept = [&](std::optional<int64_t> ns, const std::string& src, const std::string& raw) {
    if (!ns) {
      warnings.push_back(fmt::format("{}: cannot parse the base slice '{}'; ignored", src, raw));
      return false;
    }
    if (*ns < 1000 || *ns > 10000000000LL) {
      warnings.push_back(fmt::format("{}: base slice {} ns is outside 1 us .. 10 s; ignored", src, *ns));
      return false;
    }
    k.base_slice_ns = Recorded{static_cast<double>(*ns), src};
    return true;
  };
  const fs::path dbg_slice = root / "sys/kernel/debug/sched/base_slice_ns";
  if (auto t = read_file_trimmed(dbg_slice.string()))
    if (accept(parse_ll(*t), "/sys/kernel/debug/sched/base_slice_ns", *t)) return;
  if (auto t = read_file_text((root / "sys/kernel/debug/sched/debug").string()))
    if (auto val = colon_value(*t, ".sysctl_sched_base_slice"))
      if (accept(parse_split_ms(*val), "/sys/kernel/debug/sched/debug: .sysctl_sched_base_slice (ms)", *val)) return;
  if (auto t = read_file_text((root / "proc/self/sched").string()))
    if (auto val = colon_value(*t, "se.slice"))
      if (accept(parse_ll(*val), "/proc/self/sched: se.slice of the probing task (ns)", *val)) return;
  if (!v) {
    warnings.push_back("the base slice is not readable (no debugfs sched/base_slice_ns or sched/debug, no se.slice "
                       "in /proc/self/sched) and the kernel version is unknown: tunables.base_slice_ns keeps the "
                       "base profile's value");
    return;
  }
  const int64_t ns = default_base_slice_ns(*v, nr_cpus);
  k.base_slice_ns = Recorded{static_cast<double>(ns),
                             fmt::format("NOT READ: default of Linux {}.{} on {} CPUs (docs/host.md)", v->major,
                                         v->minor, nr_cpus)};
  warnings.push_back(fmt::format("the base slice is not readable; using the default of Linux {}.{} on {} CPUs, {} ns",
                                 v->major, v->minor, nr_cpus, ns));
}

// Features: debugfs sched/features by name, else the version's defaults. The bitmask
// `.sysctl_sched_features` of sched/debug is recorded as printed, not decoded: its bit order is
// features.h's of that exact kernel, which schedlab does not carry.
void probe_features(const fs::path& root, const std::optional<KernelVersion>& v, KernelInfo& k,
                    std::vector<std::string>& warnings) {
  if (auto t = read_file_text((root / "sys/kernel/debug/sched/debug").string()))
    if (auto val = colon_value(*t, ".sysctl_sched_features"); val && !val->empty())
      k.sched_features_mask = RecordedText{*val, "/sys/kernel/debug/sched/debug: .sysctl_sched_features (not decoded)"};
  if (auto t = read_file_text((root / "sys/kernel/debug/sched/features").string())) {
    if (auto f = features_from_debugfs(*t, v, warnings)) {
      k.features = RecordedText{*f, v ? "/sys/kernel/debug/sched/features (EEVDF, TTWU_QUEUE_IDLE: the version's)"
                                      : "/sys/kernel/debug/sched/features"};
      return;
    }
  }
  if (!v) {
    warnings.push_back("scheduler features not readable and the kernel version unknown: the model's defaults apply");
    return;
  }
  k.features = RecordedText{default_features_for(*v),
                            fmt::format("NOT READ (/sys/kernel/debug/sched/features unreadable): the defaults of "
                                        "Linux {}.{} (docs/host.md)",
                                        v->major, v->minor)};
  warnings.push_back(fmt::format("/sys/kernel/debug/sched/features is not readable; assuming the defaults of Linux "
                                 "{}.{}: {}",
                                 v->major, v->minor, k.features.value));
}

// Preemption model: debugfs sched/preempt ("none voluntary (full) lazy": the one in
// parentheses), else the kernel config's choice (with PREEMPT_DYNAMIC, preempt= on the command
// line overrides it).
void probe_preempt(const fs::path& root, const std::string& config, KernelInfo& k, std::vector<std::string>& warnings) {
  if (auto t = read_file_trimmed((root / "sys/kernel/debug/sched/preempt").string())) {
    size_t open = t->find('('), close = t->find(')');
    std::string m = open != std::string::npos && close > open ? t->substr(open + 1, close - open - 1) : "";
    if (std::find(kPreemptModels.begin(), kPreemptModels.end(), m) != kPreemptModels.end()) {
      k.preempt = RecordedText{m, "/sys/kernel/debug/sched/preempt"};
      return;
    }
    warnings.push_back(fmt::format("/sys/kernel/debug/sched/preempt: cannot tell the model from '{}'; ignored", *t));
  }
  if (config.empty()) {
    warnings.push_back("preemption model unknown (no debugfs sched/preempt, no kernel config)");
    return;
  }
  std::string model, key;
  for (auto [cfg, name] : {std::pair{"CONFIG_PREEMPT_RT", "rt"}, std::pair{"CONFIG_PREEMPT_LAZY", "lazy"},
                           std::pair{"CONFIG_PREEMPT", "full"}, std::pair{"CONFIG_PREEMPT_VOLUNTARY", "voluntary"},
                           std::pair{"CONFIG_PREEMPT_NONE", "none"}})
    if (config_value(config, cfg) == std::optional<std::string>("y")) {
      model = name, key = cfg;
      break;
    }
  if (model.empty()) {
    warnings.push_back("preemption model unknown (the kernel config sets none of CONFIG_PREEMPT_{NONE,VOLUNTARY,,LAZY,RT})");
    return;
  }
  std::string src = fmt::format("{}=y in the kernel config", key);
  if (config_value(config, "CONFIG_PREEMPT_DYNAMIC") == std::optional<std::string>("y")) {
    const std::string cmdline = read_file_text((root / "proc/cmdline").string()).value_or("");
    if (auto p = cmdline_value(cmdline, "preempt")) {
      if (std::find(kPreemptModels.begin(), kPreemptModels.end(), *p) != kPreemptModels.end()) {
        k.preempt = RecordedText{*p, "preempt= on /proc/cmdline (CONFIG_PREEMPT_DYNAMIC)"};
        return;
      }
      warnings.push_back(fmt::format("/proc/cmdline: preempt={} is not a preemption model; using the config's", *p));
    }
    src += " (CONFIG_PREEMPT_DYNAMIC: the boot default, no preempt= on /proc/cmdline)";
  }
  k.preempt = RecordedText{model, src};
}

// Autogroup: /proc/sys/kernel/sched_autogroup_enabled, else CONFIG_SCHED_AUTOGROUP (on unless
// `noautogroup` is on the command line).
void probe_autogroup(const fs::path& root, const std::string& config, KernelInfo& k,
                     std::vector<std::string>& warnings) {
  if (auto t = read_file_trimmed((root / "proc/sys/kernel/sched_autogroup_enabled").string())) {
    auto v = parse_ll(*t);
    if (v && (*v == 0 || *v == 1)) {
      k.autogroup = Recorded{static_cast<double>(*v), "/proc/sys/kernel/sched_autogroup_enabled"};
      return;
    }
    warnings.push_back(fmt::format("/proc/sys/kernel/sched_autogroup_enabled: '{}' is not 0 or 1; ignored", *t));
  }
  if (config.empty()) return;
  if (config_value(config, "CONFIG_SCHED_AUTOGROUP") == std::optional<std::string>("y")) {
    const bool off = has_word(read_file_text((root / "proc/cmdline").string()).value_or(""), "noautogroup");
    k.autogroup = Recorded{off ? 0.0 : 1.0, off ? "noautogroup on /proc/cmdline" : "CONFIG_SCHED_AUTOGROUP=y, no "
                                                                                    "noautogroup on /proc/cmdline"};
  } else {
    k.autogroup = Recorded{0, "CONFIG_SCHED_AUTOGROUP not set in the kernel config"};
  }
}

// /proc/sys/kernel/sched_* that mainline Linux does not have: a vendor kernel's own scheduler
// settings (the dev VM's 6.18.44-fc has sched_vcpu_pack). The model cannot know what they change,
// so they are recorded and warned about: validate's real runs include their effect.
void probe_other_sched_sysctls(const fs::path& root, KernelInfo& k, std::vector<std::string>& warnings) {
  // The names mainline has had there, v4.x to v6.18 (kernel/sched/*.c sysctl tables; the
  // SCHED_DEBUG ones moved to debugfs in v5.13).
  static const std::vector<std::string> mainline = {
      "sched_autogroup_enabled", "sched_cfs_bandwidth_slice_us", "sched_child_runs_first",
      "sched_deadline_period_max_us", "sched_deadline_period_min_us", "sched_energy_aware", "sched_itmt_enabled",
      "sched_rr_timeslice_ms", "sched_rt_period_us", "sched_rt_runtime_us", "sched_schedstats",
      "sched_util_clamp_max", "sched_util_clamp_min", "sched_util_clamp_min_rt_default", "sched_latency_ns",
      "sched_min_granularity_ns", "sched_wakeup_granularity_ns", "sched_migration_cost_ns", "sched_nr_migrate",
      "sched_tunable_scaling", "sched_time_avg_ms", "sched_shares_window_ns", "sched_domain",
      "sched_numa_balancing_scan_delay_ms", "sched_numa_balancing_scan_period_min_ms",
      "sched_numa_balancing_scan_period_max_ms", "sched_numa_balancing_scan_size_mb", "sched_compat_yield"};
  const fs::path dir = root / "proc/sys/kernel";
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("sched_", 0) != 0 || !e.is_regular_file(ec)) continue;
    if (std::find(mainline.begin(), mainline.end(), name) != mainline.end()) continue;
    auto v = read_file_trimmed(e.path().string());
    std::string value = v ? *v : "(unreadable)";
    std::replace(value.begin(), value.end(), ',', ' ');
    std::replace(value.begin(), value.end(), '\n', ' ');
    found.push_back(name + "=" + value);
  }
  if (found.empty()) return;
  std::sort(found.begin(), found.end());  // directory order is not stable
  const std::string list = fmt::format("{}", fmt::join(found, ","));
  k.other_sched_sysctls = RecordedText{list, "/proc/sys/kernel (not in mainline Linux: not modeled)"};
  warnings.push_back(fmt::format("/proc/sys/kernel has scheduler settings mainline Linux does not: {}; the model "
                                 "does not know what they change (validate's real runs include their effect)",
                                 list));
}

}  // namespace

std::optional<KernelVersion> parse_kernel_version(const std::string& release) {
  KernelVersion v;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> v.major) || !in.get(dot) || dot != '.' || !(in >> v.minor)) return std::nullopt;
  if (v.major < 2 || v.minor < 0) return std::nullopt;
  return v;
}

const std::vector<std::string>& modeled_kernel_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& f : versioned_features())
      if (!model_only(f.name)) n.push_back(f.name);
    return n;
  }();
  return names;
}

std::string default_features_for(const KernelVersion& v) { return format_features(defaults_map(v)); }

std::optional<std::string> features_from_debugfs(const std::string& text, const std::optional<KernelVersion>& v,
                                                 std::vector<std::string>& warnings) {
  std::map<std::string, bool> read;
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    if (!std::all_of(w.begin(), w.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'; })) {
      warnings.push_back(fmt::format("/sys/kernel/debug/sched/features: '{}' is not a feature name; file ignored", w));
      return std::nullopt;
    }
    const bool on = w.rfind("NO_", 0) != 0;
    read[on ? w : w.substr(3)] = on;
  }
  if (read.empty()) {
    warnings.push_back("/sys/kernel/debug/sched/features is empty; file ignored");
    return std::nullopt;
  }
  // A modeled feature this kernel does not list does not exist in it: the version's setting
  // (what the kernel does without it), or the model's default without a version.
  std::map<std::string, bool> on = v ? defaults_map(*v) : std::map<std::string, bool>{};
  for (const auto& name : modeled_kernel_features())
    if (auto it = read.find(name); it != read.end()) on[name] = it->second;
  return format_features(on);
}

int64_t default_base_slice_ns(const KernelVersion& v, int nr_cpus) {
  // Normalized: 0.75 ms (sysctl_sched_min_granularity, then sysctl_sched_base_slice from v6.6,
  // through v6.14: docs/sources.md TUNABLES); 0.70 ms from v6.15 (this VM's 6.18.44 shows 1.4 ms
  // at factor 2).
  const int64_t normalized = v.at_least(6, 15) ? 700000 : 750000;
  int cpus = std::clamp(nr_cpus, 1, 8);
  int factor = 1;
  while (cpus >>= 1) ++factor;  // 1 + ilog2(min(cpus, 8))
  return normalized * factor;
}

machine::KernelInfo probe_kernel(const std::string& root_str, const std::string& config, int nr_cpus,
                                 std::vector<std::string>& warnings) {
  const fs::path root = root_str.empty() ? fs::path("/") : fs::path(root_str);
  KernelInfo k;
  k.present = true;
  std::vector<std::string> found;  // this probe's warnings
  probe_release(root, k, found);
  if (!k.release.known() && config.empty()) {
    // A topology-only tree (a sysfs fixture): nothing of the kernel to read, no [kernel].
    warnings.push_back(fmt::format("no kernel release or config under {}: no [kernel] section; the base profile's "
                                   "base_slice_ns and the model's default features apply",
                                   root.string()));
    return KernelInfo{};
  }
  std::optional<KernelVersion> v;
  if (k.release.known()) {
    v = parse_kernel_version(k.release.value);
    if (!v)
      found.push_back(fmt::format("kernel release '{}' does not start with MAJOR.MINOR; no version defaults",
                                  k.release.value));
  }
  probe_base_slice(root, v, nr_cpus, k, found);
  probe_features(root, v, k, found);
  probe_preempt(root, config, k, found);
  probe_autogroup(root, config, k, found);
  probe_other_sched_sysctls(root, k, found);
  warnings.insert(warnings.end(), found.begin(), found.end());
  return k;
}

}  // namespace schedlab::host
