// SPDX-License-Identifier: Apache-2.0
// BabelStream's model of its kernels: initial values, byte weights, run order and the expected
// ("gold") values after any number of repetitions (UoB-HPC/BabelStream src/benchmark.h,
// src/Stream.h and check_solution in src/main.cpp).
#ifndef PARITY_BENCH_STREAM_MODEL_H_
#define PARITY_BENCH_STREAM_MODEL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "core/error_bound.h"

namespace parity::bench {

inline constexpr double kStreamStartA = 0.1;
inline constexpr double kStreamStartB = 0.2;
inline constexpr double kStreamStartC = 0.0;
inline constexpr double kStreamScalar = 0.4;

/// One kernel of the suite: its result name, the Backend call (none for dot), and how many
/// arrays of n elements it moves (BabelStream's weights).
struct StreamKernelInfo {
  std::string_view benchmark;
  std::optional<StreamOp> op;
  std::size_t weight;
};

/// BabelStream's classic kernels in its "Classic" order, one of each per repetition: copy,
/// mul, add, triad, dot. The values stay bounded (a shrinks by 0.96 per repetition).
std::span<const StreamKernelInfo> ClassicStreamKernels();
/// nstream, which BabelStream runs on its own (`--only Nstream`), from freshly initialised
/// arrays: a grows by b + scalar·c per repetition.
const StreamKernelInfo& NstreamKernel();

/// The arrays (0 = a, 1 = b, 2 = c) a kernel writes.
std::vector<int> StreamArraysWritten(StreamOp op);

/// BabelStream's per-element test: |is - should| <= max(|is|, |should|)·mrel, and not NaN.
inline bool StreamValueAgrees(double is, double should, double mrel) {
  if (std::isnan(is)) return false;
  return std::abs(is - should) <= std::max(std::abs(is), std::abs(should)) * mrel;
}

/// The relative tolerance of dot's sum of n products computed with unit roundoff `u`: the
/// probabilistic bound λ·√n·u (core/error_bound.h, the model `parity compare`'s `auto` policy
/// uses; docs/COMPARE.md) on the error of a length-n sum relative to the sum of the terms'
/// magnitudes, which is |sum| here, every product being a·b > 0. BabelStream's
/// 1e7·FLT_EPSILON ≈ 1.19 would pass a float32 dot that returned 0 or missed a block; this is
/// 2.1e-3 at n = 2^25 in float32, 3.9e-12 in float64, and at most 1e-2, so a sum that is 0 or
/// short by a share of 1% or more fails for any n.
inline double StreamDotTolerance(std::size_t n, double u) {
  return std::min(DotProductGrowth(static_cast<int64_t>(n), u), 1e-2);
}

/// Expected values of every element of a, b, c and of the last dot after `reps` repetitions of
/// `kernels` on arrays of n elements from the start values, computed in T as check_solution
/// does.
template <typename T>
struct StreamGold {
  T a, b, c, sum;
};
template <typename T>
StreamGold<T> EvolveStreamGold(std::span<const StreamKernelInfo> kernels, int reps, std::size_t n) {
  StreamGold<T> g{T(kStreamStartA), T(kStreamStartB), T(kStreamStartC), T(0)};
  const T scalar = T(kStreamScalar);
  for (int rep = 0; rep < reps; ++rep) {
    for (const StreamKernelInfo& k : kernels) {
      if (!k.op) {
        g.sum = g.a * g.b * T(n);
        continue;
      }
      switch (*k.op) {
        case StreamOp::kCopy:
          g.c = g.a;
          break;
        case StreamOp::kMul:
          g.b = scalar * g.c;
          break;
        case StreamOp::kAdd:
          g.c = g.a + g.b;
          break;
        case StreamOp::kTriad:
          g.a = g.b + scalar * g.c;
          break;
        case StreamOp::kNstream:
          g.a += g.b + scalar * g.c;
          break;
      }
    }
  }
  return g;
}

}  // namespace parity::bench

#endif  // PARITY_BENCH_STREAM_MODEL_H_
