// SPDX-License-Identifier: Apache-2.0
// Precision inference of `parity explain`: rounding to each candidate format (hand-computed bit
// patterns), the grid test, the agreement check, and replay variants on a linear layer whose
// reduced-precision output is computed here in float32 from rounded operands.
#include "explain/precision.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <random>

#include "compare/tolerance.h"

namespace parity {
namespace {

TEST(Precision, RoundsToEachFormatWithTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 on the tf32/fp16 grid: ties go to even (1).
  EXPECT_EQ(RoundTo(1.0 + std::ldexp(1, -11), Precision::kTf32), 1.0);
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -11), Precision::kTf32), 1.0 + std::ldexp(1, -9));
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -11), Precision::kTf32, Rounding::kTowardZero),
            1.0 + std::ldexp(1, -10));
  EXPECT_EQ(RoundTo(1.0 + std::ldexp(1, -8), Precision::kBFloat16), 1.0);
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -8), Precision::kBFloat16), 1.0 + std::ldexp(1, -6));
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -11), Precision::kFloat16), 1.0 + std::ldexp(1, -9));
  // tf32 and bf16 keep float32's range; fp16 overflows past 65504 and has subnormals.
  EXPECT_EQ(RoundTo(std::ldexp(1.0, 100) * (1.0 + std::ldexp(1, -9)), Precision::kBFloat16),
            std::ldexp(1.0, 100));
  EXPECT_TRUE(std::isinf(RoundTo(65520.0, Precision::kFloat16)));
  EXPECT_EQ(RoundTo(65504.0, Precision::kFloat16), 65504.0);
  EXPECT_EQ(RoundTo(std::ldexp(3.0, -25), Precision::kFloat16), std::ldexp(1.0, -23));
  EXPECT_EQ(RoundTo(1e-8, Precision::kFloat16), 0.0);
  EXPECT_TRUE(std::isnan(RoundTo(NAN, Precision::kTf32)));
}

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t Bits(double x) { return std::bit_cast<uint32_t>(static_cast<float>(x)); }

// A float32 bit pattern and what it rounds to in each mode (to nearest even, ties away from
// zero, toward zero), by hand and checked with exact rational arithmetic in Python: tf32 keeps
// the top 10 of float32's 23 significand bits, so its ties end in 0x1000; bf16's in 0x8000.
struct RoundingCase {
  uint32_t in, even, away, zero;
};

void ExpectModes(Precision p, const RoundingCase& c) {
  const double x = FromBits(c.in);
  SCOPED_TRACE(fmt::format("{} {:08x}", PrecisionName(p), c.in));
  EXPECT_EQ(Bits(RoundTo(x, p, Rounding::kNearestEven)), c.even);
  EXPECT_EQ(Bits(RoundTo(x, p, Rounding::kNearestAway)), c.away);
  EXPECT_EQ(Bits(RoundTo(x, p, Rounding::kTowardZero)), c.zero);
}

TEST(Precision, RoundsTf32AndBf16InEachModeAtAndAroundTies) {
  const RoundingCase tf32[] = {
      {0x3f801000, 0x3f800000, 0x3f802000, 0x3f800000},  // 1 + 2^-11: a tie, kept bits even
      {0x3f803000, 0x3f804000, 0x3f804000, 0x3f802000},  // 1 + 3·2^-11: a tie, kept bits odd
      {0xbf801000, 0xbf800000, 0xbf802000, 0xbf800000},  // negative: away from zero is down
      {0x3f800fff, 0x3f800000, 0x3f800000, 0x3f800000},  // just below a tie
      {0x3f801001, 0x3f802000, 0x3f802000, 0x3f800000},  // just above a tie
      {0x3ffff000, 0x40000000, 0x40000000, 0x3fffe000},  // a tie carrying into the exponent
      {0x7f7ff000, 0x7f800000, 0x7f800000, 0x7f7fe000},  // the largest tie: Inf, or truncated
      {0x7f7fffff, 0x7f800000, 0x7f800000, 0x7f7fe000},  // float32's largest
      {0x00001000, 0x00000000, 0x00002000, 0x00000000},  // a subnormal tie
      {0x00003000, 0x00004000, 0x00004000, 0x00002000},
  };
  for (const RoundingCase& c : tf32) ExpectModes(Precision::kTf32, c);
  const RoundingCase bf16[] = {
      {0x3f808000, 0x3f800000, 0x3f810000, 0x3f800000},
      {0xc0418000, 0xc0420000, 0xc0420000, 0xc0410000},
  };
  for (const RoundingCase& c : bf16) ExpectModes(Precision::kBFloat16, c);
  for (Rounding r : {Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero}) {
    EXPECT_TRUE(std::isnan(RoundTo(NAN, Precision::kTf32, r)));
    EXPECT_EQ(RoundTo(-INFINITY, Precision::kBFloat16, r), -INFINITY);
    EXPECT_EQ(RoundTo(-0.0, Precision::kFloat16, r), 0.0);
  }
}

