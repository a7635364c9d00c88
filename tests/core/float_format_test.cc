// SPDX-License-Identifier: Apache-2.0
// Conversions to and from the narrow float formats: exhaustive properties over every bit
// pattern, and numpy / exact-rational references (tests/gen/gen_testdata.py).
#include "core/float_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "testdata.h"

namespace parity {
namespace {

struct NamedFormat {
  const char* name;
  const FloatFormat* format;
};

const NamedFormat kFormats[] = {
    {"float16", &kFloat16Format},
    {"bfloat16", &kBFloat16Format},
    {"float8_e4m3fn", &kFloat8E4M3FNFormat},
    {"float8_e5m2", &kFloat8E5M2Format},
};

int Width(const FloatFormat& f) { return 1 + f.exponent_bits + f.mantissa_bits; }

uint32_t SignBit(const FloatFormat& f) { return 1u << (f.exponent_bits + f.mantissa_bits); }

class EveryPattern : public ::testing::TestWithParam<NamedFormat> {};

TEST_P(EveryPattern, DecodeThenEncodeIsIdentityForNonNan) {
  const FloatFormat& f = *GetParam().format;
  for (uint32_t bits = 0; bits < (1u << Width(f)); ++bits) {
    const double value = DecodeFloat(bits, f);
    if (std::isnan(value)) continue;
    ASSERT_EQ(EncodeFloat(value, f), bits) << GetParam().name << " pattern " << bits;
  }
}

TEST_P(EveryPattern, MidpointsRoundToEvenAndNeighboursToNearest) {
  const FloatFormat& f = *GetParam().format;
  const uint32_t max_code = EncodeFloat(MaxFinite(f), f);
  for (uint32_t code = 0; code < max_code; ++code) {
    const double lo = DecodeFloat(code, f);
    const double hi = DecodeFloat(code + 1, f);
    const double mid = (lo + hi) / 2;  // exact in float64 for these formats
    const uint32_t even = (code % 2 == 0) ? code : code + 1;
    for (uint32_t sign : {0u, SignBit(f)}) {
      const double s = sign ? -1.0 : 1.0;
      ASSERT_EQ(EncodeFloat(s * mid, f), sign | even) << GetParam().name << " code " << code;
      ASSERT_EQ(EncodeFloat(s * std::nextafter(mid, hi), f), sign | (code + 1));
      ASSERT_EQ(EncodeFloat(s * std::nextafter(mid, lo), f), sign | code);
    }
  }
}

TEST_P(EveryPattern, OverflowFollowsTheChosenMode) {
  const FloatFormat& f = *GetParam().format;
  const double max = MaxFinite(f);
  const uint32_t max_code = EncodeFloat(max, f);
  const double ulp = max - DecodeFloat(max_code - 1, f);
  const double beyond = max + ulp;  // the first value past max with an unbounded exponent
  const bool ieee = f.specials == FloatFormat::Specials::kIeee;
  for (double x : {beyond, beyond * 4, 1e300, std::numeric_limits<double>::infinity()}) {
    const uint32_t sat = EncodeFloat(x, f, Overflow::kSaturating);
    EXPECT_EQ(sat, max_code) << x;
    EXPECT_EQ(EncodeFloat(-x, f, Overflow::kSaturating), SignBit(f) | max_code);
    const double non_sat = DecodeFloat(EncodeFloat(x, f), f);
    if (ieee) {
      EXPECT_TRUE(std::isinf(non_sat) && non_sat > 0) << GetParam().name << " " << x;
    } else {
      EXPECT_TRUE(std::isnan(non_sat)) << GetParam().name << " " << x;
    }
  }
  // Just below the rounding boundary stays finite.
  EXPECT_EQ(EncodeFloat(std::nextafter(max + ulp / 2, 0.0), f), max_code);
}

TEST_P(EveryPattern, NanKeepsSignAndComesOutQuiet) {
  const FloatFormat& f = *GetParam().format;
  for (double s : {1.0, -1.0}) {
    const double nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), s);
    const uint32_t bits = EncodeFloat(nan, f);
    EXPECT_TRUE(std::isnan(DecodeFloat(bits, f)));
    EXPECT_EQ((bits & SignBit(f)) != 0, s < 0);
    if (f.specials == FloatFormat::Specials::kIeee) {
      EXPECT_NE(bits & (1u << (f.mantissa_bits - 1)), 0u) << "quiet bit";
    } else {
      EXPECT_EQ(bits & ~SignBit(f), SignBit(f) - 1) << "e4m3fn's only NaN";
    }
  }
  // A signalling float32 NaN comes out quiet too.
  const float snan = std::bit_cast<float>(0x7f800001u);
  const uint32_t bits = EncodeFloat(snan, f);
  EXPECT_TRUE(std::isnan(DecodeFloat(bits, f)));
}

