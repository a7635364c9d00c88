// SPDX-License-Identifier: Apache-2.0
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/convert.h"
#include "core/spellcheck.h"

namespace parity {
namespace {

TEST(DType, NamesRoundTripAndAreTheDesignNames) {
  const char* names[] = {"bool",     "int8",    "int16",   "int32",         "int64",
                         "uint8",    "uint16",  "uint32",  "uint64",        "float16",
                         "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"};
  ASSERT_EQ(AllDTypes().size(), std::size(names));
  for (std::size_t i = 0; i < std::size(names); ++i) {
    EXPECT_EQ(Name(AllDTypes()[i].dtype), names[i]);
    EXPECT_EQ(DTypeFromName(names[i]), AllDTypes()[i].dtype);
  }
  EXPECT_FALSE(DTypeFromName("float128").has_value());
}

TEST(DType, SizesAndUnitRoundoff) {
  EXPECT_EQ(ItemSize(DType::kBFloat16), 2u);
  EXPECT_EQ(ItemSize(DType::kFloat8E5M2), 1u);
  EXPECT_EQ(ItemSize(DType::kUInt64), 8u);
  EXPECT_EQ(UnitRoundoff(DType::kFloat32), std::ldexp(1.0, -24));
  EXPECT_EQ(UnitRoundoff(DType::kFloat16), std::ldexp(1.0, -11));
  EXPECT_EQ(UnitRoundoff(DType::kBFloat16), std::ldexp(1.0, -8));
  EXPECT_EQ(UnitRoundoff(DType::kFloat64), std::ldexp(1.0, -53));
  EXPECT_EQ(UnitRoundoff(DType::kFloat8E4M3FN), 0.0625);
  EXPECT_EQ(UnitRoundoff(DType::kInt32), 0.0);
  EXPECT_TRUE(IsFloat(DType::kFloat8E4M3FN));
  EXPECT_FALSE(IsFloat(DType::kBool));
}

TEST(Convert, EveryDTypeToFloat64) {
  const uint16_t half_one = 0x3c00, bf16_two = 0x4000;
  const uint8_t e4m3_max = 0x7e, e5m2_inf = 0x7c, yes = 7;
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(ElementToFloat64(DType::kFloat16, reinterpret_cast<const std::byte*>(&half_one)), 1.0);
  EXPECT_EQ(ElementToFloat64(DType::kBFloat16, reinterpret_cast<const std::byte*>(&bf16_two)), 2.0);
  EXPECT_EQ(ElementToFloat64(DType::kFloat8E4M3FN, reinterpret_cast<const std::byte*>(&e4m3_max)),
            448.0);
  EXPECT_TRUE(std::isinf(
      ElementToFloat64(DType::kFloat8E5M2, reinterpret_cast<const std::byte*>(&e5m2_inf))));
  EXPECT_EQ(ElementToFloat64(DType::kBool, reinterpret_cast<const std::byte*>(&yes)), 1.0);
  EXPECT_EQ(ElementToFloat64(DType::kInt64, reinterpret_cast<const std::byte*>(&big)),
            static_cast<double>(big));
}

TEST(Spellcheck, EditDistance) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("inspect", "inspect"), 0u);
  EXPECT_EQ(EditDistance("inspct", "inspect"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
}

TEST(Spellcheck, SuggestsOnlyPlausibleTypos) {
  const std::string_view names[] = {"inspect", "compare", "explain", "env"};
  EXPECT_EQ(Suggest("inpsect", names), "inspect");
  EXPECT_EQ(Suggest("comapre", names), "compare");
  EXPECT_EQ(Suggest("insp", names), "inspect");
  EXPECT_EQ(Suggest("evn", names), "env");
  EXPECT_FALSE(Suggest("frobnicate", names).has_value());
  EXPECT_FALSE(Suggest("zz", names).has_value());
}

}  // namespace
}  // namespace parity
