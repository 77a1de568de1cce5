#include "cli/commands.hpp"

namespace schedlab::cli {
void register_lists(CLI::App&) {}
}  // namespace schedlab::cli
