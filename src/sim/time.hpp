// Simulated time: an integer count of nanoseconds, as a strong type.
#pragma once
#include <compare>
#include <cstdint>
#include <limits>

namespace schedlab::sim {

// A duration or a point in simulated time, in nanoseconds.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  static constexpr Time us(int64_t v) { return Time(v * 1000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1000000); }
  static constexpr Time sec(int64_t v) { return Time(v * 1000000000); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }
  constexpr int64_t count() const { return v_; }
  constexpr double seconds() const { return static_cast<double>(v_) * 1e-9; }
  constexpr double micros() const { return static_cast<double>(v_) * 1e-3; }
  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(v_ + o.v_); }
  constexpr Time operator-(Time o) const { return Time(v_ - o.v_); }
  constexpr Time& operator+=(Time o) { v_ += o.v_; return *this; }
  constexpr Time& operator-=(Time o) { v_ -= o.v_; return *this; }
  constexpr Time operator*(int64_t k) const { return Time(v_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(v_ / k); }
  constexpr int64_t operator/(Time o) const { return v_ / o.v_; }

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

constexpr Time operator""_ns(unsigned long long v) { return Time::ns(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::us(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ms(static_cast<int64_t>(v)); }

inline constexpr Time max(Time a, Time b) { return a < b ? b : a; }
inline constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace schedlab::sim
