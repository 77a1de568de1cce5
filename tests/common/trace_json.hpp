// Reading Perfetto/Chrome trace JSON in tests: complete slices per track, and the nesting check.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace schedlab::fixture {

using nlohmann::json;

inline int64_t ns_of(const json& v) { return std::llround(v.get<double>() * 1000.0); }

struct X {
  int64_t b, e;
  std::string name, cat;
};

inline std::map<std::pair<int, int>, std::vector<X>> slices_by_track(const json& j) {
  std::map<std::pair<int, int>, std::vector<X>> t;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    int64_t b = ns_of(ev["ts"]);
    t[{ev["pid"].get<int>(), ev["tid"].get<int>()}].push_back(
        X{b, b + ns_of(ev["dur"]), ev["name"], ev["cat"]});
  }
  return t;
}

// Every slice either lies inside the innermost open slice or starts after it ends.
inline void expect_well_nested(const json& j) {
  for (auto& [track, v] : slices_by_track(j)) {
    std::stable_sort(v.begin(), v.end(), [](const X& a, const X& b) {
      return a.b != b.b ? a.b < b.b : a.e > b.e;
    });
    std::vector<X> stack;
    for (const X& s : v) {
      EXPECT_GE(s.e, s.b);
      while (!stack.empty() && stack.back().e <= s.b && !(s.b == s.e && stack.back().b == s.b))
        stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(s.e, stack.back().e)
            << "track " << track.second << ": " << s.name << " [" << s.b << "," << s.e
            << ") overlaps " << stack.back().name << " [" << stack.back().b << ","
            << stack.back().e << ")";
      }
      stack.push_back(s);
    }
  }
}


}  // namespace schedlab::fixture
