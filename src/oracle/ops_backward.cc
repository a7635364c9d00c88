// SPDX-License-Identifier: Apache-2.0
// aten's backward ops as torch 1.13's autograd runs them for the reference workloads, in
// float64: the elementwise ones (threshold, sigmoid, tanh, gelu), softmax and log_softmax,
// nll_loss, mse_loss and binary cross-entropy, layer and batch norm, embedding and
// embedding_bag, pooling, and convolution.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

// The gradient and the second operand of an elementwise backward, checked to match in shape.
Result<std::pair<const Array*, const Array*>> GradAnd(const OpCall& call, const char* second) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, second, 1);
  if (g == nullptr || x == nullptr) {
    return Unfit(fmt::format("{} needs grad_output and {}", call.op, second));
  }
  if (g->shape != x->shape)
    return Unfit(fmt::format("{}: grad_output and {} differ in shape", call.op, second));
  return std::make_pair(g, x);
}

template <typename F>
Outputs Elementwise(const OpCall& call, const char* second, F&& f) {
  PARITY_ASSIGN_OR_RETURN(auto gx, GradAnd(call, second));
  Array out = *gx.first;
  for (std::size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = f(gx.first->data[i], gx.second->data[i]);
  return std::vector<Array>{std::move(out)};
}

// The scalar or per-element upstream gradient of a loss: g[i] for reduction none, else g / n
// (mean) or g (sum).
Result<std::vector<double>> LossGrad(const OpCall& call, std::size_t n, int reduction) {
  const Array* g = Arg(call, "grad_output", 0);
  if (g == nullptr) return Unfit(fmt::format("{} needs grad_output", call.op));
  if (reduction == 0) {
    if (static_cast<std::size_t>(g->numel()) != n)
      return Unfit("grad_output differs in size from self");
    return g->data;
  }
  if (g->numel() != 1) return Unfit("a reduced loss's grad_output is not one value");
  const double v = reduction == 1 ? g->data[0] / static_cast<double>(n) : g->data[0];
  return std::vector<double>(n, v);
}

}  // namespace

Outputs ThresholdBackward(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(double threshold, AttrNumber(call, "threshold", 0.0));
  return Elementwise(call, "self",
                     [threshold](double g, double x) { return x <= threshold ? 0.0 : g; });
}

Outputs SigmoidBackward(const OpCall& call) {
  return Elementwise(call, "output", [](double g, double y) { return g * y * (1.0 - y); });
}

Outputs TanhBackward(const OpCall& call) {
  return Elementwise(call, "output", [](double g, double y) { return g * (1.0 - y * y); });
}

Outputs GeluBackward(const OpCall& call) {
  const auto it = call.attrs.find("approximate");
  const std::string approximate =
      it != call.attrs.end() && it->is_string() ? it->get<std::string>() : "none";
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    return Elementwise(call, "self", [k, c](double g, double x) {
      const double inner = k * (x + c * x * x * x);
      const double t = std::tanh(inner);
      return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x));
    });
  }
  if (approximate != "none") return Unfit(fmt::format("gelu approximate '{}'", approximate));
  return Elementwise(call, "self", [](double g, double x) {
    const double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    return g * (cdf + x * pdf);
  });
}

// _softmax_backward_data: y·(g − Σ g·y); _log_softmax_backward_data: g − e^y·Σ g; along dim.
Outputs SoftmaxBackward(const OpCall& call) {
  const bool log = call.op.starts_with("_log_");
  PARITY_ASSIGN_OR_RETURN(auto gy, GradAnd(call, "output"));
  const auto& [g, y] = gy;
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, -1));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], y->shape.size()));
  int64_t outer = 1, n = 1, inner = 1;
  for (std::size_t d = 0; d < y->shape.size(); ++d) {
    (d < dim ? outer : d == dim ? n : inner) *= y->shape[d];
  }
  Array out = *g;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = (o * n + j) * inner + i;
        sum += log ? g->data[at] : g->data[at] * y->data[at];
      }
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = (o * n + j) * inner + i;
        out.data[at] =
            log ? g->data[at] - std::exp(y->data[at]) * sum : y->data[at] * (g->data[at] - sum);
      }
    }
  }
  return std::vector<Array>{std::move(out)};
}

Outputs MseLossBackward(const OpCall& call) {
  const Array* x = Arg(call, "self", 1);
  const Array* t = Arg(call, "target", 2);
  if (x == nullptr || t == nullptr || x->shape != t->shape)
    return Unfit("mse_loss_backward needs self and target of one shape");
  PARITY_ASSIGN_OR_RETURN(int reduction, Reduction(call));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> g, LossGrad(call, x->data.size(), reduction));
  Array out = *x;
  for (std::size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = 2.0 * (x->data[i] - t->data[i]) * g[i];
  return std::vector<Array>{std::move(out)};
}