TEST(Precision, RoundsFp16InEachMode) {
  struct Case {
    double in, even, away, zero;
  };
  const Case cases[] = {
      {0x1.002p+0, 0x1p+0, 0x1.004p+0, 0x1p+0},  // 1 + 2^-11
      {-0x1.006p+0, -0x1.008p+0, -0x1.008p+0, -0x1.004p+0},
      {0x1.4p-23, 0x1p-23, 0x1.8p-23, 0x1p-23},  // 2.5 subnormal units of 2^-24
      {65519.0, 65504.0, 65504.0, 65504.0},
      {65520.0, INFINITY, INFINITY, 65504.0},  // toward zero never overflows
      {-1e6, -INFINITY, -INFINITY, -65504.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{}", c.in));
    EXPECT_EQ(RoundTo(c.in, Precision::kFloat16, Rounding::kNearestEven), c.even);
    EXPECT_EQ(RoundTo(c.in, Precision::kFloat16, Rounding::kNearestAway), c.away);
    EXPECT_EQ(RoundTo(c.in, Precision::kFloat16, Rounding::kTowardZero), c.zero);
  }
}

// Over many float32 patterns, the three modes against a reference written another way: the
// value as a count of tf32 units (exact in double), rounded by the C library's functions.
TEST(Precision, Tf32ModesAgreeWithIntegerRoundingOfUnits) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<uint32_t> pattern(0, 0x7f7fffff);
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = pattern(gen);
    if (i % 4 == 0) bits = (bits & ~uint32_t{0x1fff}) | 0x1000;  // a tie
    if (i % 2 == 1) bits |= 0x80000000u;
    const double x = FromBits(bits);
    const double unit = UlpOf(x, Precision::kTf32);
    const double units = x / unit;
    auto limit = [](double y) { return std::fabs(y) > FLT_MAX ? std::copysign(INFINITY, y) : y; };
    ASSERT_EQ(RoundTo(x, Precision::kTf32, Rounding::kNearestEven),
              limit(std::nearbyint(units) * unit))
        << std::hex << bits;
    ASSERT_EQ(RoundTo(x, Precision::kTf32, Rounding::kNearestAway), limit(std::round(units) * unit))
        << std::hex << bits;
    ASSERT_EQ(RoundTo(x, Precision::kTf32, Rounding::kTowardZero), std::trunc(units) * unit)
        << std::hex << bits;
  }
}

TEST(Precision, UlpFollowsTheFormat) {
  EXPECT_EQ(UlpOf(1.0, Precision::kFloat16), std::ldexp(1, -10));
  EXPECT_EQ(UlpOf(1.0, Precision::kTf32), std::ldexp(1, -10));
  EXPECT_EQ(UlpOf(1.0, Precision::kBFloat16), std::ldexp(1, -7));
  EXPECT_EQ(UlpOf(-3.0, Precision::kBFloat16), std::ldexp(1, -6));
  EXPECT_EQ(UlpOf(1e-6, Precision::kFloat16), std::ldexp(1, -24));  // subnormal spacing
  EXPECT_EQ(UlpOf(0.0, Precision::kFloat16), std::ldexp(1, -24));
  EXPECT_EQ(UlpOf(1e-30, Precision::kBFloat16), std::ldexp(1, -100 - 7));
  EXPECT_EQ(UlpOf(1e-40, Precision::kBFloat16), std::ldexp(1, -126 - 7));  // subnormal
  EXPECT_EQ(PrecisionRoundoff(Precision::kBFloat16), std::ldexp(1, -8));
  EXPECT_EQ(PrecisionRoundoff(Precision::kTf32), std::ldexp(1, -11));
}

Array Random(std::vector<int64_t> shape, uint32_t seed, double scale = 1.0) {
  Array a = Array::Filled(std::move(shape));
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (double& x : a.data) x = static_cast<double>(dist(gen)) * scale;
  return a;
}

