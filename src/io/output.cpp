#include "io/output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace schedlab::io {

namespace fs = std::filesystem;

namespace {

// ---- temporary files the signal handler removes -------------------------------------------
// A fixed table, so that the handler touches no allocator and no lock: a slot is claimed
// (Free -> Filling), its path copied, then published (Live); the handler unlinks Live slots.

constexpr int kSlots = 64;
constexpr size_t kMaxPath = 4096;
enum SlotState : int { Free = 0, Filling = 1, Live = 2 };
struct Slot {
  std::atomic<int> state{Free};
  char path[kMaxPath];
};
Slot g_slots[kSlots];
std::atomic<bool> g_progress_open{false};
std::atomic<unsigned> g_temp_counter{0};

// Registers `path` for removal on a signal; returns the slot or -1 (table full / path too long:
// the file is then still written, only not removed if a signal arrives meanwhile).
int register_temp(const std::string& path) {
  if (path.size() + 1 > kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = Free;
    if (g_slots[i].state.compare_exchange_strong(expected, Filling)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(Live);
      return i;
    }
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_slots[slot].state.store(Free);
}

extern "C" void on_signal(int sig) {
  for (auto& s : g_slots)
    if (s.state.load() == Live) ::unlink(s.path);
  if (g_progress_open.load()) {
    ssize_t n = ::write(STDERR_FILENO, "\n", 1);
    (void)n;
  }
  ::_exit(128 + sig);
}

// Creates a temporary file next to `target` exclusively, registered for signal cleanup before it
// exists, so that a signal at any point leaves nothing behind. Returns errno (0: success).
int create_temp(const fs::path& target, std::string& path, int& fd, int& slot) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  for (int attempt = 0; attempt < 100; ++attempt) {
    path = (dir / fmt::format(".{}.tmp.{}.{}", target.filename().string(), static_cast<long>(::getpid()),
                              g_temp_counter.fetch_add(1)))
               .string();
    slot = register_temp(path);
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return 0;
    int e = errno;
    unregister_temp(slot);
    slot = -1;
    if (e != EEXIST) return e;
  }
  return EEXIST;
}

int write_all(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    off += static_cast<size_t>(n);
  }
  return 0;
}

// Where the bytes of `path` end up, as shell redirection writes them: through a symbolic link
// (the chain resolved) onto its target; the path itself otherwise.
fs::path write_target(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return fs::path(path);
  fs::path t = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::path(path) : t;
}

std::string where(const OutputPath& o) { return fmt::format("{} '{}'", o.flag, o.path); }

// An existing file that is not a regular file (a device, a pipe): written in place.
bool is_special(const fs::path& p) {
  std::error_code ec;
  auto st = fs::status(p, ec);
  return !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

fs::path identity(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  fs::path c = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : c;
}

}  // namespace

void check_output_paths(const std::vector<OutputPath>& outputs) {
  std::vector<std::pair<const OutputPath*, fs::path>> seen;
  for (const auto& o : outputs) {
    if (o.path.empty()) throw OutputError(fmt::format("{}: empty file name", o.flag));
    if (o.path == "-") {
      if (o.stdout_ok) continue;
      throw OutputError(fmt::format("{} -: cannot write to standard output (give a file name)", o.flag));
    }
    const fs::path p = write_target(o.path);
    std::error_code ec;
    if (fs::is_directory(p, ec))
      throw OutputError(fmt::format("{}: is a directory (give a file name)", where(o)));
    if (o.path.back() == '/')
      throw OutputError(fmt::format("{}: names a directory (give a file name)", where(o)));
    if (is_special(p)) {
      if (::access(o.path.c_str(), W_OK) != 0)
        throw OutputError(fmt::format("{}: cannot write: {}", where(o), std::strerror(errno)));
    } else {
      const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
      if (!fs::exists(dir, ec))
        throw OutputError(fmt::format("{}: directory '{}' does not exist", where(o), dir.string()));
      if (!fs::is_directory(dir, ec))
        throw OutputError(fmt::format("{}: '{}' is not a directory", where(o), dir.string()));
      std::string probe;
      int fd = -1, slot = -1;
      if (int e = create_temp(p, probe, fd, slot); e != 0)
        throw OutputError(
            fmt::format("{}: cannot create a file in '{}': {}", where(o), dir.string(), std::strerror(e)));
      ::close(fd);
      ::unlink(probe.c_str());
      unregister_temp(slot);
    }
    fs::path id = identity(o.path);
    for (const auto& [other, other_id] : seen) {
      std::error_code e1;
      if (other_id == id || fs::equivalent(other_id, id, e1))
        throw OutputError(fmt::format("{} and {} name the same file '{}'", other->flag, o.flag, o.path));
    }
    seen.emplace_back(&o, id);
  }
}

