// Placeholder until the `compare` command lands (see its issue); registers nothing.
#include "cli/commands.hpp"

namespace schedlab::cli {
void register_compare(CLI::App&) {}
}  // namespace schedlab::cli