Array Rounded(Array a, Precision p) {
  for (double& x : a.data) x = RoundTo(x, p);
  return a;
}

TEST(Precision, GridTestNamesTheNarrowestGrid) {
  const Array raw = Random({64}, 1);
  EXPECT_EQ(OutputGrid({raw}), std::nullopt);
  EXPECT_EQ(OutputGrid({Rounded(raw, Precision::kBFloat16)}), Precision::kBFloat16);
  EXPECT_EQ(OutputGrid({Rounded(raw, Precision::kFloat16)}), Precision::kFloat16);
  // tf32 has fp16's significand: within fp16's range its values are fp16's; beyond, none.
  EXPECT_EQ(OutputGrid({Rounded(raw, Precision::kTf32)}), Precision::kFloat16);
  Array large = raw;
  for (double& x : large.data) x *= 1e6;
  EXPECT_EQ(OutputGrid({Rounded(large, Precision::kTf32)}), std::nullopt);
  // Small integers lie on every grid and prove nothing; so do too few values.
  Array ints = Array::Filled({64}, 3.0);
  EXPECT_EQ(OutputGrid({ints}), std::nullopt);
  Array few = Rounded(Random({4}, 2), Precision::kBFloat16);
  EXPECT_EQ(OutputGrid({few}), std::nullopt);
  // NaN and Inf are skipped, not counted against the grid.
  Array with_nan = Rounded(raw, Precision::kBFloat16);
  with_nan.data[3] = NAN;
  with_nan.data[4] = INFINITY;
  EXPECT_EQ(OutputGrid({with_nan}), Precision::kBFloat16);
}

TEST(Precision, AgreementCountsViolationsAndNonfiniteMismatches) {
  Array want = Array::Filled({4}, 1.0);
  Array got = want;
  got.data[0] = 1.0 + 1e-3;
  got.data[1] = 1.0 + 1e-7;
  Agreement a = Agree({got}, {want}, 0.0, 1e-6);
  EXPECT_FALSE(a.all_within);
  EXPECT_EQ(a.violations, 1);
  EXPECT_EQ(a.finite, 4);
  EXPECT_NEAR(a.rel_rmse(), std::sqrt((1e-6 + 1e-14) / 4.0), 1e-12);
  // One fp16 ulp at 1.0 (2^-10 = 9.77e-4) covers 9e-4, not 1e-3.
  EXPECT_FALSE(Agree({got}, {want}, 0.0, 1e-6, Precision::kFloat16).all_within);
  got.data[0] = 1.0 + 9e-4;
  EXPECT_TRUE(Agree({got}, {want}, 0.0, 1e-6, Precision::kFloat16).all_within);
  got.data[2] = NAN;
  a = Agree({got}, {want}, 1.0, 1.0);
  EXPECT_FALSE(a.all_within);
  EXPECT_FALSE(a.nonfinite_match);
  want.data[2] = NAN;
  EXPECT_TRUE(Agree({got}, {want}, 1.0, 1.0).nonfinite_match);
  EXPECT_FALSE(Agree({got}, {}, 1.0, 1.0).all_within);
}

// y = x·Wᵀ + b in float32 from operands rounded to `p` in mode `r` (bias rounded too unless
// tf32), the output rounded to `p` when `round_output`: what a reduced-precision kernel
// returns. Without `p`, float32 from the operands as they are, summed in K blocks of `block`
// last block first (another summation order) when `block` is set.
Array LinearIn(const Array& x, const Array& w, const Array& b, std::optional<Precision> p,
               bool round_output, Rounding rounding = Rounding::kNearestEven, int64_t block = 0) {
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  Array y = Array::Filled({m, n});
  auto r = [&](double v) {
    return p ? static_cast<float>(RoundTo(v, *p, rounding)) : static_cast<float>(v);
  };
  const int64_t step = block > 0 ? block : k;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t start = (k - 1) / step * step; start >= 0; start -= step) {
        float part = 0.0f;
        for (int64_t q = start; q < std::min(k, start + step); ++q) {
          part += r(x.data[i * k + q]) * r(w.data[j * k + q]);
        }
        acc += part;
      }
      const float bias = p && *p != Precision::kTf32 ? r(b.data[j]) : static_cast<float>(b.data[j]);
      double out = static_cast<double>(acc + bias);
      if (round_output) out = RoundTo(out, *p);
      y.data[i * n + j] = out;
    }
  }
  return y;
}

