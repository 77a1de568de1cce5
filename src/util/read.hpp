// Reading an input file whole, with a size cap: /dev/zero or a mistyped multi-GB file is one
// clear error, not minutes of reading and then bad_alloc.
#pragma once
#include <cstddef>
#include <istream>
#include <optional>
#include <string>

namespace schedlab::util {

// Every input schedlab reads whole (sample files, profiles) is at most this large.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;  // 64 MiB
inline constexpr const char* kMaxInputText = "64 MiB";

// The stream's bytes, or nullopt if there are more than `cap` (reading stops there).
inline std::optional<std::string> read_capped(std::istream& in, std::size_t cap = kMaxInputBytes) {
  std::string out;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    out.append(buf, static_cast<std::size_t>(in.gcount()));
    if (out.size() > cap) return std::nullopt;
  }
  return out;
}

}  // namespace schedlab::util
