// SPDX-License-Identifier: Apache-2.0
// parity serve's query parameters: unknown names, bounds, paging; and its bounded cache.
#include "serve/params.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "serve/context.h"

namespace parity::serve {
namespace {

Params P(std::map<std::string, std::string> values) { return Params(std::move(values)); }

TEST(Params, RefusesUnknownNamesWithASuggestion) {
  Params params = P({{"limt", "5"}});
  const Status s = params.Check({"limit", "offset"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("limt: unknown parameter (did you mean 'limit'?)"), std::string::npos)
      << s.message();
  EXPECT_TRUE(P({{"limit", "5"}}).Check({"limit", "offset"}).ok());
  EXPECT_FALSE(P({{"q", std::string(kMaxParamBytes + 1, 'x')}}).Check({"q"}).ok());
}

TEST(Params, WholeNumbersInRange) {
  Params params = P({{"a", "12"},
                     {"b", "-1"},
                     {"c", "1.5"},
                     {"d", ""},
                     {"e", "9x"},
                     {"f", "99999999999999999999999"}});
  auto a = params.Int("a", 0, 100);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(**a, 12);
  for (const char* bad : {"b", "c", "d", "e", "f"}) {
    auto v = params.Int(bad, 0, 100);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_EQ(v.status().message().rfind(std::string(bad) + ":", 0), 0u);
    }
  }
  auto absent = params.Int("zz", 0, 1);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
}

TEST(Params, FiniteNumbers) {
  Params params = P({{"t", "2.5"}, {"n", "nan"}, {"i", "inf"}, {"big", "1e300"}});
  auto t = params.Number("t", 0, 10);
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(**t, 2.5);
  EXPECT_FALSE(params.Number("n", 0, 10).ok());
  EXPECT_FALSE(params.Number("i", 0, 1e308).ok());
  EXPECT_FALSE(params.Number("big", 0, 10).ok());
}

TEST(ReadPage, DefaultsAndBounds) {
  auto page = ReadPage(Params(), 100, 500);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->offset, 0u);
  EXPECT_EQ(page->limit, 100u);
  auto set = ReadPage(P({{"offset", "40"}, {"limit", "20"}}), 100, 500);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->offset, 40u);
  EXPECT_EQ(set->limit, 20u);
  EXPECT_FALSE(ReadPage(P({{"limit", "501"}}), 100, 500).ok());
  EXPECT_FALSE(ReadPage(P({{"limit", "0"}}), 100, 500).ok());
  EXPECT_FALSE(ReadPage(P({{"offset", "-1"}}), 100, 500).ok());
}

TEST(Cache, EvictsTheLeastRecentlyUsed) {
  Cache<int> cache(2);
  cache.Put("a", std::make_shared<const int>(1));
  cache.Put("b", std::make_shared<const int>(2));
  ASSERT_NE(cache.Get("a"), nullptr);  // a is now the most recent
  cache.Put("c", std::make_shared<const int>(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b"), nullptr);
  ASSERT_NE(cache.Get("a"), nullptr);
  EXPECT_EQ(*cache.Get("c"), 3);
  cache.Put("c", std::make_shared<const int>(4));  // replaced, not duplicated
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*cache.Get("c"), 4);
}

TEST(ErrorAnswer, IsADocument) {
  const Answer a = ErrorAnswer(404, "no run 7");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(a.body["format"], "parity-serve-error");
  EXPECT_EQ(a.body["version"], 1);
  EXPECT_EQ(a.body["error"], "no run 7");
}

}  // namespace
}  // namespace parity::serve
