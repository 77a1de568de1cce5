#include "host/probe.hpp"

#include "host/guest.hpp"
#include "host/kernel_probe.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include "util/text.hpp"


namespace schedlab::host {
namespace fs = std::filesystem;
using machine::IdleState;
using machine::Machine;

namespace {

// Reads a small sysfs file; nullopt if missing or unreadable.
std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::string(util::trim(ss.str()));
}

std::optional<long long> to_int(const std::string& s) { return util::parse_whole_int(s); }

std::optional<long long> read_int(const fs::path& p) {
  auto t = read_text(p);
  if (!t) return std::nullopt;
  return to_int(*t);
}

std::vector<int> intersect(const std::vector<int>& a, const std::set<int>& keep) {
  std::vector<int> out;
  for (int x : a)
    if (keep.count(x)) out.push_back(x);
  return out;
}

bool contains(const std::string& hay, const char* needle) {
  return hay.find(needle) != std::string::npos;
}

std::string normalize_arch(std::string a) {
  if (a == "aarch64" || a == "arm64") return "arm64";
  if (a == "x86_64" || a == "amd64") return "x86_64";
  return a;
}

// The kernel config: <root>/boot/config-<release> if it sets CONFIG_HZ, else /proc/config.gz via
// gzip; "" if neither.
std::string read_kernel_config(const fs::path& root) {
  if (auto rel = read_text(root / "proc/sys/kernel/osrelease")) {
    std::ifstream in(root / "boot" / ("config-" + *rel));
    std::stringstream ss;
    if (in) ss << in.rdbuf();
    if (ss.str().find("\nCONFIG_HZ=") != std::string::npos || ss.str().rfind("CONFIG_HZ=", 0) == 0) return ss.str();
  }
  fs::path gz = root / "proc/config.gz";
  std::error_code ec;
  if (fs::exists(gz, ec) && access(gz.c_str(), R_OK) == 0) {
    std::string cmd = "gzip -dc '" + gz.string() + "' 2>/dev/null";
    if (gz.string().find('\'') != std::string::npos) return "";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return "";
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    pclose(p);
    return text;
  }
  return "";
}

// CONFIG_HZ of a kernel config text.
std::optional<int64_t> config_hz(const std::string& config) {
  std::istringstream in(config);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CONFIG_HZ=", 0) == 0) {
      auto v = to_int(std::string(util::trim(std::string_view(line).substr(10))));
      if (v && *v > 0 && *v <= 10000) return *v;
    }
  return std::nullopt;
}

// The most common value (ties: the larger).
int mode_of(const std::vector<int>& v) {
  std::map<int, int> count;
  for (int x : v) ++count[x];
  int best = 0, best_n = -1;
  for (auto [x, n] : count)
    if (n >= best_n) best = x, best_n = n;
  return best;
}

