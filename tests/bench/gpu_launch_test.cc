// SPDX-License-Identifier: Apache-2.0
// The GPU kernels' launch arithmetic and per-thread bodies (bench/gpu/launch.h, kernels.h),
// run on the CPU for every thread of the grid the plan asks for: each element done exactly
// once, with vector accesses, the grid-stride loop and the scalar tail; nothing written past
// the end; the Philox groups as cuRAND's stream; the row-major to column-major GEMM mapping.
#include <Random123/philox.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bench/gpu/gemm_args.h"
#include "bench/gpu/kernels.h"
#include "bench/gpu/launch.h"
#include "rng/philox.h"

namespace parity::bench::gpu {
namespace {

constexpr DeviceShape kH200{132, 2048};  // 132 SMs, 2048 resident threads each

// Every thread of the grid, in an order no GPU promises: the bodies must not depend on it.
template <typename Body>
void RunGrid(uint32_t blocks, uint32_t threads, Body body) {
  const uint64_t total = uint64_t{blocks} * threads;
  for (uint64_t t = total; t-- > 0;) body(t);
}

TEST(GpuLaunch, GridIsOneWaveAtMostAndCoversSmallWork) {
  EXPECT_EQ(GridBlocks(0, 256, kH200), 0u);
  EXPECT_EQ(GridBlocks(1, 256, kH200), 1u);
  EXPECT_EQ(GridBlocks(257, 256, kH200), 2u);
  EXPECT_EQ(GridBlocks(uint64_t{1} << 30, 256, kH200), 132u * 8u);
  EXPECT_EQ(GridBlocks(uint64_t{1} << 30, 256, DeviceShape{}), kFallbackBlocks);
}

TEST(GpuLaunch, VectorAccessOnlyWhenEveryArrayIsAligned) {
  alignas(16) double buffer[8];
  const StreamPlan aligned = PlanStream(1001, sizeof(double), {buffer, buffer + 2}, kH200);
  EXPECT_EQ(aligned.width, 2u);
  EXPECT_EQ(aligned.vectors, 500u);
  EXPECT_EQ(aligned.tail_begin, 1000u);
  const StreamPlan shifted = PlanStream(1001, sizeof(double), {buffer, buffer + 1}, kH200);
  EXPECT_EQ(shifted.width, 1u);
  EXPECT_EQ(shifted.vectors, 1001u);
  EXPECT_EQ(shifted.tail_begin, 1001u);
  EXPECT_EQ(PlanStream(1001, sizeof(float), {buffer}, kH200).width, 4u);
  EXPECT_EQ(PlanStream(0, sizeof(float), {buffer}, kH200).blocks, 0u);
}

// a, b, c with a guard after n elements; values that tell every index apart.
template <typename T>
struct Arrays {
  explicit Arrays(std::size_t n, std::size_t misalign) : n(n), off(misalign) {
    for (auto* v : {&a, &b, &c}) v->assign(n + off + 8, T(-7));
    for (std::size_t i = 0; i < n; ++i) {
      A()[i] = T(0.5) + T(i % 97);
      B()[i] = T(2) + T(i % 89);
      C()[i] = T(1) + T(i % 83);
    }
  }
  T* A() { return a.data() + off; }
  T* B() { return b.data() + off; }
  T* C() { return c.data() + off; }
  std::size_t n, off;
  std::vector<T> a, b, c;
};

template <StreamOp kOp, typename T>
void RunStream(Arrays<T>& x, const StreamPlan& plan, T s) {
  RunGrid(plan.blocks, plan.threads, [&](uint64_t t) {
    if (plan.width > 1) {
      StreamThread<kOp, T, Vec16<T>>(plan, x.A(), x.B(), x.C(), s, t);
    } else {
      StreamThread<kOp, T, T>(plan, x.A(), x.B(), x.C(), s, t);
    }
  });
}

template <typename T>
void CheckStreamKernels(std::size_t n, std::size_t misalign, DeviceShape shape) {
  SCOPED_TRACE(::testing::Message()
               << "n " << n << " misalign " << misalign << " item " << sizeof(T));
  const T s = T(0.4);
  // nstream adds into a: an element done twice, or not at all, is wrong.
  Arrays<T> x(n, misalign), want(n, misalign);
  const StreamPlan plan = PlanStream(n, sizeof(T), {x.A(), x.B(), x.C()}, shape);
  if (n > 0) {
    ASSERT_GT(plan.blocks, 0u);
  }
  RunStream<StreamOp::kNstream>(x, plan, s);
  RunStream<StreamOp::kTriad>(x, plan, s);
  RunStream<StreamOp::kMul>(x, plan, s);
  RunStream<StreamOp::kAdd>(x, plan, s);
  RunStream<StreamOp::kCopy>(x, plan, s);
  for (std::size_t i = 0; i < n; ++i) {
    T& a = want.A()[i];
    T& b = want.B()[i];
    T& c = want.C()[i];
    a += b + s * c;
    a = b + s * c;
    b = s * c;
    c = a + b;
    c = a;
  }
  for (std::size_t i = 0; i < n + misalign + 8; ++i) {
    ASSERT_EQ(x.a[i], want.a[i]) << "a[" << i << "]";
    ASSERT_EQ(x.b[i], want.b[i]) << "b[" << i << "]";
    ASSERT_EQ(x.c[i], want.c[i]) << "c[" << i << "]";
  }
}

TEST(GpuLaunch, StreamKernelsDoEachElementOnceForEveryShape) {
  const DeviceShape tiny{2, 512};  // 4 blocks at most: many grid-stride rounds
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 255u, 256u, 257u, 1023u, 4099u, 20011u}) {
    for (std::size_t misalign : {0u, 1u}) {
      CheckStreamKernels<float>(n, misalign, tiny);
      CheckStreamKernels<double>(n, misalign, tiny);
    }
  }
  CheckStreamKernels<float>(300007, 0, kH200);
  CheckStreamKernels<double>(300007, 1, DeviceShape{});
}

