// SPDX-License-Identifier: Apache-2.0
#include "io/tensor_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/float_format.h"
#include "core/parallel.h"
#include "core/simd.h"
#include "io/npy.h"
#include "io/tensor_file.h"

namespace parity {
namespace {

template <typename T>
Tensor Make(DType dtype, const std::vector<T>& values) {
  auto meta = MakeTensorMeta("", "t", dtype, {static_cast<int64_t>(values.size())});
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor::Owned(*meta, std::move(bytes));
}

TensorStats Stats(const Tensor& t) {
  auto stats = ComputeStats(t);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return stats.ok() ? *stats : TensorStats{};
}

TEST(TensorStats, HandComputedFloat32) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorStats s = Stats(Make<float>(DType::kFloat32, {1, 2, nan, 3, -inf, 4, 0, -0.0f}));
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.finite, 6);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.inf, 1);
  EXPECT_EQ(s.zeros, 2);
  EXPECT_EQ(std::get<double>(*s.min), 0.0);
  EXPECT_EQ(std::get<double>(*s.max), 4.0);
  EXPECT_DOUBLE_EQ(*s.mean, 10.0 / 6.0);
  // population variance of {1,2,3,4,0,0}: mean 5/3, sum of squares 30 -> 30/6 - 25/9
  EXPECT_DOUBLE_EQ(*s.std, std::sqrt(30.0 / 6.0 - 25.0 / 9.0));
}

TEST(TensorStats, NoFiniteElementMeansNoMinMaxMeanStd) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Tensor& t :
       {Make<float>(DType::kFloat32, {}),
        Make<float>(DType::kFloat32, {nan, std::numeric_limits<float>::infinity()})}) {
    const TensorStats s = Stats(t);
    EXPECT_FALSE(s.min.has_value());
    EXPECT_FALSE(s.max.has_value());
    EXPECT_FALSE(s.mean.has_value());
    EXPECT_FALSE(s.std.has_value());
  }
}

