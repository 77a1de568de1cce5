// workload::Program: a program that never produces an action is a bug, reported, not an exit.
#include <gtest/gtest.h>

#include "../common/fixture.hpp"
#include "kernel/kernel.hpp"
#include "workload/program.hpp"

using namespace schedlab;

namespace {
// Each step pushes one function that does nothing: items forever, never an action.
class Spinner final : public workload::Program {
 protected:
  void step(kernel::Api&, kernel::Task&) override {
    push([](kernel::Api&, kernel::Task&) {});
  }
};
}  // namespace

TEST(Program, AStuckProgramFailsInsteadOfExiting) {
  kernel::Kernel k(fixture::test_machine(1, 1, 1, 1), kernel::Features(), kernel::KernelOptions{1, nullptr});
  k.create_task("stuck", std::make_unique<Spinner>(), {});
  try {
    k.run(sim::Time::ms(1));
    FAIL() << "the stuck program exited";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("ran 1000000 steps without an action"), std::string::npos)
        << e.what();
  }
}
