// SPDX-License-Identifier: Apache-2.0
// GEMM validation: sampling, inputs, and the bound — an exact product passes, a planted error
// and a TF32 product of float32 inputs fail, a bfloat16-rounded product passes for bfloat16.
#include "bench/gemm_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "core/float_format.h"

namespace parity::bench {
namespace {

struct Problem {
  int64_t n;
  std::vector<double> a, b;
  GemmSample sample;
};

Problem MakeProblem(int64_t n, float (*round)(double) = nullptr) {
  Problem p{n, {}, {}, SampleRowsAndColumns(n, 7)};
  for (int64_t i = 0; i < n * n; ++i) {
    double x = GemmInputValue(7, 1, i), y = GemmInputValue(7, 2, i);
    if (round != nullptr) {
      x = round(x);
      y = round(y);
    }
    p.a.push_back(x);
    p.b.push_back(y);
  }
  return p;
}

float ToFloat(double x) { return static_cast<float>(x); }
float Tf32(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits &= ~uint32_t{0x1FFF};
  std::memcpy(&f, &bits, 4);
  return f;
}

// Sampled C entries computed with `op`: each dot product of row i and column j, summed in
// T over inputs transformed by `in`.
template <typename T>
std::vector<double> Product(const Problem& p, float (*in)(double) = nullptr) {
  std::vector<double> c;
  for (int64_t i : p.sample.rows) {
    for (int64_t j : p.sample.columns) {
      T sum = 0;
      for (int64_t k = 0; k < p.n; ++k) {
        T x = static_cast<T>(p.a[i * p.n + k]), y = static_cast<T>(p.b[k * p.n + j]);
        if (in != nullptr) {
          x = in(x);
          y = in(y);
        }
        sum += x * y;
      }
      c.push_back(static_cast<double>(sum));
    }
  }
  return c;
}

TEST(GemmCheck, SamplesSixteenDistinctRowsAndColumnsWithTheEnds) {
  const GemmSample s = SampleRowsAndColumns(2048, 42);
  for (const auto* v : {&s.rows, &s.columns}) {
    ASSERT_EQ(v->size(), 16u);
    EXPECT_EQ(v->front(), 0);
    EXPECT_EQ(v->back(), 2047);
    EXPECT_EQ(std::set<int64_t>(v->begin(), v->end()).size(), 16u);
    EXPECT_TRUE(std::is_sorted(v->begin(), v->end()));
  }
  EXPECT_NE(s.rows, SampleRowsAndColumns(2048, 43).rows);  // the seed spreads them
  const GemmSample small = SampleRowsAndColumns(5, 42);
  EXPECT_EQ(small.rows, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(GemmCheck, InputsAreUniformInMinusOneToOneAndReproducible) {
  double lo = 1, hi = -1, sum = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const double x = GemmInputValue(42, 1, i);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);
  EXPECT_GT(hi, 0.999);
  EXPECT_NEAR(sum / 100000, 0.0, 0.01);
  EXPECT_EQ(GemmInputValue(42, 1, 12345), GemmInputValue(42, 1, 12345));
  EXPECT_NE(GemmInputValue(42, 1, 12345), GemmInputValue(42, 2, 12345));
}

TEST(GemmCheck, Float32ProductPassesAndPlantedErrorFails) {
  const Problem p = MakeProblem(300, ToFloat);
  std::vector<double> c = Product<float>(p);
  GemmCheck check = CheckGemmSample(DType::kFloat32, GemmMath::kNative, p.n, p.a, p.b, p.sample, c);
  EXPECT_TRUE(check.ok()) << check.Summary();
  EXPECT_EQ(check.checked, 256);
  EXPECT_GT(check.max_error_over_bound, 0.0);
  EXPECT_LT(check.max_error_over_bound, 1.0);

  c[37] += 1e-3 * (std::abs(c[37]) + 1.0);
  check = CheckGemmSample(DType::kFloat32, GemmMath::kNative, p.n, p.a, p.b, p.sample, c);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.failures, 1);
  EXPECT_EQ(check.bad_row, p.sample.rows[37 / 16]);
  EXPECT_EQ(check.bad_column, p.sample.columns[37 % 16]);
  EXPECT_NE(check.Summary().find("1 of 256 sampled entries"), std::string::npos);
  EXPECT_EQ(check.ToJson()["failures"], 1);

  c[37] = std::nan("");
  EXPECT_FALSE(
      CheckGemmSample(DType::kFloat32, GemmMath::kNative, p.n, p.a, p.b, p.sample, c).ok());
}

TEST(GemmCheck, Tf32ProductFailsTheFloat32Bound) {
  // A fast wrong answer: tensor cores in TF32 mode keep 10 fraction bits of each input.
  const Problem p = MakeProblem(512, ToFloat);
  const std::vector<double> c = Product<float>(p, Tf32);
  const GemmCheck check =
      CheckGemmSample(DType::kFloat32, GemmMath::kNative, p.n, p.a, p.b, p.sample, c);
  EXPECT_FALSE(check.ok());
  EXPECT_GT(check.failures, 128);  // most sampled entries
}

TEST(GemmCheck, Float64AndBfloat16) {
  const Problem p = MakeProblem(200);
  EXPECT_TRUE(CheckGemmSample(DType::kFloat64, GemmMath::kNative, p.n, p.a, p.b, p.sample,
                              Product<double>(p))
                  .ok());
  // A float32 product is far outside float64's bound.
  EXPECT_FALSE(CheckGemmSample(DType::kFloat64, GemmMath::kNative, p.n, p.a, p.b, p.sample,
                               Product<float>(p))
                   .ok());

  // bfloat16 inputs, float32 accumulation, output rounded to bfloat16: passes; an output
  // one bfloat16 ulp off in a large entry fails (storage bound 2·2^-8).
  const Problem q = MakeProblem(256, [](double x) { return BFloat16ToFloat(DoubleToBFloat16(x)); });
  std::vector<double> c = Product<float>(q);
  for (double& v : c) v = BFloat16ToFloat(DoubleToBFloat16(v));
  const GemmCheck ok =
      CheckGemmSample(DType::kBFloat16, GemmMath::kNative, q.n, q.a, q.b, q.sample, c);
  EXPECT_TRUE(ok.ok()) << ok.Summary();
  EXPECT_DOUBLE_EQ(ok.u_storage, std::ldexp(1.0, -8));
  EXPECT_DOUBLE_EQ(ok.u_compute, std::ldexp(1.0, -24));
  std::size_t largest = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (std::abs(c[i]) > std::abs(c[largest])) largest = i;
  }
  c[largest] *= 1.0 + 4 * std::ldexp(1.0, -8);
  EXPECT_FALSE(
      CheckGemmSample(DType::kBFloat16, GemmMath::kNative, q.n, q.a, q.b, q.sample, c).ok());
}

TEST(GemmCheck, Tf32ProductPassesTheTf32BoundAndItsLabelSaysTf32) {
  const Problem p = MakeProblem(512, ToFloat);
  const std::vector<double> c = Product<float>(p, Tf32);
  const GemmCheck check =
      CheckGemmSample(DType::kFloat32, GemmMath::kTf32, p.n, p.a, p.b, p.sample, c);
  EXPECT_TRUE(check.ok()) << check.Summary();
  EXPECT_EQ(check.dtype, "tf32");
  EXPECT_DOUBLE_EQ(check.u_compute, std::ldexp(1.0, -11));
  EXPECT_EQ(GemmLabel(DType::kFloat32, GemmMath::kTf32), "tf32");
  EXPECT_EQ(GemmLabel(DType::kFloat16, GemmMath::kNative), "float16");
  // The bound is λ·√K·2^-11·‖a_i∘b_j‖₂, about 0.5 here (entries are about 7.5): an error of 2
  // in one entry is outside it.
  std::vector<double> wrong = c;
  wrong[100] += 2.0;
  EXPECT_FALSE(
      CheckGemmSample(DType::kFloat32, GemmMath::kTf32, p.n, p.a, p.b, p.sample, wrong).ok());
}

TEST(GemmCheck, Float16OutputsPassAndBfloat16AccuracyFails) {
  const Problem q = MakeProblem(256, [](double x) { return HalfToFloat(DoubleToHalf(x)); });
  std::vector<double> c = Product<float>(q);
  std::vector<double> as_bf16 = c;
  for (double& v : c) v = HalfToFloat(DoubleToHalf(v));
  const GemmCheck ok =
      CheckGemmSample(DType::kFloat16, GemmMath::kNative, q.n, q.a, q.b, q.sample, c);
  EXPECT_TRUE(ok.ok()) << ok.Summary();
  EXPECT_DOUBLE_EQ(ok.u_storage, std::ldexp(1.0, -11));
  // Outputs rounded to bfloat16's 8 bits instead of float16's 11: outside the float16 bound.
  for (double& v : as_bf16) v = BFloat16ToFloat(DoubleToBFloat16(v));
  EXPECT_FALSE(
      CheckGemmSample(DType::kFloat16, GemmMath::kNative, q.n, q.a, q.b, q.sample, as_bf16).ok());
}

}  // namespace
}  // namespace parity::bench