std::string join_ints(const std::vector<int>& v) {
  return fmt::format("{}", fmt::join(v, ","));
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  try {
    return util::parse_cpu_list(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

bool idle_state_polls(const std::string& arch, const std::string& driver, const std::string& name,
                      const std::string& desc, bool* known) {
  if (known) *known = true;
  if (name == "POLL" || contains(desc, "POLL IDLE")) return true;
  if (arch == "arm64" || driver == "psci_idle" || driver == "psci" || contains(desc, "WFI"))
    return false;
  if (driver == "intel_idle") return true;  // every intel_idle state is entered with MWAIT
  if (contains(desc, "MWAIT")) return true;  // "ACPI FFH MWAIT 0x0"
  if (contains(desc, "HLT") || contains(desc, "IOPORT") || contains(desc, "halt")) return false;
  if (driver == "haltpoll") return false;  // state 1 "haltpoll idle" is HLT
  if (!arch.empty() && arch != "x86_64") return false;  // only x86 MWAIT keeps the polling bit
  if (known) *known = false;
  return false;
}

namespace {

// The steps of probe_sysfs(): online CPUs, each CPU's topology and caches, NUMA nodes, the
// grouping into sockets -> LLCs -> cores -> threads and the uniform machine closest to it, the
// architecture, cpuidle, CONFIG_HZ and the hypervisor.

void warn(ProbeResult& r, std::string w) { r.warnings.push_back(std::move(w)); }

// Which CPUs are online: cpu/online, else each cpuN/online.
std::set<int> probe_online(const fs::path& cpu_dir, const std::vector<std::pair<int, fs::path>>& cpu_dirs,
                           ProbeResult& r) {
  std::optional<std::vector<int>> online_list;
  if (auto t = read_text(cpu_dir / "online")) {
    online_list = parse_cpu_list(*t);
    if (!online_list)
      warn(r, fmt::format("cannot parse {}: '{}'; using cpuN/online", (cpu_dir / "online").string(), *t));
  }
  std::set<int> online;
  const std::set<int> listed_online = online_list ? std::set<int>(online_list->begin(), online_list->end())
                                                  : std::set<int>{};
  for (auto& [n, dir] : cpu_dirs) {
    CpuInfo c;
    c.cpu = n;
    if (online_list) {
      c.online = listed_online.count(n) != 0;
    } else if (auto v = read_int(dir / "online")) {
      c.online = *v != 0;  // cpu0 usually has no `online` file: it cannot go offline
    }
    if (c.online) online.insert(n);
    r.cpus.push_back(c);
  }
  std::vector<int> offline;
  for (auto& c : r.cpus)
    if (!c.online) offline.push_back(c.cpu);
  if (!offline.empty())
    warn(r, fmt::format("CPUs {} are offline; the model covers the {} online CPUs only", format_cpu_list(offline),
                        online.size()));
  if (online.empty()) throw HostError(fmt::format("{}: no online CPU", cpu_dir.string()));
  r.online.assign(online.begin(), online.end());
  return online;
}

// cpuN/topology: package and SMT siblings. Returns false if the CPU has no topology directory.
bool probe_cpu_topology(const fs::path& dir, const std::set<int>& online, CpuInfo& c, std::vector<int>& no_pkg,
                        ProbeResult& r) {
  fs::path topo = dir / "topology";
  std::error_code ec;
  if (!fs::is_directory(topo, ec)) {
    c.siblings = {c.cpu};
    return false;
  }
  if (auto p = read_int(topo / "physical_package_id")) c.package = *p < 0 ? 0 : static_cast<int>(*p);
  else no_pkg.push_back(c.cpu);
  if (auto v = read_int(topo / "core_id")) c.core_id = static_cast<int>(*v);
  std::optional<std::vector<int>> sib;
  for (const char* f : {"core_cpus_list", "thread_siblings_list"})
    if (auto t = read_text(topo / f))
      if ((sib = parse_cpu_list(*t))) break;
  if (sib) c.siblings = intersect(*sib, online);
  if (std::find(c.siblings.begin(), c.siblings.end(), c.cpu) == c.siblings.end()) {
    if (sib) warn(r, fmt::format("cpu{}: sibling list does not contain the CPU itself; treating it as a core of its own", c.cpu));
    c.siblings = {c.cpu};
  }
  return true;
}

// A sysfs cache size ("2048K", "1M", "512"): bytes, 0 if it does not parse.
int64_t parse_cache_size(const std::string& text) {
  size_t end = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &end);
  } catch (const std::exception&) {
    return 0;
  }
  std::string unit = text.substr(end);
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit == "G") return v << 30;
  return unit.empty() ? v : 0;
}

// cpuN/cache: the highest data or unified cache level = LLC, and the L2's size.
void probe_cpu_llc(const fs::path& dir, const std::set<int>& online, CpuInfo& c, ProbeResult& r) {
  for (auto& [idx, idir] : numbered_dirs(dir / "cache", "index")) {
    auto level = read_int(idir / "level");
    auto type = read_text(idir / "type");
    auto shared = read_text(idir / "shared_cpu_list");
    if (!level || !shared) {
      warn(r, fmt::format("cpu{}: cache/index{} lacks level or shared_cpu_list; ignored", c.cpu, idx));
      continue;
    }
    if (type && *type == "Instruction") continue;
    if (*level == 2)
      if (auto size = read_text(idir / "size")) c.l2_bytes = parse_cache_size(*size);
    auto list = parse_cpu_list(*shared);
    if (!list) {
      warn(r, fmt::format("cpu{}: cannot parse cache/index{}/shared_cpu_list '{}'; ignored", c.cpu, idx, *shared));
      continue;
    }
    if (*level > c.llc_level) {
      c.llc_level = static_cast<int>(*level);
      c.llc = intersect(*list, online);
      if (std::find(c.llc.begin(), c.llc.end(), c.cpu) == c.llc.end()) c.llc.push_back(c.cpu), std::sort(c.llc.begin(), c.llc.end());
    }
  }
}

// Topology and caches of each online CPU; returns the machine's LLC level (0: no cache info).
int probe_cpus(const fs::path& cpu_dir, const std::set<int>& online, ProbeResult& r) {
  std::vector<int> no_topo, no_pkg;
  int max_level = 0;
  for (auto& c : r.cpus) {
    if (!c.online) continue;
    fs::path dir = cpu_dir / fmt::format("cpu{}", c.cpu);
    if (!probe_cpu_topology(dir, online, c, no_pkg, r)) no_topo.push_back(c.cpu);
    probe_cpu_llc(dir, online, c, r);
    max_level = std::max(max_level, c.llc_level);
  }
  if (!no_topo.empty())
    warn(r, fmt::format("CPUs {} have no topology directory; each is taken as a single-thread core in package 0",
                        format_cpu_list(no_topo)));
  if (!no_pkg.empty())
    warn(r, fmt::format("CPUs {} have no readable physical_package_id; assuming package 0", format_cpu_list(no_pkg)));
  return max_level;
}

// Lookups by CPU number, so that what follows stays linear in the CPU count (a loop over CPUs
// x LLC members x CPUs took 3.7 s here on a 4096-CPU tree with one LLC per socket).
std::map<int, CpuInfo*> cpus_by_number(ProbeResult& r) {
  std::map<int, CpuInfo*> by_cpu;
  for (auto& c : r.cpus) by_cpu[c.cpu] = &c;
  return by_cpu;
}

// CPUs whose highest cache level is below the machine's LLC level (a missing cache index) take
// the LLC that other CPUs report them in (the first such CPU); with no cache information at all,
// LLC = package.
void fill_missing_llcs(int max_level, ProbeResult& r) {
  std::map<int, std::vector<int>> package_cpus;  // online CPUs of each package, ascending
  for (auto& c : r.cpus)
    if (c.online) package_cpus[c.package].push_back(c.cpu);
  std::map<int, const CpuInfo*> llc_peer;  // CPU -> first CPU at the LLC level listing it
  if (max_level > 0)
    for (auto& o : r.cpus)
      if (o.online && o.llc_level == max_level)
        for (int x : o.llc) llc_peer.emplace(x, &o);
  std::vector<int> borrowed, per_package;
  for (auto& c : r.cpus) {
    if (!c.online || (c.llc_level == max_level && max_level > 0)) continue;
    auto peer = llc_peer.find(c.cpu);
    if (peer != llc_peer.end()) {
      c.llc = peer->second->llc;
      c.llc_level = max_level;
      borrowed.push_back(c.cpu);
    } else {
      c.llc = package_cpus[c.package];
      per_package.push_back(c.cpu);
    }
  }
  if (!borrowed.empty())
    warn(r, fmt::format("CPUs {} report no level-{} cache; using the LLC other CPUs list them in",
                        format_cpu_list(borrowed), max_level));
  if (!per_package.empty())
    warn(r, fmt::format("no last-level cache information for CPUs {}; assuming one LLC per package",
                        format_cpu_list(per_package)));
}

// NUMA nodes (informative: the model has no level between LLC and socket); returns the nodes
// holding an online CPU.
std::set<int> probe_nodes(const fs::path& root, const std::set<int>& online, std::map<int, CpuInfo*>& by_cpu) {
  std::set<int> nodes;
  for (auto& [n, ndir] : numbered_dirs(root / "sys/devices/system/node", "node")) {
    auto t = read_text(ndir / "cpulist");
    auto list = t ? parse_cpu_list(*t) : std::nullopt;
    if (!list) continue;
    for (int cpu : *list)
      if (auto it = by_cpu.find(cpu); it != by_cpu.end()) it->second->node = n;
    if (!intersect(*list, online).empty()) nodes.insert(n);
  }
  return nodes;
}

// The real machine as sockets -> LLCs -> cores -> threads, and the counts seen at each level.
struct Core {
  std::vector<int> threads;
};
struct Llc {
  std::vector<int> cpus;
  std::vector<Core> cores;
};
struct Socket {
  int package;
  std::vector<Llc> llcs;
  int nr_cores = 0;
};
struct Layout {
  std::vector<Socket> sockets;
  std::vector<int> cores_per_socket, threads_per_core, cores_per_llc;
  bool llc_crosses_package = false;
  size_t counted = 0;  // threads over all LLCs' cores: more than the online CPUs if a core spans LLCs
};

Socket group_socket(int pkg, const std::vector<const CpuInfo*>& cpus, const std::map<int, CpuInfo*>& by_cpu,
                    Layout& lay) {
  Socket s;
  s.package = pkg;
  std::map<std::vector<int>, std::set<std::vector<int>>> llc_cores;  // llc -> sibling sets
  for (const CpuInfo* c : cpus) llc_cores[c->llc].insert(c->siblings);
  for (auto& [llc, cores] : llc_cores)  // each distinct LLC once
    for (int x : llc)
      if (auto it = by_cpu.find(x); it != by_cpu.end() && it->second->online && it->second->package != pkg)
        lay.llc_crosses_package = true;
  for (auto& [llc, cores] : llc_cores) {
    Llc l;
    l.cpus = llc;
    for (auto& sib : cores) l.cores.push_back({sib});
    std::sort(l.cores.begin(), l.cores.end(), [](const Core& a, const Core& b) { return a.threads < b.threads; });
    s.nr_cores += static_cast<int>(l.cores.size());
    lay.cores_per_llc.push_back(static_cast<int>(l.cores.size()));
    for (auto& core : l.cores) lay.threads_per_core.push_back(static_cast<int>(core.threads.size()));
    s.llcs.push_back(std::move(l));
  }
  std::sort(s.llcs.begin(), s.llcs.end(), [](const Llc& a, const Llc& b) { return a.cpus < b.cpus; });
  return s;
}

Layout group_layout(const ProbeResult& r, const std::map<int, CpuInfo*>& by_cpu) {
  std::map<int, std::vector<const CpuInfo*>> by_pkg;
  for (auto& c : r.cpus)
    if (c.online) by_pkg[c.package].push_back(&c);
  Layout lay;
  for (auto& [pkg, cpus] : by_pkg) {
    Socket s = group_socket(pkg, cpus, by_cpu, lay);
    lay.cores_per_socket.push_back(s.nr_cores);
    lay.sockets.push_back(std::move(s));
  }
  // A sibling set that spans two LLCs makes the per-LLC core lists overlap; detect by counting.
  for (auto& s : lay.sockets)
    for (auto& l : s.llcs)
      for (auto& c : l.cores) lay.counted += c.threads.size();
  return lay;
}

// The uniform topology closest to the layout (the most common count at each level).
void fit_topology(const Layout& lay, size_t nr_online, ProbeResult& r) {
  machine::Topology& t = r.machine.topo;
  t.sockets = static_cast<int>(lay.sockets.size());
  t.cores_per_socket = std::max(1, mode_of(lay.cores_per_socket));
  t.threads_per_core = std::max(1, mode_of(lay.threads_per_core));
  int cpl = std::max(1, mode_of(lay.cores_per_llc));
  if (lay.llc_crosses_package) {
    warn(r, "a last-level cache spans several packages; modeling one LLC per socket");
    cpl = t.cores_per_socket;
  }
  cpl = std::min(cpl, t.cores_per_socket);
  while (t.cores_per_socket % cpl != 0) --cpl;
  t.cores_per_llc = cpl;
  auto all_equal = [](const std::vector<int>& v, int x) {
    return std::all_of(v.begin(), v.end(), [x](int y) { return y == x; });
  };
  r.uniform = all_equal(lay.cores_per_socket, t.cores_per_socket) &&
              all_equal(lay.threads_per_core, t.threads_per_core) && all_equal(lay.cores_per_llc, t.cores_per_llc) &&
              !lay.llc_crosses_package && lay.counted == nr_online && t.nr_cpus() == static_cast<int>(nr_online);
}

// The real layout, for the profile header.
void describe_layout(const Layout& lay, const std::set<int>& nodes, int max_level, ProbeResult& r) {
  r.layout.push_back(fmt::format("{} online CPUs ({}), {} package(s), {} NUMA node(s), LLC = {}",
                                 r.online.size(), format_cpu_list(r.online), lay.sockets.size(),
                                 nodes.empty() ? std::string("no") : std::to_string(nodes.size()),
                                 max_level > 0 ? "L" + std::to_string(max_level) + " cache" : std::string("unknown (no cache info)")));
  for (auto& s : lay.sockets) {
    r.layout.push_back(fmt::format("package {}: {} cores in {} LLC(s)", s.package, s.nr_cores, s.llcs.size()));
    for (auto& l : s.llcs) {
      std::vector<std::string> cores;
      for (auto& c : l.cores) cores.push_back(fmt::format("{{{}}}", join_ints(c.threads)));
      std::string line = fmt::format("  LLC cpus {}: cores ", format_cpu_list(l.cpus));
      // keep lines readable on big machines
      size_t shown = std::min<size_t>(cores.size(), 16);
      line += fmt::format("{}", fmt::join(cores.begin(), cores.begin() + shown, " "));
      if (shown < cores.size()) line += fmt::format(" ... ({} more)", cores.size() - shown);
      r.layout.push_back(line);
    }
  }
}

// Model CPU -> real CPU, following the model's numbering (thread-major, socket, LLC, core), and
// what the header and the warnings say about a layout the model does not match.
void map_model_to_real(const Layout& lay, const std::set<int>& nodes, ProbeResult& r) {
  const machine::Topology& t = r.machine.topo;
  r.model_to_real.assign(t.nr_cpus(), -1);
  for (int s = 0; s < t.sockets; ++s) {
    std::vector<const Core*> cores;
    for (auto& l : lay.sockets[s].llcs)
      for (auto& c : l.cores) cores.push_back(&c);
    for (int ci = 0; ci < t.cores_per_socket && ci < static_cast<int>(cores.size()); ++ci)
      for (int th = 0; th < t.threads_per_core && th < static_cast<int>(cores[ci]->threads.size()); ++th)
        r.model_to_real[th * t.nr_cores() + s * t.cores_per_socket + ci] = cores[ci]->threads[th];
  }
  // Numbering matches if model CPU i is the i-th online CPU (offline holes aside).
  for (int i = 0; i < t.nr_cpus(); ++i)
    if (i >= static_cast<int>(r.online.size()) || r.model_to_real[i] != r.online[i]) r.numbering_matches = false;
  if (!r.uniform) {
    warn(r, fmt::format("the real topology is not uniform (cores per package {}, threads per core {}, cores per LLC "
                        "{}); modeled as the closest uniform machine: {} socket(s) x {} cores x {} threads, {} cores "
                        "per LLC ({} CPUs for {} real ones); the real layout is in the profile header",
                        join_ints(lay.cores_per_socket), join_ints(lay.threads_per_core),
                        join_ints(lay.cores_per_llc), t.sockets, t.cores_per_socket, t.threads_per_core,
                        t.cores_per_llc, t.nr_cpus(), r.online.size()));
  } else if (!r.numbering_matches) {
    warn(r, "the real CPU numbering differs from the model's (x86 convention: SMT siblings are nr_cores apart); "
            "the profile header maps model CPUs to real CPUs");
  }
  if (nodes.size() > lay.sockets.size())
    warn(r, fmt::format("{} NUMA nodes on {} package(s): the model has no NUMA level inside a socket", nodes.size(),
                        lay.sockets.size()));
}

// The architecture (proc/sys/kernel/arch, uname on the live root, else from the cpuidle
// driver), and the cpuidle driver and governor.
void probe_arch_and_cpuidle(const fs::path& root, const fs::path& cpu_dir, ProbeResult& r) {
  Machine& m = r.machine;
  if (auto a = read_text(root / "proc/sys/kernel/arch")) {
    m.arch = normalize_arch(*a);
  } else if (std::error_code eq; fs::equivalent(root, "/", eq)) {
    struct utsname u;
    if (uname(&u) == 0) m.arch = normalize_arch(u.machine);
  }
  const fs::path idle_dir = cpu_dir / "cpuidle";
  std::error_code ec;
  if (!fs::is_directory(idle_dir, ec)) {
    warn(r, fmt::format("no {} (kernel without CONFIG_CPU_IDLE?)", idle_dir.string()));
  } else {
    m.cpuidle_driver = read_text(idle_dir / "current_driver").value_or("");
    auto gov = read_text(idle_dir / "current_governor");
    if (!gov) gov = read_text(idle_dir / "current_governor_ro");
    m.governor = gov.value_or("");
    if (m.cpuidle_driver.empty()) warn(r, "cpuidle/current_driver is missing or unreadable");
    if (m.governor.empty()) warn(r, "cpuidle/current_governor(_ro) is missing or unreadable");
  }
  if (m.arch.empty()) {
    if (m.cpuidle_driver == "psci_idle") m.arch = "arm64";
    else if (m.cpuidle_driver == "intel_idle" || m.cpuidle_driver == "acpi_idle" || m.cpuidle_driver == "haltpoll")
      m.arch = "x86_64";
    else warn(r, "cannot tell the architecture (no proc/sys/kernel/arch under the root)");
  }
}

// cpuidle state n of the first online CPU (named `name`): latency, residency, disable, polling;
// other CPUs are checked for a different `disable`.
IdleState probe_idle_state(const fs::path& cpu_dir, const fs::path& sdir, int n, const std::string& name,
                           ProbeResult& r) {
  const Machine& m = r.machine;
  const int first = r.online.front();
  IdleState s;
  s.name = name;
  // The kernel does not require unique names, but the model addresses states by name
  // (--idle-disable, --set idle_state.NAME.*): a repeated one gets its state number appended.
  if (std::any_of(m.idle_states.begin(), m.idle_states.end(), [&](const IdleState& o) { return o.name == s.name; })) {
    s.name = fmt::format("{}-state{}", name, n);
    warn(r, fmt::format("cpu{}/cpuidle/state{} is named '{}' like an earlier state; calling it '{}'", first, n, name,
                        s.name));
  }
  s.desc = read_text(sdir / "desc").value_or("");
  auto lat = read_int(sdir / "latency");
  auto res = read_int(sdir / "residency");
  if (!lat || !res)
    warn(r, fmt::format("cpu{}/cpuidle/state{} ({}): latency or residency unreadable; using 0", first, n, s.name));
  for (auto [file, v] : {std::pair{"latency", lat}, std::pair{"residency", res}})
    if (v && *v < 0)
      warn(r, fmt::format("cpu{}/cpuidle/state{}/{} ({}) is negative ({}); using 0", first, n, file, s.name, *v));
  // sysfs gives microseconds; an absurd value saturates (and fails the profile's range check).
  auto us_to_ns = [](long long us) { return std::min<long long>(std::max<long long>(0, us), INT64_MAX / 1000) * 1000; };
  s.exit_latency_ns = us_to_ns(lat.value_or(0));
  s.target_residency_ns = us_to_ns(res.value_or(0));
  s.disabled = read_int(sdir / "disable").value_or(0) != 0;
  bool known = true;
  s.polling = idle_state_polls(m.arch, m.cpuidle_driver, s.name, s.desc, &known);
  if (!known)
    warn(r, fmt::format("cannot tell whether idle state {} ('{}') keeps the polling bit; assuming it does not",
                        s.name, s.desc));
  for (int cpu : r.online) {
    if (cpu == first) continue;
    auto d = read_int(cpu_dir / fmt::format("cpu{}/cpuidle/state{}/disable", cpu, n));
    if (d && (*d != 0) != s.disabled) {
      warn(r, fmt::format("idle state {} is disabled on some CPUs only (cpu{} differs from cpu{}); using cpu{}'s "
                          "setting",
                          s.name, cpu, first, first));
      break;
    }
  }
  return s;
}

// The idle states of the first online CPU; without any, the architecture's default idle.
void probe_idle_states(const fs::path& cpu_dir, ProbeResult& r) {
  Machine& m = r.machine;
  const int first = r.online.front();
  for (auto& [n, sdir] : numbered_dirs(cpu_dir / fmt::format("cpu{}/cpuidle", first), "state")) {
    auto name = read_text(sdir / "name");
    if (!name || name->empty()) {
      warn(r, fmt::format("cpu{}/cpuidle/state{} has no name; ignored", first, n));
      continue;
    }
    if (m.idle_states.size() == machine::kMaxIdleStates) {
      warn(r, fmt::format("cpu{}/cpuidle has more than {} states (CPUIDLE_STATE_MAX); state{} ({}) and later are "
                          "ignored",
                          first, machine::kMaxIdleStates, n, *name));
      break;
    }
    m.idle_states.push_back(probe_idle_state(cpu_dir, sdir, n, *name, r));
  }
  if (!m.idle_states.empty()) return;
  // No cpuidle driver: the idle loop calls default_idle_call() -> arch_cpu_idle().
  IdleState s;
  if (m.arch == "arm64") {
    s.name = "WFI";
    s.desc = "arch_cpu_idle (no cpuidle driver): WFI";
  } else {
    s.name = "HLT";
    s.desc = "default_idle (no cpuidle driver): HLT";
  }
  s.polling = false;
  warn(r, fmt::format("no cpuidle states (driver '{}'); modeling the architecture's default idle as one "
                      "non-polling state {} with 0 exit latency and residency",
                      m.cpuidle_driver.empty() ? "none" : m.cpuidle_driver, s.name));
  m.idle_states.push_back(std::move(s));
}

}  // namespace

