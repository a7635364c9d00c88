// SPDX-License-Identifier: Apache-2.0
#include "io/tensor_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/float_format.h"
#include "core/parallel.h"
#include "core/simd.h"

namespace parity {
namespace {

// The kernels below are inlined into ChunkStats, compiled once per x86-64 level.
constexpr std::size_t kChunk = std::size_t{1} << 16;  // elements per parallel task
constexpr std::size_t kBlock = 2048;                  // elements per in-cache block

// Statistics of a part of the tensor; parts merge pairwise (Chan, Golub & LeVeque 1979).
struct Partial {
  int64_t finite = 0;
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t zeros = 0;
  double mean = 0.0;
  double m2 = 0.0;  // sum of squared deviations from the mean
  double fmin = std::numeric_limits<double>::infinity();
  double fmax = -std::numeric_limits<double>::infinity();
  int64_t imin = std::numeric_limits<int64_t>::max();
  int64_t imax = std::numeric_limits<int64_t>::min();
  uint64_t umin = std::numeric_limits<uint64_t>::max();
  uint64_t umax = 0;

  void AddMoments(int64_t n, double block_mean, double block_m2) {
    if (n == 0) return;
    if (finite == 0) {
      finite = n;
      mean = block_mean;
      m2 = block_m2;
      return;
    }
    const int64_t total = finite + n;
    const double delta = block_mean - mean;
    // Fractions first, so that values near the top of the range do not overflow.
    const double weight = static_cast<double>(n) / static_cast<double>(total);
    mean += delta * weight;
    m2 += block_m2 + delta * delta * (static_cast<double>(finite) * weight);
    finite = total;
  }

  void Merge(const Partial& o) {
    AddMoments(o.finite, o.mean, o.m2);
    nan += o.nan;
    inf += o.inf;
    zeros += o.zeros;
    fmin = std::min(fmin, o.fmin);
    fmax = std::max(fmax, o.fmax);
    imin = std::min(imin, o.imin);
    imax = std::max(imax, o.imax);
    umin = std::min(umin, o.umin);
    umax = std::max(umax, o.umax);
  }
};

// Counters are 32-bit (a block is at most kBlock elements) so that they fill the same vector
// lanes as float32 values; Inf is what is neither finite nor NaN.
template <typename T>
PARITY_INLINE void FloatBlock(const T* p, std::size_t n, Partial* acc) {
  using Count = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  constexpr T kInf = std::numeric_limits<T>::infinity();
  constexpr T kMax = std::numeric_limits<T>::max();
  T lo = kInf;
  T hi = -kInf;
  double sum = 0.0;
  Count finite = 0, nan = 0, zeros = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : sum, finite, nan, zeros)
  for (std::size_t i = 0; i < n; ++i) {
    const T v = p[i];
    const bool is_finite = std::fabs(v) <= kMax;
    nan += v != v;
    zeros += v == T(0);
    finite += is_finite;
    // Plain selects, not std::min (whose reference result keeps GCC from vectorising).
    const T lo_candidate = is_finite ? v : kInf;
    const T hi_candidate = is_finite ? v : -kInf;
    lo = lo_candidate < lo ? lo_candidate : lo;
    hi = hi_candidate > hi ? hi_candidate : hi;
    sum += static_cast<double>(is_finite ? v : T(0));
  }
  acc->nan += nan;
  acc->inf += static_cast<int64_t>(n) - finite - nan;
  acc->zeros += zeros;
  if (finite == 0) return;
  acc->fmin = std::min(acc->fmin, static_cast<double>(lo));
  acc->fmax = std::max(acc->fmax, static_cast<double>(hi));
  const double mean = sum / static_cast<double>(finite);
  double m2 = 0.0;
  if (static_cast<std::size_t>(finite) == n) {
#pragma omp simd reduction(+ : m2)
    for (std::size_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(p[i]) - mean;
      m2 += d * d;
    }
  } else {
#pragma omp simd reduction(+ : m2)
    for (std::size_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(p[i]) - mean;
      m2 += std::fabs(p[i]) <= kMax ? d * d : 0.0;
    }
  }
  acc->AddMoments(finite, mean, m2);
}

template <typename T>
PARITY_INLINE void IntBlock(const T* p, std::size_t n, Partial* acc) {
  T lo = std::numeric_limits<T>::max();
  T hi = std::numeric_limits<T>::lowest();
  double sum = 0.0;
  int64_t zeros = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : sum, zeros)
  for (std::size_t i = 0; i < n; ++i) {
    lo = p[i] < lo ? p[i] : lo;
    hi = p[i] > hi ? p[i] : hi;
    zeros += p[i] == 0;
    sum += static_cast<double>(p[i]);
  }
  acc->zeros += zeros;
  if (n == 0) return;
  if constexpr (std::is_signed_v<T>) {
    acc->imin = std::min<int64_t>(acc->imin, lo);
    acc->imax = std::max<int64_t>(acc->imax, hi);
  } else {
    acc->umin = std::min<uint64_t>(acc->umin, lo);
    acc->umax = std::max<uint64_t>(acc->umax, hi);
  }
  const double mean = sum / static_cast<double>(n);
  double m2 = 0.0;
#pragma omp simd reduction(+ : m2)
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - mean;
    m2 += d * d;
  }
  acc->AddMoments(static_cast<int64_t>(n), mean, m2);
}

