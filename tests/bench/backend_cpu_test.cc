// SPDX-License-Identifier: Apache-2.0
// The CPU backend's kernels against plain loops, the Philox fill against parity's model of
// cuRAND's device state, and its refusals.
#include "bench/backend_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/float_format.h"
#include "rng/philox.h"

namespace parity::bench {
namespace {

class CpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_->Open(0).ok()); }
  std::unique_ptr<Backend> backend_ = NewCpuBackend();
};

std::vector<double> Values(std::size_t n, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37 * static_cast<double>(i) + 1);
  return v;
}

TEST_F(CpuBackendTest, StreamKernelsMatchPlainLoops) {
  const std::size_t n = 1001;
  const double s = 0.4;
  for (StreamOp op :
       {StreamOp::kCopy, StreamOp::kMul, StreamOp::kAdd, StreamOp::kTriad, StreamOp::kNstream}) {
    std::vector<double> a = Values(n, 1), b = Values(n, 2), c = Values(n, 3);
    std::vector<double> ea = a, eb = b, ec = c;
    for (std::size_t i = 0; i < n; ++i) {
      switch (op) {
        case StreamOp::kCopy:
          ec[i] = ea[i];
          break;
        case StreamOp::kMul:
          eb[i] = s * ec[i];
          break;
        case StreamOp::kAdd:
          ec[i] = ea[i] + eb[i];
          break;
        case StreamOp::kTriad:
          ea[i] = eb[i] + s * ec[i];
          break;
        case StreamOp::kNstream:
          ea[i] += eb[i] + s * ec[i];
          break;
      }
    }
    ASSERT_TRUE(backend_->Stream(op, DType::kFloat64, a.data(), b.data(), c.data(), n, s).ok());
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(a[i], ea[i], 1e-15 * std::abs(ea[i])) << static_cast<int>(op) << " " << i;
      ASSERT_NEAR(b[i], eb[i], 1e-15 * std::abs(eb[i]));
      ASSERT_NEAR(c[i], ec[i], 1e-15 * std::abs(ec[i]));
    }
    std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end()), fc(c.begin(), c.end());
    ASSERT_TRUE(backend_->Stream(op, DType::kFloat32, fa.data(), fb.data(), fc.data(), n, s).ok());
    if (op == StreamOp::kTriad) {
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(fa[i], fb[i] + 0.4f * fc[i], 1e-6f * (std::abs(fa[i]) + 1));
      }
    }
  }
}

TEST_F(CpuBackendTest, DotAndFill) {
  const std::size_t n = 100003;
  std::vector<double> a = Values(n, 1), b = Values(n, 2);
  double want = 0;
  for (std::size_t i = 0; i < n; ++i) want += a[i] * b[i];
  auto got = backend_->Dot(DType::kFloat64, a.data(), b.data(), n);
  ASSERT_TRUE(got.ok());
  EXPECT_NEAR(*got, want, 1e-12 * std::abs(want));
  std::vector<float> f(n);
  ASSERT_TRUE(backend_->Fill(f.data(), DType::kFloat32, n, 0.1).ok());
  for (float x : f) ASSERT_EQ(x, 0.1f);
  EXPECT_EQ(backend_->Fill(f.data(), DType::kInt32, n, 1).code(), StatusCode::kUnavailable);
}

TEST_F(CpuBackendTest, GemmMatchesPlainProductForNonSquareShapes) {
  const int64_t m = 7, n = 13, k = 301;
  std::vector<double> a = Values(m * k, 1), b = Values(k * n, 1), c(m * n);
  ASSERT_TRUE(
      backend_->Gemm(DType::kFloat64, GemmMath::kNative, m, n, k, a.data(), b.data(), c.data())
          .ok());
  std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end()), fc(m * n);
  ASSERT_TRUE(
      backend_->Gemm(DType::kFloat32, GemmMath::kNative, m, n, k, fa.data(), fb.data(), fc.data())
          .ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, norm = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += a[i * k + p] * b[p * n + j];
        norm += std::abs(a[i * k + p] * b[p * n + j]);
      }
      EXPECT_NEAR(c[i * n + j], want, 1e-13 * norm);
      EXPECT_NEAR(fc[i * n + j], want, 1e-5 * norm);
    }
  }
}

TEST_F(CpuBackendTest, Bfloat16GemmRoundsItsOutput) {
  const int64_t n = 64;
  std::vector<uint16_t> a(n * n), b(n * n), c(n * n);
  for (int64_t i = 0; i < n * n; ++i) {
    a[i] = DoubleToBFloat16(std::sin(0.1 * i));
    b[i] = DoubleToBFloat16(std::cos(0.3 * i));
  }
  Status s =
      backend_->Gemm(DType::kBFloat16, GemmMath::kNative, n, n, n, a.data(), b.data(), c.data());
  if (s.code() == StatusCode::kUnavailable) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.message();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, norm = 0;
      for (int64_t p = 0; p < n; ++p) {
        const double x = BFloat16ToFloat(a[i * n + p]) * double{BFloat16ToFloat(b[p * n + j])};
        want += x;
        norm += std::abs(x);
      }
      EXPECT_NEAR(BFloat16ToFloat(c[i * n + j]), want, 4e-3 * std::abs(want) + 1e-5 * norm);
    }
  }
}

TEST_F(CpuBackendTest, PhiloxFillIsCurandsUniformStream) {
  for (uint64_t offset : {0u, 8u}) {
    for (std::size_t n : {1u, 4u, 37u}) {
      std::vector<float> out(n);
      ASSERT_TRUE(backend_->PhiloxUniform(out.data(), n, 0x123456789abcdefull, offset).ok());
      CurandPhilox state(0x123456789abcdefull, 0, offset);
      for (std::size_t i = 0; i < n; ++i) {
        const float want = state.Uniform();
        ASSERT_EQ(std::memcmp(&out[i], &want, 4), 0) << "offset " << offset << " element " << i;
      }
    }
  }
  float x;
  EXPECT_FALSE(backend_->PhiloxUniform(&x, 1, 1, 3).ok());
}

TEST_F(CpuBackendTest, MemoryCopyAndRefusals) {
  auto p = backend_->Allocate(3 << 20, MemoryKind::kDevice);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % (2 << 20), 0u);  // huge-page aligned
  std::vector<char> src(3 << 20, 'x');
  ASSERT_TRUE(
      backend_->Copy(*p, MemoryKind::kDevice, src.data(), MemoryKind::kHostPageable, src.size())
          .ok());
  EXPECT_EQ(std::memcmp(*p, src.data(), src.size()), 0);
  backend_->Free(*p, MemoryKind::kDevice);
  auto pinned = backend_->Allocate(4096, MemoryKind::kHostPinned);
  EXPECT_EQ(pinned.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(backend_->Open(1).code(), StatusCode::kUnavailable);
  EXPECT_TRUE(backend_->EmptyKernel().ok());
  auto t = backend_->Time([] { return Status::Ok(); }, Queuing::kHeld);
  ASSERT_TRUE(t.ok());
  EXPECT_GE(*t, 0.0);
  auto devices = backend_->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_FALSE(devices->front().name.empty());
  EXPECT_TRUE(devices->front().properties.contains("blas"));
}

}  // namespace
}  // namespace parity::bench
