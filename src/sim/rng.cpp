#include "sim/rng.hpp"

#include <boost/random/normal_distribution.hpp>

namespace schedlab::sim {
namespace {
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) { h ^= c; h *= 1099511628211ULL; }
  return h;
}
}  // namespace

Rng::Rng(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix(x);
}

Rng Rng::split(std::string_view key) const { return split(fnv1a(key)); }

Rng Rng::split(uint64_t key) const {
  uint64_t x = seed_ ^ (key * 0xd1342543de82ef95ULL);
  return Rng(splitmix(x));
}

uint64_t Rng::below(uint64_t n) {
  // Lemire's multiply-shift with rejection for exact uniformity.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  uint64_t l = static_cast<uint64_t>(m);
  if (l < n) {
    uint64_t t = -n % n;
    while (l < t) {
      m = static_cast<unsigned __int128>(next()) * n;
      l = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

// Boost's ziggurat (normal_distribution<double>); normal() in the header takes the draws whose
// first value lands inside a layer itself, bit for bit as this would.
const double* const Rng::kNormalX = boost::random::detail::normal_table<double>::table_x;

double Rng::normal_slow() { return boost::random::normal_distribution<double>()(*this); }

}  // namespace schedlab::sim