// binary_cross_entropy(self = probabilities, target, weight, reduction), its log terms clamped
// at −100 as torch's are, and its backward g·w·(x − t)/max((1 − x)·x, 1e-12).
Outputs BinaryCrossEntropy(const OpCall& call) {
  const bool backward = call.op.ends_with("_backward");
  const std::size_t base = backward ? 1 : 0;
  const Array* x = Arg(call, "self", base);
  const Array* t = Arg(call, "target", base + 1);
  const Array* w = call.input_args.empty() ? nullptr : Arg(call, "weight", 0);
  if (x == nullptr || t == nullptr || x->shape != t->shape ||
      (w && w->numel() != x->numel() && w->numel() != 1)) {
    return Unfit(fmt::format("{} needs self, and target and weight of its shape", call.op));
  }
  PARITY_ASSIGN_OR_RETURN(int reduction, Reduction(call));
  auto weight = [&](std::size_t i) {
    return w == nullptr ? 1.0 : w->data[w->numel() == 1 ? 0 : i];
  };
  Array out = *x;
  if (backward) {
    PARITY_ASSIGN_OR_RETURN(std::vector<double> g, LossGrad(call, x->data.size(), reduction));
    for (std::size_t i = 0; i < out.data.size(); ++i) {
      const double p = x->data[i];
      out.data[i] = g[i] * weight(i) * (p - t->data[i]) / std::max((1.0 - p) * p, 1e-12);
    }
    return std::vector<Array>{std::move(out)};
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    const double p = x->data[i];
    if (!(p >= 0.0 && p <= 1.0))
      return Unfit(fmt::format("binary_cross_entropy input {} outside [0, 1]", p));
    const double log_p = std::max(std::log(p), -100.0), log_q = std::max(std::log1p(-p), -100.0);
    out.data[i] = -weight(i) * (t->data[i] * log_p + (1.0 - t->data[i]) * log_q);
    sum += out.data[i];
  }
  if (reduction == 0) return std::vector<Array>{std::move(out)};
  return std::vector<Array>{
      Array{{}, {reduction == 1 ? sum / static_cast<double>(out.data.size()) : sum}}};
}

// native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
// save_invstd, train, eps, output_mask): per channel over M = N·spatial elements, training:
// dx = w·invstd·(g − mean(g) − x̂·mean(g·x̂)); eval: dx = g·w/√(running_var + eps).
Outputs NativeBatchNormBackward(const OpCall& call) {
  if (call.input_args.empty()) return Unfit("native_batch_norm_backward needs named inputs");
  const Array* g = Arg(call, "grad_out", 0);
  const Array* x = Arg(call, "input", 0);
  const Array* w = Arg(call, "weight", 0);
  PARITY_ASSIGN_OR_RETURN(bool train, AttrBool(call, "train", true));
  PARITY_ASSIGN_OR_RETURN(double eps, AttrNumber(call, "eps", 1e-5));
  PARITY_ASSIGN_OR_RETURN(auto mask, OutputMask(call));
  const Array* mean = Arg(call, train ? "save_mean" : "running_mean", 0);
  const Array* spread = Arg(call, train ? "save_invstd" : "running_var", 0);
  if (g == nullptr || x == nullptr || mean == nullptr || spread == nullptr ||
      g->shape != x->shape || x->shape.size() < 2) {
    return Unfit("native_batch_norm_backward needs grad_out, (N, C, ...) input and the statistics");
  }
  const int64_t n = x->shape[0], c = x->shape[1];
  const int64_t spatial = n * c > 0 ? x->numel() / (n * c) : 0;
  if (mean->numel() != c || spread->numel() != c || (w && w->numel() != c))
    return Unfit("a per-channel tensor's size differs from C");
  Array dx = Array::Filled(x->shape), dw = Array::Filled({c}), db = Array::Filled({c});
  const double count = static_cast<double>(n * spatial);
  for (int64_t ch = 0; ch < c; ++ch) {
    const double invstd = train ? spread->data[ch] : 1.0 / std::sqrt(spread->data[ch] + eps);
    const double m = mean->data[ch], scale = w ? w->data[ch] : 1.0;
    double sum_g = 0.0, sum_gx = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        sum_g += g->data[at];
        sum_gx += g->data[at] * (x->data[at] - m) * invstd;
      }
    }
    dw.data[ch] = sum_gx;
    db.data[ch] = sum_g;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        const double xhat = (x->data[at] - m) * invstd;
        dx.data[at] = train ? scale * invstd * (g->data[at] - sum_g / count - xhat * sum_gx / count)
                            : g->data[at] * scale * invstd;
      }
    }
  }
  return Masked(mask, std::move(dx), std::move(dw), std::move(db));
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
// each index's gradient row summed into its weight row (padding_idx left zero), divided by
// the index's count when scale_grad_by_freq.
Outputs EmbeddingDenseBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* indices = Arg(call, "indices", 1);
  if (g == nullptr || indices == nullptr || g->shape.empty())
    return Unfit("embedding_dense_backward needs grad_output and indices");
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> rows_attr, AttrInts(call, "num_weights", 1, -1));
  PARITY_ASSIGN_OR_RETURN(double padding, AttrNumber(call, "padding_idx", -1));
  PARITY_ASSIGN_OR_RETURN(bool by_freq, AttrBool(call, "scale_grad_by_freq", false));
  const int64_t rows = rows_attr[0], dim = g->shape.back();
  if (rows < 0 || rows > (int64_t{1} << 31) || g->numel() != indices->numel() * dim) {
    return Unfit("num_weights or grad_output does not fit the indices");
  }
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, rows * dim));
  std::vector<double> count(static_cast<std::size_t>(rows), 0.0);
  for (double v : indices->data) {
    if (!(v >= 0 && v < static_cast<double>(rows)))
      return Unfit(fmt::format("index {} out of range", v));
    count[static_cast<std::size_t>(v)] += 1.0;
  }
  Array out = Array::Filled({rows, dim});
  for (std::size_t i = 0; i < indices->data.size(); ++i) {
    const double v = indices->data[i];
    if (v == padding) continue;
    const auto r = static_cast<int64_t>(v);
    const double scale = by_freq ? 1.0 / count[r] : 1.0;
    for (int64_t j = 0; j < dim; ++j)
      out.data[r * dim + j] += g->data[static_cast<int64_t>(i) * dim + j] * scale;
  }
  return std::vector<Array>{std::move(out)};
}

