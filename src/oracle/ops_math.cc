// SPDX-License-Identifier: Apache-2.0
// The elementwise math and logic torch 2.x's model code emits (Llama's rotary embedding and
// RMSNorm, BERT's attention masks), in float64: sin, cos, rsqrt, pow (its three overloads),
// silu_backward; eq, ne, ge, gt, le, lt, where, bitwise_and/or/not, logical_not, all, any;
// and the shape ops of autograd and masks: slice_backward, select_backward, arange,
// scalar_tensor. Comparisons, selections and the shape ops are exact; the math rounds once
// per operation of the float32 kernel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

std::string Base(const std::string& op) {
  return op.ends_with('_') && !op.starts_with('_') ? op.substr(0, op.size() - 1) : op;
}

// The second operand of a binary op: the input named `arg` (or the second input where the
// call names none), else the scalar attr `arg`.
Result<Array> Operand(const OpCall& call, const char* arg) {
  if (const Array* t = Arg(call, arg, 1); t != nullptr) return *t;
  if (!call.attrs.contains(arg)) return Unfit(fmt::format("{} needs {}", call.op, arg));
  PARITY_ASSIGN_OR_RETURN(double v, AttrNumber(call, arg, std::nan("")));
  return Array{{}, {v}};
}

// The elements of `shape`, or -1 past 2^62 (CheckOutputSize then refuses it).
int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 62) / d)) return -1;
    n *= d;
  }
  return n;
}

template <typename F>
Outputs Binary(const OpCall& call, F&& f) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  PARITY_ASSIGN_OR_RETURN(Array other, Operand(call, "other"));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(x->shape, other.shape));
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, Elements(shape)));
  PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(*x, other, f));
  return std::vector<Array>{std::move(y)};
}

bool Truth(double v) { return v != 0.0; }  // NaN is true, as torch's bool()

// An integer operand's value (integers and bools are held exactly; anything else, as a
// malformed record may hold, is brought into int64's range first).
int64_t Integer(double v) {
  return std::isfinite(v) ? static_cast<int64_t>(std::clamp(std::trunc(v), -0x1p63, 0x1p63 - 1024))
                          : 0;
}

Result<int64_t> AttrInt(const OpCall& call, const char* name, int64_t fallback) {
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> v, AttrInts(call, name, 1, fallback));
  return v[0];
}

// The gradient placed into zeros of `input_sizes`: at positions start, start+step, ... along
// `dim` (slice), or at one index (select, which has no dim of its own in the gradient).
Outputs Scatter(const OpCall& call, bool select) {
  const Array* g = Arg(call, "grad_output", 0);
  if (g == nullptr) return Unfit(fmt::format("{} needs grad_output", call.op));
  const auto sizes_attr = call.attrs.find("input_sizes");
  if (sizes_attr == call.attrs.end() || !sizes_attr->is_array()) {
    return Unfit(fmt::format("{} needs input_sizes", call.op));
  }
  std::vector<int64_t> sizes;
  for (const Json& d : *sizes_attr) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return Unfit("input_sizes holds a non-integer");
    }
    sizes.push_back(d.get<int64_t>());
  }
  if (sizes.empty()) return Unfit(fmt::format("{} of a 0-d tensor", call.op));
  PARITY_ASSIGN_OR_RETURN(int64_t dim_attr, AttrInt(call, "dim", 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr, sizes.size()));
  const int64_t n = sizes[dim];
  int64_t start = 0, step = 1, count = 1;
  if (select) {
    PARITY_ASSIGN_OR_RETURN(start, AttrInt(call, "index", 0));
    if (start < 0) start += n;
    if (start < 0 || start >= n) return Unfit("select_backward's index is out of range");
  } else {
    PARITY_ASSIGN_OR_RETURN(start, AttrInt(call, "start", 0));
    PARITY_ASSIGN_OR_RETURN(int64_t end, AttrInt(call, "end", n));
    PARITY_ASSIGN_OR_RETURN(step, AttrInt(call, "step", 1));
    if (step <= 0) return Unfit("slice_backward's step is not positive");
    // Python's slice bounds, as aten clamps them.
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, start, n);
    count = (end - start + step - 1) / step;
  }
  std::vector<int64_t> grad_shape = sizes;
  if (select) {
    grad_shape.erase(grad_shape.begin() + static_cast<std::ptrdiff_t>(dim));
  } else {
    grad_shape[dim] = count;
  }
  if (g->shape != grad_shape) {
    return Unfit(fmt::format("grad_output {} does not fit input_sizes {}", ShapeString(g->shape),
                             ShapeString(sizes)));
  }
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, Elements(sizes)));
  Array out = Array::Filled(sizes, 0.0);
  int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= sizes[d];
  for (std::size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const double* from = g->data.data() + (o * count + j) * inner;
      double* to = out.data.data() + (o * n + start + j * step) * inner;
      std::copy(from, from + inner, to);
    }
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace

