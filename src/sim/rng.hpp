// Seeded, splittable random number streams (SplitMix64 seeding a xoshiro256** generator).
// One stream per component; split() derives an independent child stream deterministically.
// A stream is a UniformRandomBitGenerator, so library distributions can draw from it.
#pragma once
#include <bit>
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
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    advance();
    return result;
  }
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [0, 1).
  double uniform();
  // Standard normal: Boost.Random's ziggurat (Marsaglia & Tsang, 128 layers): the layer, the
  // sign and the mantissa come from one 64-bit draw; 1.04 draws per value on average.
  // The fast path (about 98.8 % of the values) is inline here; the rest is Boost's own code.
  double normal() {
    // Boost's generate_int_float_pair<double, 8>() for a 64-bit engine: the layer and the sign
    // from the low 8 bits, the mantissa from the upper 56 with bit 11 cleared.
    const uint64_t u = rotl(s_[1] * 5, 7) * 9;  // the value next() returns
    const int bucket = static_cast<int>(u & 0xff);
    // (A 56-bit value: converted as signed, which needs no unsigned fix-up, to the same double.)
    const double r =
        static_cast<double>(static_cast<int64_t>((u & ~(uint64_t{1} << 11)) >> 8)) * 0x1.0p-56;
    const int i = bucket >> 1;
    const double x = r * kNormalX[i];
    if (x >= kNormalX[i + 1]) return normal_slow();  // the state not advanced: Boost redraws u
    advance();
    // Boost multiplies by the sign (+1 or -1: exact, the same as negating); normal_distribution
    // returns impl * sigma + mean (1 and 0): + 0.0 makes a -0.0 +0.0. The negation as a flip of
    // the sign bit (what IEEE negation is), without a branch: the sign is a fair coin, and a
    // branch on it was mispredicted half the time.
    const uint64_t flip = static_cast<uint64_t>((bucket & 1) ^ 1) << 63;
    return std::bit_cast<double>(std::bit_cast<uint64_t>(x) ^ flip) + 0.0;
  }
  uint64_t seed() const { return seed_; }
  result_type operator()() { return next(); }
  bool operator==(const Rng&) const = default;

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  void advance() {  // xoshiro256**'s state transition
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
  }
  double normal_slow();  // Boost's normal_distribution from the current state
  static const double* const kNormalX;  // Boost's ziggurat table_x (129 entries)
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace schedlab::sim