// _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx): sum and mean add
// each index's bag gradient (times its per-sample weight; over the bag's size for mean) into
// its weight row, padding_idx left out; max adds each bag's gradient at the row that gave its
// maximum, per column (empty bags give nothing).
Outputs EmbeddingBagDenseBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad", 0);
  const Array* indices = Arg(call, "indices", 1);
  const Array* offset2bag = Arg(call, "offset2bag", 2);
  const Array* bag_size = Arg(call, "bag_size", 3);
  const Array* max_indices = Arg(call, "maximum_indices", 4);
  const Array* per_sample = call.input_args.empty() ? nullptr : Arg(call, "per_sample_weights", 5);
  if (g == nullptr || indices == nullptr || offset2bag == nullptr || bag_size == nullptr ||
      max_indices == nullptr || g->shape.size() != 2) {
    return Unfit("_embedding_bag_dense_backward needs grad (bags, dim), indices and the bags");
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> rows_attr, AttrInts(call, "num_weights", 1, -1));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> mode_attr, AttrInts(call, "mode", 1, 0));
  PARITY_ASSIGN_OR_RETURN(double padding, AttrNumber(call, "padding_idx", -1));
  PARITY_ASSIGN_OR_RETURN(bool by_freq, AttrBool(call, "scale_grad_by_freq", false));
  const int64_t rows = rows_attr[0], mode = mode_attr[0], bags = g->shape[0], dim = g->shape[1];
  const int64_t n = indices->numel();
  if (rows < 0 || mode < 0 || mode > 2) return Unfit("num_weights or mode out of range");
  // torch 1.13's CPU kernel takes each row's count from the sorted indices by position, not by
  // value: what it computes is not the documented scaling, so it is compared only.
  if (by_freq) return Unfit("_embedding_bag_dense_backward with scale_grad_by_freq");
  if (offset2bag->numel() != n || bag_size->numel() != bags ||
      (per_sample && per_sample->numel() != n) ||
      (mode == 2 && max_indices->numel() != bags * dim)) {
    return Unfit("offset2bag, bag_size, maximum_indices or per_sample_weights do not fit");
  }
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, rows * dim));
  for (double v : indices->data) {
    if (!(v >= 0 && v < static_cast<double>(rows)))
      return Unfit(fmt::format("index {} out of range", v));
  }
  Array out = Array::Filled({rows, dim});
  auto add_row = [&](int64_t row, int64_t bag, double scale, int64_t only_column) {
    for (int64_t j = 0; j < dim; ++j) {
      if (only_column < 0 || j == only_column)
        out.data[row * dim + j] += g->data[bag * dim + j] * scale;
    }
  };
  if (mode == 2) {
    for (int64_t b = 0; b < bags; ++b) {
      for (int64_t j = 0; j < dim; ++j) {
        const double row = max_indices->data[b * dim + j];
        if (bag_size->data[b] <= 0 || row < 0) continue;  // an empty bag
        if (!(row < static_cast<double>(rows))) return Unfit("maximum_indices out of range");
        add_row(static_cast<int64_t>(row), b, 1.0, j);
      }
    }
    return std::vector<Array>{std::move(out)};
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = indices->data[i], bag = offset2bag->data[i];
    if (v == padding) continue;
    if (!(bag >= 0 && bag < static_cast<double>(bags))) return Unfit("offset2bag out of range");
    const auto b = static_cast<int64_t>(bag);
    double scale = per_sample ? per_sample->data[i] : 1.0;
    if (mode == 1) {
      if (bag_size->data[b] <= 0) continue;
      scale /= bag_size->data[b];
    }
    add_row(static_cast<int64_t>(v), b, scale, -1);
  }
  return std::vector<Array>{std::move(out)};
}

