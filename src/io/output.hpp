// Output files and the signals that interrupt them. Every file schedlab writes (--json, --trace,
// --output, host profiles, samples files) is checked before any work starts and then written
// whole: to a temporary file next to it, renamed over the target when complete. SIGINT and
// SIGTERM remove the temporary files being written, end an open progress line and exit with
// 128 + the signal number, so an interrupted run leaves no partial file behind.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::io {

// An output path that cannot be used (empty, a directory, in a directory that does not exist or
// cannot hold a new file, the same file as another output of the command) or a write that
// failed. One line naming the flag and the path; the CLI prints it and exits with status 2.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputPath {
  std::string flag;        // "--json", "--trace", "-o", ...: how the message names it
  std::string path;
  bool stdout_ok = false;  // "-" means standard output
};

// Checks every output of one command before it does any work: the path is not empty and not a
// directory, its directory exists (nothing is created) and a file can be created in it (a
// probe file is created and removed at once), or it names an existing non-regular file that
// can be opened for writing (/dev/null, a pipe); and no two outputs are the same file.
// Throws OutputError.
void check_output_paths(const std::vector<OutputPath>& outputs);
inline void check_output_path(const OutputPath& output) { check_output_paths({output}); }

// A file written in pieces and published whole by commit(): a temporary file in the same
// directory, renamed over `path`. Destroyed uncommitted, or interrupted by SIGINT/SIGTERM, it
// leaves nothing behind. As shell redirection does, it writes through a symbolic link (the
// link's target is replaced, the link stays) and an existing file keeps its mode (0600 stays
// 0600). An existing non-regular file (/dev/null, a pipe) is written in place,
// "-" is standard output. Creates no directory. Throws OutputError("<flag> '<path>': ...").
class AtomicFile {
 public:
  AtomicFile(std::string flag, std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(std::string_view data);
  void commit();
  // Where the bytes go until commit() (the path itself for stdout and non-regular files).
  const std::string& temp_path() const { return temp_; }

 private:
  void discard();
  std::string flag_, path_, temp_;
  std::string target_;   // path_ with symbolic links resolved: what the rename replaces
  int fd_ = -1;
  int slot_ = -1;        // signal-cleanup slot of temp_ (-1: none)
  bool in_place_ = false;
  bool committed_ = false;
};

// Writes the pieces to `path` whole (an AtomicFile): a temporary file in the same directory (removed on
// failure and on SIGINT/SIGTERM) renamed over `path` at the end. An existing non-regular file
// (/dev/null, a pipe) is written directly. "-" writes to standard output. Creates no
// directory. Throws OutputError("<flag> <path>: ...").
void write_file_atomic(const std::string& flag, const std::string& path,
                       const std::vector<std::string_view>& pieces);
inline void write_file_atomic(const std::string& flag, const std::string& path,
                              std::string_view text) {
  write_file_atomic(flag, path, std::vector<std::string_view>{text});
}

// Standard output and standard error, checked. guard_standard_streams() (first thing in main)
// puts a descriptor that fails every write (EBADF) on a closed stdin/stdout/stderr, so that no
// file the command opens lands on descriptor 1 and a write to a closed stdout is an error, as
// writing into /dev/full is. flush_stdout() flushes stdout and throws
// OutputError("writing standard output: <strerror>") if any write to it failed; main() calls
// it before it exits (help text included) and the commands call it before they write files.
void guard_standard_streams();
void flush_stdout();
// Whether a write to stderr failed (then no message can be printed; the exit status says it).
bool stderr_failed();

// Installs the SIGINT/SIGTERM handlers (idempotent): remove the temporary files being
// written, print a newline if a progress line is open, _exit(128 + signal).
void install_signal_handlers();

// Marks that stderr ends in an unfinished progress line ("\rab: 3/20 runs done"), so that an
// interrupting signal ends it before the process exits.
void set_progress_line_open(bool open);
bool progress_line_open();

}  // namespace schedlab::io
