// SPDX-License-Identifier: Apache-2.0
// aten's optimizer arithmetic (sqrt, addcmul, addcdiv, lerp and the _foreach_ forms), and the
// ops that make or copy tensors (zeros, ones, fill_, clone, copy_, _to_copy, stack), in
// float64.
#include <fmt/format.h>

#include <cmath>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 31;  // a shape from attrs is bounded

// A shape attr (`size`), checked and bounded.
Result<std::vector<int64_t>> ShapeAttr(const OpCall& call, const char* name) {
  const auto it = call.attrs.find(name);
  if (it == call.attrs.end() || !it->is_array())
    return Unfit(fmt::format("attr '{}' is not a shape", name));
  std::vector<int64_t> shape;
  int64_t n = 1;
  for (const Json& d : *it) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return Unfit(fmt::format("attr '{}' is not a shape", name));
    shape.push_back(d.get<int64_t>());
    n *= std::max<int64_t>(shape.back(), 1);
    if (n > kMaxElements) return Unfit(fmt::format("attr '{}' is implausibly large", name));
  }
  return shape;
}

}  // namespace

Outputs Sqrt(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit("sqrt needs self");
  Array y = *x;
  for (double& v : y.data) v = std::sqrt(v);
  return std::vector<Array>{std::move(y)};
}

// addcmul: self + value·t1·t2; addcdiv: self + value·t1/t2; all three broadcast.
Outputs Addcmul(const OpCall& call) {
  const bool divide = call.op.find("addcdiv") != std::string::npos;
  const Array* self = Arg(call, "self", 0);
  const Array* t1 = Arg(call, "tensor1", 1);
  const Array* t2 = Arg(call, "tensor2", 2);
  if (self == nullptr || t1 == nullptr || t2 == nullptr) {
    return Unfit(fmt::format("{} needs self, tensor1 and tensor2", call.op));
  }
  PARITY_ASSIGN_OR_RETURN(double value, AttrNumber(call, "value", 1.0));
  PARITY_ASSIGN_OR_RETURN(Array term, Broadcast(*t1, *t2, [divide, value](double a, double b) {
                            return value * (divide ? a / b : a * b);
                          }));
  PARITY_ASSIGN_OR_RETURN(Array y,
                          Broadcast(*self, term, [](double s, double t) { return s + t; }));
  return std::vector<Array>{std::move(y)};
}

// lerp(self, end, weight): self + weight·(end − self), weight a scalar attr or a tensor.
Outputs Lerp(const OpCall& call) {
  const Array* self = Arg(call, "self", 0);
  const Array* end = Arg(call, "end", 1);
  if (self == nullptr || end == nullptr) return Unfit("lerp needs self and end");
  Array weight{{}, {0.0}};
  if (const Array* w = call.input_args.empty() ? nullptr : Arg(call, "weight", 2)) {
    weight = *w;
  } else {
    PARITY_ASSIGN_OR_RETURN(weight.data[0], AttrNumber(call, "weight", NAN));
  }
  PARITY_ASSIGN_OR_RETURN(Array diff,
                          Broadcast(*end, *self, [](double e, double s) { return e - s; }));
  PARITY_ASSIGN_OR_RETURN(Array step,
                          Broadcast(diff, weight, [](double d, double w) { return d * w; }));
  PARITY_ASSIGN_OR_RETURN(Array y,
                          Broadcast(*self, step, [](double s, double t) { return s + t; }));
  return std::vector<Array>{std::move(y)};
}

