// Every kind of bad profile gives one ProfileError line naming the file and line.
#include <gtest/gtest.h>

#include <regex>

#include "helpers.hpp"
#include "machine/machine.hpp"

using namespace schedlab::machine;
using namespace schedlab::machine::testing;

namespace {

class machineErrors : public ::testing::Test {
 protected:
  std::string good = profile_text("tiny-4");

  // The good profile with its [[idle_state]] tables removed and `top` put first.
  std::string without_idle_states(const std::string& top) {
    std::string text = good;
    size_t first = text.find("[[idle_state]]"), costs = text.find("[costs]");
    text.erase(first, costs - first);
    return top + text;
  }

  // The good profile without its [noise] table (the header line and its keys).
  std::string without_noise() {
    std::string text = good;
    size_t at = text.find("[noise]\n");
    size_t end = text.find("\n[", at + 1);
    text.erase(at, end == std::string::npos ? std::string::npos : end + 1 - at);
    return text;
  }

  // Expects parse_profile(text) to fail with "bad.toml:<line>: ..." containing `what`.
  void expect_error(const std::string& text, int line, const std::string& what) {
    std::string msg = parse_error(text);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    std::string prefix = line > 0 ? "bad.toml:" + std::to_string(line) + ": " : "bad.toml: ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "want prefix '" << prefix << "', got: " << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "want '" << what << "', got: " << msg;
  }
};

}  // namespace

TEST_F(machineErrors, GoodProfileParses) { EXPECT_NO_THROW(parse_profile(good, "bad.toml")); }

TEST_F(machineErrors, FileNotFound) {
  try {
    load_profile("/nonexistent/dir/x.toml");
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/dir/x.toml: file not found");
  }
}

