// SPDX-License-Identifier: Apache-2.0
// The magnitude of the summands behind an op's output, for the `auto` tolerance.
#ifndef PARITY_COMPARE_SCALE_H_
#define PARITY_COMPARE_SCALE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "io/tensor.h"

namespace parity {

/// The rms, over the output elements, of the ℓ2 norm of the summands each output element is a
/// sum of: for y = x·Wᵀ, sqrt(mean over (i, j) of Σ_k x_ik² w_jk²), computed exactly in
/// O((M + N)·K) from column sums of squares; for convolutions √K·rms(x)·rms(w) (the same
/// under independent inputs); for sum √K·rms(x), for mean rms(x)/√K. Nothing for ops without a
/// formula here (their outputs use the output's own rms). `k` is the op's reduction length.
/// For layer_norm (and aten's native_layer_norm, whose `attrs` say which optional tensors
/// were None) the rms of (|x| + |mean|)·rstd·|w| + |b|: torch applies x·(rstd·w) plus
/// (b − mean·rstd·w), whose rounding scales with those terms, not with the output. For a
/// multi-output op, output `output`'s: convolution_backward's grad_input √K·rms(g)·rms(w),
/// grad_weight √K·rms(g)·rms(x), grad_bias √K·rms(g); native_layer_norm_backward's dx
/// rms(rstd)·rms(g)·rms(w)·√3 (its three terms), dweight √K·rms(g) (x̂ has unit rms), dbias
/// √K·rms(g).
Result<std::optional<double>> SummandScale(
    const std::string& op, int64_t k, const std::vector<Tensor>& inputs,
    const std::vector<std::pair<std::string, Tensor>>& params, const Json& attrs = Json::object(),
    std::size_t output = 0);

}  // namespace parity

#endif  // PARITY_COMPARE_SCALE_H_
