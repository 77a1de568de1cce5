// Memory-bounded buffers for the trace writers: a trace of millions of events is kept on disk
// while the run goes on, not in memory (issue 25: `--trace big.json` on a 6 M-event run ended
// in bad_alloc). A writer hands each record to a SpillSorter with the key it must be written in
// order of; the sorter holds at most its memory limit in memory and writes sorted runs to an
// unlinked temporary file, then merges them when the trace is written. Records with equal keys
// come out in the order they were added (a stable sort), so the file is byte for byte what
// sorting everything in memory gave.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::io {
class AtomicFile;
}

namespace schedlab::trace::detail {

// Bytes a SpillSorter holds in memory before it writes a sorted run to disk: 8 MiB, or
// SCHEDLAB_TRACE_BUFFER_BYTES (at least 1; the tests use small values to force many runs).
size_t spill_memory_limit();

// What the sorters of this process held, for tests that check that a writer's memory does not
// grow with the trace: the most bytes one sorter held in memory at once, and how many
// records went to disk. reset_spill_stats() zeroes both.
struct SpillStats {
  size_t peak_buffered_bytes = 0;
  uint64_t records_spilled = 0;
};
SpillStats spill_stats();
void reset_spill_stats();

// An unlinked temporary file in $TMPDIR (or /tmp): appended to through a buffer of bounded
// size, read back with pread. Throws io::OutputError naming --trace on a failed write.
class TempFile {
 public:
  TempFile();
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  void append(std::string_view data);
  uint64_t size() const { return written_ + buf_.size(); }
  // Reads up to n bytes at off (flushing the buffer first); returns the count read.
  size_t read(uint64_t off, char* out, size_t n);
  // Appends the bytes [off, off + n) to `to`.
  void copy_to(io::AtomicFile& to, uint64_t off, uint64_t n);
  void flush();
  size_t buffered_bytes() const { return buf_.capacity(); }

 private:
  int fd_ = -1;
  uint64_t written_ = 0;
  std::string buf_;
};

class SpillSorter {
 public:
  using Key = std::array<int64_t, 4>;  // compared lexicographically; unused fields 0
  struct Reader;  // one run while merging (spill.cpp)

  explicit SpillSorter(size_t memory_limit = spill_memory_limit());
  ~SpillSorter();
  SpillSorter(const SpillSorter&) = delete;
  SpillSorter& operator=(const SpillSorter&) = delete;

  void add(const Key& key, std::string_view payload);
  // No more add(); the records can then be read in order with valid()/key()/payload()/next().
  void finish();
  bool valid() const { return valid_; }
  const Key& key() const { return cur_key_; }
  // Valid until the next call of next().
  std::string_view payload() const { return cur_payload_; }
  void next();

  uint64_t records() const { return records_; }
  int runs() const { return static_cast<int>(runs_.size()); }
  // Bytes held in memory now (records not yet on disk and their index); never above the limit
  // by more than one record. peak_buffered_bytes(): the most at any time.
  size_t buffered_bytes() const;
  size_t peak_buffered_bytes() const { return peak_; }

 private:
  struct Entry {
    Key key;
    size_t off;
    uint32_t len;
  };
  struct Run {
    uint64_t begin, end;  // byte range in file_
    Key first, last;
  };
  void spill();
  void load_current();

  size_t limit_;
  std::string data_;
  std::vector<Entry> index_;
  std::vector<Run> runs_;
  std::unique_ptr<TempFile> file_;
  uint64_t records_ = 0;
  size_t peak_ = 0;
  bool finished_ = false;
  bool valid_ = false;
  Key cur_key_{};
  std::string_view cur_payload_;
  // Reading back: in memory (no run spilled) or by merging the runs.
  size_t mem_pos_ = 0;
  std::vector<std::unique_ptr<Reader>> readers_;
  std::vector<int> heap_;  // reader indices, a min-heap on (key, run)
  bool heaped_ = false;
};

}  // namespace schedlab::trace::detail