// _foreach_<op>[_](self[], ...): <op> on each position of the lists, its list args (other,
// tensor1, tensor2; torch 2.x's lerp names its `tensors1` and `weights`) taken at the same
// position, a single tensor (`.Tensor` overloads: other) given to every position, `scalar`
// given to it as its scalar operand and `scalars` one per position. The outputs are the
// results in order (the tensors an in-place form writes).
Outputs Foreach(const OpCall& call) {
  std::string base = call.op.substr(std::string_view("_foreach_").size());
  if (base.ends_with('_')) base.pop_back();
  // (the foreach op's argument, the single-tensor op's)
  static constexpr std::pair<std::string_view, std::string_view> kListArgs[] = {
      {"self", "self"}, {"other", "other"},   {"tensor1", "tensor1"}, {"tensor2", "tensor2"},
      {"end", "end"},   {"weight", "weight"}, {"tensors1", "end"},    {"weights", "weight"}};
  const std::vector<const Array*> selves = ArgList(call, "self");
  if (call.input_args.empty() || selves.empty())
    return Unfit(fmt::format("{} needs a named self list", call.op));
  // The scalar operand's name in the single-tensor op.
  const bool addc = base == "addcmul" || base == "addcdiv";
  const char* scalar_name = addc ? "value" : (base == "lerp" ? "weight" : "other");
  const auto scalars = call.attrs.find("scalars");
  if (scalars != call.attrs.end() && (!scalars->is_array() || scalars->size() != selves.size())) {
    return Unfit("scalars differ in number from self");
  }
  std::vector<Array> out;
  for (std::size_t i = 0; i < selves.size(); ++i) {
    OpCall one;
    one.op = base;
    for (const auto& [arg, as] : kListArgs) {
      const std::vector<const Array*> list = ArgList(call, arg);
      if (list.empty()) continue;
      if (list.size() != selves.size() && (list.size() != 1 || arg == "self"))
        return Unfit(fmt::format("list '{}' differs in length from self", arg));
      one.inputs.push_back(*list[list.size() == 1 ? 0 : i]);
      one.input_args.emplace_back(as);
    }
    for (const auto& [key, value] : call.attrs.items()) {
      if (key == "scalar" || key == "scalars") continue;
      // A list of scalars under the single op's own name (_foreach_lerp.ScalarList's weight):
      // one per position.
      const bool per_position = key == scalar_name && value.is_array();
      if (per_position && value.size() != selves.size()) {
        return Unfit(fmt::format("{} differs in number from self", key));
      }
      one.attrs[key] = per_position ? value[i] : value;
    }
    if (call.attrs.contains("scalar")) one.attrs[scalar_name] = call.attrs["scalar"];
    if (call.attrs.contains("scalar_nonfinite"))
      one.attrs[std::string(scalar_name) + "_nonfinite"] = call.attrs["scalar_nonfinite"];
    if (scalars != call.attrs.end()) one.attrs[scalar_name] = (*scalars)[i];
    if (!Replayable(base))
      return Unfit(fmt::format("{}: '{}' has no float64 replay", call.op, base));
    PARITY_ASSIGN_OR_RETURN(std::vector<Array> y, Replay(one));
    if (y.size() != 1)
      return Unfit(fmt::format("{}: '{}' gives {} outputs", call.op, base, y.size()));
    out.push_back(std::move(y[0]));
  }
  return out;
}

// zeros(size), ones(size), new_zeros(self, size), new_ones, zeros_like(self), ones_like,
// full(size, fill_value), fill_(value) and zero_ (their shape: the recorded output's).
Outputs Fill(const OpCall& call) {
  const std::string& op = call.op;
  double value = op.starts_with("ones") || op.starts_with("new_ones") ? 1.0 : 0.0;
  if (op == "full" || op == "fill_" || op == "new_full" || op == "full_like") {
    const Array* tensor_value = call.input_args.empty() ? nullptr : Arg(call, "value", 0);
    if (tensor_value != nullptr && tensor_value->numel() == 1) {
      value = tensor_value->data[0];  // fill_.Tensor: a 0-d value tensor
    } else {
      PARITY_ASSIGN_OR_RETURN(value, AttrNumber(call, op == "fill_" ? "value" : "fill_value", NAN));
    }
  }
  std::vector<int64_t> shape;
  if (op.ends_with("_like")) {
    const Array* self = Arg(call, "self", 0);
    if (self == nullptr) return Unfit(fmt::format("{} needs self", op));
    shape = self->shape;
  } else if (op == "fill_" || op == "zero_") {
    if (call.recorded_outputs.size() != 1) return Unfit(fmt::format("{} records one output", op));
    shape = call.recorded_outputs[0].shape;
  } else {
    PARITY_ASSIGN_OR_RETURN(shape, ShapeAttr(call, "size"));
  }
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, numel));
  return std::vector<Array>{Array::Filled(std::move(shape), value)};
}

// clone(self), _to_copy(self, dtype ...): self (rounded to the recorded dtype when judged);
// copy_(self, src): src broadcast to self's shape.
Outputs Copy(const OpCall& call) {
  if (call.op == "copy_") {
    const Array* self = Arg(call, "self", 0);
    const Array* src = Arg(call, "src", 1);
    if (self == nullptr || src == nullptr) return Unfit("copy_ needs self and src");
    PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(*self, *src, [](double, double s) { return s; }));
    if (y.shape != self->shape) return Unfit("src does not broadcast to self");
    return std::vector<Array>{std::move(y)};
  }
  const Array* self = Arg(call, "self", 0);
  if (self == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  return std::vector<Array>{*self};
}

// stack(tensors, dim): each tensor given a new dim of 1 there, then concatenated.
Outputs Stack(const OpCall& call) {
  std::vector<const Array*> parts = ArgList(call, "tensors");
  if (parts.empty()) return Unfit("stack needs tensors");
  const std::vector<int64_t> shape = parts[0]->shape;
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], shape.size() + 1));
  int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) (d < dim ? outer : inner) *= shape[d];
  std::vector<int64_t> out_shape = shape;
  out_shape.insert(out_shape.begin() + static_cast<int64_t>(dim),
                   static_cast<int64_t>(parts.size()));
  Array out = Array::Filled(out_shape);
  const auto count = static_cast<int64_t>(parts.size());
  for (int64_t p = 0; p < count; ++p) {
    if (parts[p]->shape != shape) return Unfit("stack of tensors whose shapes differ");
    for (int64_t o = 0; o < outer; ++o) {
      std::copy_n(parts[p]->data.begin() + o * inner, inner,
                  out.data.begin() + (o * count + p) * inner);
    }
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