struct LinearCase {
  OpCall call;
  Tolerance tolerance;
};

LinearCase MakeLinear() {
  LinearCase c;
  c.call.op = "linear";
  c.call.inputs.push_back(Random({16, 256}, 3));
  c.call.input_dtypes.push_back(DType::kFloat32);
  c.call.params.emplace_back("weight", Random({32, 256}, 4, 1.0 / 16));
  c.call.params.emplace_back("bias", Random({32}, 5, 0.1));
  // float32's `auto` allowance for K = 256 with a summand scale of ~1.
  c.tolerance.criterion = Criterion::kAbsRel;
  c.tolerance.k = 256;
  c.tolerance.rtol = 6.0 * 16.0 * std::ldexp(1, -24) + 2.0 * std::ldexp(1, -24);
  c.tolerance.atol = 6.0 * 16.0 * std::ldexp(1, -24);
  c.tolerance.scale = 1.0;
  c.tolerance.scale_source = "summands";
  return c;
}

TEST(Precision, Tf32LinearIsReproducedByTheTf32Variant) {
  LinearCase c = MakeLinear();
  const Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                           Precision::kTf32, false);
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 3e-4);
  ASSERT_TRUE(f.precision.has_value());
  EXPECT_EQ(*f.precision, Precision::kTf32);
  ASSERT_TRUE(f.variant.has_value());
  EXPECT_FALSE(f.variant->round_output);
  EXPECT_EQ(f.grid, std::nullopt);
  EXPECT_NE(f.magnitude.find("u = 2^-11"), std::string::npos) << f.magnitude;
}

TEST(Precision, Bf16LinearIsFoundByGridAndVariant) {
  LinearCase c = MakeLinear();
  const Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                           Precision::kBFloat16, true);
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 3e-3);
  EXPECT_EQ(f.grid, Precision::kBFloat16);
  ASSERT_TRUE(f.variant.has_value());
  EXPECT_EQ(f.variant->precision, Precision::kBFloat16);
  EXPECT_TRUE(f.variant->round_inputs && f.variant->round_output);
  EXPECT_EQ(f.variant->Describe(), "bf16-rounded inputs and output (ties to even)");
}

TEST(Precision, Fp16InputsWithoutOutputRounding) {
  LinearCase c = MakeLinear();
  const Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                           Precision::kFloat16, false);
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 3e-4);
  ASSERT_TRUE(f.variant.has_value());
  EXPECT_EQ(f.variant->precision, Precision::kFloat16);
  EXPECT_FALSE(f.variant->round_output);
}

TEST(Precision, AnErrorNoVariantReproducesNamesNoPrecision) {
  LinearCase c = MakeLinear();
  Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                     std::nullopt, false);
  for (std::size_t i = 0; i < y.data.size(); i += 7) y.data[i] *= 1.0 + 1e-3;
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 1e-4);
  EXPECT_EQ(f.precision, std::nullopt);
  EXPECT_EQ(f.variant, std::nullopt);
}

TEST(Precision, Tf32LeavesTheBiasAloneAndOnlyMatmulsGetTf32) {
  OpCall call;
  call.op = "linear";
  call.inputs.push_back(Array::Filled({1, 4}, 0.0));
  call.input_dtypes.push_back(DType::kFloat32);
  call.params.emplace_back("weight", Array::Filled({2, 4}, 1.0));
  call.params.emplace_back("bias", Array::Filled({2}, 1.0 + std::ldexp(1, -12)));
  auto tf32 = ReplayVariant(call, {Precision::kTf32, Rounding::kNearestEven, true, false});
  ASSERT_TRUE(tf32.ok());
  EXPECT_EQ((*tf32)[0].data[0], 1.0 + std::ldexp(1, -12));
  auto bf16 = ReplayVariant(call, {Precision::kBFloat16, Rounding::kNearestEven, true, false});
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ((*bf16)[0].data[0], 1.0);
  for (const Variant& v : CandidateVariants("softmax", Precision::kFloat16)) {
    EXPECT_NE(v.precision, Precision::kTf32);
  }
  const std::vector<Variant> conv = CandidateVariants("conv2d", std::nullopt);
  ASSERT_GE(conv.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(conv[i].precision, Precision::kTf32);
  EXPECT_EQ(conv[0].rounding, Rounding::kNearestEven);
  EXPECT_EQ(conv[1].rounding, Rounding::kNearestAway);
  EXPECT_EQ(conv[2].rounding, Rounding::kTowardZero);
  EXPECT_EQ(conv[1].Describe(), "tf32-rounded inputs (ties away from zero)");
  EXPECT_EQ(conv[2].Describe(), "tf32-truncated inputs (toward zero)");
  for (const Variant& v : conv) {
    EXPECT_FALSE(v.round_output);
    // bf16 and fp16 operands come from the framework's casts, to nearest even.
    if (v.precision != Precision::kTf32) {
      EXPECT_EQ(v.rounding, Rounding::kNearestEven);
    }
  }
}

// Every other element made a tf32 tie (low 13 bits exactly 0x1000), as data with few
// significant bits has them; the others keep their value.
Array WithTies(Array a) {
  for (std::size_t i = 0; i < a.data.size(); i += 2) {
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(a.data[i]));
    a.data[i] = std::bit_cast<float>((bits & ~uint32_t{0x1fff}) | 0x1000);
  }
  return a;
}

