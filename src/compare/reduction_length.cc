// SPDX-License-Identifier: Apache-2.0
// The reduction length of each output of an op, from its inputs' shapes and its attrs: what
// `auto` tolerances grow with (tolerance.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "compare/tolerance.h"

namespace parity {
namespace {

// Which of an op's (grad_input, grad_weight, grad_bias) output `index` is, given the
// output_mask attr that left some out (aten records only the outputs it computed).
std::size_t MaskedOutput(const TensorContext& c) {
  const auto it = c.attrs.find("output_mask");
  if (it == c.attrs.end() || !it->is_array()) return c.index;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < it->size(); ++i) {
    if ((*it)[i].is_boolean() && !(*it)[i].get<bool>()) continue;
    if (seen++ == c.index) return i;
  }
  return c.index;
}

// The reduction length of a normalisation's outputs (y, mean, rstd; dx backward) over
// statistics of k elements. Their kernels sum in trees (pairwise, or Welford merged pairwise)
// whose rounding grows with the depth log2 k, not with √k as a sequential sum's does (and
// torch's CPU kernels accumulate in double): the statistics and the chain
// (x − mean)·rstd·w + b around them count 2·⌈log2 k⌉ + 8 roundings, not 2k + 8.
int64_t NormLength(int64_t k) {
  int64_t depth = 0;
  while ((int64_t{1} << depth) < std::max<int64_t>(k, 1)) ++depth;
  return 2 * depth + 8;
}

// A loss's `reduction` attr: 0 (none), 1 (mean) or 2 (sum), as a number or a name.
int LossReduction(const Json& attrs) {
  const auto it = attrs.find("reduction");
  if (it == attrs.end() || it->is_null()) return 1;
  if (it->is_number_integer()) return static_cast<int>(it->get<int64_t>());
  if (it->is_string()) {
    const std::string r = it->get<std::string>();
    return r == "none" ? 0 : r == "sum" ? 2 : 1;
  }
  return 1;
}

int64_t Product(const std::vector<int64_t>& dims, std::size_t from = 0) {
  int64_t p = 1;
  for (std::size_t i = from; i < dims.size(); ++i) p *= dims[i];
  return p;
}

// A dim attribute, possibly negative, normalised against `rank`.
std::optional<std::size_t> Dim(const Json& value, std::size_t rank) {
  if (!value.is_number_integer() || rank == 0) return std::nullopt;
  int64_t d = value.get<int64_t>();
  if (d < 0) d += static_cast<int64_t>(rank);
  if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
  return static_cast<std::size_t>(d);
}

const std::vector<int64_t>* Param(const TensorContext& c, const char* name) {
  for (const auto& [key, shape] : c.param_shapes) {
    if (key == name) return &shape;
  }
  return nullptr;
}

}  // namespace

