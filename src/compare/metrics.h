// SPDX-License-Identifier: Apache-2.0
// Per-tensor comparison metrics (docs/DESIGN.md "Comparison metrics"), in one streaming pass.
#ifndef PARITY_COMPARE_METRICS_H_
#define PARITY_COMPARE_METRICS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "compare/tolerance.h"
#include "core/json_util.h"
#include "core/status.h"
#include "io/tensor.h"

namespace parity {

/// Upper bounds of the ulp histogram's bins; a last bin counts distances above the last bound.
inline constexpr std::array<double, 10> kUlpBinBounds = {0, 1, 2, 4, 8, 16, 64, 256, 1024, 65536};

/// One of the worst element pairs: flat index (C order), both values and |a - b| (Inf for a
/// NaN/Inf position mismatch).
struct WorstElement {
  int64_t index = 0;
  double a = 0.0;
  double b = 0.0;
  double error = 0.0;
};

/// Sums, maxima and counts over the element pairs of two tensors of the same dtype and size.
/// Error metrics are over the pairs where both values are finite; B is the reference for
/// relative measures (|a - b| / |b|, as torch.testing.assert_close(A, B)).
struct PairMetrics {
  int64_t count = 0;        ///< element pairs
  int64_t finite = 0;       ///< pairs with both values finite
  int64_t rel_count = 0;    ///< finite pairs with |b| >= tiny
  int64_t small_count = 0;  ///< finite pairs with |b| < tiny
  double max_abs = 0.0, sum_abs = 0.0, sum_sq = 0.0;
  double max_rel = 0.0, sum_rel = 0.0;
  double max_abs_small = 0.0;
  double dot = 0.0, sum_a2 = 0.0, sum_b2 = 0.0;
  double max_ulp = 0.0, sum_ulp = 0.0;
  std::array<int64_t, kUlpBinBounds.size() + 1> ulp_histogram{};
  int64_t rel_le_1e3 = 0, rel_le_5e3 = 0;
  int64_t nan_mismatch = 0, inf_mismatch = 0, identical = 0;
  /// max over finite pairs of |a - b| - rtol·|b|: the abs/rel criterion holds iff <= atol.
  double max_excess = -std::numeric_limits<double>::infinity();
  std::vector<WorstElement> worst;  ///< largest errors first
  /// Judged against a tolerance (MetricsOptions::tolerance): elements past their allowance,
  /// the largest ratio |a - b| / allowed, and those ratios binned at kRatioBinBounds.
  bool judged = false;
  int64_t violations = 0;
  double max_ratio = 0.0;
  std::array<int64_t, 10> ratio_histogram{};

  double mean_abs() const;
  double rmse() const;
  double mean_rel() const;
  double cosine() const;  ///< NaN when either side is all zero
  double mean_ulp() const;
  double rms_b() const;
};

/// Bounds of the bins of |a - b| / allowed: 0, then (0, 1e-3], ..., (10, 100], and > 100.
/// Allowed is atol + rtol·|b| (abs/rel), max_ulps ulps, or nothing (bitwise); NaN/Inf position
/// mismatches are infinitely far.
inline constexpr std::array<double, 9> kRatioBinBounds = {0, 1e-3, 1e-2, 0.1, 0.5, 1, 2, 10, 100};

struct MetricsOptions {
  double rtol = 0.0;  ///< for max_excess
  double tiny = 0.0;  ///< |b| below this is judged by max_abs_small, not relative error
  int worst = 5;      ///< how many worst elements to keep
  /// When given (with its final atol), each element is judged in the same pass: violations,
  /// max_ratio and ratio_histogram are filled.
  const Tolerance* tolerance = nullptr;
};

/// The smallest normal number of a float dtype (1 for integers): the default `tiny`.
double SmallestNormal(DType dtype);

/// Computes PairMetrics in one pass over `a` and `b` (same dtype, same element count) on
/// ThreadCount() threads, accumulating in float64, in an order independent of the thread
/// count. ULP distances are in the dtype's own grid, on the ordered-integer mapping where +0 and
/// -0 coincide (integers: |a - b|).
Result<PairMetrics> ComputePairMetrics(const Tensor& a, const Tensor& b,
                                       const MetricsOptions& options);

/// Whether every element of `m` is within `t` (its atol final): no NaN/Inf position mismatch,
/// and max_excess <= atol, max_ulp <= max_ulps, or all identical, by the criterion.
bool WithinTolerance(const PairMetrics& m, const Tolerance& t);

/// Error of `x` against a golden reference `golden` (any float dtypes, same element count).
struct GoldenError {
  double rmse = 0.0;
  double max_abs = 0.0;
  int64_t nonfinite_mismatch = 0;  ///< NaN/Inf where the golden has none, or the reverse
  double golden_rms = 0.0;
  double golden_max_abs = 0.0;
};
Result<GoldenError> ComputeGoldenError(const Tensor& x, const Tensor& golden);

/// The metric fields of docs/DESIGN.md as JSON (count, max_abs, ..., worst), with `shape` used to
/// turn flat indices into positions.
Json MetricsJson(const PairMetrics& m, const std::vector<int64_t>& shape);

}  // namespace parity

#endif  // PARITY_COMPARE_METRICS_H_
