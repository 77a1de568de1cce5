// Counts heap allocations and the bytes they ask for: replaces the global operator new / delete of the binary that includes
// this header (include it in exactly one .cpp of a test or benchmark binary).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace schedlab::alloc_counter {
inline std::atomic<uint64_t> count{0};
inline std::atomic<uint64_t> bytes_requested{0};
inline uint64_t allocations() { return count.load(std::memory_order_relaxed); }
// Bytes asked of operator new so far (allocated, whether freed since or not).
inline uint64_t bytes() { return bytes_requested.load(std::memory_order_relaxed); }
}  // namespace schedlab::alloc_counter

// The replaced functions pair malloc with free; GCC's heuristic cannot see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  schedlab::alloc_counter::count.fetch_add(1, std::memory_order_relaxed);
  schedlab::alloc_counter::bytes_requested.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
