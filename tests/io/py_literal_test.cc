// SPDX-License-Identifier: Apache-2.0
#include "io/py_literal.h"

#include <gtest/gtest.h>

#include <string>

namespace parity {
namespace {

TEST(PyLiteral, ParsesAnNpyHeader) {
  auto v =
      ParsePyLiteral("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }     \n", "x.npy");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->kind, PyValue::Kind::kDict);
  ASSERT_EQ(v->keys.size(), 3u);
  EXPECT_EQ(v->Find("descr")->text, "<f4");
  EXPECT_FALSE(v->Find("fortran_order")->boolean);
  const PyValue* shape = v->Find("shape");
  ASSERT_EQ(shape->kind, PyValue::Kind::kTuple);
  ASSERT_EQ(shape->items.size(), 2u);
  EXPECT_EQ(shape->items[1].integer, 4);
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(PyLiteral, ScalarsAndPython2Longs) {
  auto v = ParsePyLiteral("[True, None, -12, \"a\\'b\", (5L,), ()]", "");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->items.size(), 6u);
  EXPECT_TRUE(v->items[0].boolean);
  EXPECT_EQ(v->items[1].kind, PyValue::Kind::kNone);
  EXPECT_EQ(v->items[2].integer, -12);
  EXPECT_EQ(v->items[3].text, "a'b");
  EXPECT_EQ(v->items[4].items[0].integer, 5);
  EXPECT_TRUE(v->items[5].items.empty());
}

TEST(PyLiteral, IntegerOverflowIsFlaggedNotWrapped) {
  auto v = ParsePyLiteral("(9223372036854775807, 9223372036854775808, -9223372036854775808)", "");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->items[0].integer_overflow);
  EXPECT_EQ(v->items[0].integer, INT64_MAX);
  EXPECT_TRUE(v->items[1].integer_overflow);
  EXPECT_EQ(v->items[1].text, "9223372036854775808");
  EXPECT_FALSE(v->items[2].integer_overflow);
  EXPECT_EQ(v->items[2].integer, INT64_MIN);
}

TEST(PyLiteral, ErrorsNameThePathAndOffset) {
  for (const char* bad : {"{'a': 1", "{1: 2}", "{'a' 1}", "(1, 2", "'abc", "{'a': 1, 'a': 2}",
                          "xyz", "(1 2)", "{'a': 1} trailing", ""}) {
    auto v = ParsePyLiteral(bad, "f.npy");
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(v.status().message().rfind("f.npy: header: ", 0), 0u) << v.status().message();
    EXPECT_NE(v.status().message().find("offset"), std::string::npos);
  }
}

TEST(PyLiteral, NestingIsBounded) {
  std::string deep = std::string(1000, '[') + std::string(1000, ']');
  auto v = ParsePyLiteral(deep, "f.npy");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting too deep"), std::string::npos);
  EXPECT_TRUE(ParsePyLiteral("[[[[[[[[1]]]]]]]]", "").ok());
}

TEST(PyLiteral, NonPrintableBytesAreShownInHex) {
  auto v = ParsePyLiteral(std::string("{'a': \x01}"), "f.npy");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("0x01"), std::string::npos) << v.status().message();
}

}  // namespace
}  // namespace parity
