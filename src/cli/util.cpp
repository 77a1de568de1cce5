#include "cli/util.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <sstream>

#include "cli/commands.hpp"

namespace schedlab::cli {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

uint64_t parse_seed(const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
    throw UsageError(fmt::format("--seed: '{}' is not a non-negative integer", v));
  return std::stoull(v);
}

void add_model_options(CLI::App* cmd, experiment::RunSpec& spec, std::string& idle_disable) {
  cmd->add_option("--machine", spec.machine,
                  "machine profile name, path to a .toml file, or `host` (this machine's profile, written by "
                  "`schedlab host probe|calibrate`)")
      ->capture_default_str();
  cmd->add_option("--features", spec.features,
                  "scheduler features: NAME turns on, NO_NAME turns off (see `schedlab features`)");
  cmd->add_option("--idle-disable", idle_disable,
                  "disable idle states by name on every CPU (like cpuidle/stateN/disable)");
  cmd->add_option("--set", spec.sets,
                  "override a profile parameter or a scheduler change's tunable: KEY=VALUE, "
                  "change.NAME.KEY=VALUE (repeatable)");
}

void finish_model_options(experiment::RunSpec& spec, const std::string& idle_disable) {
  spec.idle_disable = split_commas(idle_disable);
  try {
    experiment::run_features(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  experiment::load_machine(spec);  // ProfileError -> exit 2
}

experiment::RunResult run_guarded(const experiment::RunSpec& spec) {
  try {
    return experiment::run_one(spec);
  } catch (const workload::WorkloadError& e) {
    throw UsageError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const kernel::CheckError*>(&e)) throw;
    if (std::string(e.what()).find("did not finish") != std::string::npos) throw;
    throw UsageError(e.what());  // e.g. a trace file that cannot be written
  }
}


}  // namespace schedlab::cli