TEST(GpuLaunch, FillAndDotCoverEveryElement) {
  const DeviceShape tiny{1, 256};
  for (std::size_t n : {1u, 2u, 7u, 256u, 1025u, 9999u}) {
    for (std::size_t misalign : {0u, 1u}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " misalign " << misalign);
      std::vector<double> buffer(n + 10, -1.0);
      double* dst = buffer.data() + misalign;
      const StreamPlan plan = PlanStream(n, sizeof(double), {dst}, tiny);
      RunGrid(plan.blocks, plan.threads, [&](uint64_t t) {
        if (plan.width > 1) {
          FillThread<double, Vec16<double>>(plan, dst, 0.25, t);
        } else {
          FillThread<double, double>(plan, dst, 0.25, t);
        }
      });
      for (std::size_t i = 0; i < buffer.size(); ++i) {
        const bool inside = i >= misalign && i < misalign + n;
        ASSERT_EQ(buffer[i], inside ? 0.25 : -1.0) << i;
      }
      // Integers: the dot product is exact whatever the order of the sums.
      std::vector<float> a(n + 1), b(n + 1);
      for (std::size_t i = 0; i < n; ++i) {
        a[i + misalign] = float(i % 13);
        b[i + misalign] = float(i % 7);
      }
      const float* pa = a.data() + misalign;
      const float* pb = b.data() + misalign;
      const StreamPlan dot = PlanDot(n, sizeof(float), pa, pb, DeviceShape{64, 2048});
      EXPECT_LE(dot.blocks, kMaxDotBlocks);
      double sum = 0.0, want = 0.0;
      RunGrid(dot.blocks, dot.threads, [&](uint64_t t) {
        sum += dot.width > 1 ? DotThread<float, Vec16<float>>(dot, pa, pb, t)
                             : DotThread<float, float>(dot, pa, pb, t);
      });
      for (std::size_t i = 0; i < n; ++i) want += double(i % 13) * double(i % 7);
      EXPECT_EQ(sum, want);
    }
  }
  EXPECT_EQ(PlanDot(uint64_t{1} << 32, 4, nullptr, nullptr, DeviceShape{}).blocks, kMaxDotBlocks);
}

