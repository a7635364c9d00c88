// SPDX-License-Identifier: Apache-2.0
// The oracle's per-op replays (internal: oracle.cc's registry dispatches to them) and the
// helpers they share.
#ifndef PARITY_ORACLE_KERNELS_H_
#define PARITY_ORACLE_KERNELS_H_

#include <fmt/format.h>

#include <array>
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
Outputs AttentionBackward(const OpCall& call);  // torch 2.x's kernels' backwards
/// The flash kernels' (output, logsumexp) per-element rounding scales (output_bounds.cc).
Outputs AttentionForwardScales(const OpCall& call);
/// Its backward's gradients' per-element rounding scales (output_bounds.cc).
Outputs AttentionBackwardScales(const OpCall& call);
/// Whether `op` is one of torch 2.x's attention kernels or their backwards (the CPU flash
/// kernel, the GPU kernels), judged per element by the two functions above.
bool IsAttentionKernel(std::string_view op);
/// Of an attention op's `outputs`, how many lead that are values (ValueOutputs).
std::size_t AttentionValueOutputs(const OpCall& call, std::size_t outputs);

// aten ops (version 2 dumps): inputs found by their schema argument names.
Outputs Mm(const OpCall& call);
Outputs Addmm(const OpCall& call);  // addmm and baddbmm
Outputs Convolution(const OpCall& call);
Outputs NativeLayerNorm(const OpCall& call);
Outputs FusedRmsNorm(const OpCall& call);  // torch 2.x's RMSNorm kernel (GPUs)
Outputs FusedRmsNormBackward(const OpCall& call);
Outputs NativeBatchNorm(const OpCall& call);
Outputs Sigmoid(const OpCall& call);
Outputs Tanh(const OpCall& call);
Outputs Sub(const OpCall& call);
Outputs Div(const OpCall& call);
Outputs NativeDropout(const OpCall& call);
Outputs EmbeddingRenorm(const OpCall& call);
Outputs EmbeddingBag(const OpCall& call);  // _embedding_bag and _embedding_bag_forward_only
Outputs MaxPool2dWithIndices(const OpCall& call);
Outputs AvgPool2d(const OpCall& call);  // avg_pool2d and _adaptive_avg_pool2d
Outputs Cat(const OpCall& call);
Outputs IndexSelect(const OpCall& call);
Outputs Gather(const OpCall& call);
Outputs IndexTensor(const OpCall& call);  // index.Tensor: integer indices at consecutive dims
Outputs IndexPut(const OpCall& call);     // index_put (accumulate), no position twice
Outputs Cumsum(const OpCall& call);
Outputs MseLoss(const OpCall& call);
Outputs BceWithLogits(const OpCall& call);
Outputs NllLoss(const OpCall& call);  // nll_loss_forward and nll_loss2d_forward
// aten backward ops.
Outputs ThresholdBackward(const OpCall& call);
Outputs SigmoidBackward(const OpCall& call);
Outputs TanhBackward(const OpCall& call);
Outputs GeluBackward(const OpCall& call);
Outputs SoftmaxBackward(const OpCall& call);  // _softmax_ and _log_softmax_backward_data
Outputs NllLossBackward(const OpCall& call);
Outputs MseLossBackward(const OpCall& call);
Outputs BinaryCrossEntropy(const OpCall& call);  // and binary_cross_entropy_backward
Outputs NativeLayerNormBackward(const OpCall& call);
Outputs NativeBatchNormBackward(const OpCall& call);
Outputs EmbeddingDenseBackward(const OpCall& call);
Outputs EmbeddingBagDenseBackward(const OpCall& call);
Outputs EmbeddingBagBackward(const OpCall& call);
/// _fused_adam_ and _fused_adamw_: the tensors they write, in schema order (ops_optim.cc).
Outputs FusedAdam(const OpCall& call);
/// Their outputs' per-element rounding scales: the magnitudes of the terms each sums.
Outputs FusedAdamScales(const OpCall& call);  // torch 2.x: dense, offset2bag from offsets
Outputs MaxPool2dBackward(const OpCall& call);
Outputs AvgPool2dBackward(const OpCall& call);  // and _adaptive_avg_pool2d_backward
Outputs ConvolutionBackward(const OpCall& call);
// Optimizer and other elementwise aten ops.
Outputs Sqrt(const OpCall& call);
Outputs Addcmul(const OpCall& call);  // addcmul and addcdiv, in place or not
Outputs Lerp(const OpCall& call);
Outputs Foreach(const OpCall& call);  // _foreach_<op>: the op on each list element
Outputs Fill(const OpCall& call);     // zeros, ones, zeros_like, ones_like, new_zeros, fill_
Outputs Copy(const OpCall& call);     // clone, copy_, _to_copy
Outputs Stack(const OpCall& call);
// Trivial elementwise ops (ops_trivial.cc).
Outputs Neg(const OpCall& call);         // exact
Outputs Reciprocal(const OpCall& call);  // one rounding
Outputs Clamp(const OpCall& call);       // clamp, clamp_min, clamp_max (and .Tensor); exact
// torch 2.x's model code (ops_math.cc)
Outputs Sin(const OpCall& call);
Outputs Cos(const OpCall& call);
Outputs Rsqrt(const OpCall& call);
Outputs Pow(const OpCall& call);  // Tensor_Scalar, Tensor_Tensor, Scalar
Outputs SiluBackward(const OpCall& call);
Outputs SafeSoftmax(const OpCall& call);     // _safe_softmax: all -inf lines give zeros
Outputs Compare(const OpCall& call);         // eq, ne, ge, gt, le, lt; exact
Outputs Bitwise(const OpCall& call);         // bitwise_and/or/not, logical_not; exact
Outputs Where(const OpCall& call);           // exact
Outputs AllAny(const OpCall& call);          // all, any (whole or along dim); exact
Outputs SliceBackward(const OpCall& call);   // exact
Outputs SelectBackward(const OpCall& call);  // exact
Outputs Arange(const OpCall& call);          // start + i·step
Outputs ScalarTensor(const OpCall& call);    // exact

