#include "workload/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "workload/workload.hpp"

namespace schedlab::workload::json {

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

int Value::count(std::string_view key) const {
  return static_cast<int>(std::count_if(members.begin(), members.end(),
                                        [&](const auto& m) { return m.first == key; }));
}

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "boolean";
    case Value::Type::Int: return "integer";
    case Value::Type::Float: return "number";
    case Value::Type::String: return "string";
    case Value::Type::Array: return "array";
    case Value::Type::Object: return "object";
  }
  return "?";
}

namespace {

// Skips whitespace and comments from i; returns the index of the next significant character.
size_t skip_blank(const std::string& t, size_t i) {
  const size_t n = t.size();
  while (i < n) {
    char c = t[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      size_t e = t.find('\n', i);
      i = e == std::string::npos ? n : e + 1;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      size_t e = t.find("*/", i + 2);
      i = e == std::string::npos ? n : e + 2;
    } else {
      break;
    }
  }
  return i;
}

// An input iterator over the text that records how far the lexer has read, so the SAX callbacks
// know where they are (nlohmann's SAX events carry no position).
struct TrackingIt {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** furthest = nullptr;
  reference operator*() const { return *p; }
  TrackingIt& operator++() {
    ++p;
    if (p > *furthest) *furthest = p;
    return *this;
  }
  TrackingIt operator++(int) {
    TrackingIt old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIt& o) const { return p == o.p; }
};

class Builder {
 public:
  using json = nlohmann::json;
  Builder(const std::string& text, const std::string& file, const char** furthest)
      : text_(text), file_(file), furthest_(furthest) {}

  bool null() { return add(Value{}); }
  bool boolean(bool v) {
    Value x;
    x.type = Value::Type::Bool;
    x.b = v;
    return add(std::move(x));
  }
  bool number_integer(json::number_integer_t v) { return add(integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) {
    constexpr auto kMax = static_cast<json::number_unsigned_t>(std::numeric_limits<int64_t>::max());
    return add(integer(v > kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v)));
  }
  bool number_float(json::number_float_t v, const json::string_t&) {
    Value x;
    x.type = Value::Type::Float;
    x.f = v;
    return add(std::move(x));
  }
  bool string(json::string_t& v) {
    Value x;
    x.type = Value::Type::String;
    x.s = std::move(v);
    return add(std::move(x));
  }
  bool binary(json::binary_t&) { return false; }  // not produced by the JSON lexer
  bool start_object(std::size_t) { return open(Value::Type::Object); }
  bool start_array(std::size_t) { return open(Value::Type::Array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    key_line_ = line_now();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    std::string what = ex.what();
    static const std::regex re(R"(at line (\d+), column (\d+): (.*)$)");
    std::smatch m;
    if (std::regex_search(what, m, re))
      throw WorkloadError(fmt::format("{}:{}:{}: JSON syntax error: {}", file_, m[1].str(), m[2].str(),
                                      m[3].str()));
    auto colon = what.find("] ");
    throw WorkloadError(fmt::format("{}:{}: JSON syntax error: {}", file_, line_now(),
                                    colon == std::string::npos ? what : what.substr(colon + 2)));
  }

  Value take() { return std::move(root_); }

 private:
  static Value integer(int64_t v) {
    Value x;
    x.type = Value::Type::Int;
    x.i = v;
    return x;
  }
  // The line of the last character the lexer consumed that belongs to the current token: a
  // number is followed by one look-ahead character, which is never part of a string, literal
  // or bracket, so the character before the furthest one read is always inside the token.
  int line_now() {
    size_t end = static_cast<size_t>(*furthest_ - text_.data());
    if (end > 0) --end;
    for (; counted_ < end; ++counted_)  // the lexer only moves forwards
      if (text_[counted_] == '\n') ++newlines_;
    return 1 + newlines_;
  }
  Value* place(Value v) {
    if (stack_.empty()) {
      v.line = line_now();
      root_ = std::move(v);
      return &root_;
    }
    Value* top = stack_.back();
    if (top->type == Value::Type::Object) {
      v.line = key_line_;
      top->members.push_back({std::move(key_), std::move(v)});
      key_.clear();
      return &top->members.back().second;
    }
    v.line = line_now();
    top->items.push_back(std::move(v));
    return &top->items.back();
  }
  bool add(Value v) {
    place(std::move(v));
    return true;
  }
  bool open(Value::Type t) {
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      throw WorkloadError(fmt::format("{}:{}: JSON nesting deeper than {} levels", file_, line_now(),
                                      kMaxDepth));
    Value v;
    v.type = t;
    // Only the innermost open container grows, so pointers to the open ones stay valid.
    stack_.push_back(place(std::move(v)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::string& file_;
  const char** furthest_;
  Value root_;
  std::vector<Value*> stack_;
  std::string key_;
  int key_line_ = 0;
  size_t counted_ = 0;  // text_[0, counted_) has been scanned for newlines
  int newlines_ = 0;
};

}  // namespace

std::string blank_trailing_commas(const std::string& text) {
  std::string out = text;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (c == '"') {  // skip a string, honouring backslash escapes
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && (text[i + 1] == '/' || text[i + 1] == '*')) {
      i = skip_blank(text, i) - 1;
      continue;
    }
    if (c == ',') {
      size_t j = skip_blank(text, i + 1);
      if (j < n && (text[j] == '}' || text[j] == ']')) out[i] = ' ';
    }
  }
  return out;
}

std::string json_c_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (c == '"') {  // a string as it is
      size_t s = i;
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      out.append(text, s, std::min(i, n - 1) - s + 1);
      continue;
    }
    if (c == '/' && i + 1 < n && (text[i + 1] == '/' || text[i + 1] == '*')) {
      size_t e = skip_blank(text, i);
      out.append(text, i, e - i);
      i = e - 1;
      continue;
    }
    if (c == '\'') {  // json-c's single-quoted string (or key): the same string, double-quoted
      out += '"';
      for (++i; i < n && text[i] != '\''; ++i) {
        if (text[i] == '\\' && i + 1 < n) {
          out += text[i++];
          out += text[i];
        } else if (text[i] == '"') {
          out += "\\\"";
        } else {
          out += text[i];
        }
      }
      if (i < n) out += '"';
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {  // json-c reads true, false, null in any case
      size_t e = i;
      while (e < n && std::isalpha(static_cast<unsigned char>(text[e]))) ++e;
      std::string word = text.substr(i, e - i), lower = word;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out += (lower == "true" || lower == "false" || lower == "null") ? lower : word;
      i = e - 1;
      continue;
    }
    out += c;
  }
  return blank_trailing_commas(out);
}

Value parse(const std::string& text, const std::string& file_name) {
  const std::string input = json_c_text(text);
  const char* furthest = input.data();
  Builder b(input, file_name, &furthest);
  TrackingIt first{input.data(), &furthest};
  TrackingIt last{input.data() + input.size(), &furthest};
  nlohmann::json::sax_parse(first, last, &b, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/true);
  return b.take();
}

}  // namespace schedlab::workload::json