TEST(TensorStats, IntegersKeepExactExtremes) {
  const TensorStats s = Stats(Make<int64_t>(DType::kInt64, {std::numeric_limits<int64_t>::min(), 0,
                                                            std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(std::get<int64_t>(*s.min), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(std::get<int64_t>(*s.max), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(s.zeros, 1);
  const TensorStats u = Stats(Make<uint64_t>(DType::kUInt64, {5, ~uint64_t{0}}));
  EXPECT_EQ(std::get<uint64_t>(*u.min), 5u);
  EXPECT_EQ(std::get<uint64_t>(*u.max), ~uint64_t{0});
  const TensorStats b = Stats(Make<uint8_t>(DType::kBool, {1, 0, 0, 1, 1}));
  EXPECT_EQ(std::get<uint64_t>(*b.max), 1u);
  EXPECT_DOUBLE_EQ(*b.mean, 0.6);
}

TEST(TensorStats, NarrowFloatsAreWidenedExactly) {
  const std::vector<uint16_t> half = {FloatToHalf(1.5f), FloatToHalf(-65504.0f), 0x7c00, 0x0001};
  const TensorStats s = Stats(Make<uint16_t>(DType::kFloat16, half));
  EXPECT_EQ(s.inf, 1);
  EXPECT_EQ(std::get<double>(*s.min), -65504.0);
  EXPECT_EQ(std::get<double>(*s.max), 1.5);
  const std::vector<uint8_t> e4m3 = {0x7f, 0xff, 0x7e, 0x01};  // NaN, -NaN, 448, 2^-9
  const TensorStats f8 = Stats(Make<uint8_t>(DType::kFloat8E4M3FN, e4m3));
  EXPECT_EQ(f8.nan, 2);
  EXPECT_EQ(std::get<double>(*f8.max), 448.0);
  EXPECT_EQ(std::get<double>(*f8.min), 0x1p-9);
}

TEST(TensorStats, ResultDoesNotDependOnTheThreadCount) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(3.0f, 2.0f);
  std::vector<float> values(1'000'003);
  for (float& v : values) v = normal(rng);
  values[12345] = std::numeric_limits<float>::quiet_NaN();
  const Tensor t = Make<float>(DType::kFloat32, values);
  SetThreadCount(1);
  const TensorStats one = Stats(t);
  for (int threads : {2, 3, 8}) {
    SetThreadCount(threads);
    const TensorStats many = Stats(t);
    EXPECT_EQ(std::bit_cast<uint64_t>(*many.mean), std::bit_cast<uint64_t>(*one.mean)) << threads;
    EXPECT_EQ(std::bit_cast<uint64_t>(*many.std), std::bit_cast<uint64_t>(*one.std)) << threads;
    EXPECT_EQ(many.nan, 1);
  }
  SetThreadCount(0);
  // And it is accurate: against a float64 two-pass reference.
  double sum = 0;
  for (float v : values) sum += std::isnan(v) ? 0.0 : v;
  const double mean = sum / (values.size() - 1);
  double m2 = 0;
  for (float v : values) m2 += std::isnan(v) ? 0.0 : (v - mean) * (v - mean);
  EXPECT_NEAR(*one.mean, mean, 1e-12);
  EXPECT_NEAR(*one.std, std::sqrt(m2 / (values.size() - 1)), 1e-12);
}

TEST(TensorStats, EveryIsaLevelGivesTheSameResult) {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  std::vector<float> f32(100'003);
  for (float& v : f32) v = normal(rng);
  f32[5] = std::numeric_limits<float>::quiet_NaN();
  f32[6] = -std::numeric_limits<float>::infinity();
  f32[7] = 0.0f;
  std::vector<uint16_t> f16(f32.size());
  std::vector<int32_t> i32(f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) {
    f16[i] = FloatToHalf(f32[i]);
    i32[i] = static_cast<int32_t>(std::isfinite(f32[i]) ? f32[i] * 1000 : 0);
  }
  const Tensor tensors[] = {Make<float>(DType::kFloat32, f32), Make<uint16_t>(DType::kFloat16, f16),
                            Make<int32_t>(DType::kInt32, i32)};
  const Isa widest = ActiveIsa();
  for (const Tensor& t : tensors) {
    SetIsa(Isa::kBaseline);
    const TensorStats base = Stats(t);
    for (Isa isa : {Isa::kV3, Isa::kV4}) {
      if (!IsaSupported(isa)) continue;
      SetIsa(isa);
      const TensorStats s = Stats(t);
      EXPECT_EQ(s.nan, base.nan) << IsaName(isa);
      EXPECT_EQ(s.inf, base.inf) << IsaName(isa);
      EXPECT_EQ(s.zeros, base.zeros) << IsaName(isa);
      EXPECT_EQ(s.finite, base.finite) << IsaName(isa);
      EXPECT_EQ(s.min, base.min) << IsaName(isa);
      EXPECT_EQ(s.max, base.max) << IsaName(isa);
      EXPECT_NEAR(*s.mean, *base.mean, 1e-12 * std::fabs(*base.mean) + 1e-15) << IsaName(isa);
      EXPECT_NEAR(*s.std, *base.std, 1e-12 * *base.std) << IsaName(isa);
    }
  }
  SetIsa(widest);
}

TEST(TensorStats, LargeOffsetDoesNotCancel) {
  // Variance of 1e8 + {0, 1, 2, 3}: a sum-of-squares formula loses it in float64 rounding.
  const TensorStats s = Stats(Make<double>(DType::kFloat64, {1e8, 1e8 + 1, 1e8 + 2, 1e8 + 3}));
  EXPECT_DOUBLE_EQ(*s.std, std::sqrt(1.25));
}

TEST(TensorStats, AFileThatShrinksIsAnErrorNotACrash) {
  const std::string path = ::testing::TempDir() + "/shrinks.npy";
  std::vector<float> values(1 << 18, 1.5f);
  ASSERT_TRUE(WriteNpy(path, Make<float>(DType::kFloat32, values)).ok());
  auto file = OpenTensorFile(path);
  ASSERT_TRUE(file.ok());
  auto tensor = (*file)->Load(0);
  ASSERT_TRUE(tensor.ok());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  auto stats = ComputeStats(*tensor);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find(path), std::string::npos);
  EXPECT_NE(stats.status().message().find("shrank"), std::string::npos);
}

}  // namespace
}  // namespace parity