TEST_F(machineErrors, UnknownMachineListsKnownNames) {
  try {
    load_profile("epyc");
    FAIL();
  } catch (const UnknownMachine& e) {  // a ProfileError of its own type (callers add hints by type)
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("unknown machine 'epyc' (known in ", 0), 0u) << msg;
    EXPECT_NE(msg.find("emag-32, epyc-bergamo-2s, epyc-milan-2s, icx-2s, kvm-arm64-guest, scale-4096, spr-1s-56c, "
                       "spr-2s, thunderx2-2s, tiny-4"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
}

TEST_F(machineErrors, TomlSyntax) {
  std::string text = replace(good, "hz = 1000", "hz = = 1000");
  expect_error(text, line_of(text, "hz = = 1000"), "TOML syntax error");
  text = replace(good, "[costs]", "[costs");
  expect_error(text, line_of(text, "[costs"), "TOML syntax error");
  text = replace(good, "[noise]", "[machine]");  // table defined twice
  expect_error(text, line_of(text, "[machine]", "[tunables]"), "TOML syntax error");
}

TEST_F(machineErrors, WrongTypes) {
  std::string text = replace(good, "hz = 1000", "hz = \"1000\"");
  expect_error(text, line_of(text, "hz = \"1000\""), "tunables.hz must be an integer, not a string");
  text = replace(good, "context_switch_ns = 1200", "context_switch_ns = 1200.5");
  expect_error(text, line_of(text, "context_switch_ns"), "costs.context_switch_ns must be an integer, not a float");
  text = replace(good, "polling = true", "polling = 1", "name = \"C1\"");
  expect_error(text, line_of(text, "polling = 1"), "idle_state.C1.polling must be true or false, not an integer");
  text = replace(good, "arch = \"x86_64\"", "arch = 64");
  expect_error(text, line_of(text, "arch = 64"), "machine.arch must be a string");
  text = replace(good, "smt_pair_throughput = 1.2", "smt_pair_throughput = \"1.2\"");
  expect_error(text, line_of(text, "smt_pair_throughput"), "costs.smt_pair_throughput must be a number");
  text = replace(good, "[noise]\n", "[noise]\njitter_cov = [0.1]\n");
  text = replace(text, "jitter_cov = 0.0", "");
  expect_error(text, line_of(text, "jitter_cov = [0.1]"), "must be a number, not an array");
  text = "costs = 3\n" + good;
  expect_error(text, line_of(text, "[costs]"), "TOML syntax error");  // [costs] redefines the key
  text = without_idle_states("idle_state = 3\n");
  expect_error(text, 1, "'idle_state' must be an array of tables ([[idle_state]]), not an integer");
  text = "noise = 0.5\n" + without_noise();
  expect_error(text, 1, "'noise' must be a table, not a float");
}

TEST_F(machineErrors, IntegerWhereFloatExpectedIsFine) {
  std::string text = replace(good, "smt_pair_throughput = 1.2", "smt_pair_throughput = 1");
  EXPECT_EQ(parse_profile(text, "x.toml").costs.smt_pair_throughput, 1.0);
}

TEST_F(machineErrors, NegativeValues) {
  std::string text = replace(good, "exit_latency_ns = 1000", "exit_latency_ns = -1", "name = \"C1\"");
  expect_error(text, line_of(text, "exit_latency_ns = -1"), "idle_state.C1.exit_latency_ns = -1 is below the minimum 0 ns");
  text = replace(good, "ipi_send_ns = 100", "ipi_send_ns = -5");
  expect_error(text, line_of(text, "ipi_send_ns"), "costs.ipi_send_ns = -5 is below the minimum 0 ns");
  text = replace(good, "wake_cost_ns = 40000", "wake_cost_ns = -40000");
  expect_error(text, line_of(text, "wake_cost_ns = -40000"), "idle_state.C6.wake_cost_ns");
  text = replace(good, "target_residency_ns = 800000", "target_residency_ns = -1");
  expect_error(text, line_of(text, "target_residency_ns = -1"), "below the minimum");
}

TEST_F(machineErrors, AbsurdValues) {
  std::string text = replace(good, "tick_ns = 2000", "tick_ns = 20000000000");
  expect_error(text, line_of(text, "tick_ns = 2"), "costs.tick_ns = 20000000000 is absurd (maximum 100000000 ns)");
  text = replace(good, "hz = 1000", "hz = 500");
  expect_error(text, line_of(text, "hz = 500"), "tunables.hz = 500 is not one of 100, 250, 300, 1000");
  text = replace(good, "hz = 1000", "hz = 10000");
  expect_error(text, line_of(text, "hz = 10000"), "tunables.hz = 10000 is absurd");
  text = replace(good, "smt_pair_throughput = 1.2", "smt_pair_throughput = 2.5");
  expect_error(text, line_of(text, "smt_pair_throughput"), "costs.smt_pair_throughput = 2.5 is absurd (maximum 2 ratio)");
  text = replace(good, "smt_pair_throughput = 1.2", "smt_pair_throughput = 0.9");
  expect_error(text, line_of(text, "smt_pair_throughput"), "costs.smt_pair_throughput = 0.9 is below the minimum 1 ratio");
  text = replace(good, "jitter_cov = 0.0", "jitter_cov = 0.6");
  expect_error(text, line_of(text, "jitter_cov"), "noise.jitter_cov = 0.6 is absurd (maximum 0.5 ratio)");
  text = replace(good, "jitter_cov = 0.0", "jitter_cov = nan");
  expect_error(text, line_of(text, "jitter_cov"), "noise.jitter_cov must be a finite number");
  text = replace(good, "exit_latency_ns = 290000", "exit_latency_ns = 2000000000");
  expect_error(text, line_of(text, "exit_latency_ns = 2000000000"),
               "idle_state.C6.exit_latency_ns = 2000000000 is absurd (maximum 1000000000 ns)");
  text = replace(good, "base_slice_ns = 2250000", "base_slice_ns = 0");
  expect_error(text, line_of(text, "base_slice_ns"), "tunables.base_slice_ns = 0 is below the minimum");
  text = replace(good, "pipe_capacity_bytes = 65536", "pipe_capacity_bytes = 100");
  expect_error(text, line_of(text, "pipe_capacity_bytes"), "tunables.pipe_capacity_bytes = 100 is below");
}

TEST_F(machineErrors, BadTopology) {
  std::string text = replace(good, "sockets = 1", "sockets = 0");
  expect_error(text, line_of(text, "sockets = 0"), "topology.sockets = 0 is out of range [1, 64]");
  text = replace(good, "cores_per_socket = 2", "cores_per_socket = 0");
  expect_error(text, line_of(text, "cores_per_socket = 0"), "topology.cores_per_socket = 0 is out of range");
  text = replace(good, "threads_per_core = 2", "threads_per_core = 9");
  expect_error(text, line_of(text, "threads_per_core = 9"), "topology.threads_per_core = 9 is out of range [1, 8]");
  text = replace(good, "cores_per_socket = 2", "cores_per_socket = 6");
  text = replace(text, "cores_per_llc = 2", "cores_per_llc = 4");
  expect_error(text, line_of(text, "cores_per_llc = 4"),
               "topology.cores_per_llc = 4 does not divide topology.cores_per_socket = 6");
  text = replace(good, "cores_per_llc = 2", "cores_per_llc = 4");
  expect_error(text, line_of(text, "cores_per_llc = 4"), "does not divide");
  text = replace(good, "sockets = 1", "sockets = 64");
  text = replace(text, "cores_per_socket = 2", "cores_per_socket = 64");
  text = replace(text, "cores_per_llc = 2", "cores_per_llc = 8");
  expect_error(text, line_of(text, "[topology]"),
               "topology gives 8192 CPUs (64 sockets x 64 cores x 2 threads); the model supports at most 4096");
  text = replace(good, "sockets = 1", "sockets = 99999999999");
  expect_error(text, line_of(text, "sockets = 9"), "topology.sockets = 99999999999 is out of range");
}

TEST_F(machineErrors, BadIdleStates) {
  // No [[idle_state]] at all, and an empty array.
  expect_error(without_idle_states(""), 0, "no idle states (add at least one [[idle_state]] table)");
  expect_error(without_idle_states("idle_state = []\n"), 1, "no idle states");
  std::string text;
  // Duplicate names.
  text = replace(good, "name = \"C6\"", "name = \"C1\"");
  expect_error(text, line_of(text, "name = \"C1\"", "MWAIT 0x00\"\nexit"), "duplicate idle state name 'C1'");
  // POLL rules.
  text = replace(good, "polling = true", "polling = false", "name = \"POLL\"");
  expect_error(text, line_of(text, "polling = false"), "idle state POLL must have polling = true");
  text = replace(good, "exit_latency_ns = 0", "exit_latency_ns = 5", "name = \"POLL\"");
  expect_error(text, line_of(text, "exit_latency_ns = 5"), "idle state POLL must have exit_latency_ns = 0");
  text = replace(good, "name = \"POLL\"", "name = \"C0\"");
  text = replace(text, "name = \"C1\"", "name = \"POLL\"");
  expect_error(text, line_of(text, "name = \"POLL\""), "idle state POLL must be state 0 (it is state 1)");
  // Empty name; missing required key; unknown key.
  text = replace(good, "name = \"C1\"", "name = \"\"");
  expect_error(text, line_of(text, "name = \"\""), "idle state 1 has an empty name");
  text = replace(good, "wake_cost_ns = 100", "", "name = \"C1\"");
  expect_error(text, line_of(text, "[[idle_state]]", "name = \"POLL\""),
               "missing key 'wake_cost_ns' in [[idle_state]] #1");
  text = replace(good, "name = \"C1\"\n", "");
  expect_error(text, line_of(text, "[[idle_state]]", "name = \"POLL\""), "missing key 'name' in [[idle_state]] #1");
  text = replace(good, "name = \"C1\"", "name = \"C1\"\nflags = 3");
  expect_error(text, line_of(text, "flags = 3"), "unknown key 'flags' in [[idle_state]] #1");
}

TEST_F(machineErrors, UnknownKeysAndTables) {
  std::string text = replace(good, "[costs]\n", "[costs]\nfoo = 1\n");
  expect_error(text, line_of(text, "foo = 1"), "unknown key 'foo' in [costs]");
  text = replace(good, "[tunables]\n", "[tunables]\nHZ = 1000\n");
  expect_error(text, line_of(text, "HZ = 1000"), "unknown key 'HZ' in [tunables]");
  text = replace(good, "[machine]\n", "[machine]\nvendor = \"x\"\n");
  expect_error(text, line_of(text, "vendor"), "unknown key 'vendor' in [machine]");
  text = replace(good, "[topology]\n", "[topology]\nnuma_nodes = 2\n");
  expect_error(text, line_of(text, "numa_nodes"), "unknown key 'numa_nodes' in [topology]");
  text = good + "\n[extra]\nx = 1\n";
  expect_error(text, line_of(text, "[extra]"), "unknown key 'extra' in the profile");
  text = "version = 2\n" + good;
  expect_error(text, 1, "unknown key 'version' in the profile");
  text = replace(good, "[noise]\n", "[noise]\n\"multi\\nline\" = 1\n");
  expect_error(text, line_of(text, "\"multi"), "unknown key 'multi\\nline' in [noise]");
}

TEST_F(machineErrors, MissingKeysAndTables) {
  std::string text = replace(good, "ipi_send_ns = 100", "");
  expect_error(text, line_of(text, "[costs]"), "missing key 'ipi_send_ns' in [costs]");
  text = replace(good, "idle_poll = false", "");
  expect_error(text, line_of(text, "[tunables]"), "missing key 'idle_poll' in [tunables]");
  text = replace(good, "governor = \"menu\"", "");
  expect_error(text, line_of(text, "[machine]"), "missing key 'governor' in [machine]");
  text = without_noise();
  expect_error(text, 0, "missing [noise] table");
  text = replace(good, "cores_per_llc = 2", "");
  expect_error(text, line_of(text, "[topology]"), "missing key 'cores_per_llc' in [topology]");
}

TEST_F(machineErrors, UnknownArchAndGovernor) {
  std::string text = replace(good, "arch = \"x86_64\"", "arch = \"x86\"");
  expect_error(text, line_of(text, "arch = "), "machine.arch = 'x86' is not one of x86_64, arm64");
  text = replace(good, "governor = \"menu\"", "governor = \"Menu\"");
  expect_error(text, line_of(text, "governor = "), "machine.governor = 'Menu' is not one of menu, teo, haltpoll, ladder");
  text = replace(good, "cpuidle_driver = \"intel_idle\"", "cpuidle_driver = \"\"");
  expect_error(text, line_of(text, "cpuidle_driver"), "machine.cpuidle_driver is empty");
}

TEST_F(machineErrors, ValidateNamesTheSource) {
  Machine m = load_profile("tiny-4");
  m.topo.sockets = 0;
  try {
    validate(m);
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_EQ(std::string(e.what()), m.source_path + ": topology.sockets = 0 is out of range [1, 64]");
  }
  m = load_profile("tiny-4");
  m.idle_states.clear();
  EXPECT_THROW(validate(m), ProfileError);
  m = load_profile("tiny-4");
  m.costs.fork_ns = -1;
  EXPECT_THROW(validate(m), ProfileError);
}

// CPUIDLE_STATE_MAX (include/linux/cpuidle.h) is 10: a driver cannot register more states, so a
// profile with more describes no real machine. The error points at the 11th table.
TEST_F(machineErrors, AtMostTenIdleStates) {
  auto with_states = [&](int n) {
    std::string states;
    for (int i = 0; i < n; ++i)
      states += "[[idle_state]]\nname = \"S" + std::to_string(i) +
                "\"\nexit_latency_ns = 1\ntarget_residency_ns = 1\nwake_cost_ns = 0\npolling = false\n\n";
    return without_idle_states("") + "\n" + states;
  };
  EXPECT_NO_THROW(parse_profile(with_states(10), "bad.toml"));
  std::string text = with_states(303);
  expect_error(text, line_of(text, "name = \"S10\"") - 1, "303 idle states; the kernel allows at most 10 (CPUIDLE_STATE_MAX)");
}

// The AF_UNIX send buffer counted in messages was replaced by its kernel accounting in bytes of
// skb truesize: a profile that still has the old key is told what replaced it.
TEST_F(machineErrors, ReplacedUnixCapacityKeyNamesItsSuccessors) {
  std::string text = replace(good, "unix_sndbuf_bytes = 212992", "unix_capacity_msgs = 500");
  expect_error(text, line_of(text, "unix_capacity_msgs"),
               "tunables.unix_capacity_msgs was replaced by unix_sndbuf_bytes and unix_skb_truesize_bytes");
}
