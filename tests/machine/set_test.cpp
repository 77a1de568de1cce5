// `--set KEY=VALUE` and `--idle-disable NAME`.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "machine/machine.hpp"
#include "machine/param_api.hpp"

using namespace schedlab::machine;

namespace {

std::string set_error(Machine& m, const std::string& assignment) {
  Machine before = m;
  try {
    apply_set(m, assignment);
  } catch (const ProfileError& e) {
    EXPECT_EQ(m, before) << "a failed --set must not change the machine";
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("--set ", 0), 0u) << msg;
    return msg;
  }
  ADD_FAILURE() << "no error for " << assignment;
  return "";
}

}  // namespace

TEST(machineSet, FullAndBareKeys) {
  Machine m = load_profile("epyc-milan-2s");
  apply_set(m, "costs.ipi_send_ns=150");
  EXPECT_EQ(m.costs.ipi_send_ns, 150);
  apply_set(m, "ipi_send_ns=175");
  EXPECT_EQ(m.costs.ipi_send_ns, 175);
  apply_set(m, " tunables.hz = 1000 ");
  EXPECT_EQ(m.tunables.hz, 1000);
  apply_set(m, "hz=100");
  EXPECT_EQ(m.tunables.hz, 100);
  apply_set(m, "smt_pair_throughput=1.5");
  EXPECT_DOUBLE_EQ(m.costs.smt_pair_throughput, 1.5);
  apply_set(m, "noise.jitter_cov=0");
  EXPECT_EQ(m.noise.jitter_cov, 0.0);
  apply_set(m, "jitter_cov=0.25");
  EXPECT_DOUBLE_EQ(m.noise.jitter_cov, 0.25);
  apply_set(m, "tunables.base_slice_ns=2800000");
  EXPECT_EQ(m.tunables.base_slice_ns, 2800000);
  EXPECT_NO_THROW(validate(m));
}

TEST(machineSet, Bools) {
  Machine m = load_profile("tiny-4");
  apply_set(m, "tunables.idle_poll=1");
  EXPECT_TRUE(m.tunables.idle_poll);
  apply_set(m, "idle_poll=false");
  EXPECT_FALSE(m.tunables.idle_poll);
  apply_set(m, "idle_poll=true");
  EXPECT_TRUE(m.tunables.idle_poll);
  apply_set(m, "idle_poll=0");
  EXPECT_FALSE(m.tunables.idle_poll);
}

TEST(machineSet, IdleStateFields) {
  Machine m = load_profile("epyc-milan-2s");
  apply_set(m, "idle_state.C2.wake_cost_ns=3000");
  EXPECT_EQ(m.idle_state("C2")->wake_cost_ns, 3000);
  apply_set(m, "idle_state.C2.exit_latency_ns=30000");
  EXPECT_EQ(m.idle_state("C2")->exit_latency_ns, 30000);
  apply_set(m, "idle_state.C2.target_residency_ns=60000");
  EXPECT_EQ(m.idle_state("C2")->target_residency_ns, 60000);
  apply_set(m, "idle_state.C2.disabled=1");
  EXPECT_TRUE(m.idle_state("C2")->disabled);
  apply_set(m, "idle_state.C2.disabled=false");
  EXPECT_FALSE(m.idle_state("C2")->disabled);
  apply_set(m, "idle_state.C2.polling=true");
  EXPECT_TRUE(m.idle_state("C2")->polling);
  apply_set(m, "idle_state.POLL.disabled=1");
  EXPECT_TRUE(m.idle_state("POLL")->disabled);
  Machine e = load_profile("emag-32");
  apply_set(e, "idle_state.cpu-sleep.disabled=0");
  EXPECT_FALSE(e.idle_state("cpu-sleep")->disabled);
}

