// SPDX-License-Identifier: Apache-2.0
// softmax, log_softmax, layer_norm, rms_norm, batch_norm (and aten's native_layer_norm and
// native_batch_norm, with the statistics they return) in float64, two-pass statistics.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

// Calls f(base, stride, n) for every line of `shape` along `dim`.
template <typename F>
void ForEachLine(const std::vector<int64_t>& shape, std::size_t dim, F&& f) {
  int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < dim; ++i) outer *= shape[i];
  for (std::size_t i = dim + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t n = shape.empty() ? 1 : shape[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) f(o * n * inner + i, inner, n);
  }
}

Outputs SoftmaxLike(const OpCall& call, bool log) {
  if (call.inputs.empty()) return Unfit("softmax needs an input");
  const Array& x = call.inputs[0];
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, -1));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], x.shape.size()));
  Array y = x;
  ForEachLine(x.shape, x.shape.empty() ? 0 : dim, [&](int64_t base, int64_t stride, int64_t n) {
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) top = std::max(top, x.data[base + j * stride]);
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(x.data[base + j * stride] - top);
    const double log_sum = std::log(sum);
    for (int64_t j = 0; j < n; ++j) {
      const double shifted = x.data[base + j * stride] - top;
      y.data[base + j * stride] = log ? shifted - log_sum : std::exp(shifted) / sum;
    }
  });
  return std::vector<Array>{std::move(y)};
}

// The number of trailing elements normalised over, checked against the input's shape.
Result<int64_t> NormalizedSize(const OpCall& call, const Array& x) {
  const auto it = call.attrs.find("normalized_shape");
  std::vector<int64_t> dims;
  if (it != call.attrs.end() && it->is_array()) {
    for (const Json& d : *it) {
      if (!d.is_number_integer()) return Unfit("normalized_shape holds a non-integer");
      dims.push_back(d.get<int64_t>());
    }
  } else if (it != call.attrs.end() && it->is_number_integer()) {
    dims.push_back(it->get<int64_t>());
  } else {
    return Unfit("normalized_shape is missing");
  }
  if (dims.size() > x.shape.size() ||
      !std::equal(dims.begin(), dims.end(), x.shape.end() - static_cast<int64_t>(dims.size()))) {
    return Unfit(fmt::format("normalized_shape {} does not end input {}", ShapeString(dims),
                             ShapeString(x.shape)));
  }
  int64_t k = 1;
  for (int64_t d : dims) k *= d;
  return k;
}

}  // namespace

Outputs Softmax(const OpCall& call) { return SoftmaxLike(call, false); }

// _safe_softmax (torch 2.5+, SDPA's math path with a mask): softmax, but a line whose every
// input is -inf gives zeros instead of NaN.
Outputs SafeSoftmax(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(std::vector<Array> out, SoftmaxLike(call, false));
  const Array& x = call.inputs[0];
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, -1));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], x.shape.size()));
  Array& y = out[0];
  ForEachLine(x.shape, x.shape.empty() ? 0 : dim, [&](int64_t base, int64_t stride, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      if (x.data[base + j * stride] != -std::numeric_limits<double>::infinity()) return;
    }
    for (int64_t j = 0; j < n; ++j) y.data[base + j * stride] = 0.0;
  });
  return out;
}
Outputs LogSoftmax(const OpCall& call) { return SoftmaxLike(call, true); }

