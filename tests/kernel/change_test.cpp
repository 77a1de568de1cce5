// The change framework (kernel/change.hpp): registration, features, counters, tunables and the
// hooks, shown with small test changes registered in this binary only (tests/kernel links the
// kernel layer without the shipped changes).
#include <gtest/gtest.h>

#include "../common/behaviors.hpp"
#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"

using namespace schedlab;
using namespace schedlab::fixture;
using kernel::Change;
using kernel::ChangeInfo;
using kernel::ChangeType;
using kernel::Features;
using kernel::Hook;
using kernel::Kernel;
using kernel::KernelOptions;
using kernel::KernelPath;
using kernel::Rq;
using sim::Time;

namespace {

// Counts ticks and charges `extra_ns` more tick work: a counter, a derived counter and a
// tunable through on_sched_tick.
class TestTick final : public Change {
 public:
  using Change::Change;
  static ChangeInfo info() {
    return {.name = "TEST_TICK",
            .default_on = false,
            .help = "test: extra tick work",
            .origin = "tests/kernel/change_test.cpp",
            .counters = {{"test_tick_seen", "count", "ticks the change saw", true},
                         {"test_tick_ns", "ns", "tick time (derived)", false,
                          [](const kernel::CpuCounters& c) {
                            return c.kernel_ns[static_cast<int>(KernelPath::Tick)];
                          }}},
            .tunables = {{"extra_ns", "ns", 0, 0, 100000, "extra tick work"}}};
  }
  kernel::HookResult<> on_sched_tick(Rq& rq) override {
    counter(rq, 0)++;
    return {.cost_ns = tunable(0)};
  }
};
SCHEDLAB_REGISTER_CHANGE(TestTick);

// Vetoes every newidle balance.
class TestNoNewidle final : public Change {
 public:
  using Change::Change;
  static ChangeInfo info() {
    return {.name = "TEST_NO_NEWIDLE",
            .default_on = false,
            .help = "test: no newidle balance",
            .origin = "tests"};
  }
  kernel::HookResult<bool> on_newidle_balance(Rq&, bool) override { return {.value = false}; }
};
SCHEDLAB_REGISTER_CHANGE(TestNoNewidle);

// A change on by default, with no hooks.
class TestDefaultOn final : public Change {
 public:
  using Change::Change;
  static ChangeInfo info() {
    return {.name = "TEST_DEFAULT_ON", .default_on = true, .help = "test: on", .origin = "tests"};
  }
};
SCHEDLAB_REGISTER_CHANGE(TestDefaultOn);

const ChangeType& type(const char* name) {
  const ChangeType* t = kernel::find_change(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}

// Four tasks on two CPUs, each computing and sleeping: ticks, idle periods, newidle balance.
std::unique_ptr<Kernel> busy(const std::string& features, const std::string& set = "") {
  Features f;
  f.apply(features);
  if (!set.empty()) f.apply_set(set);
  auto k = std::make_unique<Kernel>(test_machine(1, 2, 1, 2), f, KernelOptions{1, nullptr});
  for (int i = 0; i < 4; ++i)
    k->create_task(std::string("t").append(std::to_string(i)), lambda([](Api&, Task&, int n) {
                     if (n >= 200) return Action::exit();
                     return n % 2 ? Action::sleep(300000) : Action::compute(900000);
                   }),
                   {});
  k->run(Time::sec(1));
  return k;
}

}  // namespace

TEST(Change, RegistryIsSortedByNameAndLaysOutCounters) {
  const auto& ts = kernel::change_types();
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_STREQ(ts[0]->info.name, "TEST_DEFAULT_ON");
  EXPECT_STREQ(ts[1]->info.name, "TEST_NO_NEWIDLE");
  EXPECT_STREQ(ts[2]->info.name, "TEST_TICK");
  EXPECT_EQ(ts[2]->index, 2);
  EXPECT_EQ(ts[2]->counter_base, 0);
  EXPECT_EQ(kernel::nr_change_counters(), 2);
}

TEST(Change, HooksAreTheOverriddenMethods) {
  EXPECT_EQ(type("TEST_TICK").hooks, uint64_t{1} << static_cast<int>(Hook::sched_tick));
  EXPECT_EQ(type("TEST_NO_NEWIDLE").hooks, uint64_t{1} << static_cast<int>(Hook::newidle_balance));
  EXPECT_EQ(type("TEST_DEFAULT_ON").hooks, 0u);
  EXPECT_STREQ(kernel::hook_name(Hook::select_idle_cpu_candidate), "select_idle_cpu_candidate");
}

TEST(Change, ChangesAreFeatures) {
  Features f;
  EXPECT_TRUE(f.change_on(type("TEST_DEFAULT_ON").index));
  EXPECT_FALSE(f.change_on(type("TEST_TICK").index));
  f.apply("TEST_TICK,NO_TEST_DEFAULT_ON,NO_SIS_UTIL");
  EXPECT_TRUE(f.change_on(type("TEST_TICK").index));
  // Core features first (in their table's order), then the changes by name.
  EXPECT_EQ(f.describe(), "NO_SIS_UTIL,NO_TEST_DEFAULT_ON,TEST_TICK");
  EXPECT_THROW(f.apply("TEST_TOCK"), std::invalid_argument);
  auto table = kernel::feature_table();
  EXPECT_EQ(table.back().name, std::string("TEST_TICK"));
  EXPECT_EQ(table.back().change, type("TEST_TICK").index);
}

// The one feature-list parser is strict: an empty item, an unknown name or a feature given twice
// is an error naming the flag and the item, and a list that fails changes nothing.
TEST(Change, FeatureListIsStrict) {
  auto error = [](const std::string& list, const std::string& flag) {
    try {
      Features::parse(list, flag);
    } catch (const kernel::FeatureError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("TEST_TICK,,", "--base"), "--base 'TEST_TICK,,': empty item in the feature list");
  EXPECT_EQ(error(",TEST_TICK", "--features"), "--features ',TEST_TICK': empty item in the feature list");
  EXPECT_EQ(error("TEST_TICK, ", "--test"), "--test 'TEST_TICK, ': empty item in the feature list");
  EXPECT_EQ(error("SIS_UTIL,NO_TEST_TOCK", "--test"), "--test: unknown feature 'NO_TEST_TOCK' (see `schedlab features`)");
  EXPECT_EQ(error("TEST_TICK,NO_TEST_TICK", "--features"),
            "--features 'TEST_TICK,NO_TEST_TICK': TEST_TICK is given more than once");
  EXPECT_EQ(Features::split(" TEST_TICK , NO_SIS_UTIL", "--features"),
            (std::vector<std::string>{"TEST_TICK", "NO_SIS_UTIL"}));
  EXPECT_TRUE(Features::split("", "--features").empty());
  EXPECT_EQ(Features::parse("").describe(), "");
  // `default`, the value --help shows, is the kernel defaults: alone or beside other items.
  EXPECT_EQ(Features::parse("default", "--features").describe(), "");
  EXPECT_EQ(Features::parse("default,NO_SIS_UTIL", "--features").describe(), Features::parse("NO_SIS_UTIL").describe());
  EXPECT_TRUE(Features::split("default", "--features").empty());

  Features f;
  EXPECT_THROW(f.apply("TEST_TICK,NO_SIS_UTIL,,"), kernel::FeatureError);
  EXPECT_EQ(f.describe(), "");  // nothing applied
  EXPECT_TRUE(Features::known("TEST_TICK"));
  EXPECT_TRUE(Features::known("SIS_UTIL"));
  EXPECT_FALSE(Features::known("NO_SIS_UTIL"));
}

TEST(Change, OnlyChangesThatAreOnAreBuiltAndHooked) {
  auto off = busy("");
  EXPECT_EQ(off->change(type("TEST_TICK")), nullptr);
  EXPECT_NE(off->change(type("TEST_DEFAULT_ON")), nullptr);
  EXPECT_TRUE(off->hooks(Hook::sched_tick).empty());
  EXPECT_EQ(kernel::change_counter(off->total(), "test_tick_seen"), 0);
  auto on = busy("TEST_TICK");
  ASSERT_EQ(on->hooks(Hook::sched_tick).size(), 1u);
  // The change saw every tick, on every CPU.
  EXPECT_GT(on->total().ticks, 100);
  EXPECT_EQ(kernel::change_counter(on->total(), "test_tick_seen"), on->total().ticks);
  for (int c = 0; c < 2; ++c)
    EXPECT_EQ(kernel::change_counter(on->rq(c).c, "test_tick_seen"), on->rq(c).c.ticks);
  EXPECT_THROW(kernel::change_counter(on->total(), "nope"), std::out_of_range);
}

TEST(Change, TunableChargesTickWork) {
  auto base = busy("TEST_TICK");
  auto more = busy("TEST_TICK", "change.TEST_TICK.extra_ns=5000");
  const int tick = static_cast<int>(KernelPath::Tick);
  int64_t base_ns = base->total().kernel_ns[tick], more_ns = more->total().kernel_ns[tick];
  // 5 us more per tick (the tick costs 2 us in the fixture; no jitter).
  EXPECT_NEAR(static_cast<double>(more_ns) / more->total().ticks,
              static_cast<double>(base_ns) / base->total().ticks + 5000, 200);
  EXPECT_EQ(kernel::change_counter(more->total(), "test_tick_ns"), more_ns);
}

TEST(Change, BadTunableSetsNameTheFlag) {
  Features f;
  auto msg = [&](const std::string& s) {
    try {
      f.apply_set(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("change.TEST_TICK.extra_ns=7"), "no error");
  EXPECT_EQ(f.tunable(type("TEST_TICK").index, 0), 7);
  EXPECT_EQ(msg("change.TEST_TICK.extra_ns=-1"),
            "--set change.TEST_TICK.extra_ns=-1: -1 is outside [0, 100000] ns");
  EXPECT_EQ(msg("change.TEST_TICK.extra_ns=1x"),
            "--set change.TEST_TICK.extra_ns=1x: '1x' is not an integer");
  EXPECT_EQ(msg("change.TEST_TICK.nope=1"),
            "--set change.TEST_TICK.nope=1: unknown tunable 'nope' of TEST_TICK (tunables: "
            "extra_ns)");
  EXPECT_EQ(msg("change.TEST_NO_NEWIDLE.x=1"),
            "--set change.TEST_NO_NEWIDLE.x=1: unknown tunable 'x' of TEST_NO_NEWIDLE (it has "
            "none)");
  EXPECT_EQ(msg("change.BOGUS.x=1"),
            "--set change.BOGUS.x=1: unknown scheduler change 'BOGUS' (see `schedlab features`)");
  EXPECT_EQ(msg("change.TEST_TICK=1"),
            "--set change.TEST_TICK=1: expected change.NAME.KEY=VALUE");
  EXPECT_TRUE(Features::is_change_set("change.X.y=1"));
  EXPECT_FALSE(Features::is_change_set("costs.tick_ns=1"));
}

TEST(Change, NewidleGateHook) {
  auto on = busy("TEST_NO_NEWIDLE");
  auto off = busy("");
  auto a = off->total(), b = on->total();
  EXPECT_GT(a.newidle_balance_calls, 0);
  EXPECT_LT(a.newidle_balance_skipped, a.newidle_balance_calls);
  EXPECT_GT(b.newidle_balance_calls, 0);
  EXPECT_EQ(b.newidle_balance_skipped, b.newidle_balance_calls);
  EXPECT_EQ(b.kernel_ns[static_cast<int>(KernelPath::NewidleBalance)], 0);
}
