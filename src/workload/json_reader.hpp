// An ordered JSON document with source lines, read through nlohmann::json's SAX interface.
// Object members keep their file order and their duplicates (rt-app's workgen keeps repeated
// keys such as several "run" events of a phase), every value knows the line of its key, and
// a syntax error names FILE:LINE:COLUMN. Accepts what rt-app's json-c reader (json_tokener_parse,
// not strict) accepts beyond strict JSON, checked against json-c's json_tokener.c (d17ad9d):
// C and C++ comments, a trailing comma before } or ], single-quoted strings and keys, and true,
// false and null in any case (True, NULL). Like json-c it rejects a key without a value
// ({"a"} and {"a": }); NaN and Infinity, which json-c reads as numbers, are syntax errors here.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedlab::workload::json {

struct Value {
  // A member of an object: its key (first) and value (second). Defined below Value: a std::pair
  // holding a Value needs a complete Value, which clang enforces inside Value's own definition.
  struct Member;
  enum class Type { Null, Bool, Int, Float, String, Array, Object };
  Type type = Type::Null;
  bool b = false;
  int64_t i = 0;      // Int; an unsigned value beyond int64 saturates (as json-c's int64 does)
  double f = 0;       // Float
  std::string s;      // String
  int line = 0;       // line of the member's key; for array elements and the root, the value's
  std::vector<Member> members;                         // Object, in file order, duplicates kept
  std::vector<Value> items;                            // Array

  bool is(Type t) const { return type == t; }
  // The first member named `key` (nullptr if none, or if this is not an object).
  const Value* find(std::string_view key) const;
  // How many members are named `key`.
  int count(std::string_view key) const;
};

struct Value::Member {
  std::string first;
  Value second;
};

// "integer", "string", "object", ... (for error messages).
const char* type_name(Value::Type t);

// Deepest nesting of arrays and objects accepted (rt-app's files nest 5 levels).
inline constexpr int kMaxDepth = 64;

// Parses a whole document. Throws workload::WorkloadError "FILE:LINE:COL: JSON syntax error: ..."
// (or "FILE:LINE: ..." for nesting beyond kMaxDepth).
Value parse(const std::string& text, const std::string& file_name);

// The text with every comma that is followed (after whitespace and comments) by '}' or ']'
// replaced by a space, outside strings and comments; offsets and lines are unchanged.
std::string blank_trailing_commas(const std::string& text);

// The text as strict JSON (with comments) where json-c reads it otherwise: single-quoted strings
// double-quoted (a '"' inside escaped), true/false/null lower-cased, trailing commas blanked.
// Lines are unchanged; columns after an escaped '"' move by one.
std::string json_c_text(const std::string& text);

}  // namespace schedlab::workload::json