namespace {

// Layer normalisation of `x` over its trailing `normalized_shape`, with the per-row mean and
// 1/sqrt(var + eps) (shape: x's leading dims, then ones) that aten's native_layer_norm returns.
Outputs LayerNormOf(const OpCall& call, const Array& x, const Array* weight, const Array* bias) {
  PARITY_ASSIGN_OR_RETURN(int64_t k, NormalizedSize(call, x));
  PARITY_ASSIGN_OR_RETURN(double eps, AttrNumber(call, "eps", 1e-5));
  if ((weight && weight->numel() != k) || (bias && bias->numel() != k)) {
    return Unfit("weight or bias size differs from normalized_shape");
  }
  const std::size_t axis = x.shape.size() - call.attrs.at("normalized_shape").size();
  std::vector<int64_t> stat_shape(x.shape.begin(), x.shape.begin() + static_cast<int64_t>(axis));
  stat_shape.resize(x.shape.size(), 1);
  Array y = x, means = Array::Filled(stat_shape), rstds = Array::Filled(stat_shape);
  for (int64_t r = 0; k > 0 && r < x.numel() / k; ++r) {
    const double* row = x.data.data() + r * k;
    double mean = 0.0;
    for (int64_t j = 0; j < k; ++j) mean += row[j];
    mean /= static_cast<double>(k);
    double var = 0.0;
    for (int64_t j = 0; j < k; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(k);
    const double inv = 1.0 / std::sqrt(var + eps);
    means.data[r] = mean;
    rstds.data[r] = inv;
    for (int64_t j = 0; j < k; ++j) {
      double v = (row[j] - mean) * inv;
      if (weight) v *= weight->data[j];
      if (bias) v += bias->data[j];
      y.data[r * k + j] = v;
    }
  }
  return std::vector<Array>{std::move(y), std::move(means), std::move(rstds)};
}

}  // namespace

Outputs LayerNorm(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("layer_norm needs an input");
  PARITY_ASSIGN_OR_RETURN(
      std::vector<Array> out,
      LayerNormOf(call, call.inputs[0], call.Param("weight"), call.Param("bias")));
  out.resize(1);
  return out;
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (output, mean, rstd).
Outputs NativeLayerNorm(const OpCall& call) {
  const Array* x = Arg(call, "input", 0);
  if (x == nullptr) return Unfit("native_layer_norm needs an input");
  const bool named = !call.input_args.empty();
  return LayerNormOf(call, *x, named ? Arg(call, "weight", 1) : nullptr,
                     named ? Arg(call, "bias", 2) : nullptr);
}

Outputs RmsNorm(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("rms_norm needs an input");
  const Array& x = call.inputs[0];
  PARITY_ASSIGN_OR_RETURN(int64_t k, NormalizedSize(call, x));
  // torch's default eps is the input dtype's machine epsilon.
  const DType dtype = call.input_dtypes.empty() ? DType::kFloat32 : call.input_dtypes[0];
  const double machine_eps = 2.0 * UnitRoundoff(dtype);
  PARITY_ASSIGN_OR_RETURN(double eps, AttrNumber(call, "eps", machine_eps));
  const Array* weight = call.Param("weight");
  if (weight && weight->numel() != k) return Unfit("weight size differs from normalized_shape");
  Array y = x;
  for (int64_t r = 0; k > 0 && r < x.numel() / k; ++r) {
    const double* row = x.data.data() + r * k;
    double squares = 0.0;
    for (int64_t j = 0; j < k; ++j) squares += row[j] * row[j];
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(k) + eps);
    for (int64_t j = 0; j < k; ++j) {
      y.data[r * k + j] = row[j] * inv * (weight ? weight->data[j] : 1.0);
    }
  }
  return std::vector<Array>{std::move(y)};
}

namespace {

struct BatchNormArgs {
  const Array* x = nullptr;
  const Array *weight = nullptr, *bias = nullptr, *running_mean = nullptr, *running_var = nullptr;
};

// Batch normalisation over (N, C, ...) per channel; with the batch mean and 1/sqrt(var + eps)
// (biased variance) aten's native_batch_norm returns in training, empty ones in eval.
Outputs BatchNormOf(const OpCall& call, const BatchNormArgs& a, bool training) {
  const Array& x = *a.x;
  if (x.shape.size() < 2) return Unfit("batch_norm needs (N, C, ...) input");
  PARITY_ASSIGN_OR_RETURN(double eps, AttrNumber(call, "eps", 1e-5));
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t spatial = n * c > 0 ? x.numel() / (n * c) : 0;
  for (const Array* p : {a.running_mean, a.running_var, a.weight, a.bias}) {
    if (p && p->numel() != c) return Unfit("a per-channel param's size differs from C");
  }
  if (!training && (!a.running_mean || !a.running_var)) {
    return Unfit("eval-mode batch_norm needs running_mean and running_var");
  }
  Array y = x;
  Array means = Array::Filled({training ? c : 0}), invstds = Array::Filled({training ? c : 0});
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0.0, var = 0.0;
    if (training) {  // batch statistics (biased variance), as the forward pass uses them
      const double count = static_cast<double>(n * spatial);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t s = 0; s < spatial; ++s) mean += x.data[(i * c + ch) * spatial + s];
      }
      mean /= count;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t s = 0; s < spatial; ++s) {
          const double d = x.data[(i * c + ch) * spatial + s] - mean;
          var += d * d;
        }
      }
      var /= count;
      means.data[ch] = mean;
      invstds.data[ch] = 1.0 / std::sqrt(var + eps);
    } else {
      mean = a.running_mean->data[ch];
      var = a.running_var->data[ch];
    }
    const double scale = (a.weight ? a.weight->data[ch] : 1.0) / std::sqrt(var + eps);
    const double shift = a.bias ? a.bias->data[ch] : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        y.data[at] = (x.data[at] - mean) * scale + shift;
      }
    }
  }
  return std::vector<Array>{std::move(y), std::move(means), std::move(invstds)};
}

}  // namespace

