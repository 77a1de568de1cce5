// Seeded, splittable random number streams (SplitMix64 seeding a xoshiro256** generator).
// One stream per component; split() derives an independent child stream deterministically.
// A stream is a UniformRandomBitGenerator, so library distributions can draw from it.
#pragma once
#include <cstdint>
#include <string_view>

namespace schedlab::sim {

class Rng {
 public:
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return UINT64_MAX; }

  explicit Rng(uint64_t seed = 0);
  // A child stream whose sequence depends only on this stream's seed and `key`.
  Rng split(std::string_view key) const;
  Rng split(uint64_t key) const;
  uint64_t next();
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [0, 1).
  double uniform();
  // Standard normal: Boost.Random's ziggurat (Marsaglia & Tsang, 128 layers): the layer, the
  // sign and the mantissa come from one 64-bit draw; 1.04 draws per value on average.
  double normal();
  uint64_t seed() const { return seed_; }
  result_type operator()() { return next(); }
  bool operator==(const Rng&) const = default;

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace schedlab::sim