// No tf32 ties at all: an element that is one moves up by one float32 ulp.
Array WithoutTies(Array a) {
  for (double& x : a.data) {
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(x));
    if ((bits & 0x1fff) == 0x1000) x = std::bit_cast<float>(bits + 1);
  }
  return a;
}

// The linear case with ties in half of its input: the rounding modes part at each of them.
LinearCase TieRichLinear() {
  LinearCase c = MakeLinear();
  c.call.inputs[0] = WithTies(c.call.inputs[0]);
  return c;
}

Array TieRichOutput(const LinearCase& c, Rounding r) {
  return LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                  Precision::kTf32, false, r);
}

class Tf32Rounding : public testing::TestWithParam<Rounding> {};

TEST_P(Tf32Rounding, IsFoundInTheModeTheOperandsWereRoundedIn) {
  const LinearCase c = TieRichLinear();
  const PrecisionFinding f = InferPrecision(c.call, {TieRichOutput(c, GetParam())}, c.tolerance, 0);
  ASSERT_TRUE(f.variant.has_value()) << RoundingName(GetParam());
  EXPECT_EQ(f.precision, Precision::kTf32);
  EXPECT_EQ(f.variant->precision, Precision::kTf32);
  EXPECT_EQ(f.variant->rounding, GetParam()) << f.variant->Describe();
  EXPECT_TRUE(f.equally_close.empty());
  EXPECT_GE(f.variant_share, kVariantShare);
}

std::string ModeName(const testing::TestParamInfo<Rounding>& info) {
  switch (info.param) {
    case Rounding::kNearestEven:
      return "NearestEven";
    case Rounding::kNearestAway:
      return "NearestAway";
    case Rounding::kTowardZero:
      return "TowardZero";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Precision, Tf32Rounding,
                         testing::Values(Rounding::kNearestEven, Rounding::kNearestAway,
                                         Rounding::kTowardZero),
                         ModeName);

TEST(Precision, TiesDefeatTheOtherNearestMode) {
  // An RNA output against the replay rounded to nearest even: the ties that round the other
  // way put many elements beyond float32's allowance, so that variant does not reproduce it.
  const LinearCase c = TieRichLinear();
  const Array y = TieRichOutput(c, Rounding::kNearestAway);
  auto plain = Replay(c.call);
  auto even = ReplayVariant(c.call, {Precision::kTf32, Rounding::kNearestEven, true, false});
  auto away = ReplayVariant(c.call, {Precision::kTf32, Rounding::kNearestAway, true, false});
  ASSERT_TRUE(plain.ok() && even.ok() && away.ok());
  const double atol = c.tolerance.atol, rtol = c.tolerance.rtol;
  const Agreement base = Agree({y}, *plain, atol, rtol);
  const Agreement by_even = Agree({y}, *even, atol, rtol);
  const Agreement by_away = Agree({y}, *away, atol, rtol);
  EXPECT_LT(by_even.share_within(), 0.5);
  EXPECT_FALSE(Reproduces(by_even, base));
  EXPECT_TRUE(by_away.all_within);
  EXPECT_TRUE(Reproduces(by_away, base));
  EXPECT_FALSE(Reproduces(base, base));
}

TEST(Precision, AFewOutliersDoNotDefeatTheVariant) {
  // Four of 512 elements moved by four times their allowance: not all within, but 99.2% are,
  // and their rms is no match for the rounding error the variant explains.
  const LinearCase c = TieRichLinear();
  Array y = TieRichOutput(c, Rounding::kNearestAway);
  for (std::size_t i : {3u, 100u, 257u, 511u}) {
    y.data[i] += 4.0 * (c.tolerance.atol + c.tolerance.rtol * std::fabs(y.data[i]));
  }
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 0);
  ASSERT_TRUE(f.variant.has_value());
  EXPECT_EQ(f.variant->rounding, Rounding::kNearestAway);
  EXPECT_NEAR(f.variant_share, 508.0 / 512.0, 1e-12);
  // One large outlier carries more than the allowance's rms: no longer reproduced.
  y.data[42] += 1e-2;
  EXPECT_EQ(InferPrecision(c.call, {y}, c.tolerance, 0).variant, std::nullopt);
}