// _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx): the dense
// gradient, as _embedding_bag_dense_backward, with offset2bag taken from the offsets where the
// forward left it empty (sum without per-sample weights); the sparse gradient is compared only.
Outputs EmbeddingBagBackward(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(bool sparse, AttrBool(call, "sparse", false));
  if (sparse) return Unfit("_embedding_bag_backward with sparse=True gives a sparse gradient");
  if (call.input_args.empty()) return Unfit("_embedding_bag_backward needs named inputs");
  const Array* indices = Arg(call, "indices", 1);
  const Array* offsets = Arg(call, "offsets", 2);
  const Array* offset2bag = Arg(call, "offset2bag", 3);
  const Array* bag_size = Arg(call, "bag_size", 4);
  if (indices == nullptr || offsets == nullptr || offset2bag == nullptr || bag_size == nullptr) {
    return Unfit("_embedding_bag_backward needs indices, offsets, offset2bag and bag_size");
  }
  OpCall dense = call;
  dense.op = "_embedding_bag_dense_backward";
  dense.inputs.clear();
  dense.input_args.clear();
  dense.input_dtypes.clear();
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.input_args[i] == "offsets") continue;
    dense.inputs.push_back(call.inputs[i]);
    dense.input_args.push_back(call.input_args[i]);
    if (i < call.input_dtypes.size()) dense.input_dtypes.push_back(call.input_dtypes[i]);
  }
  const int64_t n = indices->numel(), bags = bag_size->numel();
  if (offset2bag->numel() == 0 && n > 0) {
    // Bag b holds the indices from offsets[b] to the next offset (the last to n).
    Array filled = Array::Filled({n}, 0.0);
    const std::vector<double>& o = offsets->data;
    int64_t bag = 0;
    for (int64_t i = 0; i < n; ++i) {
      while (bag + 1 < static_cast<int64_t>(o.size()) && bag + 1 < bags &&
             o[static_cast<std::size_t>(bag + 1)] <= static_cast<double>(i)) {
        ++bag;
      }
      filled.data[static_cast<std::size_t>(i)] = static_cast<double>(bag);
    }
    for (std::size_t i = 0; i < dense.input_args.size(); ++i) {
      if (dense.input_args[i] == "offset2bag") dense.inputs[i] = std::move(filled);
    }
  }
  return EmbeddingBagDenseBackward(dense);
}

// max_pool2d_with_indices_backward: each gradient added at its recorded index.
Outputs MaxPool2dBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, "self", 1);
  const Array* indices = Arg(call, "indices", 2);
  if (g == nullptr || x == nullptr || indices == nullptr || g->shape != indices->shape ||
      x->shape.size() < 3 || g->shape.size() != x->shape.size()) {
    return Unfit("max_pool2d_with_indices_backward needs grad_output, self and indices");
  }
  const int64_t plane = x->shape[x->shape.size() - 2] * x->shape.back();
  const int64_t out_plane = g->shape[g->shape.size() - 2] * g->shape.back();
  Array out = Array::Filled(x->shape);
  for (int64_t i = 0; i < g->numel(); ++i) {
    const double at = indices->data[i];
    if (!(at >= 0 && at < static_cast<double>(plane)))
      return Unfit(fmt::format("index {} out of the plane", at));
    out.data[(i / out_plane) * plane + static_cast<int64_t>(at)] += g->data[i];
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
