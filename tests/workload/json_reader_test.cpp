// The ordered JSON reader behind rt-app's use cases.
#include <gtest/gtest.h>

#include "workload/json_reader.hpp"
#include "workload/workload.hpp"

using namespace schedlab::workload;
using json::Value;
using Type = json::Value::Type;

namespace {

std::string error_of(const std::string& text) {
  try {
    json::parse(text, "f.json");
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JsonReader, KeepsRepeatedKeysInOrderWithTheirLines) {
  Value v = json::parse("{\n \"run\": 1,\n \"sleep\": 2,\n \"run\": 3\n}\n", "f.json");
  ASSERT_TRUE(v.is(Type::Object));
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[0].first, "run");
  EXPECT_EQ(v.members[0].second.i, 1);
  EXPECT_EQ(v.members[0].second.line, 2);
  EXPECT_EQ(v.members[1].second.line, 3);
  EXPECT_EQ(v.members[2].first, "run");
  EXPECT_EQ(v.members[2].second.i, 3);
  EXPECT_EQ(v.members[2].second.line, 4);
  EXPECT_EQ(v.count("run"), 2);
  EXPECT_EQ(v.find("run")->i, 1);  // the first one
  EXPECT_EQ(v.find("loop"), nullptr);
}

TEST(JsonReader, LineOfANumberAtTheEndOfALineIsItsOwn) {
  // The lexer reads one character past a number (here the newline); the line stays the key's.
  Value v = json::parse("{\"a\":\n1\n,\"b\": [10,\n20]}", "f.json");
  EXPECT_EQ(v.find("a")->line, 1);
  ASSERT_EQ(v.find("b")->items.size(), 2u);
  EXPECT_EQ(v.find("b")->items[0].line, 3);
  EXPECT_EQ(v.find("b")->items[1].line, 4);
}

TEST(JsonReader, AcceptsCommentsAndTrailingCommasAsJsonC) {
  Value v = json::parse(
      "// rt-app use case\n{ /* global */ \"a\": [1, 2, ], // two\n \"b\": { \"c\": \"x,}\", }, }\n",
      "f.json");
  EXPECT_EQ(v.find("a")->items.size(), 2u);
  EXPECT_EQ(v.find("b")->find("c")->s, "x,}");  // a comma inside a string is left alone
}

TEST(JsonReader, BlankTrailingCommasKeepsOffsets) {
  std::string in = "[1,\n /* c, */ ]";
  std::string out = json::blank_trailing_commas(in);
  EXPECT_EQ(out.size(), in.size());
  EXPECT_EQ(out, "[1 \n /* c, */ ]");
  EXPECT_EQ(json::blank_trailing_commas("{\"a,\": 1}"), "{\"a,\": 1}");
  EXPECT_EQ(json::blank_trailing_commas("{\"a\\\",\": 1,}"), "{\"a\\\",\": 1 }");
}

TEST(JsonReader, TypesAndBigNumbers) {
  Value v = json::parse("[true, null, 1.5, -3, \"s\", {}, [], 18446744073709551615]", "f.json");
  ASSERT_EQ(v.items.size(), 8u);
  EXPECT_TRUE(v.items[0].is(Type::Bool));
  EXPECT_TRUE(v.items[1].is(Type::Null));
  EXPECT_TRUE(v.items[2].is(Type::Float));
  EXPECT_EQ(v.items[3].i, -3);
  EXPECT_EQ(v.items[4].s, "s");
  EXPECT_TRUE(v.items[5].is(Type::Object));
  EXPECT_TRUE(v.items[6].is(Type::Array));
  EXPECT_TRUE(v.items[7].is(Type::Int));  // beyond int64 (a uint64): saturated, as json-c
  EXPECT_EQ(v.items[7].i, INT64_MAX);
}

TEST(JsonReader, SyntaxErrorsNameFileLineAndColumn) {
  std::string e = error_of("{\n \"a\": 1\n \"b\": 2\n}");
  EXPECT_EQ(e.rfind("f.json:3:", 0), 0u) << e;
  EXPECT_NE(e.find("JSON syntax error"), std::string::npos) << e;
  EXPECT_EQ(error_of("").rfind("f.json:1:", 0), 0u);
  EXPECT_EQ(error_of("{\"a\": 1} x").rfind("f.json:1:", 0), 0u);
  EXPECT_EQ(error_of("{\"a\": NaN}").rfind("f.json:1:", 0), 0u);
  EXPECT_EQ(error_of("{\n\"a\": [1,,2]}").rfind("f.json:2:", 0), 0u);
  EXPECT_EQ(error_of("{\"a\": /* open"), error_of("{\"a\": /* open")) << "deterministic";
  EXPECT_NE(error_of("{\"a\": /* open").find("f.json:1"), std::string::npos);
}

// What json-c's json_tokener_parse() (rt-app's reader, not strict) accepts beyond JSON, and what
// it refuses too: a key without a value.
TEST(JsonReader, AcceptsJsonCsSingleQuotesAndLiteralsInAnyCase) {
  json::Value v = json::parse("{'a': 'it\"s', \"b\": True, 'c': NULL, \"d\": [FALSE, 'x',],}", "f.json");
  ASSERT_EQ(v.members.size(), 4u);
  EXPECT_EQ(v.members[0].first, "a");
  EXPECT_EQ(v.members[0].second.s, "it\"s");
  EXPECT_TRUE(v.find("b")->is(json::Value::Type::Bool) && v.find("b")->b);
  EXPECT_TRUE(v.find("c")->is(json::Value::Type::Null));
  ASSERT_EQ(v.find("d")->items.size(), 2u);
  EXPECT_FALSE(v.find("d")->items[0].b);
  EXPECT_EQ(v.find("d")->items[1].s, "x");
  // Quotes and words inside strings and comments are left as they are.
  json::Value w = json::parse("{\"k\": \"'True'\" /* 'x' */}", "f.json");
  EXPECT_EQ(w.find("k")->s, "'True'");
  EXPECT_NE(error_of("{\"a\"}").find("f.json:1:"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": }").find("f.json:1:"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": Truex}").find("f.json:1:"), std::string::npos);
}

TEST(JsonReader, RefusesDeepNesting) {
  std::string deep(json::kMaxDepth + 1, '[');
  std::string e = error_of(deep + std::string(json::kMaxDepth + 1, ']'));
  EXPECT_NE(e.find("nesting deeper than"), std::string::npos) << e;
  std::string ok(json::kMaxDepth, '[');
  EXPECT_EQ(error_of(ok + std::string(json::kMaxDepth, ']')), "");
}
