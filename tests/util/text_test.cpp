// util/text.hpp: the one trim(), CPU-list parser and CSV quoting the layers share.
#include <gtest/gtest.h>

#include "util/text.hpp"

using namespace schedlab::util;

TEST(Text, Trim) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\v\f x"), "x");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim(""), "");
}

TEST(Text, CpuList) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(" 3, 1-2 ,1\n"), (std::vector<int>{1, 2, 3}));  // sorted, once each
  EXPECT_TRUE(parse_cpu_list("").empty());
  for (const char* bad : {"1,", ",1", "a", "1-", "-1", "1--2", "1 2", "99999999999"})
    EXPECT_THROW(parse_cpu_list(bad), std::invalid_argument) << bad;
  try {
    parse_cpu_list("0,5-3");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bad CPU range '5-3'");
  }
}

TEST(Text, CsvField) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("line\r"), "\"line\r\"");  // CR quoted as LF is (RFC 4180)
}