/// "not replayable: <why>" (kInvalidInput).
Status Unfit(std::string_view why);

/// Attribute readers: absent or null gives the default; a value of the wrong type is Unfit.
Result<double> AttrNumber(const OpCall& call, const char* name, double fallback);
Result<bool> AttrBool(const OpCall& call, const char* name, bool fallback);
/// An int, or a list of `count` ints (a single int is repeated).
Result<std::vector<int64_t>> AttrInts(const OpCall& call, const char* name, std::size_t count,
                                      int64_t fallback);

/// The input passed as schema argument `arg`, when the call names its arguments; else the
/// input at `position` (calls without names). Null when absent (an optional tensor left None).
const Array* Arg(const OpCall& call, std::string_view arg, std::size_t position);

/// The inputs of list argument `arg` ("tensors"), in order; every input when the call names
/// no arguments.
std::vector<const Array*> ArgList(const OpCall& call, std::string_view arg);

/// An aten backward's `output_mask`: which of (input, weight, bias) gradients it computes and
/// records (all three when absent).
Result<std::array<bool, 3>> OutputMask(const OpCall& call);

/// Refuses an output of `numel` elements that the call's recorded output `index` could not
/// hold (shapes from attrs are checked before memory is taken for them); without a recorded
/// output, more than 2^24 elements. Replays never allocate beyond what the record holds.
Status CheckOutputSize(const OpCall& call, std::size_t index, int64_t numel);

/// The gradients `mask` (OutputMask) asks for, in order: a backward's outputs.
std::vector<Array> Masked(const std::array<bool, 3>& mask, Array input, Array weight, Array bias);

/// An aten `reduction` attr: 0 none, 1 mean (the default), 2 sum.
Result<int> Reduction(const OpCall& call);

/// a (..., m, k) · b (..., k, n), batch dimensions broadcast (NumPy rules), in float64.
Result<Array> BatchedProduct(const Array& a, const Array& b);

/// Normalises a possibly negative dim against `rank` (a 0-d tensor takes dims 0 and -1).
Result<std::size_t> NormalizeDim(int64_t dim, std::size_t rank);

/// C-order strides of `shape` (in elements).
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);

/// The broadcast shape of two shapes (NumPy rules), or Unfit.
Result<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b);

/// out[i] = f(a[ia], b[ib]) over the broadcast shape.
template <typename F>
Result<Array> Broadcast(const Array& a, const Array& b, F&& f);

/// y = f(x) over the input `self` (the first input where the call names none).
template <typename F>
Outputs MapSelf(const OpCall& call, F&& f);

/// C[m x n] = A[m x k] · B[k x n] (+ C when accumulate), row-major, in float64 (OpenBLAS).
void Gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
          bool transpose_b, bool accumulate = false);

// --- template definitions ---------------------------------------------------------------------

template <typename F>
Outputs MapSelf(const OpCall& call, F&& f) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  Array y = *x;
  for (double& v : y.data) v = f(v);
  return std::vector<Array>{std::move(y)};
}

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
