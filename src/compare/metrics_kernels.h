// SPDX-License-Identifier: Apache-2.0
// The kernels of ComputePairMetrics (metrics.cc), for the files that compile them at one
// instruction-set level each (metrics_baseline.cc, metrics_v3.cc, metrics_v4.cc), so that the
// levels build in parallel. Include it only there: its bodies are PARITY_INLINE templates that
// take the level of the entry point they are inlined into.
#ifndef PARITY_COMPARE_METRICS_KERNELS_H_
#define PARITY_COMPARE_METRICS_KERNELS_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/convert.h"
#include "core/float_format.h"
#include "core/simd.h"

namespace parity::metrics_internal {

/// Elements per vector loop.
inline constexpr std::size_t kBlock = 1024;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kMaxDouble = std::numeric_limits<double>::max();
inline constexpr float kInfFloat = std::numeric_limits<float>::infinity();

// How each dtype's raw bits become a value and a position on the ordered (ulp) line.
template <typename RawT, int kBits>
struct SignMagnitude {
  using Raw = RawT;
  static constexpr Raw kSign = static_cast<Raw>(Raw{1} << (kBits - 1));
  static PARITY_INLINE double Ordered(Raw r) {
    const double magnitude = static_cast<double>(static_cast<Raw>(r & static_cast<Raw>(~kSign)));
    return (r & kSign) ? -magnitude : magnitude;
  }
};
struct F32 : SignMagnitude<uint32_t, 32> {
  static PARITY_INLINE double Value(Raw r) { return std::bit_cast<float>(r); }
};
struct F64 : SignMagnitude<uint64_t, 64> {
  static PARITY_INLINE double Value(Raw r) { return std::bit_cast<double>(r); }
};
struct F16 : SignMagnitude<uint16_t, 16> {
  static PARITY_INLINE double Value(Raw r) { return HalfToFloat(r); }
};
struct BF16 : SignMagnitude<uint16_t, 16> {
  static PARITY_INLINE double Value(Raw r) { return BFloat16ToFloat(r); }
};
struct E4M3 : SignMagnitude<uint8_t, 8> {
  static PARITY_INLINE double Value(Raw r) { return Float8E4M3FNToFloat(r); }
};
struct E5M2 : SignMagnitude<uint8_t, 8> {
  static PARITY_INLINE double Value(Raw r) { return Float8E5M2ToFloat(r); }
};
template <typename IntT>
struct Int {
  using Raw = IntT;
  static PARITY_INLINE double Value(Raw r) { return static_cast<double>(r); }
  static PARITY_INLINE double Ordered(Raw r) { return static_cast<double>(r); }
};
struct Bool {
  using Raw = uint8_t;
  static PARITY_INLINE double Value(Raw r) { return r != 0 ? 1.0 : 0.0; }
  static PARITY_INLINE double Ordered(Raw r) { return r != 0 ? 1.0 : 0.0; }
};

/// What a chunk's kernel is asked to compute, beyond the element pairs themselves.
struct Knobs {
  double rtol;
  double tiny;
  std::size_t worst;
  bool judge;  // bin |a - b| / allowed and count violations in the same pass
  Criterion criterion;
  double atol;
  double inverse_max_ulps;  // 1 / max_ulps, or Inf when max_ulps is 0
  // A lower bound of the final k-th worst error (the k-th worst of a chunk this thread did
  // before): smaller errors can't make the list, so blocks below it are not scanned.
  double worst_floor;
};

/// Inserts `e` into `worst` (largest errors first), keeping at most `k`.
inline void InsertWorst(std::vector<WorstElement>* worst, std::size_t k, const WorstElement& e) {
  auto it = std::find_if(worst->begin(), worst->end(),
                         [&](const WorstElement& w) { return e.error > w.error; });
  worst->insert(it, e);
  if (worst->size() > k) worst->pop_back();
}

// The error an element must exceed to enter a list of k: Inf when no list is kept.
inline double WorstThreshold(const std::vector<WorstElement>& worst, std::size_t k) {
  if (k == 0) return kInf;
  return worst.size() < k ? 0.0 : worst.back().error;
}

// One block: raw elements are first widened to float64 values and ordered positions (a plain
// loop per width), then every metric is one vector loop over float64 only. Keeping the two
// apart also sidesteps a GCC 12 AVX2/AVX-512 mis-vectorisation of the single mixed-width loop
// (16-bit loads with 64-bit lanes), which gave wrong counts for float16.
// Histograms are counted in a loop of their own over float32 copies, with int32 counters in
// lanes of the same width: GCC 12 miscounts int32 reductions that share an AVX2/AVX-512 loop
// with float64 ones (so the float64 loop keeps int64 counters), and stores in an `omp simd`
// loop keep it from vectorising at all. Returns the largest value.
template <std::size_t kBounds>
PARITY_INLINE float CumulativeCounts(const float* values, std::size_t n,
                                     const std::array<double, kBounds>& bounds, int64_t* beyond) {
  static_assert(kBounds == 10 || kBounds == 9);
  const float b0 = static_cast<float>(bounds[0]), b1 = static_cast<float>(bounds[1]);
  const float b2 = static_cast<float>(bounds[2]), b3 = static_cast<float>(bounds[3]);
  const float b4 = static_cast<float>(bounds[4]), b5 = static_cast<float>(bounds[5]);
  const float b6 = static_cast<float>(bounds[6]), b7 = static_cast<float>(bounds[7]);
  const float b8 = static_cast<float>(bounds[8]);
  const float b9 = static_cast<float>(bounds[kBounds - 1]);
  int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0, c8 = 0, c9 = 0;
  float largest = 0.0f;
#pragma omp simd reduction(+ : c0, c1, c2, c3, c4, c5, c6, c7, c8, c9) reduction(max : largest)
  for (std::size_t i = 0; i < n; ++i) {
    const float v = values[i];
    c0 += v > b0;
    c1 += v > b1;
    c2 += v > b2;
    c3 += v > b3;
    c4 += v > b4;
    c5 += v > b5;
    c6 += v > b6;
    c7 += v > b7;
    c8 += v > b8;
    c9 += v > b9;
    largest = v > largest ? v : largest;
  }
  const int32_t counts[] = {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9};
  for (std::size_t j = 0; j < kBounds; ++j) beyond[j] += counts[j];
  return largest;
}

// One block, in four loops: widen the raw elements to float64 values and ulp distances; one
// vector loop of float64 reductions (no stores); with a tolerance, each element's ratio to its
// allowance; then the histograms over float32 copies. NaN/Inf mismatches are counted in a loop
// of their own, only in blocks with a non-finite pair. The float64 sums must keep their loop
// (lanes and order): changing it changes their rounding.
template <class T, bool kJudge>
PARITY_INLINE void PairBlock(const typename T::Raw* pa, const typename T::Raw* pb, std::size_t n,
                             int64_t base, const Knobs& knobs, PairMetrics* acc) {
  alignas(64) double va[kBlock];
  alignas(64) double vb[kBlock];
  alignas(64) double ulps[kBlock];  // ulp distance on the ordered line
  alignas(64) float ulp_f[kBlock];  // the same for finite pairs, -1 otherwise, for counting
  for (std::size_t i = 0; i < n; ++i) {
    va[i] = T::Value(pa[i]);
    vb[i] = T::Value(pb[i]);
    ulps[i] = std::fabs(T::Ordered(pa[i]) - T::Ordered(pb[i]));
  }
  int64_t identical = 0;
  for (std::size_t i = 0; i < n; ++i) identical += pa[i] == pb[i];
  for (std::size_t i = 0; i < n; ++i) {
    const bool both = std::fabs(va[i]) <= kMaxDouble && std::fabs(vb[i]) <= kMaxDouble;
    ulp_f[i] = both ? static_cast<float>(ulps[i]) : -1.0f;
  }
  const double rtol = knobs.rtol;
  const double tiny = knobs.tiny;
  double max_abs = 0, sum_abs = 0, sum_sq = 0, max_rel = 0, sum_rel = 0, max_small = 0;
  double dot = 0, aa = 0, bb = 0, max_ulp = 0, sum_ulp = 0, max_excess = -kInf;
  int64_t finite = 0, rel_count = 0, small = 0, le3 = 0, le53 = 0, nan_mm = 0, inf_mm = 0;
#pragma omp simd reduction(max : max_abs, max_rel, max_small, max_ulp, max_excess)          \
    reduction(+ : sum_abs, sum_sq, sum_rel, dot, aa, bb, sum_ulp, finite, rel_count, le3, le53)
  for (std::size_t i = 0; i < n; ++i) {
    const double a = va[i];
    const double b = vb[i];
    const double abs_a = std::fabs(a);
    const double abs_b = std::fabs(b);
    const bool fin_a = abs_a <= kMaxDouble;
    const bool fin_b = abs_b <= kMaxDouble;
    // Bitwise & and | on the bools, not && and ||: short-circuit forms keep GCC from
    // vectorising the masks.
    const bool both = fin_a & fin_b;
    const double d = both ? a - b : 0.0;
    const double ad = std::fabs(d);
    finite += both;
    sum_abs += ad;
    sum_sq += d * d;
    max_abs = ad > max_abs ? ad : max_abs;
    const bool rel_ok = both & (abs_b >= tiny);
    const double rel = rel_ok ? ad / abs_b : 0.0;
    rel_count += rel_ok;
    sum_rel += rel;
    max_rel = rel > max_rel ? rel : max_rel;
    le3 += rel_ok & (ad <= 1e-3 * abs_b);
    le53 += rel_ok & (ad <= 5e-3 * abs_b);
    const bool is_small = both & !rel_ok;
    const double small_err = is_small ? ad : 0.0;
    max_small = small_err > max_small ? small_err : max_small;
    dot += both ? a * b : 0.0;
    aa += both ? a * a : 0.0;
    bb += both ? b * b : 0.0;
    const double excess = both ? ad - rtol * abs_b : -kInf;
    max_excess = excess > max_excess ? excess : max_excess;
    const double ulp = both ? ulps[i] : 0.0;
    sum_ulp += ulp;
    max_ulp = ulp > max_ulp ? ulp : max_ulp;
  }
  small = finite - rel_count;  // finite pairs are either relative or small
  if (finite != static_cast<int64_t>(n)) {
    // NaN/Inf where the other side has none, or Inf of the other sign: only in blocks that
    // have a non-finite pair.
    for (std::size_t i = 0; i < n; ++i) {
      const double a = va[i];
      const double b = vb[i];
      const bool nan_a = a != a;
      const bool nan_b = b != b;
      const bool inf_a = std::fabs(a) == kInf;
      const bool inf_b = std::fabs(b) == kInf;
      nan_mm += nan_a != nan_b;
      inf_mm += (inf_a != inf_b) | (inf_a & inf_b & (a != b));
    }
  }
  int64_t ulp_beyond[kUlpBinBounds.size()] = {};
  CumulativeCounts(ulp_f, n, kUlpBinBounds, ulp_beyond);
  if constexpr (kJudge) {
    // How far past its allowance each element is, by the criterion; NaN/Inf where the other
    // side has none is infinitely far, agreeing NaN/Inf not at all.
    alignas(64) float ratio_f[kBlock];
    const double atol = knobs.atol;
    const double inverse_max_ulps = knobs.inverse_max_ulps;
    if (knobs.criterion == Criterion::kBitwise) {
      for (std::size_t i = 0; i < n; ++i) ratio_f[i] = pa[i] == pb[i] ? 0.0f : kInfFloat;
    } else {
      // One loop per criterion: the abs/rel one needs no ulp distances.
      if (knobs.criterion == Criterion::kUlps) {
        for (std::size_t i = 0; i < n; ++i) {
          const double a = va[i];
          const double b = vb[i];
          const double ulp_ratio = ulps[i] == 0.0 ? 0.0 : ulps[i] * inverse_max_ulps;
          const bool finite = (std::fabs(a) <= kMaxDouble) & (std::fabs(b) <= kMaxDouble);
          const bool agree = ((a != a) & (b != b)) | (a == b);
          const double ratio = finite ? ulp_ratio : (agree ? 0.0 : kInf);
          ratio_f[i] = static_cast<float>(ratio);
        }
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          const double a = va[i];
          const double b = vb[i];
          const double ad = std::fabs(a - b);
          const double abs_rel_ratio = ad == 0.0 ? 0.0 : ad / (atol + rtol * std::fabs(b));
          const bool finite = (std::fabs(a) <= kMaxDouble) & (std::fabs(b) <= kMaxDouble);
          const bool agree = ((a != a) & (b != b)) | (a == b);
          const double ratio = finite ? abs_rel_ratio : (agree ? 0.0 : kInf);
          ratio_f[i] = static_cast<float>(ratio);
        }
      }
    }
    int64_t ratio_beyond[kRatioBinBounds.size()] = {};
    const float largest = CumulativeCounts(ratio_f, n, kRatioBinBounds, ratio_beyond);
    // beyond[j] counts ratios > bound j; a ratio > 1 (bound 5) is a violation.
    acc->ratio_histogram[0] += static_cast<int64_t>(n) - ratio_beyond[0];
    for (std::size_t j = 1; j < kRatioBinBounds.size(); ++j) {
      acc->ratio_histogram[j] += ratio_beyond[j - 1] - ratio_beyond[j];
    }
    acc->ratio_histogram.back() += ratio_beyond[kRatioBinBounds.size() - 1];
    acc->violations += ratio_beyond[5];
    acc->max_ratio = std::max(acc->max_ratio, static_cast<double>(largest));
  }
  acc->finite += finite;
  acc->rel_count += rel_count;
  acc->small_count += small;
  acc->max_abs = std::max(acc->max_abs, max_abs);
  acc->sum_abs += sum_abs;
  acc->sum_sq += sum_sq;
  acc->max_rel = std::max(acc->max_rel, max_rel);
  acc->sum_rel += sum_rel;
  acc->max_abs_small = std::max(acc->max_abs_small, max_small);
  acc->dot += dot;
  acc->sum_a2 += aa;
  acc->sum_b2 += bb;
  acc->max_ulp = std::max(acc->max_ulp, max_ulp);
  acc->sum_ulp += sum_ulp;
  acc->ulp_histogram[0] += finite - ulp_beyond[0];
  for (std::size_t j = 1; j < kUlpBinBounds.size(); ++j) {
    acc->ulp_histogram[j] += ulp_beyond[j - 1] - ulp_beyond[j];
  }
  acc->ulp_histogram.back() += ulp_beyond[kUlpBinBounds.size() - 1];
  acc->rel_le_1e3 += le3;
  acc->rel_le_5e3 += le53;
  acc->nan_mismatch += nan_mm;
  acc->inf_mismatch += inf_mm;
  acc->identical += identical;
  acc->max_excess = std::max(acc->max_excess, max_excess);

