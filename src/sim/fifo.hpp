// A FIFO ring whose first N slots live inside the object: a short queue (a task's next few
// program steps, a socket's few queued messages) needs no separate allocation, and so no extra
// cache line, at all; a longer one grows into a heap buffer once and keeps it. A steady
// producer/consumer never allocates (std::deque frees and allocates a block every few hundred
// bytes of traffic).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#include <type_traits>

namespace schedlab::sim {

template <class T, size_t N = 4>
class Fifo {
  static_assert(std::is_trivially_copyable_v<T>, "Fifo moves its elements bytewise");
  static_assert((N & (N - 1)) == 0, "N must be a power of two");

 public:
  Fifo() = default;
  Fifo(const Fifo& o) { *this = o; }
  Fifo& operator=(const Fifo& o) {
    if (this == &o) return *this;
    heap_.clear();
    data_ = inline_;
    cap_ = N;
    head_ = 0;
    size_ = 0;
    for (size_t i = 0; i < o.size_; ++i) push_back(o.at(i));
    return *this;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return data()[head_]; }
  const T& front() const { return data()[head_]; }
  T& back() { return data()[(head_ + size_ - 1) & (cap_ - 1)]; }
  const T& back() const { return data_[(head_ + size_ - 1) & (cap_ - 1)]; }
  void push_back(const T& v) {
    if (size_ == cap_) grow();
    data()[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  // Inserts [first, last) before the front, in order.
  template <class It>
  void push_front(It first, It last) {
    uint32_t n = static_cast<uint32_t>(last - first);
    while (size_ + n > cap_) grow();
    head_ = (head_ - n) & (cap_ - 1);
    for (uint32_t i = 0; i < n; ++i) data()[(head_ + i) & (cap_ - 1)] = first[i];
    size_ += n;
  }
  // A new last element, to be assigned (field by field: no whole temporary built and copied).
  T& push_slot() {
    if (size_ == cap_) grow();
    return data()[(head_ + size_++) & (cap_ - 1)];
  }
  // Removes the front element (read it first through front()).
  void drop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }
  T pop_front() {
    T v = data()[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return v;
  }
  // Removes and returns the back element (the Fifo used as a stack).
  T pop_back() {
    --size_;
    return data()[(head_ + size_) & (cap_ - 1)];
  }

  // The i-th element from the front (i < size()).
  const T& at(size_t i) const { return data()[(head_ + i) & (cap_ - 1)]; }

 private:
  T* data() { return data_; }
  const T* data() const { return data_; }
  void grow() {
    uint32_t cap = cap_ * 2;
    std::vector<T> buf(cap);
    for (uint32_t i = 0; i < size_; ++i) buf[i] = at(i);
    heap_.swap(buf);
    data_ = heap_.data();
    cap_ = cap;
    head_ = 0;
  }
  // The storage pointer and the indices first: they and the first slots share a cache line.
  T* data_ = inline_;  // inline_ or heap_.data()
  uint32_t cap_ = N;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
  T inline_[N];
  std::vector<T> heap_;  // empty while the inline slots suffice
};

}  // namespace schedlab::sim
