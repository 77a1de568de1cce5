// Samples measured elsewhere, as `schedlab compare` reads them: one number per line (plain, and
// stdin), a CSV column, or a JSON array / a field of JSON objects. See docs/stats.md.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::report {

// Malformed sample text: one line naming the file and line (or JSON element) and what is wrong.
class SampleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class SampleFormat { Plain, Csv, Json };

// How `compare` reads a file: by its extension (.csv, .json, any case), else one number per line;
// "-" (stdin) is one number per line.
SampleFormat sample_format_for(const std::string& path);

// Parses one sample. `name` names the input in messages ("a.txt", "<stdin>"); `column` selects
// the CSV column or JSON field (required when there is more than one). Plain: one finite number
// per line, blank lines and `#` comments skipped. A UTF-8 byte order mark is ignored. Throws
// SampleError; the result holds at least one value.
std::vector<double> parse_sample(const std::string& name, std::string_view text, SampleFormat format,
                                 const std::string& column = "");

}  // namespace schedlab::report
