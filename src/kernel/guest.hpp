// The machine as a virtual machine and the activity besides the benchmark (docs/variance.md S2,
// S3): a KVM guest whose halted vCPUs the host must wake for every interrupt, whose IPI sends
// exit to the host, whose vCPUs the host may not run (steal); and the interrupts, softirqs and
// kernel threads of [[background]]. Everything comes from the profile's [guest] and
// [[background]] tables; a profile without them runs as bare metal with no background.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/base.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace schedlab::machine {
struct Machine;
struct BackgroundActivity;
}  // namespace schedlab::machine

namespace schedlab::kernel {

using sim::Time;
class Kernel;
struct Irq;

// A recorded cost distribution: draw = median * exp(sigma * N(0,1)).
struct LogNormal {
  double median = 0;
  double sigma = 0;
  double max = 0;  // > 0: no draw above it (the longest event the fit saw)
  bool known = false;
  // The halted vCPU's wake-up and the sender's exit to it, measured by calibrate after idle gaps
  // of 5 and 500 us besides the 60 us of `median` (0: not measured). With them, the median after
  // a vCPU has been halted h ns runs through the three points linearly in ln h, clamped at the
  // ends (median_after()).
  double gap5us = 0, gap500us = 0;
  double median_after(int64_t halted_ns) const;  // halted_ns < 0: the vCPU is not halted: median
  int64_t draw(sim::Rng& rng, int64_t halted_ns = -1) const;
};

// What differs between bare metal and a KVM guest on the IPI and halt paths, as the kernel's
// paravirt ops (pv_ops, apic->send_IPI) and KVM's HLT exits differ: one table of functions,
// picked once at boot (GuestModel::init), called without a test of the platform in the path.
struct PlatformOps {
  const char* name;  // "bare metal", "kvm guest"
  // The sender's cost of one IPI to `to` (the ICR write, or a VM exit).
  int64_t (*ipi_send_ns)(Kernel& k, int from, int to);
  // Send-to-handler latency of an IPI sent `at`; host_woken: the host woke a halted vCPU for it.
  int64_t (*ipi_latency_ns)(Kernel& k, int from, int to, Time at, bool& host_woken);
  // deliver_irq() to an idle CPU: true if the interrupt waits (a halted vCPU until the host
  // runs it again).
  bool (*hold_irq)(Kernel& k, int cpu, const Irq& irq);
};
extern const PlatformOps bare_metal_ops;
extern const PlatformOps kvm_guest_ops;

// The [guest] values the kernel model uses, and their per-run state.
struct GuestModel {
  const PlatformOps* ops = &bare_metal_ops;  // kvm_guest_ops with [guest] (set by init())
  bool on = false;                  // [guest] present: HLT and IPI sends are VM exits
  bool ipi_virtualization = false;  // guest.ipi_virtualization: sends to running vCPUs do not exit
  LogNormal ipi_send, halted_wake, running_ipi;
  std::vector<sim::Rng> rng;        // per CPU: "guest/<cpu>"
  std::vector<Time> host_wake_at;   // per CPU: when the host's wake-up of this halted vCPU lands
  // per CPU: how long it had been halted when the last IPI send to it began (-1: none pending);
  // the IPI's host wake-up is looked up there too (the host kicks the vCPU from inside the
  // sender's exit), not when the send is done.
  std::vector<int64_t> send_found_halted_ns;
  std::vector<Time> stolen_until;   // per CPU: the host runs something else until then

  void init(const machine::Machine& m, const sim::Rng& seed_rng, int nr_cpus);
};

// Is this vCPU halted: in an idle state that does not poll (HLT exits to the host)?
bool vcpu_halted(const Kernel& k, int cpu);
// The sender's cost of one IPI (the ICR write): costs.ipi_send_ns, or on a guest the VM exit below
// (the platform's ops).
int64_t ipi_send_cost(Kernel& k, int from, int to);
// Send-to-handler latency of an IPI (the platform's ops).
int64_t ipi_latency_ns(Kernel& k, int from, int to, Time at, bool& host_woken);
// The sender's cost of one IPI to `to` on a guest (a VM exit unless IPIs are virtualised and
// the target runs); counts guest_ipi_exits.
int64_t guest_ipi_send_ns(Kernel& k, int from, int to);
// Send-to-handler latency of an IPI sent `at` to `to` on a guest: the host's wake-up of a
// halted vCPU (host_woken = true), else the one-way delivery to a running one.
int64_t guest_ipi_latency_ns(Kernel& k, int from, int to, Time at, bool& host_woken);
// deliver_irq() on a vCPU that cannot take the interrupt yet (halted, or stolen): holds it until
// the host runs the vCPU again and returns true (kvm_guest_ops.hold_irq).
bool guest_hold_irq(Kernel& k, int cpu, const Irq& irq);

// One [[background]] source of interrupts, softirqs or steal: a Poisson process per CPU or for
// the machine (on a CPU drawn uniformly), each event lasting a lognormal duration.
struct BackgroundSource final : sim::Event {
  Kernel* k = nullptr;
  const machine::BackgroundActivity* what = nullptr;
  int cpu = -1;  // -1: scope system
  double rate_hz = 0;
  LogNormal duration;
  sim::Rng rng;
  void arm(bool first);
  void process() override;
};

// Starts the profile's background activity: the sources above, and one task per kthread/task
// entry (per CPU and pinned for per-CPU kernel threads) that sleeps an exponential time and runs
// its recorded duration.
void background_start(Kernel& k, std::vector<std::unique_ptr<BackgroundSource>>& sources);

inline GuestModel& Kernel::guest() { return *guest_; }
inline const GuestModel& Kernel::guest() const { return *guest_; }

}  // namespace schedlab::kernel
