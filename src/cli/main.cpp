// schedlab: the command-line entry point. Parsing and printing only; the work is in the layers.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "kernel/kernel.hpp"
#include "machine/machine.hpp"

int main(int argc, char** argv) {
  using namespace schedlab;
  CLI::App app{"schedlab: a deterministic model of the Linux scheduler's wakeup and idle paths"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "schedlab 0.1.0");
  cli::register_run(app);
  cli::register_lists(app);
  cli::register_compare(app);
  cli::register_ab(app);
  cli::register_host(app);
  cli::register_validate(app);
  cli::register_reproduce(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "schedlab: error: {}\n", e.what());
    return 2;
  } catch (const cli::UsageError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "schedlab: error: {}\n", e.what());
    return 2;
  } catch (const machine::ProfileError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "schedlab: error: {}\n", e.what());
    return 2;
  } catch (const kernel::CheckError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "schedlab: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "schedlab: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