TEST_P(EveryPattern, UnderflowKeepsSignedZero) {
  const FloatFormat& f = *GetParam().format;
  EXPECT_EQ(EncodeFloat(1e-300, f), 0u);
  EXPECT_EQ(EncodeFloat(-1e-300, f), SignBit(f));
  EXPECT_EQ(EncodeFloat(-0.0, f), SignBit(f));
  const double smallest = DecodeFloat(1, f);
  EXPECT_EQ(EncodeFloat(smallest / 2, f), 0u) << "tie between 0 and the smallest: to even";
  EXPECT_EQ(EncodeFloat(std::nextafter(smallest / 2, 1.0), f), 1u);
}

INSTANTIATE_TEST_SUITE_P(Formats, EveryPattern, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FloatFormat, KnownValues) {
  EXPECT_EQ(MaxFinite(kFloat16Format), 65504.0);
  EXPECT_EQ(MaxFinite(kBFloat16Format), 0x1.fep127);
  EXPECT_EQ(MaxFinite(kFloat8E4M3FNFormat), 448.0);
  EXPECT_EQ(MaxFinite(kFloat8E5M2Format), 57344.0);
  EXPECT_EQ(DecodeFloat(1, kFloat16Format), 0x1p-24);
  EXPECT_EQ(DecodeFloat(1, kFloat8E4M3FNFormat), 0x1p-9);
  EXPECT_EQ(DecodeFloat(1, kFloat8E5M2Format), 0x1p-16);
  EXPECT_EQ(EncodeFloat(1.0, kFloat16Format), 0x3c00u);
  EXPECT_EQ(EncodeFloat(1.0, kBFloat16Format), 0x3f80u);
  EXPECT_EQ(EncodeFloat(1.0, kFloat8E4M3FNFormat), 0x38u);
  EXPECT_EQ(EncodeFloat(1.0, kFloat8E5M2Format), 0x3cu);
  // 464 is the tie between 448 and 480 (e4m3fn's NaN pattern): to even, so 448; PyTorch's
  // rule (>= 480 becomes NaN) agrees.
  EXPECT_EQ(EncodeFloat(464.0, kFloat8E4M3FNFormat), 0x7eu);
  EXPECT_TRUE(
      std::isnan(DecodeFloat(EncodeFloat(480.0, kFloat8E4M3FNFormat), kFloat8E4M3FNFormat)));
}

TEST(FloatFormat, Float64RoundsOnceNotTwice) {
  // Through float32 this value would first round to the tie 1 + 2^-11 and then to even (1.0);
  // rounded directly it is above the tie and goes up.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(DoubleToHalf(x), 0x3c01u);
  EXPECT_EQ(FloatToHalf(static_cast<float>(x)), 0x3c00u);
}

TEST(FloatFormat, HalfDecodeMatchesNumpyForAllPatterns) {
  const Tensor reference = testing::LoadNpy("dtype/float16_all_to_float32.npy");
  const auto expected = reference.as<float>();
  ASSERT_EQ(expected.size(), 65536u);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float got = HalfToFloat(static_cast<uint16_t>(bits));
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected[bits])) << bits;
    const double generic = DecodeFloat(bits, kFloat16Format);
    if (!std::isnan(generic)) {
      ASSERT_EQ(static_cast<double>(got), generic) << bits;
    }
  }
}

TEST(FloatFormat, BFloat16DecodeIsTheTopHalfOfFloat32) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const double generic = DecodeFloat(bits, kBFloat16Format);
    const float fast = BFloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(generic)) {
      ASSERT_TRUE(std::isnan(fast));
    } else {
      ASSERT_EQ(static_cast<double>(fast), generic) << bits;
    }
  }
}

TEST(FloatFormat, Float8DecodeMatchesExactReference) {
  for (const char* name : {"float8_e4m3fn", "float8_e5m2"}) {
    const Tensor reference = testing::LoadNpy(std::string("dtype/") + name + "_all_to_f64.npy");
    const auto expected = reference.as<double>();
    ASSERT_EQ(expected.size(), 256u);
    const bool e4m3 = std::string(name) == "float8_e4m3fn";
    for (uint32_t bits = 0; bits < 256; ++bits) {
      const auto b = static_cast<uint8_t>(bits);
      const double got = e4m3 ? Float8E4M3FNToFloat(b) : Float8E5M2ToFloat(b);
      if (std::isnan(expected[bits])) {
        ASSERT_TRUE(std::isnan(got)) << name << " " << bits;
      } else {
        ASSERT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(expected[bits]))
            << name << " " << bits;
      }
    }
  }
}