  // The worst elements: a scalar look only at blocks that can change the list.
  const double floor = knobs.worst_floor;
  if (max_abs > std::max(WorstThreshold(acc->worst, knobs.worst), floor) || nan_mm > 0 ||
      inf_mm > 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const double a = va[i];
      const double b = vb[i];
      double error = 0.0;
      if (std::isfinite(a) && std::isfinite(b)) {
        error = std::fabs(a - b);
      } else if (std::isnan(a) != std::isnan(b) || std::isinf(a) != std::isinf(b) ||
                 (std::isinf(a) && a != b)) {
        error = kInf;
      }
      if (error > WorstThreshold(acc->worst, knobs.worst) && error > 0.0 && error >= floor) {
        InsertWorst(&acc->worst, knobs.worst, {base + static_cast<int64_t>(i), a, b, error});
      }
    }
  }
}

template <class T>
PARITY_INLINE void PairChunk(const std::byte* a, const std::byte* b, std::size_t n, int64_t base,
                             const Knobs& knobs, PairMetrics* acc) {
  const auto* pa = reinterpret_cast<const typename T::Raw*>(a);
  const auto* pb = reinterpret_cast<const typename T::Raw*>(b);
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t m = std::min(kBlock, n - i);
    const int64_t at = base + static_cast<int64_t>(i);
    if (knobs.judge) {
      PairBlock<T, true>(pa + i, pb + i, m, at, knobs, acc);
    } else {
      PairBlock<T, false>(pa + i, pb + i, m, at, knobs, acc);
    }
  }
}