Outputs Sin(const OpCall& call) {
  return MapSelf(call, [](double x) { return std::sin(x); });
}

Outputs Cos(const OpCall& call) {
  return MapSelf(call, [](double x) { return std::cos(x); });
}

Outputs Rsqrt(const OpCall& call) {
  return MapSelf(call, [](double x) { return 1.0 / std::sqrt(x); });
}

// pow.Tensor_Scalar(self, exponent), pow.Tensor_Tensor(self, exponent), pow.Scalar(self:
// Scalar, exponent).
Outputs Pow(const OpCall& call) {
  const Array* base = Arg(call, "self", 0);
  const Array* exponent = call.input_args.empty() ? nullptr : Arg(call, "exponent", 1);
  if (base != nullptr && exponent == nullptr && call.input_args.empty() && call.inputs.size() > 1) {
    exponent = &call.inputs[1];
  }
  auto pow = [](double a, double b) { return std::pow(a, b); };
  if (base != nullptr && exponent != nullptr) {
    PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(*base, *exponent, pow));
    return std::vector<Array>{std::move(y)};
  }
  if (base != nullptr) {
    if (!call.attrs.contains("exponent")) return Unfit("pow needs an exponent");
    PARITY_ASSIGN_OR_RETURN(double e, AttrNumber(call, "exponent", std::nan("")));
    Array y = *base;
    for (double& v : y.data) v = std::pow(v, e);
    return std::vector<Array>{std::move(y)};
  }
  // pow.Scalar: a scalar base (attr self), a tensor exponent.
  const Array* e = Arg(call, "exponent", 0);
  if (e == nullptr || !call.attrs.contains("self")) return Unfit("pow needs self and exponent");
  PARITY_ASSIGN_OR_RETURN(double b, AttrNumber(call, "self", std::nan("")));
  Array y = *e;
  for (double& v : y.data) v = std::pow(b, v);
  return std::vector<Array>{std::move(y)};
}

// silu'(x) = s·(1 + x·(1 − s)), s = sigmoid(x).
Outputs SiluBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, "self", 1);
  if (g == nullptr || x == nullptr) return Unfit("silu_backward needs grad_output and self");
  if (g->shape != x->shape) return Unfit("silu_backward: grad_output and self differ in shape");
  Array out = *g;
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    const double v = x->data[i];
    const double s = 1.0 / (1.0 + std::exp(-v));
    out.data[i] = g->data[i] * s * (1.0 + v * (1.0 - s));
  }
  return std::vector<Array>{std::move(out)};
}

Outputs Compare(const OpCall& call) {
  const std::string op = Base(call.op);
  if (op == "eq") return Binary(call, [](double a, double b) { return a == b ? 1.0 : 0.0; });
  if (op == "ne") return Binary(call, [](double a, double b) { return a != b ? 1.0 : 0.0; });
  if (op == "ge") return Binary(call, [](double a, double b) { return a >= b ? 1.0 : 0.0; });
  if (op == "gt") return Binary(call, [](double a, double b) { return a > b ? 1.0 : 0.0; });
  if (op == "le") return Binary(call, [](double a, double b) { return a <= b ? 1.0 : 0.0; });
  if (op == "lt") return Binary(call, [](double a, double b) { return a < b ? 1.0 : 0.0; });
  return Unfit(fmt::format("'{}' is not a comparison", call.op));
}

// bitwise_and, bitwise_or (bool and integer operands), bitwise_not, logical_not.
Outputs Bitwise(const OpCall& call) {
  const std::string op = Base(call.op);
  const bool boolean = !call.input_dtypes.empty() && call.input_dtypes[0] == DType::kBool;
  if (op == "logical_not") {
    return MapSelf(call, [](double x) { return Truth(x) ? 0.0 : 1.0; });
  }
  if (op == "bitwise_not") {
    return MapSelf(call, [boolean](double x) {
      return boolean ? (Truth(x) ? 0.0 : 1.0) : static_cast<double>(~Integer(x));
    });
  }
  if (op == "bitwise_and") {
    return Binary(call,
                  [&](double a, double b) { return static_cast<double>(Integer(a) & Integer(b)); });
  }
  if (op == "bitwise_or") {
    return Binary(call,
                  [&](double a, double b) { return static_cast<double>(Integer(a) | Integer(b)); });
  }
  return Unfit(fmt::format("'{}' is not a bitwise op", call.op));
}

