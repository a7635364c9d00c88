// SPDX-License-Identifier: Apache-2.0
#include "compare/scale.h"

#include <cmath>
#include <vector>

#include "compare/tolerance.h"
#include "core/convert.h"

namespace parity {
namespace {

constexpr std::size_t kRowsPerRead = 256;

// Σ over rows of x², per column, for `x` viewed as (numel / cols) rows of `cols` columns; with
// `batches` > 1, one such vector per batch (x viewed as batches × rows × cols).
Result<std::vector<double>> ColumnSquares(const Tensor& x, int64_t cols, int64_t batches = 1) {
  const auto c = static_cast<std::size_t>(cols);
  std::vector<double> out(c * static_cast<std::size_t>(batches), 0.0);
  if (cols <= 0 || x.numel() == 0) return out;
  const auto rows = static_cast<std::size_t>(x.numel()) / c;
  const std::size_t rows_per_batch = rows / static_cast<std::size_t>(batches);
  const std::size_t itemsize = ItemSize(x.dtype());
  std::vector<std::byte> scratch(kRowsPerRead * c * itemsize);
  std::vector<double> values(kRowsPerRead * c);
  for (std::size_t r = 0; r < rows; r += kRowsPerRead) {
    const std::size_t n = std::min(kRowsPerRead, rows - r);
    PARITY_ASSIGN_OR_RETURN(const std::byte* p,
                            x.ReadChunk(r * c * itemsize, n * c * itemsize, scratch.data()));
    ConvertToFloat64(x.dtype(), p, std::span(values.data(), n * c));
    for (std::size_t i = 0; i < n; ++i) {
      double* column = out.data() + ((r + i) / rows_per_batch) * c;
      for (std::size_t j = 0; j < c; ++j) {
        const double v = values[i * c + j];
        if (std::isfinite(v)) column[j] += v * v;
      }
    }
  }
  return out;
}

Result<double> MeanSquare(const Tensor& x) {
  PARITY_ASSIGN_OR_RETURN(std::vector<double> all, ColumnSquares(x, 1));
  return x.numel() > 0 ? all[0] / static_cast<double>(x.numel()) : 0.0;
}

// sqrt(Σ_b Σ_k sa[b,k]·sb[b,k] / (B·M·N)) for a (B, M, K) times (B, K, N) product, where sa
// holds column squares of a and sb row squares of b (= column squares of bᵀ).
double ProductScale(const std::vector<double>& sa, const std::vector<double>& sb, double outputs) {
  double sum = 0.0;
  for (std::size_t i = 0; i < sa.size() && i < sb.size(); ++i) sum += sa[i] * sb[i];
  return outputs > 0 ? std::sqrt(sum / outputs) : 0.0;
}

// Row squares of a (B, K, N) tensor: Σ over n of b[b,k,n]², as (B·K) values.
Result<std::vector<double>> RowSquares(const Tensor& t, int64_t cols) {
  const int64_t rows = cols > 0 ? t.numel() / cols : 0;
  std::vector<double> out(static_cast<std::size_t>(rows), 0.0);
  const std::size_t itemsize = ItemSize(t.dtype());
  std::vector<std::byte> scratch(static_cast<std::size_t>(cols) * itemsize);
  std::vector<double> values(static_cast<std::size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const std::size_t bytes = values.size() * itemsize;
    PARITY_ASSIGN_OR_RETURN(const std::byte* p, t.ReadChunk(static_cast<std::size_t>(r) * bytes,
                                                            bytes, scratch.data()));
    ConvertToFloat64(t.dtype(), p, values);
    for (double v : values) {
      if (std::isfinite(v)) out[static_cast<std::size_t>(r)] += v * v;
    }
  }
  return out;
}

// Every value of `t` as float64.
Result<std::vector<double>> Values(const Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  const std::size_t itemsize = ItemSize(t.dtype());
  std::vector<std::byte> scratch(out.size() * itemsize);
  PARITY_ASSIGN_OR_RETURN(const std::byte* p,
                          t.ReadChunk(0, out.size() * itemsize, scratch.data()));
  ConvertToFloat64(t.dtype(), p, out);
  return out;
}

// The layer norm scale (scale.h) of x normalised over its trailing `cols` elements.
Result<std::optional<double>> LayerNormScale(const Tensor& x, int64_t cols, const Tensor* weight,
                                             const Tensor* bias, double eps) {
  if (cols <= 0 || x.numel() % cols != 0) return std::optional<double>();
  for (const Tensor* t : {weight, bias}) {
    if (t != nullptr && t->numel() != cols) return std::optional<double>();
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<double> xs, Values(x));
  std::vector<double> w(static_cast<std::size_t>(cols), 1.0),
      b(static_cast<std::size_t>(cols), 0.0);
  if (weight != nullptr) {
    PARITY_ASSIGN_OR_RETURN(w, Values(*weight));
  }
  if (bias != nullptr) {
    PARITY_ASSIGN_OR_RETURN(b, Values(*bias));
  }
  double sum = 0.0;
  const auto c = static_cast<std::size_t>(cols);
  for (std::size_t r = 0; r < xs.size(); r += c) {
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < c; ++j) mean += xs[r + j];
    mean /= static_cast<double>(c);
    for (std::size_t j = 0; j < c; ++j) var += (xs[r + j] - mean) * (xs[r + j] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(c) + eps);
    for (std::size_t j = 0; j < c; ++j) {
      // x·(rstd·w) − mean·(rstd·w) rounds each product, even where x is the mean (torch 1.13
      // leaves 4e-4 of a one-element row's y = b; 2.x cancels it exactly).
      const double term =
          (std::fabs(xs[r + j]) + std::fabs(mean)) * rstd * std::fabs(w[j]) + std::fabs(b[j]);
      if (std::isfinite(term)) sum += term * term;
    }
  }
  return std::optional<double>(std::sqrt(sum / static_cast<double>(xs.size())));
}

// Which of (grad_input, grad_weight, grad_bias) output `index` is under attrs' output_mask.
std::size_t MaskedOutput(const Json& attrs, std::size_t index) {
  const auto it = attrs.find("output_mask");
  if (it == attrs.end() || !it->is_array()) return index;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < it->size(); ++i) {
    if ((*it)[i].is_boolean() && !(*it)[i].get<bool>()) continue;
    if (seen++ == index) return i;
  }
  return index;
}