TEST(FloatFormat, HalfEncodeMatchesNumpy) {
  const Tensor inputs = testing::LoadNpy("dtype/encode_inputs_f64.npy");
  const Tensor from64 = testing::LoadNpy("dtype/f64_to_float16_numpy.npy");
  const Tensor inputs32 = testing::LoadNpy("dtype/f32_inputs.npy");
  const Tensor from32 = testing::LoadNpy("dtype/f32_to_float16_numpy.npy");
  const auto x = inputs.as<double>();
  const auto x32 = inputs32.as<float>();
  ASSERT_GT(x.size(), 100000u);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(DoubleToHalf(x[i]), from64.as<uint16_t>()[i]) << "x = " << x[i];
    ASSERT_EQ(FloatToHalf(x32[i]), from32.as<uint16_t>()[i]) << "x = " << x32[i];
  }
}

TEST(FloatFormat, NarrowEncodeMatchesExactReference) {
  const Tensor inputs = testing::LoadNpy("dtype/encode_inputs_f64.npy");
  const auto x = inputs.as<double>();
  struct Case {
    const char* file;
    const FloatFormat* format;
    Overflow overflow;
  };
  const Case cases[] = {
      {"dtype/f64_to_bfloat16_nonsat.npy", &kBFloat16Format, Overflow::kNonSaturating},
      {"dtype/f64_to_float8_e4m3fn_nonsat.npy", &kFloat8E4M3FNFormat, Overflow::kNonSaturating},
      {"dtype/f64_to_float8_e4m3fn_sat.npy", &kFloat8E4M3FNFormat, Overflow::kSaturating},
      {"dtype/f64_to_float8_e5m2_nonsat.npy", &kFloat8E5M2Format, Overflow::kNonSaturating},
      {"dtype/f64_to_float8_e5m2_sat.npy", &kFloat8E5M2Format, Overflow::kSaturating},
  };
  for (const Case& c : cases) {
    const Tensor expected = testing::LoadNpy(c.file);
    const auto bits = expected.as<uint32_t>();
    ASSERT_EQ(bits.size(), x.size()) << c.file;
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(EncodeFloat(x[i], *c.format, c.overflow), bits[i]) << c.file << " x = " << x[i];
    }
  }
}

// float32 patterns spread over the whole range, plus every pattern near a rounding boundary of
// the 16- and 19-bit formats.
std::vector<uint32_t> Float32Sample() {
  std::vector<uint32_t> sample;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    sample.push_back(static_cast<uint32_t>(bits));
  }
  for (uint32_t hi = 0; hi < 65536; hi += 7) {
    for (uint32_t lo : {0x0000u, 0x0fffu, 0x1000u, 0x1001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      sample.push_back(hi << 16 | lo);
    }
  }
  return sample;
}

TEST(FloatFormat, FastFloat32PathsMatchTheGenericEncoder) {
  for (uint32_t bits : Float32Sample()) {
    const float x = std::bit_cast<float>(bits);
    const uint16_t bf = FloatToBFloat16(x);
    ASSERT_EQ(bf, EncodeFloat(x, kBFloat16Format)) << std::hex << bits;
    const float tf32 = RoundToTf32(x);
    const double generic = DecodeFloat(EncodeFloat(x, kTf32Format), kTf32Format);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(tf32));
      ASSERT_TRUE(std::isnan(RoundToBFloat16(x)));
      ASSERT_TRUE(std::isnan(RoundToFloat16(x)));
    } else {
      ASSERT_EQ(static_cast<double>(tf32), generic) << std::hex << bits;
      ASSERT_EQ(static_cast<double>(RoundToBFloat16(x)), DecodeFloat(bf, kBFloat16Format));
      ASSERT_EQ(static_cast<double>(RoundToFloat16(x)),
                DecodeFloat(EncodeFloat(x, kFloat16Format), kFloat16Format));
    }
  }
}

TEST(FloatFormat, RoundToPrecisionKnownValues) {
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10 in both tf32 and float16: to even.
  EXPECT_EQ(RoundToTf32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(RoundToTf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);
  EXPECT_EQ(RoundToFloat16(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(RoundToBFloat16(1.0f + 0x1p-8f), 1.0f);
  EXPECT_EQ(RoundToBFloat16(1.0f + 0x1p-8f + 0x1p-9f), 1.0f + 0x1p-7f);
  // tf32 and bfloat16 keep float32's range; float16 does not.
  EXPECT_EQ(RoundToTf32(1e38f), 0x1.2dp126f);  // 1e38 = 1.17549p126: 179.7 ulps, up
  EXPECT_TRUE(std::isinf(RoundToFloat16(70000.0f)));
  EXPECT_EQ(RoundToFloat16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToFloat16(65520.0f)));
  EXPECT_TRUE(std::isinf(RoundToTf32(std::numeric_limits<float>::max())));
  EXPECT_EQ(RoundToFloat16(1e-8f), 0.0f);
  EXPECT_EQ(RoundToFloat16(0x1p-24f), 0x1p-24f);  // smallest float16 subnormal survives
}

}  // namespace
}  // namespace parity
