// SPDX-License-Identifier: Apache-2.0
// gelu, silu, relu, add, mul, dropout and embedding in float64.
#include <fmt/format.h>

#include <cmath>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

template <typename F>
Outputs Map(const OpCall& call, F&& f) {
  if (call.inputs.empty()) return Unfit(fmt::format("{} needs an input", call.op));
  Array y = call.inputs[0];
  for (double& v : y.data) v = f(v);
  return std::vector<Array>{std::move(y)};
}

// The second operand: an input tensor, or the scalar attr "other".
Result<Array> Other(const OpCall& call) {
  if (call.inputs.size() > 1) return call.inputs[1];
  const auto it = call.attrs.find("other");
  if (it != call.attrs.end() && it->is_number()) return Array{{}, {it->get<double>()}};
  if (it != call.attrs.end() && it->is_boolean()) return Array{{}, {it->get<bool>() ? 1.0 : 0.0}};
  return Unfit(fmt::format("{} needs a second operand", call.op));
}

}  // namespace

Outputs Gelu(const OpCall& call) {
  const auto it = call.attrs.find("approximate");
  const std::string approximate =
      it != call.attrs.end() && it->is_string() ? it->get<std::string>() : "none";
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return Map(call, [k](double x) {
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    });
  }
  if (approximate != "none") return Unfit(fmt::format("gelu approximate '{}'", approximate));
  return Map(call, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
}

Outputs Silu(const OpCall& call) {
  return Map(call, [](double x) { return x / (1.0 + std::exp(-x)); });
}

Outputs Relu(const OpCall& call) {
  return Map(call, [](double x) { return x > 0.0 ? x : (x != x ? x : 0.0); });
}

Outputs Add(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("add needs an input");
  PARITY_ASSIGN_OR_RETURN(Array other, Other(call));
  PARITY_ASSIGN_OR_RETURN(double alpha, AttrNumber(call, "alpha", 1.0));
  PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(call.inputs[0], other, [alpha](double a, double b) {
                            return a + alpha * b;
                          }));
  return std::vector<Array>{std::move(y)};
}

Outputs Mul(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("mul needs an input");
  PARITY_ASSIGN_OR_RETURN(Array other, Other(call));
  PARITY_ASSIGN_OR_RETURN(
      Array y, Broadcast(call.inputs[0], other, [](double a, double b) { return a * b; }));
  return std::vector<Array>{std::move(y)};
}

Outputs Dropout(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("dropout needs an input");
  PARITY_ASSIGN_OR_RETURN(double p, AttrNumber(call, "p", 0.5));
  PARITY_ASSIGN_OR_RETURN(bool training, AttrBool(call, "training", true));
  const Array& x = call.inputs[0];
  if (!training || p == 0.0) return std::vector<Array>{x};
  if (p < 0.0 || p > 1.0) return Unfit(fmt::format("dropout p = {}", p));
  if (call.recorded_outputs.empty() || call.recorded_outputs[0].shape != x.shape) {
    return Unfit("dropout's mask is recovered from its recorded output, which is missing");
  }
  // Kept elements are the non-zero ones of the output (a zero input is zero either way).
  const Array& out = call.recorded_outputs[0];
  Array y = x;
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  for (std::size_t i = 0; i < y.data.size(); ++i) {
    y.data[i] = out.data[i] != 0.0 ? x.data[i] * scale : 0.0;
  }
  return std::vector<Array>{std::move(y)};
}

Outputs Embedding(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("embedding needs indices");
  const Array& indices = call.inputs[0];
  const Array* weight = call.Param("weight");
  if (weight == nullptr && call.inputs.size() > 1) weight = &call.inputs[1];
  if (weight == nullptr || weight->shape.size() != 2) return Unfit("embedding needs a 2-d weight");
  const int64_t rows = weight->shape[0], dim = weight->shape[1];
  std::vector<int64_t> shape = indices.shape;
  shape.push_back(dim);
  Array y = Array::Filled(shape);
  for (std::size_t i = 0; i < indices.data.size(); ++i) {
    const double index = indices.data[i];
    if (!(index >= 0 && index < static_cast<double>(rows)) || index != std::floor(index)) {
      return Unfit(fmt::format("index {} out of range for {} rows", index, rows));
    }
    const auto row = static_cast<int64_t>(index);
    std::copy_n(weight->data.begin() + row * dim, dim,
                y.data.begin() + static_cast<int64_t>(i) * dim);
  }
  return std::vector<Array>{std::move(y)};
}

}  // namespace parity::oracle