ProbeResult probe_sysfs(const std::string& root_str) {
  ProbeResult r;
  Machine& m = r.machine;
  const fs::path root = root_str.empty() ? fs::path("/") : fs::path(root_str);
  const fs::path cpu_dir = root / "sys/devices/system/cpu";
  auto cpu_dirs = numbered_dirs(cpu_dir, "cpu");
  if (cpu_dirs.empty())
    throw HostError(fmt::format("{}: no cpuN directories; is this a Linux sysfs tree?", cpu_dir.string()));
  const std::set<int> online = probe_online(cpu_dir, cpu_dirs, r);
  const int max_level = probe_cpus(cpu_dir, online, r);
  std::map<int, CpuInfo*> by_cpu = cpus_by_number(r);
  fill_missing_llcs(max_level, r);
  const std::set<int> nodes = probe_nodes(root, online, by_cpu);
  const Layout lay = group_layout(r, by_cpu);
  fit_topology(lay, online.size(), r);
  // topology.l2_bytes: the L2 size most online CPUs report (0 if none does).
  std::vector<int> l2;
  for (const auto& c : r.cpus)
    if (c.online && c.l2_bytes > 0 && c.l2_bytes <= (1 << 30)) l2.push_back(static_cast<int>(c.l2_bytes));
  r.machine.topo.l2_bytes = l2.empty() ? 0 : mode_of(l2);
  describe_layout(lay, nodes, max_level, r);
  map_model_to_real(lay, nodes, r);
  probe_arch_and_cpuidle(root, cpu_dir, r);
  probe_idle_states(cpu_dir, r);
  const std::string config = read_kernel_config(root);
  r.hz_from_config = config_hz(config);
  if (r.hz_from_config) m.tunables.hz = *r.hz_from_config;
  m.kernel = probe_kernel(root_str, config, static_cast<int>(online.size()), r.warnings);
  if (m.kernel.base_slice_ns.known()) m.tunables.base_slice_ns = static_cast<int64_t>(m.kernel.base_slice_ns.value);
  m.guest = probe_guest(root_str, cpuid_for_root(root_str), r.warnings);
  m.name = "host";
  m.description = fmt::format("probed from {} ({} CPUs, {}, cpuidle {}{})",
                              (root / "sys").string(), online.size(), m.arch.empty() ? "unknown arch" : m.arch,
                              m.cpuidle_driver.empty() ? "none" : m.cpuidle_driver,
                              m.guest.present ? ", " + m.guest.hypervisor.value + " guest" : "");
  return r;
}

