// SPDX-License-Identifier: Apache-2.0
// The oracle's per-op replays (internal: oracle.cc's registry dispatches to them) and the
// helpers they share.
#ifndef PARITY_ORACLE_KERNELS_H_
#define PARITY_ORACLE_KERNELS_H_

#include <optional>
#include <string_view>
#include <vector>

#include "oracle/oracle.h"

namespace parity::oracle {

using Outputs = Result<std::vector<Array>>;

// One function per op family file.
Outputs Linear(const OpCall& call);
Outputs Matmul(const OpCall& call);
Outputs Bmm(const OpCall& call);
Outputs Conv(const OpCall& call);  // conv1d and conv2d
Outputs Softmax(const OpCall& call);
Outputs LogSoftmax(const OpCall& call);
Outputs LayerNorm(const OpCall& call);
Outputs RmsNorm(const OpCall& call);
Outputs BatchNorm(const OpCall& call);
Outputs Gelu(const OpCall& call);
Outputs Silu(const OpCall& call);
Outputs Relu(const OpCall& call);
Outputs Add(const OpCall& call);
Outputs Mul(const OpCall& call);
Outputs Dropout(const OpCall& call);
Outputs Embedding(const OpCall& call);
Outputs Sum(const OpCall& call);
Outputs Mean(const OpCall& call);
Outputs Attention(const OpCall& call);

/// "not replayable: <why>" (kInvalidInput).
Status Unfit(std::string_view why);

/// Attribute readers: absent or null gives the default; a value of the wrong type is Unfit.
Result<double> AttrNumber(const OpCall& call, const char* name, double fallback);
Result<bool> AttrBool(const OpCall& call, const char* name, bool fallback);
/// An int, or a list of `count` ints (a single int is repeated).
Result<std::vector<int64_t>> AttrInts(const OpCall& call, const char* name, std::size_t count,
                                      int64_t fallback);

/// Normalises a possibly negative dim against `rank`.
Result<std::size_t> NormalizeDim(int64_t dim, std::size_t rank);

/// C-order strides of `shape` (in elements).
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);

/// The broadcast shape of two shapes (NumPy rules), or Unfit.
Result<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b);

/// out[i] = f(a[ia], b[ib]) over the broadcast shape.
template <typename F>
Result<Array> Broadcast(const Array& a, const Array& b, F&& f);

/// C[m x n] = A[m x k] · B[k x n] (+ C when accumulate), row-major, in float64 (OpenBLAS).
void Gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
          bool transpose_b, bool accumulate = false);

// --- template definitions ---------------------------------------------------------------------

template <typename F>
Result<Array> Broadcast(const Array& a, const Array& b, F&& f) {
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(a.shape, b.shape));
  Array out = Array::Filled(shape);
  const std::size_t rank = shape.size();
  // Strides of a and b aligned to the output's rank; 0 where a dimension is broadcast.
  auto aligned = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> strides(rank, 0);
    const std::vector<int64_t> own = Strides(s);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t d = rank - s.size() + i;
      strides[d] = s[i] == 1 ? 0 : own[i];
    }
    return strides;
  };
  const std::vector<int64_t> sa = aligned(a.shape), sb = aligned(b.shape);
  std::vector<int64_t> index(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < out.numel(); ++o) {
    out.data[static_cast<std::size_t>(o)] =
        f(a.data[static_cast<std::size_t>(ia)], b.data[static_cast<std::size_t>(ib)]);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (shape[d] - 1);
      ib -= sb[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace parity::oracle

#endif  // PARITY_ORACLE_KERNELS_H_
