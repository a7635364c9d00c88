// SPDX-License-Identifier: Apache-2.0
// Row-major GEMM through column-major BLAS (cuBLAS, rocBLAS): C = A·B row-major is
// Cᵀ = Bᵀ·Aᵀ column-major, so the call swaps the operands and the outer dimensions.
#ifndef PARITY_BENCH_GPU_GEMM_ARGS_H_
#define PARITY_BENCH_GPU_GEMM_ARGS_H_

#include <climits>
#include <cstdint>

namespace parity::bench::gpu {

/// The arguments of a column-major, no-transpose gemm(m, n, k, A, lda, B, ldb, C, ldc).
struct ColumnMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;

  /// Whether every dimension and leading dimension fits the 32-bit int of the BLAS API.
  bool FitsInt32() const {
    for (int64_t v : {m, n, k, lda, ldb, ldc}) {
      if (v < 0 || v > INT_MAX) return false;
    }
    return true;
  }
};

/// The column-major call that computes row-major C (m×n) = A (m×k) · B (k×n).
inline ColumnMajorGemm FromRowMajor(int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                                    void* c) {
  ColumnMajorGemm g;
  g.m = n;
  g.n = m;
  g.k = k;
  g.a = b;
  g.lda = n > 0 ? n : 1;
  g.b = a;
  g.ldb = k > 0 ? k : 1;
  g.c = c;
  g.ldc = n > 0 ? n : 1;
  return g;
}

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_GEMM_ARGS_H_