// where.self(condition, self, other), and where.ScalarOther / ScalarSelf / Scalar.
Outputs Where(const OpCall& call) {
  const Array* condition = Arg(call, "condition", 0);
  if (condition == nullptr) return Unfit("where needs condition");
  auto operand = [&](const char* arg, std::size_t position) -> Result<Array> {
    if (!call.input_args.empty()) {
      if (const Array* t = Arg(call, arg, position); t != nullptr) return *t;
    } else if (position < call.inputs.size()) {
      return call.inputs[position];
    }
    if (!call.attrs.contains(arg)) return Unfit(fmt::format("where needs {}", arg));
    PARITY_ASSIGN_OR_RETURN(double v, AttrNumber(call, arg, std::nan("")));
    return Array{{}, {v}};
  };
  PARITY_ASSIGN_OR_RETURN(Array a, operand("self", 1));
  PARITY_ASSIGN_OR_RETURN(Array b, operand("other", 2));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> ab, BroadcastShape(a.shape, b.shape));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(condition->shape, ab));
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, Elements(shape)));
  const Array zeros = Array::Filled(shape, 0.0);
  auto expand = [&](const Array& x) {
    return Broadcast(x, zeros, [](double v, double) { return v; });
  };
  PARITY_ASSIGN_OR_RETURN(Array c, expand(*condition));
  PARITY_ASSIGN_OR_RETURN(Array out, expand(a));
  PARITY_ASSIGN_OR_RETURN(Array other, expand(b));
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    if (!Truth(c.data[i])) out.data[i] = other.data[i];
  }
  return std::vector<Array>{std::move(out)};
}

// all / any over every element (0-d), or along `dim` (one dim or a list; keepdim as given).
Outputs AllAny(const OpCall& call) {
  const bool all = Base(call.op) == "all";
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  const std::size_t rank = x->shape.size();
  std::vector<bool> reduced(std::max<std::size_t>(rank, 1), true);
  const auto dim_attr = call.attrs.find("dim");
  if (dim_attr != call.attrs.end() && !dim_attr->is_null()) {
    const Json dims = dim_attr->is_array() ? *dim_attr : Json::array({*dim_attr});
    if (!dims.empty()) reduced.assign(reduced.size(), false);
    for (const Json& d : dims) {
      if (!d.is_number_integer()) return Unfit(fmt::format("{}: dim is not an int", call.op));
      PARITY_ASSIGN_OR_RETURN(std::size_t at, NormalizeDim(d.get<int64_t>(), rank));
      reduced[at] = true;
    }
  }
  PARITY_ASSIGN_OR_RETURN(bool keepdim, AttrBool(call, "keepdim", false));
  if (dim_attr == call.attrs.end() || dim_attr->is_null()) keepdim = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> kept_strides(rank, 0);  // each input dim's stride in the output
  int64_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (!reduced[d]) {
      kept_strides[d] = stride;
      stride *= x->shape[d];
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      shape.push_back(x->shape[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  Array out = Array::Filled(shape, all ? 1.0 : 0.0);
  std::vector<int64_t> index(rank, 0);
  for (std::size_t i = 0; i < x->data.size(); ++i) {
    int64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) at += index[d] * kept_strides[d];
    const bool t = Truth(x->data[i]);
    double& acc = out.data[static_cast<std::size_t>(at)];
    acc = all ? (acc != 0.0 && t ? 1.0 : 0.0) : (acc != 0.0 || t ? 1.0 : 0.0);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < x->shape[d]) break;
      index[d] = 0;
    }
  }
  return std::vector<Array>{std::move(out)};
}

Outputs SliceBackward(const OpCall& call) { return Scatter(call, false); }
Outputs SelectBackward(const OpCall& call) { return Scatter(call, true); }

// arange(end), arange.start(start, end), arange.start_step(start, end, step): as many values
// as the recorded output holds, start + i·step (aten computes each so, not by summing).
Outputs Arange(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(double start, AttrNumber(call, "start", 0.0));
  PARITY_ASSIGN_OR_RETURN(double end, AttrNumber(call, "end", std::nan("")));
  PARITY_ASSIGN_OR_RETURN(double step, AttrNumber(call, "step", 1.0));
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) || step == 0.0) {
    return Unfit("arange needs finite start, end and a non-zero step");
  }
  const double count = std::ceil((end - start) / step);
  if (!(count >= 0)) return Unfit("arange's range is empty the wrong way");
  if (count > 0x1p40) return Unfit("arange's range is implausibly long");
  const auto n = static_cast<int64_t>(count);
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, n));
  Array out = Array::Filled({n});
  for (int64_t i = 0; i < n; ++i) out.data[i] = start + static_cast<double>(i) * step;
  return std::vector<Array>{std::move(out)};
}

Outputs ScalarTensor(const OpCall& call) {
  if (!call.attrs.contains("s")) return Unfit("scalar_tensor needs s");
  PARITY_ASSIGN_OR_RETURN(double s, AttrNumber(call, "s", std::nan("")));
  return std::vector<Array>{Array{{}, {s}}};
}

}  // namespace parity::oracle
