// SPDX-License-Identifier: Apache-2.0
// GEMM validation: inputs anyone can regenerate, sampled rows and columns, and the check of
// the sampled entries of C against a float64 product with `parity compare`'s `auto` bound.
#ifndef PARITY_BENCH_GEMM_CHECK_H_
#define PARITY_BENCH_GEMM_CHECK_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "core/dtype.h"
#include "core/json_util.h"

namespace parity::bench {

/// Element i of GEMM operand `salt` (1 = A, 2 = B): uniform in [-1, 1) from SplitMix64 of
/// (seed, salt, i); the same on every platform.
double GemmInputValue(uint64_t seed, uint64_t salt, uint64_t i);

/// The rows of A and columns of B whose products are checked: 16 of each (all when n <= 16),
/// always including the first and last, the rest spread by the seed.
struct GemmSample {
  std::vector<int64_t> rows, columns;
};
GemmSample SampleRowsAndColumns(int64_t n, uint64_t seed);

/// The outcome of checking sampled entries of C.
struct GemmCheck {
  std::string dtype;
  int64_t k = 0;
  double u_compute = 0.0, u_storage = 0.0, lambda = 0.0;
  int64_t checked = 0;
  int64_t failures = 0;
  double max_error_over_bound = 0.0;  ///< max |c - ref| / bound; <= 1 passes
  /// The first failing entry, when there is one.
  int64_t bad_row = -1, bad_column = -1;
  double bad_value = 0.0, bad_reference = 0.0, bad_bound = 0.0;

  bool ok() const { return failures == 0; }
  /// One line: what failed and by how much, e.g. "C[5, 17] = 12.3 but the float64 product
  /// is 12.1 (bound 1e-5): 3 of 256 sampled entries outside parity compare's auto bound".
  std::string Summary() const;
  Json ToJson() const;
};

/// The name a GEMM result carries as its dtype: the dtype, or "tf32" for float32 with kTf32.
std::string GemmLabel(DType dtype, GemmMath math);

/// Checks C's sampled entries `c` (row-major over sample.rows × sample.columns) of C = A·B for
/// n×n operands a, b (the exact input values, row-major) computed in `dtype`: each against
/// the float64 dot product of its row and column, within λ·√n·u_compute·‖a_i∘b_j‖₂ +
/// (λ·√n·u_compute + 2·u_storage)·|ref| (λ = 6). float32 computes and stores with 2^-24,
/// float64 2^-53, bfloat16 and float16 compute with float32 and store with 2^-8 and 2^-11,
/// tf32 computes with 2^-11 (its operand rounding) and stores with 2^-24.
GemmCheck CheckGemmSample(DType dtype, GemmMath math, int64_t n, std::span<const double> a,
                          std::span<const double> b, const GemmSample& sample,
                          std::span<const double> c);

}  // namespace parity::bench

#endif  // PARITY_BENCH_GEMM_CHECK_H_
