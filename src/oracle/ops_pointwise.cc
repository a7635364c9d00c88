// SPDX-License-Identifier: Apache-2.0
// gelu, silu, relu, sigmoid, tanh, add, sub, mul, div, dropout (and aten's native_dropout)
// and the losses (mse, binary cross-entropy with logits, nll) in float64.
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
  if (!call.attrs.contains("other"))
    return Unfit(fmt::format("{} needs a second operand", call.op));
  PARITY_ASSIGN_OR_RETURN(double other, AttrNumber(call, "other", std::nan("")));
  return Array{{}, {other}};
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

Outputs Sub(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("sub needs an input");
  PARITY_ASSIGN_OR_RETURN(Array other, Other(call));
  PARITY_ASSIGN_OR_RETURN(double alpha, AttrNumber(call, "alpha", 1.0));
  PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(call.inputs[0], other, [alpha](double a, double b) {
                            return a - alpha * b;
                          }));
  return std::vector<Array>{std::move(y)};
}

Outputs Div(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("div needs an input");
  PARITY_ASSIGN_OR_RETURN(Array other, Other(call));
  const auto it = call.attrs.find("rounding_mode");
  const std::string mode = it != call.attrs.end() && it->is_string() ? it->get<std::string>() : "";
  if (!mode.empty() && mode != "trunc" && mode != "floor") {
    return Unfit(fmt::format("div rounding_mode '{}'", mode));
  }
  PARITY_ASSIGN_OR_RETURN(Array y, Broadcast(call.inputs[0], other, [&mode](double a, double b) {
                            const double q = a / b;
                            return mode == "trunc" ? std::trunc(q)
                                                   : (mode == "floor" ? std::floor(q) : q);
                          }));
  return std::vector<Array>{std::move(y)};
}

Outputs Sigmoid(const OpCall& call) {
  return Map(call, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

Outputs Tanh(const OpCall& call) {
  return Map(call, [](double x) { return std::tanh(x); });
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

// aten::native_dropout(input, p, train) -> (output, mask): the mask is the recorded one.
Outputs NativeDropout(const OpCall& call) {
  const Array* x = Arg(call, "input", 0);
  if (x == nullptr) return Unfit("native_dropout needs an input");
  PARITY_ASSIGN_OR_RETURN(double p, AttrNumber(call, "p", 0.5));
  PARITY_ASSIGN_OR_RETURN(bool train, AttrBool(call, "train", true));
  if (!train) return std::vector<Array>{*x, Array::Filled(x->shape, 1.0)};
  if (!(p >= 0.0 && p <= 1.0)) return Unfit(fmt::format("native_dropout p = {}", p));
  if (call.recorded_outputs.size() != 2 || call.recorded_outputs[1].shape != x->shape) {
    return Unfit("native_dropout's mask (its second output) is not recorded");
  }
  const Array& mask = call.recorded_outputs[1];
  Array y = *x;
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] *= mask.data[i] * scale;
  return std::vector<Array>{std::move(y), mask};
}

namespace {

// The elementwise loss `terms` reduced as aten's `reduction` says.
Outputs Reduced(const OpCall& call, Array terms) {
  PARITY_ASSIGN_OR_RETURN(int reduction, Reduction(call));
  if (reduction == 0) return std::vector<Array>{std::move(terms)};
  double sum = 0.0;
  for (double v : terms.data) sum += v;
  if (reduction == 1) sum /= static_cast<double>(terms.data.size());
  return std::vector<Array>{Array{{}, {sum}}};
}

}  // namespace

Outputs MseLoss(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  const Array* t = Arg(call, "target", 1);
  if (x == nullptr || t == nullptr) return Unfit("mse_loss needs self and target");
  PARITY_ASSIGN_OR_RETURN(Array terms,
                          Broadcast(*x, *t, [](double a, double b) { return (a - b) * (a - b); }));
  return Reduced(call, std::move(terms));
}

// (1 - t)·x + (1 + (pos_weight - 1)·t)·log(1 + e^-x), written stably, times weight.
Outputs BceWithLogits(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  const Array* t = Arg(call, "target", 1);
  if (x == nullptr || t == nullptr || x->shape != t->shape) {
    return Unfit("binary_cross_entropy_with_logits needs self and a target of its shape");
  }
  const Array* pos_weight = call.input_args.empty() ? nullptr : Arg(call, "pos_weight", 0);
  const Array* weight = call.input_args.empty() ? nullptr : Arg(call, "weight", 0);
  Array log_weight = Array::Filled(x->shape, 1.0);
  if (pos_weight != nullptr) {
    PARITY_ASSIGN_OR_RETURN(log_weight, Broadcast(*t, *pos_weight, [](double target, double pw) {
                              return 1.0 + (pw - 1.0) * target;
                            }));
  }
  if (log_weight.shape != x->shape) return Unfit("pos_weight does not broadcast to self");
  Array terms = *x;
  for (std::size_t i = 0; i < terms.data.size(); ++i) {
    const double v = x->data[i];
    const double softplus = std::log1p(std::exp(-std::fabs(v))) + std::max(-v, 0.0);
    terms.data[i] = (1.0 - t->data[i]) * v + log_weight.data[i] * softplus;
  }
  if (weight != nullptr) {
    PARITY_ASSIGN_OR_RETURN(terms,
                            Broadcast(terms, *weight, [](double l, double w) { return l * w; }));
    if (terms.shape != x->shape) return Unfit("weight does not broadcast to self");
  }
  return Reduced(call, std::move(terms));
}

namespace {

// self (C), (N, C) or (N, C, H, W) against target (), (N) or (N, H, W), and a weight of C.
struct NllLayout {
  int64_t classes = 0, batch = 1, spatial = 1;
};

Result<NllLayout> NllLayoutOf(const Array& x, const Array& target, const Array* weight) {
  if (x.shape.empty() || x.shape.size() > 4) return Unfit("nll_loss needs self of 1 to 4 dims");
  NllLayout l;
  const bool unbatched = x.shape.size() == 1;
  l.classes = unbatched ? x.shape[0] : x.shape[1];
  l.batch = unbatched ? 1 : x.shape[0];
  for (std::size_t d = 2; d < x.shape.size(); ++d) l.spatial *= x.shape[d];
  if (target.numel() != l.batch * l.spatial) {
    return Unfit(fmt::format("target {} does not fit self {}", ShapeString(target.shape),
                             ShapeString(x.shape)));
  }
  if (weight != nullptr && weight->numel() != l.classes) return Unfit("weight size differs from C");
  return l;
}

}  // namespace

// nll_loss_forward (self (N, C) or (C)) and nll_loss2d_forward (self (N, C, H, W)): the loss and
// total_weight, the sum of the class weights of the targets not ignored.
Outputs NllLoss(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  const Array* target = Arg(call, "target", 1);
  if (x == nullptr || target == nullptr) return Unfit("nll_loss needs self and target");
  const Array* weight = call.input_args.empty() ? nullptr : Arg(call, "weight", 0);
  PARITY_ASSIGN_OR_RETURN(int reduction, Reduction(call));
  PARITY_ASSIGN_OR_RETURN(double ignore, AttrNumber(call, "ignore_index", -100));
  PARITY_ASSIGN_OR_RETURN(const NllLayout l, NllLayoutOf(*x, *target, weight));
  const int64_t classes = l.classes, batch = l.batch, spatial = l.spatial;
  Array terms{target->shape, std::vector<double>(target->data.size(), 0.0)};
  double total_weight = 0.0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t s = 0; s < spatial; ++s) {
      const double t = target->data[static_cast<std::size_t>(n * spatial + s)];
      if (t == ignore) continue;
      if (!(t >= 0 && t < static_cast<double>(classes))) {
        return Unfit(fmt::format("target {} out of range for {} classes", t, classes));
      }
      const auto c = static_cast<int64_t>(t);
      const double w = weight ? weight->data[static_cast<std::size_t>(c)] : 1.0;
      terms.data[static_cast<std::size_t>(n * spatial + s)] =
          -w * x->data[static_cast<std::size_t>((n * classes + c) * spatial + s)];
      total_weight += w;
    }
  }
  // Batched with reduction none: per-sample losses, total_weight 0. An unbatched self takes
  // the reduced path even then (undivided), as torch's CPU kernel does.
  if (reduction == 0 && x->shape.size() > 1) {
    return std::vector<Array>{std::move(terms), Array{{}, {0.0}}};
  }
  if (reduction == 0) return std::vector<Array>{std::move(terms), Array{{}, {total_weight}}};
  double sum = 0.0;
  for (double v : terms.data) sum += v;
  if (reduction == 1) sum /= total_weight;
  return std::vector<Array>{Array{{}, {sum}}, Array{{}, {total_weight}}};
}

