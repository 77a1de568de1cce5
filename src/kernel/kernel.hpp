// The whole simulated system, for the engine (kernel.cpp, cpu.cpp, check.cpp, warm.cpp,
// change.cpp) and the experiment layer: the Kernel object (base.hpp) with every subsystem's
// state header, so that each accessor of base.hpp is defined. Policy files (core.cpp, fair.cpp,
// idle.cpp, ..., changes/) include base.hpp and the state headers they use instead
// (scripts/include-rule.sh, ctest lint.IncludeRule). Workloads see none of it: they get the Api
// (api.hpp).
#pragma once
#include "kernel/base.hpp"
#include "kernel/change.hpp"
#include "kernel/counters.hpp"
#include "kernel/cpu.hpp"
#include "kernel/cpuidle.hpp"
#include "kernel/deferred.hpp"
#include "kernel/guest.hpp"
#include "kernel/sched.hpp"
#include "kernel/smp.hpp"
#include "kernel/softirq.hpp"
#include "kernel/task.hpp"
#include "kernel/tick.hpp"