// The scales of the backward ops' outputs (scale.h), or nothing for other ops.
Result<std::optional<double>> BackwardScale(const std::string& op, int64_t k,
                                            const std::vector<Tensor>& inputs, const Json& attrs,
                                            std::size_t output) {
  const std::size_t which = MaskedOutput(attrs, output);
  const double kk = static_cast<double>(k);
  if (op == "convolution_backward" && inputs.size() >= 3) {
    PARITY_ASSIGN_OR_RETURN(double mg, MeanSquare(inputs[0]));
    if (which == 2) return std::optional<double>(std::sqrt(kk * mg));
    PARITY_ASSIGN_OR_RETURN(double mo, MeanSquare(inputs[which == 0 ? 2 : 1]));
    return std::optional<double>(std::sqrt(kk * mg * mo));
  }
  if (op == "native_layer_norm_backward" && inputs.size() >= 4) {
    // (grad_out, input, mean, rstd[, weight][, bias])
    PARITY_ASSIGN_OR_RETURN(double mg, MeanSquare(inputs[0]));
    if (which != 0) return std::optional<double>(std::sqrt(kk * mg));
    PARITY_ASSIGN_OR_RETURN(double mr, MeanSquare(inputs[3]));
    double mw = 1.0;
    if (inputs.size() >= 5 && attrs.value("weight", Json(0)) != Json(nullptr)) {
      PARITY_ASSIGN_OR_RETURN(mw, MeanSquare(inputs[4]));
    }
    return std::optional<double>(std::sqrt(3.0 * mg * mw * mr));
  }
  if (op == "_fused_rms_norm_backward" && inputs.size() >= 3) {
    // (grad_out, input, rstd[, weight]): dx as layer norm's, dweight Σ g·x̂ over the rows.
    PARITY_ASSIGN_OR_RETURN(double mg, MeanSquare(inputs[0]));
    if (which != 0) return std::optional<double>(std::sqrt(kk * mg));
    PARITY_ASSIGN_OR_RETURN(double mr, MeanSquare(inputs[2]));
    double mw = 1.0;
    if (inputs.size() >= 4) {
      PARITY_ASSIGN_OR_RETURN(mw, MeanSquare(inputs[3]));
    }
    return std::optional<double>(std::sqrt(3.0 * mg * mw * mr));
  }
  if (op == "native_batch_norm_backward" && inputs.size() >= 2 && which != 0) {
    // dweight Σ g·x̂ and dbias Σ g over n = N·H·W per channel (x̂ has unit rms).
    const auto& xs = inputs[1].meta().shape;
    if (xs.size() < 2 || xs[1] <= 0) return std::optional<double>();
    const double n = static_cast<double>(inputs[1].numel() / xs[1]);
    PARITY_ASSIGN_OR_RETURN(double mg, MeanSquare(inputs[0]));
    return std::optional<double>(std::sqrt(n * mg));
  }
  return std::optional<double>();
}

}  // namespace