PARITY_INLINE void ChunkMetricsImpl(DType dtype, const std::byte* a, const std::byte* b,
                                    std::size_t n, int64_t base, const Knobs& knobs,
                                    PairMetrics* acc) {
  switch (dtype) {
    case DType::kFloat32:
      return PairChunk<F32>(a, b, n, base, knobs, acc);
    case DType::kFloat64:
      return PairChunk<F64>(a, b, n, base, knobs, acc);
    case DType::kFloat16:
      return PairChunk<F16>(a, b, n, base, knobs, acc);
    case DType::kBFloat16:
      return PairChunk<BF16>(a, b, n, base, knobs, acc);
    case DType::kFloat8E4M3FN:
      return PairChunk<E4M3>(a, b, n, base, knobs, acc);
    case DType::kFloat8E5M2:
      return PairChunk<E5M2>(a, b, n, base, knobs, acc);
    case DType::kBool:
      return PairChunk<Bool>(a, b, n, base, knobs, acc);
    case DType::kInt8:
      return PairChunk<Int<int8_t>>(a, b, n, base, knobs, acc);
    case DType::kInt16:
      return PairChunk<Int<int16_t>>(a, b, n, base, knobs, acc);
    case DType::kInt32:
      return PairChunk<Int<int32_t>>(a, b, n, base, knobs, acc);
    case DType::kInt64:
      return PairChunk<Int<int64_t>>(a, b, n, base, knobs, acc);
    case DType::kUInt8:
      return PairChunk<Int<uint8_t>>(a, b, n, base, knobs, acc);
    case DType::kUInt16:
      return PairChunk<Int<uint16_t>>(a, b, n, base, knobs, acc);
    case DType::kUInt32:
      return PairChunk<Int<uint32_t>>(a, b, n, base, knobs, acc);
    case DType::kUInt64:
      return PairChunk<Int<uint64_t>>(a, b, n, base, knobs, acc);
  }
}

/// Accumulates the metrics of `n` element pairs of `dtype` at `a` and `b` (flat index of the
/// first: `base`) into `acc`, at one instruction-set level each; the caller checks that the
/// CPU has it. Each is defined in a file of its own (metrics_<level>.cc).
void ChunkMetricsBaseline(DType dtype, const std::byte* a, const std::byte* b, std::size_t n,
                          int64_t base, const Knobs& knobs, PairMetrics* acc);
void ChunkMetricsV3(DType dtype, const std::byte* a, const std::byte* b, std::size_t n,
                    int64_t base, const Knobs& knobs, PairMetrics* acc);
void ChunkMetricsV4(DType dtype, const std::byte* a, const std::byte* b, std::size_t n,
                    int64_t base, const Knobs& knobs, PairMetrics* acc);

}  // namespace parity::metrics_internal

#endif  // PARITY_COMPARE_METRICS_KERNELS_H_
