// Option plumbing shared by the commands that simulate (run, ab).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "experiment/run.hpp"

namespace schedlab::cli {

// --machine, --features, --idle-disable, --set.
void add_model_options(CLI::App* cmd, experiment::RunSpec& spec, std::string& idle_disable);
// Splits --idle-disable and validates machine + features early (clear errors, exit 2).
void finish_model_options(experiment::RunSpec& spec, const std::string& idle_disable);
// run_one() with bad input turned into UsageError.
experiment::RunResult run_guarded(const experiment::RunSpec& spec);
std::vector<std::string> split_commas(const std::string& s);
// A non-negative 64-bit integer for --seed; throws UsageError.
uint64_t parse_seed(const std::string& v);

}  // namespace schedlab::cli
