#include "kernel/counters.hpp"

#include <algorithm>

namespace schedlab::kernel {

namespace {
void add_to(int64_t& a, int64_t b, unsigned show) { a = (show & kMax) ? std::max(a, b) : a + b; }
template <size_t N>
void add_to(std::array<int64_t, N>& a, const std::array<int64_t, N>& b) {
  for (size_t i = 0; i < N; ++i) a[i] += b[i];
}
void add_to(std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() < b.size()) a.resize(b.size());
  for (size_t i = 0; i < b.size(); ++i) a[i] += b[i];
}
}  // namespace

void CpuCounters::add(const CpuCounters& o) {
#define SCHEDLAB_ADD_COUNTER(name, unit, show, meaning) add_to(name, o.name, show);
#define SCHEDLAB_ADD(name, ...) add_to(name, o.name);
#define SCHEDLAB_IGNORE(...)
  SCHEDLAB_CPU_COUNTERS(SCHEDLAB_ADD_COUNTER, SCHEDLAB_ADD, SCHEDLAB_IGNORE)
#undef SCHEDLAB_ADD_COUNTER
#undef SCHEDLAB_ADD
#undef SCHEDLAB_IGNORE
  add_to(change, o.change);
}

}  // namespace schedlab::kernel