// nll_loss_backward (and nll_loss2d_backward): −w[t]·g at each target, divided by total_weight
// for the mean.
Outputs NllLossBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, "self", 1);
  const Array* target = Arg(call, "target", 2);
  const Array* weight = call.input_args.empty() ? nullptr : Arg(call, "weight", 3);
  const Array* total = call.input_args.empty() ? nullptr : Arg(call, "total_weight", 4);
  if (g == nullptr || x == nullptr || target == nullptr || total == nullptr ||
      total->numel() != 1) {
    return Unfit("nll_loss_backward needs grad_output, self, target and total_weight");
  }
  PARITY_ASSIGN_OR_RETURN(int reduction, Reduction(call));
  PARITY_ASSIGN_OR_RETURN(double ignore, AttrNumber(call, "ignore_index", -100));
  PARITY_ASSIGN_OR_RETURN(const NllLayout l, NllLayoutOf(*x, *target, weight));
  const int64_t classes = l.classes, batch = l.batch, spatial = l.spatial;
  if (reduction == 0 ? g->numel() != target->numel() : g->numel() != 1) {
    return Unfit("grad_output does not fit the reduction");
  }
  Array out = Array::Filled(x->shape);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t s = 0; s < spatial; ++s) {
      const int64_t at = n * spatial + s;
      const double t = target->data[at];
      if (t == ignore) continue;
      if (!(t >= 0 && t < static_cast<double>(classes)))
        return Unfit(fmt::format("target {} out of range", t));
      const auto c = static_cast<int64_t>(t);
      const double w = weight ? weight->data[c] : 1.0;
      double grad = reduction == 0 ? g->data[at] : g->data[0];
      if (reduction == 1) grad /= total->data[0];
      out.data[(n * classes + c) * spatial + s] = -w * grad;
    }
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
