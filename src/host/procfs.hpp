// Small readers of /proc and /sys files shared by the host layer (probe, guest, calibrate,
// background, bench).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/calib_stats.hpp"

namespace schedlab::host {

// The whole file, or nullopt if it cannot be opened or read.
std::optional<std::string> read_file_text(const std::string& path);
// The same with surrounding whitespace removed (sysfs values).
std::optional<std::string> read_file_trimmed(const std::string& path);

// Numbered subdirectories `prefix<N>` of dir (cpuN, stateN, indexN, nodeN), ascending by N; empty
// when dir cannot be read.
std::vector<std::pair<int, std::filesystem::path>> numbered_dirs(const std::filesystem::path& dir,
                                                                 const std::string& prefix);

// The machine's CPU time now: CLOCK_MONOTONIC, /proc/stat's `cpu` line, and (with_self) this
// process's own CPU time plus that of its waited-for children (getrusage).
CpuSnapshot cpu_snapshot(bool with_self);

}  // namespace schedlab::host
