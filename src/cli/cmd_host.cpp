// Placeholder until the `host` command lands (see its issue); registers nothing.
#include "cli/commands.hpp"

namespace schedlab::cli {
void register_host(CLI::App&) {}
}  // namespace schedlab::cli
