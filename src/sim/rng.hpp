// Seeded, splittable random number streams (SplitMix64 seeding a xoshiro256** generator).
// One stream per component; split() derives an independent child stream deterministically.
#pragma once
#include <cstdint>
#include <string_view>

namespace schedlab::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  // A child stream whose sequence depends only on this stream's seed and `key`.
  Rng split(std::string_view key) const;
  Rng split(uint64_t key) const;
  uint64_t next();
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [0, 1).
  double uniform();
  // Standard normal (Box-Muller, deterministic).
  double normal();
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace schedlab::sim
