// Placeholder until the `ab` command lands (see its issue); registers nothing.
#include "cli/commands.hpp"

namespace schedlab::cli {
void register_ab(CLI::App&) {}
}  // namespace schedlab::cli