TEST(GpuLaunch, PhiloxGroupsAreCurandsStream) {
  using Philox = r123::Philox4x32_R<10>;
  const uint64_t seed = 0x0123456789abcdefULL;
  auto philox = [&](uint64_t counter, uint32_t r[4]) {
    const Philox::ctr_type ctr = {
        {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0}};
    const Philox::ctr_type v =
        Philox()(ctr, {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}});
    for (int j = 0; j < 4; ++j) r[j] = v.v[j];
  };
  for (uint64_t offset : {uint64_t{0}, uint64_t{8}, uint64_t{4} << 32}) {
    for (std::size_t n : {1u, 3u, 4u, 5u, 1023u, 4096u}) {
      for (std::size_t misalign : {0u, 1u}) {
        SCOPED_TRACE(::testing::Message() << "offset " << offset << " n " << n);
        alignas(16) float storage[4096 + 16];
        std::fill(std::begin(storage), std::end(storage), -1.0f);
        float* out = storage + misalign;
        const PhiloxPlan plan = PlanPhilox(n, offset, out, DeviceShape{1, 256});
        EXPECT_EQ(plan.vector_store, misalign == 0);
        RunGrid(plan.blocks, plan.threads, [&](uint64_t t) { PhiloxThread(plan, out, t, philox); });
        for (std::size_t i = 0; i < n; ++i) {
          // curand_init(seed, 0, offset + i), then curand_uniform: parity's cuRAND model.
          ASSERT_EQ(out[i], CurandPhilox(seed, 0, offset + i).Uniform()) << i;
        }
        ASSERT_EQ(out[n], -1.0f);
        if (misalign == 1) {
          ASSERT_EQ(storage[0], -1.0f);
        }
      }
    }
  }
}

// A column-major, no-transpose reference GEMM: what cuBLAS and rocBLAS compute.
void ReferenceColumnMajorGemm(const ColumnMajorGemm& g) {
  const auto* a = static_cast<const double*>(g.a);
  const auto* b = static_cast<const double*>(g.b);
  auto* c = static_cast<double*>(g.c);
  for (int64_t j = 0; j < g.n; ++j) {
    for (int64_t i = 0; i < g.m; ++i) {
      double sum = 0.0;
      for (int64_t p = 0; p < g.k; ++p) sum += a[i + p * g.lda] * b[p + j * g.ldb];
      c[i + j * g.ldc] = sum;
    }
  }
}

TEST(GpuLaunch, RowMajorGemmThroughColumnMajorBlas) {
  const int64_t m = 3, n = 5, k = 7;  // all different, so a swapped dimension shows
  std::vector<double> a(m * k), b(k * n), c(m * n, -1.0);
  for (int64_t i = 0; i < m * k; ++i) a[i] = double(i + 1);
  for (int64_t i = 0; i < k * n; ++i) b[i] = double((i * 7) % 11) - 5.0;
  const ColumnMajorGemm g = FromRowMajor(m, n, k, a.data(), b.data(), c.data());
  EXPECT_TRUE(g.FitsInt32());
  ReferenceColumnMajorGemm(g);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0.0;
      for (int64_t p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      EXPECT_EQ(c[i * n + j], want) << i << ", " << j;
    }
  }
  EXPECT_FALSE(FromRowMajor(int64_t{1} << 31, 4, 4, nullptr, nullptr, nullptr).FitsInt32());
  const GemmGrid grid = PlanTiledGemm(33, 16);
  EXPECT_EQ(grid.x, 1u);
  EXPECT_EQ(grid.y, 3u);
}

}  // namespace
}  // namespace parity::bench::gpu
