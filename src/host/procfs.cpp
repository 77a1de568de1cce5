#include "host/procfs.hpp"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace schedlab::host {
namespace fs = std::filesystem;

std::optional<std::string> read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

std::optional<std::string> read_file_trimmed(const std::string& path) {
  auto s = read_file_text(path);
  if (!s) return s;
  size_t b = 0, e = s->size();
  while (b < e && std::isspace(static_cast<unsigned char>((*s)[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>((*s)[e - 1]))) --e;
  return s->substr(b, e - b);
}

std::vector<std::pair<int, fs::path>> numbered_dirs(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return out;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    std::string n = it->path().filename().string();
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0) continue;
    std::string num = n.substr(prefix.size());
    if (!std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    std::error_code ec2;
    if (!fs::is_directory(it->path(), ec2)) continue;
    out.emplace_back(std::stoi(num), it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CpuSnapshot cpu_snapshot(bool with_self) {
  CpuSnapshot s;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.wall_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  std::ifstream in("/proc/stat");
  std::string line;
  std::getline(in, line);
  parse_proc_stat_cpu(line, &s);
  if (with_self) {
    rusage self{}, kids{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    s.self_cpu_s = sec(self.ru_utime) + sec(self.ru_stime) + sec(kids.ru_utime) + sec(kids.ru_stime);
  }
  return s;
}

}  // namespace schedlab::host
