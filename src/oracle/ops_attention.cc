// SPDX-License-Identifier: Apache-2.0
// scaled_dot_product_attention (attn_mask, is_causal, scale) in float64:
// softmax(Q·Kᵀ·scale + mask)·V over the last two dimensions, batch dimensions broadcast.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {

Outputs Attention(const OpCall& call) {
  if (call.inputs.size() < 3) return Unfit("attention needs query, key and value");
  const Array& q = call.inputs[0];
  const Array& k = call.inputs[1];
  const Array& v = call.inputs[2];
  if (q.shape.size() < 2 || k.shape.size() != q.shape.size() || v.shape.size() != q.shape.size()) {
    return Unfit("query, key and value need the same rank, at least 2");
  }
  const std::size_t r = q.shape.size();
  const int64_t l = q.shape[r - 2], e = q.shape[r - 1], s = k.shape[r - 2], ev = v.shape[r - 1];
  if (k.shape[r - 1] != e || v.shape[r - 2] != s) {
    return Unfit(fmt::format("query {}, key {}, value {} do not fit", ShapeString(q.shape),
                             ShapeString(k.shape), ShapeString(v.shape)));
  }
  const std::vector<int64_t> batch(q.shape.begin(), q.shape.end() - 2);
  if (!std::equal(batch.begin(), batch.end(), k.shape.begin()) ||
      !std::equal(batch.begin(), batch.end(), v.shape.begin())) {
    return Unfit("query, key and value batch dimensions differ");
  }
  PARITY_ASSIGN_OR_RETURN(bool causal, AttrBool(call, "is_causal", false));
  PARITY_ASSIGN_OR_RETURN(double scale,
                          AttrNumber(call, "scale", 1.0 / std::sqrt(static_cast<double>(e))));
  PARITY_ASSIGN_OR_RETURN(double dropout_p, AttrNumber(call, "dropout_p", 0.0));
  if (dropout_p != 0.0) return Unfit("attention with dropout draws random numbers");
  // An additive float mask or a boolean keep-mask, broadcast to (batch..., L, S).
  std::vector<int64_t> mask_shape = batch;
  mask_shape.push_back(l);
  mask_shape.push_back(s);
  Array full_mask = Array::Filled(mask_shape, 0.0);
  if (call.inputs.size() > 3) {
    PARITY_ASSIGN_OR_RETURN(
        full_mask, Broadcast(full_mask, call.inputs[3], [](double, double m) { return m; }));
    if (full_mask.shape != mask_shape) return Unfit("attn_mask does not broadcast to the scores");
  }
  const bool boolean_mask = call.input_dtypes.size() > 3 && call.input_dtypes[3] == DType::kBool;
  const int64_t batches = q.numel() / std::max<int64_t>(l * e, 1);
  std::vector<int64_t> shape = batch;
  shape.push_back(l);
  shape.push_back(ev);
  Array out = Array::Filled(shape);
  std::vector<double> scores(static_cast<std::size_t>(l * s));
  // torch 1.13's aten _scaled_dot_product_attention* return (output, attention weights); the
  // weights are empty unless need_attn_weights.
  const bool aten = call.op.starts_with("_scaled_dot_product_attention");
  std::vector<int64_t> weights_shape = mask_shape;
  if (aten && (call.recorded_outputs.size() != 2 || call.recorded_outputs[1].numel() == 0)) {
    weights_shape = call.recorded_outputs.size() == 2 ? call.recorded_outputs[1].shape
                                                      : std::vector<int64_t>{0};
  }
  Array weights = Array::Filled(aten ? weights_shape : std::vector<int64_t>{0});
  const bool keep_weights = weights.numel() == batches * l * s && weights.numel() > 0;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < batches; ++b) {
    Gemm(q.data.data() + b * l * e, k.data.data() + b * s * e, scores.data(), l, s, e, true);
    for (int64_t i = 0; i < l; ++i) {
      double top = neg_inf;
      for (int64_t j = 0; j < s; ++j) {
        double& x = scores[i * s + j];
        x *= scale;
        const double m = full_mask.data[b * l * s + i * s + j];
        if (boolean_mask) {
          if (m == 0.0) x = neg_inf;
        } else {
          x += m;
        }
        if (causal && j > i) x = neg_inf;
        top = std::max(top, x);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < s; ++j) {
        double& x = scores[i * s + j];
        x = top == neg_inf ? 0.0 : std::exp(x - top);
        sum += x;
      }
      for (int64_t j = 0; j < s; ++j) scores[i * s + j] = sum > 0 ? scores[i * s + j] / sum : 0.0;
    }
    if (keep_weights) std::copy(scores.begin(), scores.end(), weights.data.begin() + b * l * s);
    Gemm(scores.data(), v.data.data() + b * s * ev, out.data.data() + b * l * ev, l, ev, s, false);
  }
  if (aten) return std::vector<Array>{std::move(out), std::move(weights)};
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
