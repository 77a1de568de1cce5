// Shared by the compare_* targets: a sample file as `schedlab compare` reads it, then the table
// it prints for that sample against a fixed base, in every format.
#pragma once
#include <cmath>

#include "fuzz/harness.hpp"
#include "report/report.hpp"
#include "report/samples.hpp"

namespace schedlab::fuzz {

// `column` is the --column value (CSV column / JSON field; "" = none).
inline void compare_sample(const std::string& name, std::string_view text, report::SampleFormat format,
                           const std::string& column) {
  expect<report::SampleError>([&] {
    std::vector<double> v = report::parse_sample(name, text, format, column);
    FUZZ_CHECK(!v.empty());
    for (double x : v) FUZZ_CHECK(std::isfinite(x));
    if (v.size() > 64) return;  // the statistics' cost grows with n; their edge cases need few values
    report::Metric m;
    m.name = "value";
    m.sets = {{"base", {1.0, 2.0, 2.0, 3.5}}, {name, v}};
    for (auto f : {report::Format::Text, report::Format::Markdown, report::Format::Json, report::Format::Csv})
      FUZZ_CHECK(!report::render({m}, f).empty());
  });
}

}  // namespace schedlab::fuzz
