// A FIFO on one vector that reuses its storage: popping advances a head index, and the consumed
// front is reclaimed in place, so a steady producer/consumer never allocates (std::deque frees
// and allocates a block every few hundred bytes of traffic).
#pragma once
#include <cstddef>
#include <vector>

namespace schedlab::workload {

template <class T>
class Fifo {
 public:
  bool empty() const { return head_ == buf_.size(); }
  size_t size() const { return buf_.size() - head_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  void push_back(const T& v) {
    if (head_ > 0 && buf_.size() == buf_.capacity()) compact();
    buf_.push_back(v);
  }
  // Inserts [first, last) before the front, in order.
  template <class It>
  void push_front(It first, It last) {
    size_t n = static_cast<size_t>(last - first);
    if (head_ >= n) {
      head_ -= n;
      for (size_t i = 0; i < n; ++i) buf_[head_ + i] = first[i];
    } else {
      buf_.insert(buf_.begin() + static_cast<std::ptrdiff_t>(head_), first, last);
    }
  }
  T pop_front() {
    T v = buf_[head_++];
    if (head_ == buf_.size()) {
      buf_.clear();
      head_ = 0;
    }
    return v;
  }

 private:
  void compact() {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0;
};

}  // namespace schedlab::workload
