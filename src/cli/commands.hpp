// Each `schedlab` subcommand lives in its own cmd_*.cpp and registers itself here.
#pragma once
#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

namespace schedlab::cli {

// Bad input detected by a command: main prints "schedlab: error: <what>" and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each function adds one subcommand (and its callback) to the app.
void register_run(CLI::App& app);        // cmd_run.cpp
void register_lists(CLI::App& app);      // cmd_lists.cpp: machines, features, workloads
void register_compare(CLI::App& app);    // cmd_compare.cpp
void register_ab(CLI::App& app);         // cmd_ab.cpp
void register_host(CLI::App& app);       // cmd_host.cpp: host probe|calibrate|bench
void register_validate(CLI::App& app);   // cmd_validate.cpp
void register_reproduce(CLI::App& app);  // cmd_reproduce.cpp
void register_sweep(CLI::App& app);      // cmd_sweep.cpp: sweep run|merge|slurm|list

}  // namespace schedlab::cli