void apply_base(Machine& m, const Machine& base, std::optional<int64_t> hz_from_config) {
  m.costs = base.costs;
  m.tunables = base.tunables;
  if (hz_from_config) m.tunables.hz = *hz_from_config;
  m.noise = base.noise;
  // The running kernel's base slice, when the probe read it (or took its version's default).
  if (m.kernel.base_slice_ns.known()) m.tunables.base_slice_ns = static_cast<int64_t>(m.kernel.base_slice_ns.value);
  for (auto& s : m.idle_states) {
    const IdleState* b = base.idle_state(s.name);
    s.wake_cost_ns = b ? b->wake_cost_ns : 0;
  }
}

std::vector<std::string> probe_header(const ProbeResult& r, const std::string& base_name) {
  std::vector<std::string> h;
  const auto& t = r.machine.topo;
  h.push_back("Machine profile of this host, written by `schedlab host probe` (see docs/host.md).");
  h.push_back(fmt::format("Topology and idle states: read from sysfs. Model: {} socket(s) x {} cores x {} threads, "
                          "{} cores per LLC.",
                          t.sockets, t.cores_per_socket, t.threads_per_core, t.cores_per_llc));
  const auto& k = r.machine.kernel;
  std::vector<std::string> own;
  if (r.hz_from_config) own.push_back("hz = CONFIG_HZ of the running kernel");
  if (k.base_slice_ns.known()) own.push_back("base_slice_ns from [kernel] below");
  h.push_back(fmt::format("Costs, tunables and noise: defaults copied from base profile '{}', NOT measured{}.",
                          base_name, own.empty() ? "" : fmt::format(" (except {})", fmt::join(own, "; "))));
  if (k.present) {
    h.push_back("Running kernel ([kernel] below; each value with the file it was read from, or NOT READ and the "
                "version's default):");
    for (auto [label, t] : {std::pair{"release", &k.release}, std::pair{"features", &k.features},
                            std::pair{"sched_features_mask", &k.sched_features_mask}, std::pair{"preempt", &k.preempt}})
      if (t->known()) h.push_back(fmt::format("  {} = {}  <- {}", label, t->value, t->source));
    if (k.base_slice_ns.known())
      h.push_back(fmt::format("  base_slice_ns = {:.0f}  <- {}", k.base_slice_ns.value, k.base_slice_ns.source));
    if (k.autogroup.known())
      h.push_back(fmt::format("  autogroup = {}  <- {}", k.autogroup.value != 0 ? "on" : "off", k.autogroup.source));
    h.push_back("  The model uses features (before --features) and base_slice_ns (tunables); preempt and autogroup "
                "are recorded, not modeled.");
  }
  h.push_back("Idle state wake_cost_ns: from the base state of the same name, else 0 (default).");
  h.push_back("Real layout:");
  for (auto& l : r.layout) h.push_back("  " + l);
  if (!r.numbering_matches || !r.uniform) {
    h.push_back("Model CPU -> real CPU (-1: no real CPU):");
    std::string line;
    for (size_t i = 0; i < r.model_to_real.size(); ++i) {
      line += fmt::format("{}{}:{}", line.empty() ? "  " : " ", i, r.model_to_real[i]);
      if ((i + 1) % 16 == 0) h.push_back(line), line.clear();
    }
    if (!line.empty()) h.push_back(line);
  }
  const auto& g = r.machine.guest;
  if (g.present)
    h.push_back(fmt::format("Virtual machine: {} ([guest] below: what the probe read, each with its source).",
                            g.hypervisor.value));
  for (auto& w : r.warnings) h.push_back("warning: " + w);
  return h;
}

std::string default_host_profile_path() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return (fs::path(x) / "schedlab/host.toml").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".config/schedlab/host.toml").string();
  return "host.toml";
}

}  // namespace schedlab::host