TEST(machineSet, Errors) {
  Machine m = load_profile("epyc-milan-2s");
  EXPECT_EQ(set_error(m, "ipi_send_ns"), "--set ipi_send_ns: expected KEY=VALUE");
  EXPECT_EQ(set_error(m, "=5"), "--set =5: empty key");
  EXPECT_EQ(set_error(m, "ipi_send_ns="), "--set ipi_send_ns=: empty value");
  EXPECT_NE(set_error(m, "costs.foo=1").find("unknown key 'costs.foo'"), std::string::npos);
  EXPECT_NE(set_error(m, "topology.sockets=1").find("unknown key"), std::string::npos);
  EXPECT_EQ(set_error(m, "ipi_send_ns=fast"), "--set ipi_send_ns=fast: 'fast' is not an integer");
  EXPECT_EQ(set_error(m, "ipi_send_ns=1.5"), "--set ipi_send_ns=1.5: '1.5' is not an integer");
  EXPECT_EQ(set_error(m, "ipi_send_ns=-1"), "--set ipi_send_ns=-1: costs.ipi_send_ns = -1 is below the minimum 0 ns");
  EXPECT_EQ(set_error(m, "costs.tick_ns=20000000000"),
            "--set costs.tick_ns=20000000000: costs.tick_ns = 20000000000 is absurd (maximum 100000000 ns)");
  EXPECT_EQ(set_error(m, "hz=500"), "--set hz=500: tunables.hz = 500 is not one of 100, 250, 300, 1000");
  EXPECT_EQ(set_error(m, "smt_pair_throughput=x"), "--set smt_pair_throughput=x: 'x' is not a number");
  EXPECT_NE(set_error(m, "smt_pair_throughput=2.5").find("is absurd"), std::string::npos);
  EXPECT_NE(set_error(m, "jitter_cov=0.6").find("noise.jitter_cov = 0.6 is absurd"), std::string::npos);
  EXPECT_EQ(set_error(m, "idle_poll=yes"), "--set idle_poll=yes: 'yes' is not a boolean (use 0, 1, true or false)");
  EXPECT_EQ(set_error(m, "idle_state.C9.disabled=1"),
            "--set idle_state.C9.disabled=1: unknown idle state 'C9' on epyc-milan-2s (states: POLL, C1, C2)");
  EXPECT_EQ(set_error(m, "idle_state.C2.latency=1"),
            "--set idle_state.C2.latency=1: unknown idle-state field 'latency' (fields: exit_latency_ns, "
            "target_residency_ns, wake_cost_ns, polling, disabled)");
  EXPECT_EQ(set_error(m, "idle_state.C2=1"), "--set idle_state.C2=1: expected idle_state.<NAME>.<field>");
  EXPECT_NE(set_error(m, "idle_state.C2.exit_latency_ns=2000000000").find("is absurd"), std::string::npos);
  EXPECT_EQ(set_error(m, "idle_state.POLL.polling=0"),
            "--set idle_state.POLL.polling=0: idle state POLL must have polling = true");
  EXPECT_EQ(set_error(m, "idle_state.POLL.exit_latency_ns=10"),
            "--set idle_state.POLL.exit_latency_ns=10: idle state POLL must have exit_latency_ns = 0");
  EXPECT_EQ(set_error(m, "ipi_send_ns=1\n2"), "--set ipi_send_ns=1\\n2: '1\\n2' is not an integer");
}

TEST(machineIdleDisable, HappyPaths) {
  Machine m = load_profile("spr-2s");
  disable_idle_states(m, {"C6"});
  EXPECT_TRUE(m.idle_state("C6")->disabled);
  EXPECT_FALSE(m.idle_state("C1E")->disabled);
  disable_idle_states(m, {"C1E,C1"});
  EXPECT_TRUE(m.idle_state("C1E")->disabled);
  EXPECT_TRUE(m.idle_state("C1")->disabled);
  disable_idle_states(m, {"POLL"});  // allowed, as writing to cpuidle/state0/disable
  EXPECT_TRUE(m.idle_state("POLL")->disabled);
  disable_idle_states(m, {});
  EXPECT_NO_THROW(validate(m));
}

TEST(machineIdleDisable, UnknownNameListsStates) {
  Machine m = load_profile("epyc-milan-2s");
  Machine before = m;
  try {
    disable_idle_states(m, {"C1", "C6"});
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_STREQ(e.what(), "--idle-disable C6: unknown idle state on epyc-milan-2s (states: POLL, C1, C2)");
  }
  EXPECT_EQ(m, before);  // all or nothing
}

// The parameter API host calibrate writes costs through (find_param, param_value, set_param,
// background_params, background_value).
TEST(machineParamApi, ReadsAndWritesByKeyWithinBounds) {
  Machine m = load_profile("tiny-4");
  auto pi = find_param("costs.ipi_send_ns");
  ASSERT_TRUE(pi.has_value());
  EXPECT_EQ(pi->unit, "ns");
  EXPECT_FALSE(find_param("costs.no_such_ns").has_value());
  EXPECT_FALSE(find_param("ipi_send_ns").has_value()) << "keys are table.name";

  set_param(m, "costs.ipi_send_ns", 1234.4);
  EXPECT_EQ(m.costs.ipi_send_ns, 1234);  // integer field: rounded
  EXPECT_EQ(param_value(m, "costs.ipi_send_ns"), 1234.0);
  set_param(m, "noise.run_sigma", 0.125);
  EXPECT_DOUBLE_EQ(m.noise.run_sigma, 0.125);
  EXPECT_DOUBLE_EQ(param_value(m, "noise.run_sigma"), 0.125);

  Machine before = m;
  EXPECT_THROW(set_param(m, "costs.ipi_send_ns", pi->max * 2), ProfileError);
  EXPECT_THROW(set_param(m, "costs.ipi_send_ns", -1), ProfileError);
  EXPECT_THROW(set_param(m, "costs.no_such_ns", 1), ProfileError);
  EXPECT_THROW(param_value(m, "tunables.no_such"), ProfileError);
  EXPECT_EQ(m, before) << "a rejected set_param must not change the machine";
}

TEST(machineParamApi, BackgroundValuesByField) {
  auto ps = background_params();
  ASSERT_FALSE(ps.empty());
  EXPECT_EQ(ps.front().key, "background.rate_hz");
  EXPECT_EQ(ps.front().unit, "Hz");
  BackgroundActivity a;
  background_value(a, "duration_ns").value = 42;
  EXPECT_EQ(a.duration_ns.value, 42);
  EXPECT_THROW(background_value(a, "no_such"), ProfileError);
}