// Narrow floats are widened to float32 (exactly) a block at a time.
template <typename Bits, float (*kToFloat)(Bits)>
PARITY_INLINE void NarrowFloatBlock(const Bits* p, std::size_t n, Partial* acc) {
  std::array<float, kBlock> widened;
  for (std::size_t i = 0; i < n; ++i) widened[i] = kToFloat(p[i]);
  FloatBlock(widened.data(), n, acc);
}

template <typename T, void (*kBlockFn)(const T*, std::size_t, Partial*)>
PARITY_INLINE void Blocks(const std::byte* data, std::size_t n, Partial* acc) {
  const T* p = reinterpret_cast<const T*>(data);
  for (std::size_t i = 0; i < n; i += kBlock) kBlockFn(p + i, std::min(kBlock, n - i), acc);
}

// Statistics of the n elements at `data`.
PARITY_INLINE void ChunkStatsImpl(DType dtype, const std::byte* data, std::size_t n, Partial* acc) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
      return Blocks<uint8_t, IntBlock<uint8_t>>(data, n, acc);
    case DType::kInt8:
      return Blocks<int8_t, IntBlock<int8_t>>(data, n, acc);
    case DType::kInt16:
      return Blocks<int16_t, IntBlock<int16_t>>(data, n, acc);
    case DType::kInt32:
      return Blocks<int32_t, IntBlock<int32_t>>(data, n, acc);
    case DType::kInt64:
      return Blocks<int64_t, IntBlock<int64_t>>(data, n, acc);
    case DType::kUInt16:
      return Blocks<uint16_t, IntBlock<uint16_t>>(data, n, acc);
    case DType::kUInt32:
      return Blocks<uint32_t, IntBlock<uint32_t>>(data, n, acc);
    case DType::kUInt64:
      return Blocks<uint64_t, IntBlock<uint64_t>>(data, n, acc);
    case DType::kFloat16:
      return Blocks<uint16_t, NarrowFloatBlock<uint16_t, HalfToFloat>>(data, n, acc);
    case DType::kBFloat16:
      return Blocks<uint16_t, NarrowFloatBlock<uint16_t, BFloat16ToFloat>>(data, n, acc);
    case DType::kFloat8E4M3FN:
      return Blocks<uint8_t, NarrowFloatBlock<uint8_t, Float8E4M3FNToFloat>>(data, n, acc);
    case DType::kFloat8E5M2:
      return Blocks<uint8_t, NarrowFloatBlock<uint8_t, Float8E5M2ToFloat>>(data, n, acc);
    case DType::kFloat32:
      return Blocks<float, FloatBlock<float>>(data, n, acc);
    case DType::kFloat64:
      return Blocks<double, FloatBlock<double>>(data, n, acc);
  }
}

PARITY_TARGET_V4 void ChunkStatsV4(DType dtype, const std::byte* data, std::size_t n,
                                   Partial* acc) {
  ChunkStatsImpl(dtype, data, n, acc);
}
PARITY_TARGET_V3 void ChunkStatsV3(DType dtype, const std::byte* data, std::size_t n,
                                   Partial* acc) {
  ChunkStatsImpl(dtype, data, n, acc);
}
void ChunkStatsBaseline(DType dtype, const std::byte* data, std::size_t n, Partial* acc) {
  ChunkStatsImpl(dtype, data, n, acc);
}

void ChunkStats(DType dtype, const std::byte* data, std::size_t n, Partial* acc) {
  switch (ActiveIsa()) {
    case Isa::kV4:
      return ChunkStatsV4(dtype, data, n, acc);
    case Isa::kV3:
      return ChunkStatsV3(dtype, data, n, acc);
    case Isa::kBaseline:
      return ChunkStatsBaseline(dtype, data, n, acc);
  }
}

}  // namespace

Result<TensorStats> ComputeStats(const Tensor& tensor) {
  const auto count = static_cast<std::size_t>(tensor.numel());
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<Partial> partials(chunks);
  const DType dtype = tensor.dtype();
  const std::size_t itemsize = ItemSize(dtype);
  std::mutex error_mutex;
  Status error;
  ParallelFor(chunks, [&](std::size_t c) {
    const std::size_t begin = c * kChunk;
    const std::size_t n = std::min(count, (c + 1) * kChunk) - begin;
    auto chunk = tensor.ReadChunk(begin * itemsize, n * itemsize, ThreadScratch(kChunk * itemsize));
    if (!chunk.ok()) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (error.ok()) error = chunk.status();
      return;
    }
    ChunkStats(dtype, *chunk, n, &partials[c]);
  });
  if (!error.ok()) return error;
  Partial total;
  for (const Partial& p : partials) total.Merge(p);  // in order: independent of thread count

  TensorStats stats;
  stats.count = static_cast<int64_t>(count);
  stats.nan = total.nan;
  stats.inf = total.inf;
  stats.zeros = total.zeros;
  stats.finite = total.finite;
  if (total.finite == 0) return stats;
  switch (Info(dtype).kind) {
    case DTypeKind::kFloat:
      stats.min = total.fmin;
      stats.max = total.fmax;
      break;
    case DTypeKind::kSignedInt:
      stats.min = total.imin;
      stats.max = total.imax;
      break;
    case DTypeKind::kBool:
    case DTypeKind::kUnsignedInt:
      stats.min = total.umin;
      stats.max = total.umax;
      break;
  }
  stats.mean = total.mean;
  stats.std = std::sqrt(total.m2 / static_cast<double>(total.finite));
  return stats;
}

}  // namespace parity
