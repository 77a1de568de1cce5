// Placeholder until the `validate` command lands (see its issue); registers nothing.
#include "cli/commands.hpp"

namespace schedlab::cli {
void register_validate(CLI::App&) {}
}  // namespace schedlab::cli
