#include "trace/spill.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "io/output.hpp"

namespace schedlab::trace::detail {

namespace {
constexpr size_t kDefaultLimit = size_t{8} << 20;  // bytes held in memory per sorter
constexpr size_t kFileBuffer = size_t{256} << 10;  // TempFile's write buffer
constexpr size_t kReadBuffer = size_t{64} << 10;   // per run while merging
constexpr size_t kRecordHeader = sizeof(SpillSorter::Key) + sizeof(uint32_t);

std::atomic<size_t> g_peak{0};
std::atomic<uint64_t> g_spilled{0};

[[noreturn]] void fail(const std::string& what, int e) {
  throw io::OutputError(fmt::format("--trace: temporary file: {}: {}", what, std::strerror(e)));
}
}  // namespace

SpillStats spill_stats() { return {g_peak.load(), g_spilled.load()}; }
void reset_spill_stats() {
  g_peak.store(0);
  g_spilled.store(0);
}

size_t spill_memory_limit() {
  if (const char* v = std::getenv("SCHEDLAB_TRACE_BUFFER_BYTES"); v && *v) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && n >= 1) return static_cast<size_t>(n);
  }
  return kDefaultLimit;
}

TempFile::TempFile() {
  const char* env = std::getenv("TMPDIR");
  std::string dir = env && *env ? env : "/tmp";
  std::string tmpl = dir + "/schedlab-trace-XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) fail(fmt::format("cannot create a file in '{}' ($TMPDIR)", dir), errno);
  ::unlink(tmpl.c_str());  // gone when closed, also on a signal or a crash
  buf_.reserve(kFileBuffer);
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TempFile::flush() {
  size_t done = 0;
  while (done < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    done += static_cast<size_t>(n);
  }
  written_ += buf_.size();
  buf_.clear();
}

void TempFile::append(std::string_view data) {
  if (buf_.size() + data.size() > kFileBuffer) flush();
  if (data.size() > kFileBuffer) {
    buf_.assign(data);  // one oversized piece: written through at once
    flush();
    buf_.shrink_to_fit();
    buf_.reserve(kFileBuffer);
    return;
  }
  buf_.append(data);
}

size_t TempFile::read(uint64_t off, char* out, size_t n) {
  if (!buf_.empty()) flush();
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out + got, n - got, static_cast<off_t>(off + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail("read failed", errno);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

void TempFile::copy_to(io::AtomicFile& to, uint64_t off, uint64_t n) {
  std::string chunk(std::min<uint64_t>(n, kFileBuffer), '\0');
  while (n > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(n, chunk.size()));
    size_t got = read(off, chunk.data(), want);
    if (got != want) fail("short read", EIO);
    to.write(std::string_view(chunk.data(), got));
    off += got;
    n -= got;
  }
}

// One run being merged: its current record and a bounded read buffer.
struct SpillSorter::Reader {
  TempFile* file;
  uint64_t pos, end;
  std::string buf;
  size_t bpos = 0, blen = 0;
  Key key{};
  std::string payload;

  void fill(char* out, size_t n) {
    while (n > 0) {
      if (bpos == blen) {
        size_t want = static_cast<size_t>(std::min<uint64_t>(kReadBuffer, end - pos));
        if (want == 0) fail("run ends early", EIO);
        buf.resize(kReadBuffer);
        blen = file->read(pos, buf.data(), want);
        if (blen != want) fail("short read", EIO);
        pos += blen;
        bpos = 0;
      }
      size_t k = std::min(n, blen - bpos);
      std::memcpy(out, buf.data() + bpos, k);
      bpos += k;
      out += k;
      n -= k;
    }
  }
  bool at_end() const { return bpos == blen && pos == end; }
  bool load() {
    if (at_end()) return false;
    char h[kRecordHeader];
    fill(h, sizeof h);
    std::memcpy(key.data(), h, sizeof key);
    uint32_t len;
    std::memcpy(&len, h + sizeof key, sizeof len);
    payload.resize(len);
    fill(payload.data(), len);
    return true;
  }
};

SpillSorter::SpillSorter(size_t memory_limit) : limit_(std::max<size_t>(memory_limit, 1)) {}
SpillSorter::~SpillSorter() = default;

size_t SpillSorter::buffered_bytes() const {
  return data_.size() + index_.size() * sizeof(Entry);
}

void SpillSorter::add(const Key& key, std::string_view payload) {
  if (finished_) throw std::logic_error("SpillSorter::add after finish");
  index_.push_back(Entry{key, data_.size(), static_cast<uint32_t>(payload.size())});
  data_.append(payload);
  ++records_;
  if (buffered_bytes() > peak_) {
    peak_ = buffered_bytes();
    for (size_t g = g_peak.load(); peak_ > g && !g_peak.compare_exchange_weak(g, peak_);) {
    }
  }
  if (buffered_bytes() >= limit_) spill();
}

// Writes the buffered records, sorted, as a run (appended to the last run when they all sort
// at or after it: in-order input makes one run), and frees the buffer.
void SpillSorter::spill() {
  if (index_.empty()) return;
  auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
  if (!std::is_sorted(index_.begin(), index_.end(), by_key))
    std::stable_sort(index_.begin(), index_.end(), by_key);
  if (!file_) file_ = std::make_unique<TempFile>();
  uint64_t begin = file_->size();
  char h[kRecordHeader];
  for (const Entry& e : index_) {
    std::memcpy(h, e.key.data(), sizeof e.key);
    std::memcpy(h + sizeof e.key, &e.len, sizeof e.len);
    file_->append(std::string_view(h, sizeof h));
    file_->append(std::string_view(data_).substr(e.off, e.len));
  }
  uint64_t end = file_->size();
  g_spilled.fetch_add(index_.size());
  if (!runs_.empty() && !(index_.front().key < runs_.back().last)) {
    runs_.back().end = end;
    runs_.back().last = index_.back().key;
  } else {
    runs_.push_back(Run{begin, end, index_.front().key, index_.back().key});
  }
  std::string().swap(data_);
  std::vector<Entry>().swap(index_);
}

void SpillSorter::finish() {
  if (finished_) return;
  finished_ = true;
  if (runs_.empty()) {
    auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
    if (!std::is_sorted(index_.begin(), index_.end(), by_key))
      std::stable_sort(index_.begin(), index_.end(), by_key);
    mem_pos_ = 0;
  } else {
    spill();
    file_->flush();
    for (const Run& r : runs_) {
      auto rd = std::make_unique<Reader>();
      rd->file = file_.get();
      rd->pos = r.begin;
      rd->end = r.end;
      if (rd->load()) readers_.push_back(std::move(rd));
    }
    for (int i = 0; i < static_cast<int>(readers_.size()); ++i) heap_.push_back(i);
  }
  load_current();
}

namespace {
// std::push_heap/pop_heap build a max-heap: "a after b" gives the smallest (key, run) on top.
struct After {
  const std::vector<std::unique_ptr<SpillSorter::Reader>>* r;
  bool operator()(int a, int b) const {
    const auto& ka = (*r)[a]->key;
    const auto& kb = (*r)[b]->key;
    return kb < ka || (ka == kb && b < a);
  }
};
}  // namespace

void SpillSorter::load_current() {
  if (runs_.empty()) {
    valid_ = mem_pos_ < index_.size();
    if (valid_) {
      const Entry& e = index_[mem_pos_];
      cur_key_ = e.key;
      cur_payload_ = std::string_view(data_).substr(e.off, e.len);
    }
    return;
  }
  // heap_ holds the readers with a current record; the top is the smallest.
  After after{&readers_};
  if (!heaped_) {
    std::make_heap(heap_.begin(), heap_.end(), after);
    heaped_ = true;
  }
  valid_ = !heap_.empty();
  if (valid_) {
    Reader& r = *readers_[heap_.front()];
    cur_key_ = r.key;
    cur_payload_ = r.payload;
  }
}

void SpillSorter::next() {
  if (!valid_) return;
  if (runs_.empty()) {
    ++mem_pos_;
    load_current();
    return;
  }
  After after{&readers_};
  std::pop_heap(heap_.begin(), heap_.end(), after);
  int i = heap_.back();
  heap_.pop_back();
  if (readers_[i]->load()) {
    heap_.push_back(i);
    std::push_heap(heap_.begin(), heap_.end(), after);
  }
  load_current();
}

}  // namespace schedlab::trace::detail
