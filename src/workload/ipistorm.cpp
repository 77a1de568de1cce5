// ipistorm, the "modified" kernel module used in 2024 idle-path scheduler work:
//   insmod ipistorm.ko numipi=N single=1 offset=K cpulist=C wait=1 [delay=US]
// One kthread bound to each CPU of cpulist issues numipi smp_call_function_single() calls with
// an empty handler to CPU (cpu + offset) mod nr_cpus, one at a time (wait=1: each call
// completes before the next is queued). The result is the elapsed time of the whole batch.
// The targets stay idle, so every call exercises idle exit, the call-function flush and the
// return to idle (schedule_idle() when the call came as a polling kick).
#include "workload/ipistorm.hpp"

#include <fmt/format.h>

#include "workload/options.hpp"
#include "workload/program.hpp"

namespace schedlab::workload {

namespace {

struct Shared : Completion {
  bool started = false;
};

class IpiThread : public Program {
 public:
  IpiThread(int target, const IpistormOptions& o, Shared* sh) : target_(target), o_(o), sh_(sh) {}

 protected:
  void step(Api& /*k*/, Task& /*self*/) override {
    if (!started_) {
      started_ = true;
      // All threads are released together (the module lets them spin until all have started).
      push([this](Api& k, Task&) {
        if (!sh_->started) {
          sh_->started = true;
          sh_->t0 = k.now();
        }
      });
    }
    if (i_ == o_.numipi) {
      if (done_) return;
      done_ = true;
      exit_after(0, [this](Api& k, Task&) { sh_->one_done(k); });
      return;
    }
    ++i_;
    // The handler is empty: the kernel charges csd_func_ns for running the queued function.
    // wait=0 still serialises: the sender's per-CPU csd is locked until the target has run it,
    // so the next call spins in csd_lock() before queueing. That is the same as spinning after
    // queueing (wait=1), except that nothing waits for the last call.
    push(Action::call_func(target_, 0, o_.wait || i_ < o_.numipi));
    if (o_.delay_us > 0) push(Action::sleep(o_.delay_us * 1000));
  }

 private:
  int target_;
  IpistormOptions o_;
  Shared* sh_;
  long long i_ = 0;
  bool started_ = false, done_ = false;
};

bool parse_bool(const std::string& key, const std::string& v) {
  // module_param(bool): accepts 0/1, y/n, Y/N.
  if (v == "1" || v == "y" || v == "Y") return true;
  if (v == "0" || v == "n" || v == "N") return false;
  throw WorkloadError(fmt::format("ipistorm: {}: '{}' is not a bool (0/1, y/n)", key, v));
}

}  // namespace

IpistormOptions parse_ipistorm_options(const std::vector<std::string>& in, int nr_cpus) {
  std::vector<std::string> args = in;
  // Accept "insmod ipistorm.ko ..." as well as "ipistorm ...".
  if (!args.empty() && (args[0] == "ipistorm.ko" || args[0].ends_with("/ipistorm.ko")))
    args.erase(args.begin());
  IpistormOptions o;
  std::string cpulist = "0";
  for (const auto& a : args) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw WorkloadError(fmt::format("ipistorm: '{}' is not a key=value module parameter", a));
    std::string key = a.substr(0, eq), v = a.substr(eq + 1);
    if (key == "numipi") {
      o.numipi = parse_count(key, v, 1, 1000000000LL);
    } else if (key == "single") {
      o.single = parse_bool(key, v);
      if (!o.single)
        throw WorkloadError(
            "ipistorm: single=0 (smp_call_function() to all other CPUs) is not modeled; use single=1");
    } else if (key == "offset") {
      o.offset = static_cast<int>(parse_count(key, v, 0, 1 << 20));
    } else if (key == "cpulist") {
      cpulist = v;
    } else if (key == "wait") {
      o.wait = parse_bool(key, v);
    } else if (key == "delay") {
      o.delay_us = parse_count(key, v, 0, 1000000);
    } else {
      throw WorkloadError(fmt::format("ipistorm: unknown module parameter '{}'", key));
    }
  }
  o.cpulist = parse_cpulist("cpulist", cpulist, nr_cpus);
  return o;
}

struct Ipistorm::State {
  Shared sh;
  std::vector<std::pair<int, int>> pairs;  // sender -> target
};

Ipistorm::Ipistorm(const IpistormOptions& o) : o_(o), st_(std::make_unique<State>()) {}
Ipistorm::~Ipistorm() = default;

void Ipistorm::setup(Api& k) {
  int n = k.nr_cpus();
  for (int cpu : o_.cpulist) {
    if (cpu >= n)
      throw WorkloadError(fmt::format("cpulist: CPU {} is beyond the machine ({} CPUs)", cpu, n));
    int target = (cpu + o_.offset) % n;
    st_->pairs.emplace_back(cpu, target);
    kernel::TaskOptions to;
    to.pin_cpu = cpu;
    to.cpus = {cpu};
    to.fork_cpu = cpu;
    to.mm = 0;  // kernel threads
    k.create_task(fmt::format("ipistorm/{}", cpu), std::make_unique<IpiThread>(target, o_, &st_->sh),
                  to);
  }
  st_->sh.remaining = static_cast<int>(o_.cpulist.size());
}

bool Ipistorm::finished() const { return st_->sh.finished; }

double Ipistorm::seconds() const { return (st_->sh.t1 - st_->sh.t0).seconds(); }

std::string Ipistorm::report() const {
  std::string out;
  for (auto [a, b] : st_->pairs) out += fmt::format("ipistorm: {} -> {}\n", a, b);
  double ns = (st_->sh.t1 - st_->sh.t0).count();
  out += fmt::format("ipistorm: {} IPIs per CPU, {:.1f} ns per call\n", o_.numipi,
                     ns / static_cast<double>(o_.numipi));
  out += fmt::format("Time: {:.3f}\n", seconds());
  return out;
}

std::vector<Metric> Ipistorm::metrics() const {
  double ns = static_cast<double>((st_->sh.t1 - st_->sh.t0).count());
  return {{"time", "s", seconds(), false},
          {"ns_per_call", "ns", ns / static_cast<double>(o_.numipi), false}};
}

}  // namespace schedlab::workload