Result<std::optional<double>> SummandScale(
    const std::string& raw_op, int64_t k, const std::vector<Tensor>& all_inputs,
    const std::vector<std::pair<std::string, Tensor>>& params, const Json& attrs,
    std::size_t output) {
  if (k <= 0) return std::optional<double>();
  for (const Tensor& t : all_inputs) {
    if (t.numel() == 0) return std::optional<double>();
  }
  if (raw_op == "convolution_backward" || raw_op == "native_layer_norm_backward" ||
      raw_op == "_fused_rms_norm_backward" || raw_op == "native_batch_norm_backward") {
    return BackwardScale(raw_op, k, all_inputs, attrs, output);
  }
  // aten's ops are scaled as their family (tolerance.h: addmm as matmul of mat1 and mat2).
  const OpFamily family = FamilyOf(raw_op);
  const std::string& op = family.name;
  if (family.first_input > all_inputs.size()) return std::optional<double>();
  const std::vector<Tensor> shifted(all_inputs.begin() + static_cast<int64_t>(family.first_input),
                                    all_inputs.end());
  const std::vector<Tensor>& inputs = family.first_input > 0 ? shifted : all_inputs;
  auto param = [&](const char* name) -> const Tensor* {
    for (const auto& [key, t] : params) {
      if (key == name) return &t;
    }
    return nullptr;
  };
  // An empty operand (a reduction of length 0, no rows or columns): no summands to scale by.
  if (inputs.empty() || k <= 0) return std::optional<double>();
  for (const Tensor& t : inputs) {
    if (t.numel() == 0) return std::optional<double>();
  }
  const Tensor& x = inputs[0];
  const auto& xs = x.meta().shape;
  if (op == "linear") {
    const Tensor* w = param("weight");
    if (w == nullptr && inputs.size() > 1) w = &inputs[1];
    if (w == nullptr || w->meta().shape.size() != 2 || xs.empty() || xs.back() != k ||
        w->meta().shape[1] != k) {
      return std::optional<double>();
    }
    PARITY_ASSIGN_OR_RETURN(std::vector<double> sx, ColumnSquares(x, k));
    PARITY_ASSIGN_OR_RETURN(std::vector<double> sw, ColumnSquares(*w, k));
    const double m = static_cast<double>(x.numel() / k);
    const double n = static_cast<double>(w->meta().shape[0]);
    return std::optional<double>(ProductScale(sx, sw, m * n));
  }
  if ((op == "matmul" || op == "bmm") && inputs.size() > 1) {
    const Tensor& y = inputs[1];
    const auto& ys = y.meta().shape;
    if (xs.size() < 2 || ys.size() < 2 || xs.back() != k || ys[ys.size() - 2] != k ||
        ys.back() == 0 || xs[xs.size() - 2] == 0) {
      return std::optional<double>();
    }
    const int64_t n = ys.back();
    const int64_t batches_y = y.numel() / (k * n);
    const int64_t batches_x = x.numel() / (xs[xs.size() - 2] * k);
    if (batches_y != 1 && batches_y != batches_x) return std::optional<double>();
    PARITY_ASSIGN_OR_RETURN(std::vector<double> sx, ColumnSquares(x, k, batches_x));
    PARITY_ASSIGN_OR_RETURN(std::vector<double> sy, RowSquares(y, n));
    if (batches_y == 1 && batches_x > 1) {  // broadcast the single right-hand matrix
      std::vector<double> repeated;
      for (int64_t b = 0; b < batches_x; ++b) repeated.insert(repeated.end(), sy.begin(), sy.end());
      sy = std::move(repeated);
    }
    const double outputs = static_cast<double>(x.numel() / k) * static_cast<double>(n);
    return std::optional<double>(ProductScale(sx, sy, outputs));
  }
  if (op == "conv1d" || op == "conv2d") {
    const Tensor* w = param("weight");
    if (w == nullptr && inputs.size() > 1) w = &inputs[1];
    if (w == nullptr) return std::optional<double>();
    PARITY_ASSIGN_OR_RETURN(double mx, MeanSquare(x));
    PARITY_ASSIGN_OR_RETURN(double mw, MeanSquare(*w));
    return std::optional<double>(std::sqrt(static_cast<double>(k) * mx * mw));
  }
  if ((op == "layer_norm" || op == "batch_norm") && output == 1) {
    // The statistics' mean over n elements (a row of normalized_shape; a channel's N·H·W):
    // n terms x / n, whose ℓ2 norm is rms(x)·√n / n.
    int64_t n = 0;
    if (op == "batch_norm" && xs.size() >= 2 && xs[1] > 0) {
      n = x.numel() / xs[1];
    } else if (const auto shape = attrs.find("normalized_shape");
               op == "layer_norm" && shape != attrs.end() && shape->is_array()) {
      n = 1;
      for (const Json& d : *shape) n *= d.is_number_integer() ? d.get<int64_t>() : 1;
    }
    if (n <= 0) return std::optional<double>();
    PARITY_ASSIGN_OR_RETURN(double mx, MeanSquare(x));
    return std::optional<double>(std::sqrt(mx / static_cast<double>(n)));
  }
  if (output != 0) return std::optional<double>();  // rstd and the like: the output's rms
  if (op == "layer_norm") {
    const auto shape = attrs.find("normalized_shape");
    if (shape == attrs.end() || !shape->is_array()) return std::optional<double>();
    int64_t cols = 1;
    for (const Json& d : *shape) {
      if (!d.is_number_integer()) return std::optional<double>();
      cols *= d.get<int64_t>();
    }
    const double eps = attrs.value("eps", Json(1e-5)).is_number() ? attrs.value("eps", 1e-5) : 1e-5;
    // Version 1 names weight and bias as params; aten's native_layer_norm passes them as inputs
    // after the input, an absent one null in attrs.
    const Tensor* weight = param("weight");
    const Tensor* bias = param("bias");
    if (raw_op == "native_layer_norm") {
      std::size_t next = 1;
      const auto present = [&](const char* name) {
        const auto it = attrs.find(name);
        return it == attrs.end() || !it->is_null();
      };
      if (present("weight") && next < inputs.size()) weight = &inputs[next++];
      if (present("bias") && next < inputs.size()) bias = &inputs[next++];
    }
    return LayerNormScale(x, cols, weight, bias, eps);
  }
  if (op == "sum" || op == "mean") {
    PARITY_ASSIGN_OR_RETURN(double mx, MeanSquare(x));
    const double s = std::sqrt(static_cast<double>(k) * mx);
    return std::optional<double>(op == "sum" ? s : s / static_cast<double>(k));
  }
  return std::optional<double>();
}

}  // namespace parity