Outputs BatchNorm(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("batch_norm needs an input");
  PARITY_ASSIGN_OR_RETURN(bool training, AttrBool(call, "training", false));
  BatchNormArgs a{&call.inputs[0], call.Param("weight"), call.Param("bias"),
                  call.Param("running_mean"), call.Param("running_var")};
  PARITY_ASSIGN_OR_RETURN(std::vector<Array> out, BatchNormOf(call, a, training));
  out.resize(1);
  return out;
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
// -> (output, save_mean, save_invstd). The running statistics it updates in place are not
// among its outputs.
Outputs NativeBatchNorm(const OpCall& call) {
  const Array* x = Arg(call, "input", 0);
  if (x == nullptr || call.input_args.empty()) return Unfit("native_batch_norm needs named inputs");
  PARITY_ASSIGN_OR_RETURN(bool training, AttrBool(call, "training", false));
  BatchNormArgs a{x, Arg(call, "weight", 1), Arg(call, "bias", 2), Arg(call, "running_mean", 3),
                  Arg(call, "running_var", 4)};
  return BatchNormOf(call, a, training);
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask) from the recorded mean and rstd: per row with x̂ = (x − mean)·rstd and
// h = g·w, dx = rstd·(h − mean(h) − x̂·mean(h·x̂)); dw = Σ g·x̂, db = Σ g over rows.
Outputs NativeLayerNormBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_out", 0);
  const Array* x = Arg(call, "input", 1);
  const Array* mean = Arg(call, "mean", 2);
  const Array* rstd = Arg(call, "rstd", 3);
  const Array* w = call.input_args.empty() ? nullptr : Arg(call, "weight", 4);
  if (g == nullptr || x == nullptr || mean == nullptr || rstd == nullptr || g->shape != x->shape) {
    return Unfit("native_layer_norm_backward needs grad_out, input, mean and rstd");
  }
  PARITY_ASSIGN_OR_RETURN(auto mask, OutputMask(call));
  PARITY_ASSIGN_OR_RETURN(const int64_t k, NormalizedSize(call, *x));
  const auto dims = static_cast<int64_t>(call.attrs.at("normalized_shape").size());
  const int64_t rows = k > 0 ? x->numel() / k : 0;
  if (mean->numel() != rows || rstd->numel() != rows || (w && w->numel() != k)) {
    return Unfit("mean, rstd or weight differ in size from the input's rows");
  }
  std::vector<int64_t> param_shape(x->shape.end() - dims, x->shape.end());
  Array dx = Array::Filled(x->shape), dw = Array::Filled(param_shape),
        db = Array::Filled(param_shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double m = mean->data[r], s = rstd->data[r];
    double mean_h = 0.0, mean_hx = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = (x->data[r * k + j] - m) * s,
                   h = g->data[r * k + j] * (w ? w->data[j] : 1.0);
      mean_h += h;
      mean_hx += h * xhat;
      dw.data[j] += g->data[r * k + j] * xhat;
      db.data[j] += g->data[r * k + j];
    }
    mean_h /= static_cast<double>(k);
    mean_hx /= static_cast<double>(k);
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = (x->data[r * k + j] - m) * s,
                   h = g->data[r * k + j] * (w ? w->data[j] : 1.0);
      dx.data[r * k + j] = s * (h - mean_h - xhat * mean_hx);
    }
  }
  if (w == nullptr) mask[1] = false;  // no weight, no gradient for it
  return Masked(mask, std::move(dx), std::move(dw), std::move(db));
}