TEST(Precision, ModesTheDataCannotTellApartAreNamed) {
  LinearCase c = MakeLinear();
  c.call.inputs[0] = WithoutTies(c.call.inputs[0]);
  c.call.params[0].second = WithoutTies(c.call.params[0].second);
  const Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                           Precision::kTf32, false, Rounding::kNearestAway);
  const PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 0);
  ASSERT_TRUE(f.variant.has_value());
  // Without ties both nearest modes replay alike: the first in order wins, the other is named.
  EXPECT_EQ(f.variant->rounding, Rounding::kNearestEven);
  ASSERT_EQ(f.equally_close.size(), 1u);
  EXPECT_EQ(f.equally_close[0].rounding, Rounding::kNearestAway);
}

TEST(Precision, AnotherSummationOrderIsNotReducedPrecision) {
  // float32 from the unrounded operands, K in 64-wide blocks summed last block first: accurate
  // on its inputs, so no precision, even on tie-rich data and with a few elements pushed out.
  const LinearCase c = TieRichLinear();
  Array y = LinearIn(c.call.inputs[0], c.call.params[0].second, c.call.params[1].second,
                     std::nullopt, false, Rounding::kNearestEven, 64);
  const Array in_order = LinearIn(c.call.inputs[0], c.call.params[0].second,
                                  c.call.params[1].second, std::nullopt, false);
  EXPECT_NE(y.data, in_order.data);
  PrecisionFinding f = InferPrecision(c.call, {y}, c.tolerance, 0);
  EXPECT_EQ(f.precision, std::nullopt);
  EXPECT_EQ(f.variant, std::nullopt);
  for (std::size_t i : {5u, 300u})
    y.data[i] += 3.0 * c.tolerance.atol + 1e-4 * std::fabs(y.data[i]);
  f = InferPrecision(c.call, {y}, c.tolerance, 0);
  EXPECT_EQ(f.precision, std::nullopt);
  // And a tf32 replay never reproduces such an output: the plain replay is far closer.
  auto plain = Replay(c.call);
  ASSERT_TRUE(plain.ok());
  for (Rounding r : {Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero}) {
    auto v = ReplayVariant(c.call, {Precision::kTf32, r, true, false});
    ASSERT_TRUE(v.ok());
    EXPECT_FALSE(Reproduces(Agree({y}, *v, c.tolerance.atol, c.tolerance.rtol),
                            Agree({y}, *plain, c.tolerance.atol, c.tolerance.rtol)));
  }
}

TEST(Precision, WithinBoundAllowsARareModestExcessOnlyInLargeOutputs) {
  // atol 1, rtol 0: every element's allowance is 1.
  const Array want = Array::Filled({200000}, 0.0);
  Array got = want;
  got.data[7] = 2.0;  // one element at twice its allowance, one in 200,000
  Agreement a = Agree({got}, {want}, 1.0, 0.0);
  EXPECT_FALSE(a.all_within);
  EXPECT_TRUE(a.within_bound());
  got.data[8] = 2.0;
  got.data[9] = 2.0;  // three: more than one in 10^5
  EXPECT_FALSE(Agree({got}, {want}, 1.0, 0.0).within_bound());
  got = want;
  got.data[7] = 10.0;  // one far past: a corrupted element, never within
  EXPECT_FALSE(Agree({got}, {want}, 1.0, 0.0).within_bound());
  const Array small_want = Array::Filled({1000}, 0.0);
  Array small = small_want;
  small.data[3] = 2.0;  // under 10^5 elements every one must be within
  EXPECT_FALSE(Agree({small}, {small_want}, 1.0, 0.0).within_bound());
}

}  // namespace
}  // namespace parity
