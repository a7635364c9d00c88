// SPDX-License-Identifier: Apache-2.0
// torch 2.x's fused optimizers in float64: _fused_adam_ and _fused_adamw_ (one call updating
// every parameter of a group; torch.optim.Adam/AdamW(fused=True)). Their outputs are the
// tensors the call writes, in schema order: the parameters, the gradients (unscaled in place
// when a grad_scale is given), exp_avgs, exp_avg_sqs and, with amsgrad, max_exp_avg_sqs.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

struct AdamArgs {
  std::vector<const Array*> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
  double lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
  const Array* grad_scale = nullptr;
  const Array* found_inf = nullptr;
};

Result<AdamArgs> ReadAdam(const OpCall& call) {
  if (call.input_args.empty()) return Unfit(fmt::format("{} needs named inputs", call.op));
  AdamArgs a;
  a.decoupled = call.op.starts_with("_fused_adamw");
  a.params = ArgList(call, "self");
  a.grads = ArgList(call, "grads");
  a.exp_avgs = ArgList(call, "exp_avgs");
  a.exp_avg_sqs = ArgList(call, "exp_avg_sqs");
  a.max_exp_avg_sqs = ArgList(call, "max_exp_avg_sqs");
  a.steps = ArgList(call, "state_steps");
  for (const char* name : {"grad_scale", "found_inf"}) {
    const std::vector<const Array*> one = ArgList(call, name);
    if (one.size() > 1) return Unfit(fmt::format("{}: more than one {}", call.op, name));
    (std::string(name) == "grad_scale" ? a.grad_scale : a.found_inf) =
        one.empty() ? nullptr : one[0];
  }
  const std::size_t n = a.params.size();
  PARITY_ASSIGN_OR_RETURN(a.amsgrad, AttrBool(call, "amsgrad", false));
  if (n == 0 || a.grads.size() != n || a.exp_avgs.size() != n || a.exp_avg_sqs.size() != n ||
      a.steps.size() != n || (a.amsgrad && a.max_exp_avg_sqs.size() != n)) {
    return Unfit(
        fmt::format("{}: self, grads, exp_avgs, exp_avg_sqs and state_steps (and "
                    "max_exp_avg_sqs with amsgrad) differ in length",
                    call.op));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t numel = a.params[i]->numel();
    if (a.grads[i]->numel() != numel || a.exp_avgs[i]->numel() != numel ||
        a.exp_avg_sqs[i]->numel() != numel || a.steps[i]->numel() != 1 ||
        (a.amsgrad && a.max_exp_avg_sqs[i]->numel() != numel)) {
      return Unfit(fmt::format("{}: the tensors of parameter {} differ in size", call.op, i));
    }
  }
  if ((a.grad_scale && a.grad_scale->numel() != 1) || (a.found_inf && a.found_inf->numel() != 1)) {
    return Unfit("grad_scale and found_inf are one value each");
  }
  PARITY_ASSIGN_OR_RETURN(a.lr, AttrNumber(call, "lr", NAN));
  PARITY_ASSIGN_OR_RETURN(a.beta1, AttrNumber(call, "beta1", NAN));
  PARITY_ASSIGN_OR_RETURN(a.beta2, AttrNumber(call, "beta2", NAN));
  PARITY_ASSIGN_OR_RETURN(a.weight_decay, AttrNumber(call, "weight_decay", 0.0));
  PARITY_ASSIGN_OR_RETURN(a.eps, AttrNumber(call, "eps", NAN));
  PARITY_ASSIGN_OR_RETURN(a.maximize, AttrBool(call, "maximize", false));
  if (!std::isfinite(a.lr) || !std::isfinite(a.beta1) || !std::isfinite(a.beta2) ||
      !std::isfinite(a.eps)) {
    return Unfit(fmt::format("{} needs lr, beta1, beta2 and eps", call.op));
  }
  return a;
}

// The update, or (magnitudes) per element the sum of the magnitudes of each output's terms.
Outputs Adam(const OpCall& call, bool magnitudes) {
  PARITY_ASSIGN_OR_RETURN(AdamArgs a, ReadAdam(call));
  const std::size_t n = a.params.size();
  std::vector<Array> params, grads, exp_avgs, exp_avg_sqs, maxima;
  const bool skip = a.found_inf != nullptr && a.found_inf->data[0] != 0.0;
  const double scale = a.grad_scale != nullptr ? a.grad_scale->data[0] : 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    Array p = *a.params[i], g = *a.grads[i], m = *a.exp_avgs[i], v = *a.exp_avg_sqs[i];
    Array vmax = a.amsgrad ? *a.max_exp_avg_sqs[i] : Array{};
    if (!skip) {
      const double step = a.steps[i]->data[0];
      const double bias1 = 1.0 - std::pow(a.beta1, step);
      const double bias2_sqrt = std::sqrt(1.0 - std::pow(a.beta2, step));
      const double step_size = a.lr / bias1;
      for (std::size_t k = 0; k < p.data.size(); ++k) {
        const double unscaled = a.grad_scale != nullptr ? g.data[k] / scale : g.data[k];
        double grad = a.maximize ? -unscaled : unscaled;
        double value = p.data[k];
        if (a.weight_decay != 0.0) {
          if (a.decoupled) {
            value *= 1.0 - a.lr * a.weight_decay;
          } else {
            grad += a.weight_decay * p.data[k];
          }
        }
        const double w = 1.0 - a.beta1;
        const double m_new = m.data[k] + w * (grad - m.data[k]);  // torch's lerp
        const double v_new = a.beta2 * v.data[k] + (1.0 - a.beta2) * grad * grad;
        const double second = a.amsgrad ? std::max(vmax.data[k], v_new) : v_new;
        const double update = step_size * m_new / (std::sqrt(second) / bias2_sqrt + a.eps);
        if (magnitudes) {  // the terms each output sums (v's are all positive)
          p.data[k] = std::fabs(value) + std::fabs(update);
          g.data[k] = std::fabs(unscaled);
          m.data[k] = (1.0 + w) * std::fabs(m.data[k]) + w * std::fabs(grad);
        } else {
          p.data[k] = value - update;
          g.data[k] = unscaled;  // unscaled in place
          m.data[k] = m_new;
        }
        v.data[k] = v_new;
        if (a.amsgrad) vmax.data[k] = second;
      }
    }
    params.push_back(std::move(p));
    grads.push_back(std::move(g));
    exp_avgs.push_back(std::move(m));
    exp_avg_sqs.push_back(std::move(v));
    if (a.amsgrad) maxima.push_back(std::move(vmax));
  }
  std::vector<Array> out;
  for (std::vector<Array>* list : {&params, &grads, &exp_avgs, &exp_avg_sqs, &maxima}) {
    for (Array& x : *list) out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

Outputs FusedAdam(const OpCall& call) { return Adam(call, false); }

Outputs FusedAdamScales(const OpCall& call) { return Adam(call, true); }

}  // namespace parity::oracle
