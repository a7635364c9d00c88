// SPDX-License-Identifier: Apache-2.0
// Precision inference of `parity explain`: rounding to each candidate format (hand-computed bit
// patterns), the grid test, the agreement check, and replay variants on a linear layer whose
// reduced-precision output is computed here in float32 from rounded operands.
#include "explain/precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compare/tolerance.h"

namespace parity {
namespace {

TEST(Precision, RoundsToEachFormatWithTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 on the tf32/fp16 grid: ties go to even (1).
  EXPECT_EQ(RoundTo(1.0 + std::ldexp(1, -11), Precision::kTf32), 1.0);
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -11), Precision::kTf32), 1.0 + std::ldexp(1, -9));
  EXPECT_EQ(RoundTo(1.0 + 3 * std::ldexp(1, -11), Precision::kTf32, /*truncate=*/true),
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

// y = x·Wᵀ + b in float32 from operands rounded to `p` (bias rounded too unless tf32), the
// output rounded to `p` when `round_output`: what a reduced-precision kernel returns.
Array LinearIn(const Array& x, const Array& w, const Array& b, std::optional<Precision> p,
               bool round_output) {
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  Array y = Array::Filled({m, n});
  auto r = [&](double v) { return p ? static_cast<float>(RoundTo(v, *p)) : static_cast<float>(v); };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t q = 0; q < k; ++q) acc += r(x.data[i * k + q]) * r(w.data[j * k + q]);
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
  EXPECT_EQ(f.variant->Describe(), "bf16-rounded inputs and output");
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
  auto tf32 = ReplayVariant(call, {Precision::kTf32, false, true, false});
  ASSERT_TRUE(tf32.ok());
  EXPECT_EQ((*tf32)[0].data[0], 1.0 + std::ldexp(1, -12));
  auto bf16 = ReplayVariant(call, {Precision::kBFloat16, false, true, false});
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ((*bf16)[0].data[0], 1.0);
  for (const Variant& v : CandidateVariants("softmax", Precision::kFloat16)) {
    EXPECT_NE(v.precision, Precision::kTf32);
  }
  const std::vector<Variant> conv = CandidateVariants("conv2d", std::nullopt);
  EXPECT_EQ(conv.front().precision, Precision::kTf32);
  for (const Variant& v : conv) EXPECT_FALSE(v.round_output);
}

}  // namespace
}  // namespace parity