AtomicFile::AtomicFile(std::string flag, std::string path) : flag_(std::move(flag)), path_(std::move(path)) {
  const OutputPath o{flag_, path_, true};
  if (path_.empty()) throw OutputError(fmt::format("{}: empty file name", flag_));
  if (path_ == "-") {
    temp_ = path_;
    fd_ = STDOUT_FILENO;
    in_place_ = true;
    std::fflush(stdout);
    return;
  }
  const fs::path p = write_target(path_);
  target_ = p.string();
  if (is_special(p)) {
    temp_ = path_;
    in_place_ = true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw OutputError(fmt::format("{}: cannot open: {}", where(o), std::strerror(errno)));
    return;
  }
  if (int e = create_temp(p, temp_, fd_, slot_); e != 0) {
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    throw OutputError(
        fmt::format("{}: cannot create a file in '{}': {}", where(o), dir.string(), std::strerror(e)));
  }
  // An existing file keeps its permissions (a 0600 file stays 0600), as with `>`.
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd_, st.st_mode & 07777);
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  fd_ = -1;
  if (!in_place_) ::unlink(temp_.c_str());
  unregister_temp(slot_);
  slot_ = -1;
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0) throw OutputError(fmt::format("{} '{}': written after it was closed", flag_, path_));
  if (int e = write_all(fd_, data); e != 0) {
    discard();
    throw OutputError(fmt::format("{} '{}': write failed: {}", flag_, path_, std::strerror(e)));
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw OutputError(fmt::format("{} '{}': committed after it was closed", flag_, path_));
  int e = 0;
  if (fd_ != STDOUT_FILENO && ::close(fd_) != 0) e = errno;
  fd_ = -1;
  if (e) {
    discard();
    throw OutputError(fmt::format("{} '{}': write failed: {}", flag_, path_, std::strerror(e)));
  }
  if (!in_place_ && std::rename(temp_.c_str(), target_.c_str()) != 0) {
    e = errno;
    discard();
    throw OutputError(fmt::format("{} '{}': cannot rename the temporary file onto it: {}", flag_, path_,
                                  std::strerror(e)));
  }
  unregister_temp(slot_);
  slot_ = -1;
  committed_ = true;
}

void write_file_atomic(const std::string& flag, const std::string& path,
                       const std::vector<std::string_view>& pieces) {
  AtomicFile f(flag, path);
  for (auto d : pieces)
    if (!d.empty()) f.write(d);
  f.commit();
}

void guard_standard_streams() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free descriptor is `fd`: open /dev/null the wrong way round on it.
    int got = ::open("/dev/null", (fd == STDIN_FILENO ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (got >= 0 && got != fd) {
      ::dup2(got, fd);
      ::close(got);
    }
  }
}

void flush_stdout() {
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  int e = errno;
  if (!flush_failed && !std::ferror(stdout)) return;
  if (e == 0) {
    // The failing write happened earlier (fmt wrote through a full buffer): ask the descriptor.
    ssize_t n = ::write(STDOUT_FILENO, "", 0);
    e = n < 0 ? errno : EIO;
  }
  std::clearerr(stdout);
  throw OutputError(fmt::format("writing standard output: {}", std::strerror(e)));
}

bool stderr_failed() { return std::ferror(stderr) != 0; }

void install_signal_handlers() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    sigaction(sig, &sa, &old);
    // A signal ignored when we started (a background job of a non-interactive shell, nohup)
    // stays ignored.
    if (old.sa_handler == SIG_IGN) sigaction(sig, &old, nullptr);
  }
}

void set_progress_line_open(bool open) { g_progress_open.store(open); }
bool progress_line_open() { return g_progress_open.load(); }

}  // namespace schedlab::io
