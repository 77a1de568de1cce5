#include "cli/commands.hpp"

namespace schedlab::cli {
void register_run(CLI::App&) {}
}  // namespace schedlab::cli