std::optional<int64_t> ReductionLength(const TensorContext& c) {
  const OpFamily family = FamilyOf(c.op);
  auto input = [&](std::size_t i) -> const std::vector<int64_t>* {
    i += family.first_input;
    return i < c.input_shapes.size() ? &c.input_shapes[i] : nullptr;
  };
  const std::vector<int64_t>* in0 = input(0);
  const std::vector<int64_t>* in1 = input(1);
  const std::string& op = family.name;
  if (op == "linear") {
    if (const auto* w = Param(c, "weight"); w && w->size() == 2) return (*w)[1];
    if (in1 && in1->size() == 2) return (*in1)[1];
    if (in0 && !in0->empty()) return in0->back();
  } else if (op == "matmul" || op == "bmm") {
    if (in0 && !in0->empty()) return in0->back();
  } else if (op == "conv1d" || op == "conv2d") {
    const std::vector<int64_t>* w = Param(c, "weight");
    if (!w) w = in1;
    if (w && w->size() >= 3) return Product(*w, 1);
  } else if (op == "softmax" || op == "log_softmax" || op == "cumsum") {
    if (in0 && in0->empty()) return 1;  // a 0-d tensor
    if (in0) {
      const auto d = Dim(c.attrs.value("dim", Json(-1)), in0->size());
      if (d) return (*in0)[*d];
    }
  } else if (op == "layer_norm" || op == "rms_norm") {
    // (y, mean, rstd): statistics of k elements and the elementwise chain around them
    // (NormLength); the mean's scale is its summands', rms(x)/√k (scale.h).
    int64_t k = 0;
    const auto it = c.attrs.find("normalized_shape");
    if (it != c.attrs.end() && it->is_array()) {
      k = 1;
      for (const Json& d : *it) {
        if (!d.is_number_integer()) return std::nullopt;
        k *= d.get<int64_t>();
      }
    } else if (in0 && !in0->empty()) {
      k = in0->back();
    } else {
      return std::nullopt;
    }
    return NormLength(k);
  } else if (op == "batch_norm") {
    // Forward (y, save_mean, save_invstd) and backward (dx, dweight, dbias) per channel, over
    // n = N·H·W: torch's kernels reduce a channel in a tree (in double on the CPU), dweight
    // and dbias too: NormLength's, with the summands' scale (scale.h).
    if (in0 && in0->size() >= 2 && (*in0)[1] > 0) {
      const int64_t n = std::max<int64_t>(Product(*in0) / (*in0)[1], 1);
      return NormLength(n);
    }
  } else if (op == "sum" || op == "mean") {
    if (!in0) return std::nullopt;
    const auto it = c.attrs.find("dim");
    if (it == c.attrs.end() || it->is_null() || (it->is_array() && it->empty())) {
      return Product(*in0);  // aten's sum.dim_IntList takes dim=[] as every dim
    }
    if (in0->empty()) return 1;
    std::vector<Json> dims = it->is_array() ? it->get<std::vector<Json>>() : std::vector<Json>{*it};
    int64_t k = 1;
    for (const Json& d : dims) {
      const auto dim = Dim(d, in0->size());
      if (!dim) return std::nullopt;
      k *= (*in0)[*dim];
    }
    return k;
  } else if (op == "native_layer_norm_backward" || op == "_fused_rms_norm_backward") {
    // dx reduces twice over a row (Σ g·w and Σ g·w·x̂, as the forward's mean and variance;
    // RMSNorm's once), dweight and dbias once over the rows.
    const auto it = c.attrs.find("normalized_shape");
    if (in1 && it != c.attrs.end() && it->is_array()) {
      int64_t k = 1;
      for (const Json& d : *it)
        k *= d.is_number_integer() ? std::max<int64_t>(d.get<int64_t>(), 1) : 1;
      return MaskedOutput(c) == 0 ? NormLength(k) : std::max<int64_t>(Product(*in1) / k, 1);
    }
  } else if (op == "convolution_backward") {
    // (grad_output, input, weight): grad_input sums over the out channels of its group and the
    // kernel, (C_out / groups)·kh·kw; grad_weight and grad_bias over images and output
    // pixels, N·Ho·Wo. A transposed convolution swaps the roles: the longest of them.
    const std::vector<int64_t>* w = input(2);
    if (!in0 || !w || in0->size() < 3 || w->size() < 3 || (*in0)[1] <= 0 || (*w)[0] <= 0) {
      return std::nullopt;
    }
    const Json groups_attr = c.attrs.value("groups", Json(1));
    const int64_t groups =
        groups_attr.is_number_integer() ? std::max<int64_t>(groups_attr.get<int64_t>(), 1) : 1;
    const int64_t per_pixel = std::max<int64_t>(Product(*in0) / (*in0)[1], 1);
    const int64_t per_input = std::max<int64_t>((*w)[0] / groups * Product(*w, 2), 1);
    if (c.attrs.value("transposed", Json(false)) == Json(true)) {
      return std::max({per_pixel, per_input, Product(*w, 1)});
    }
    return MaskedOutput(c) == 0 ? per_input : per_pixel;
  } else if (op == "embedding_renorm_") {
    if (in0 && in0->size() == 2) return (*in0)[1];
  } else if (op == "_embedding_bag" || op == "nll_loss_forward") {
    // Every index in one bag, at most (replay knows the largest bag from the offsets);
    // nll_loss's total_weight sums the weights of every target.
    if (in1) return std::max<int64_t>(Product(*in1), 1);
  } else if (op == "mse_loss" || op == "binary_cross_entropy_with_logits") {
    if (in0) return std::max<int64_t>(Product(*in0), 1);
  } else if (op == "avg_pool2d") {
    const Json kernel = c.attrs.value("kernel_size", Json());
    if (kernel.is_array() && !kernel.empty() && kernel.size() <= 2 &&
        std::all_of(kernel.begin(), kernel.end(),
                    [](const Json& v) { return v.is_number_integer(); })) {
      const int64_t kh = kernel[0].get<int64_t>(), kw = kernel[kernel.size() - 1].get<int64_t>();
      return std::max<int64_t>(kh * kw, 1);
    }
  } else if (op == "_adaptive_avg_pool2d") {
    const Json size = c.attrs.value("output_size", Json());
    if (in0 && in0->size() >= 2 && size.is_array() && size.size() == 2 &&
        size[0].is_number_integer() && size[1].is_number_integer() && size[0].get<int64_t>() > 0 &&
        size[1].get<int64_t>() > 0) {
      // A window spans at most ceil(H / out) + 1 rows and as many columns.
      const int64_t h = (*in0)[in0->size() - 2], w = in0->back();
      const int64_t oh = size[0].get<int64_t>(), ow = size[1].get<int64_t>();
      return ((h + oh - 1) / oh + 1) * ((w + ow - 1) / ow + 1);
    }
  } else if (op == "scaled_dot_product_attention") {
    // Three reductions in a chain, each adding its rounding: Q·Kᵀ over E, the softmax's sum
    // over S, and the weights times V over S.
    const std::vector<int64_t>* v = input(2);
    if (in0 && in1 && in0->size() >= 2 && in1->size() >= 2) {
      const int64_t e = in0->back(), l = (*in0)[in0->size() - 2], s = (*in1)[in1->size() - 2];
      const int64_t forward = e + 2 * s;
      if (!c.op.ends_with("_backward")) return forward;
      // The backward adds to the weights' own error: dP = dO·Vᵀ over Ev, its row sum with P
      // over S, then dQ = dS·K over S, dK = dSᵀ·Q over L, dV = Pᵀ·dO over L.
      const int64_t ev = v && !v->empty() ? v->back() : e;
      if (c.index == 0) return forward + ev + 2 * s;
      if (c.index == 1) return forward + ev + s + l;
      return forward + l;
    }
  }
  return std::nullopt;
}

bool ReducesNothing(const TensorContext& c) {
  const std::string op = FamilyOf(c.op).name;
  if (op == "mse_loss" || op == "binary_cross_entropy_with_logits") {
    return LossReduction(c.attrs) == 0;
  }
  // nll_loss: output 0 gathers -w[t]·x[t] (one product), or sums them; output 1 sums weights.
  // Its backward scatters -w[t]·g (over total_weight for 'mean'): one product per element.
  if (op == "nll_loss_forward") {
    return c.op.ends_with("_backward") || (c.index == 0 && LossReduction(c.attrs) == 0);
  }
  // embedding_bag's mode 'max' (2) selects a value; its other outputs are indices.
  if (op == "_embedding_bag") {
    const Json mode = c.attrs.value("mode", Json(0));
    return (mode.is_number_integer() && mode.get<int64_t>() == 2) || mode == Json("max");
  }
  return false;
}

}  // namespace parity