// torch 2.x's _fused_rms_norm(input, normalized_shape, weight?, eps?) -> (output, rstd), the
// kernel GPUs run for RMSNorm: y = x·rstd·w with rstd = 1/sqrt(mean(x²) + eps) over the
// normalized dims, kept as (rows..., 1, ...). eps None is float32's machine epsilon where the
// kernel computes in float32 (float16, bfloat16 and float32 inputs), float64's otherwise.
Outputs FusedRmsNorm(const OpCall& call) {
  const Array* x = Arg(call, "input", 0);
  if (x == nullptr) return Unfit("_fused_rms_norm needs an input");
  PARITY_ASSIGN_OR_RETURN(const int64_t k, NormalizedSize(call, *x));
  const Array* w = call.input_args.empty() ? (call.inputs.size() > 1 ? &call.inputs[1] : nullptr)
                                           : Arg(call, "weight", 1);
  if (w != nullptr && w->numel() != k) return Unfit("weight size differs from normalized_shape");
  const DType dtype = call.input_dtypes.empty() ? DType::kFloat32 : call.input_dtypes[0];
  const double default_eps = dtype == DType::kFloat64 ? 0x1p-52 : 0x1p-23;
  PARITY_ASSIGN_OR_RETURN(const double eps, AttrNumber(call, "eps", default_eps));
  const auto dims = static_cast<int64_t>(call.attrs.at("normalized_shape").size());
  std::vector<int64_t> rstd_shape(x->shape.begin(), x->shape.end() - dims);
  rstd_shape.insert(rstd_shape.end(), static_cast<std::size_t>(dims), 1);
  Array y = *x, rstd = Array::Filled(rstd_shape);
  const int64_t rows = k > 0 ? x->numel() / k : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x->data.data() + r * k;
    double squares = 0.0;
    for (int64_t j = 0; j < k; ++j) squares += row[j] * row[j];
    rstd.data[r] = 1.0 / std::sqrt(squares / static_cast<double>(k) + eps);
    for (int64_t j = 0; j < k; ++j) {
      y.data[r * k + j] = row[j] * rstd.data[r] * (w ? w->data[j] : 1.0);
    }
  }
  return std::vector<Array>{std::move(y), std::move(rstd)};
}

// _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?, output_mask[2])
// -> (grad_input, grad_weight), with the forward's recorded rstd (the backward has no eps):
// x̂ = x·rstd, h = g·w, dx = rstd·(h − x̂·mean(h·x̂)), dw = Σ_rows g·x̂. An output the mask
// leaves out (or dw without a weight) is not returned, as it is not recorded.
Outputs FusedRmsNormBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_out", 0);
  const Array* x = Arg(call, "input", 1);
  const Array* rstd = Arg(call, "rstd", 2);
  const Array* w = call.input_args.empty() ? (call.inputs.size() > 3 ? &call.inputs[3] : nullptr)
                                           : Arg(call, "weight", 3);
  if (g == nullptr || x == nullptr || rstd == nullptr || g->shape != x->shape) {
    return Unfit("_fused_rms_norm_backward needs grad_out, input and rstd");
  }
  PARITY_ASSIGN_OR_RETURN(const int64_t k, NormalizedSize(call, *x));
  const int64_t rows = k > 0 ? x->numel() / k : 0;
  if (rstd->numel() != rows || (w && w->numel() != k)) {
    return Unfit("rstd or weight differ in size from the input's rows");
  }
  std::array<bool, 2> mask = {true, true};
  if (const auto it = call.attrs.find("output_mask"); it != call.attrs.end() && !it->is_null()) {
    if (!it->is_array() || it->size() != 2 || !(*it)[0].is_boolean() || !(*it)[1].is_boolean()) {
      return Unfit("output_mask is not two booleans");
    }
    mask = {(*it)[0].get<bool>(), (*it)[1].get<bool>()};
  }
  const auto dims = static_cast<int64_t>(call.attrs.at("normalized_shape").size());
  Array dx = Array::Filled(x->shape),
        dw = Array::Filled(std::vector<int64_t>(x->shape.end() - dims, x->shape.end()));
  for (int64_t r = 0; r < rows; ++r) {
    const double s = rstd->data[r];
    double mean_hx = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = x->data[r * k + j] * s, gj = g->data[r * k + j];
      mean_hx += gj * (w ? w->data[j] : 1.0) * xhat;
      dw.data[j] += gj * xhat;
    }
    mean_hx /= static_cast<double>(k);
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = x->data[r * k + j] * s;
      dx.data[r * k + j] = s * (g->data[r * k + j] * (w ? w->data[j] : 1.0) - xhat * mean_hx);
    }
  }
  std::vector<Array> out;
  if (mask[0]) out.push_back(std::move(dx));
  if (mask[1] && w != nullptr) out.push_back(std::move(dw));
  return out;
}

}  // namespace parity::oracle
