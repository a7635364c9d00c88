// SPDX-License-Identifier: Apache-2.0
// What each recorded output is judged by against its float64 replay: the `auto` tolerance with
// the reduction length and summand scale of that output (per element where the op gives it),
// the judgement itself, and the distribution check of random ops.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "compare/context.h"
#include "compare/metrics.h"
#include "compare/scale.h"
#include "oracle/kernels.h"
#include "oracle/replay.h"

namespace parity {
namespace {

// The longest sum some output element of output `index` is, where only the values tell:
// embedding_bag's largest bag (from the offsets), embedding backward's most repeated index.
std::optional<int64_t> ValueReductionLength(const OpCall& call, std::size_t index) {
  const std::string family = FamilyOf(call.op).name;
  if (family != "_embedding_bag" || index != 0) return std::nullopt;
  auto max_count = [](const Array& indices) -> std::optional<int64_t> {
    std::map<double, int64_t> counts;
    int64_t most = 0;
    for (double v : indices.data) most = std::max(most, ++counts[v]);
    return std::max<int64_t>(most, 1);
  };
  if (call.op == "embedding_dense_backward" || call.op == "_embedding_bag_dense_backward" ||
      call.op == "_embedding_bag_backward") {
    const Array* indices = oracle::Arg(call, "indices", 1);
    return indices != nullptr ? max_count(*indices) : std::nullopt;
  }
  const Array* indices = oracle::Arg(call, "indices", 1);
  const Array* offsets = oracle::Arg(call, "offsets", 2);
  if (indices == nullptr || offsets == nullptr || offsets->data.empty()) return std::nullopt;
  const auto include_last = call.attrs.find("include_last_offset");
  std::vector<double> bounds = offsets->data;
  if (include_last == call.attrs.end() || include_last->is_null() ||
      include_last->get<bool>() == false) {
    bounds.push_back(static_cast<double>(indices->numel()));
  }
  int64_t longest = 1;
  for (std::size_t i = 1; i < bounds.size(); ++i) {
    longest = std::max(longest, static_cast<int64_t>(bounds[i] - bounds[i - 1]));
  }
  return longest;
}

// For a loss reduced to one value (mean or sum): the ℓ2 norm of its summands, the terms the
// oracle gives with reduction 'none' (over N for 'mean'; over the total weight for nll_loss).
// Its output's own magnitude can be far smaller when the terms cancel (negative weights).
std::optional<double> LossTermScale(const OpCall& call, std::size_t index) {
  const std::string family = FamilyOf(call.op).name;
  if (index != 0 || call.op.ends_with("_backward") ||
      (family != "mse_loss" && family != "binary_cross_entropy_with_logits" &&
       family != "nll_loss_forward")) {
    return std::nullopt;
  }
  auto reduction = oracle::Reduction(call);
  if (!reduction.ok() || *reduction == 0) return std::nullopt;
  OpCall terms_call = call;
  terms_call.attrs["reduction"] = 0;
  auto terms = Replay(terms_call);
  if (!terms.ok() || terms->empty() || terms->front().data.empty()) return std::nullopt;
  double sum_sq = 0.0;
  for (double t : terms->front().data) {
    if (std::isfinite(t)) sum_sq += t * t;
  }
  double denominator = 1.0;
  if (*reduction == 1) {
    denominator = static_cast<double>(terms->front().data.size());
    if (family == "nll_loss_forward" && call.recorded_outputs.size() > 1 &&
        call.recorded_outputs[1].data.size() == 1) {
      denominator = std::fabs(call.recorded_outputs[1].data[0]);
    }
  }
  if (!(denominator > 0.0)) return std::nullopt;
  return std::sqrt(sum_sq) / denominator;
}

// Per element, the magnitude the rounding of an elementwise op's evaluation scales with,
// where its output can be far smaller (cancellation): gelu x·Φ(x) with |x| (Φ's error times
// x), gelu_backward with |g|·(1 + |x|), silu_backward with its terms' magnitudes, softmax's
// backward y·(g − Σ g·y) with y·(|g| + Σ|g|·y), log_softmax's g − exp(y)·Σg with
// |g| + exp(y)·Σ|g|.
std::optional<Array> ElementwiseScale(const OpCall& call) {
  const std::string& raw = call.op;
  if (raw == "gelu" || raw == "gelu_") {
    const Array* x = oracle::Arg(call, "self", 0);
    if (x == nullptr) return std::nullopt;
    Array s = *x;
    for (double& v : s.data) v = std::fabs(v);
    return s;
  }
  if (raw == "gelu_backward") {
    const Array* g = oracle::Arg(call, "grad_output", 0);
    const Array* x = oracle::Arg(call, "self", 1);
    if (g == nullptr || x == nullptr || g->data.size() != x->data.size()) return std::nullopt;
    Array s = *g;
    for (std::size_t i = 0; i < s.data.size(); ++i) {
      s.data[i] = std::fabs(g->data[i]) * (1.0 + std::fabs(x->data[i]));
    }
    return s;
  }
  if (raw == "silu_backward") {  // g·s·(1 + x·(1 − s)): the terms |g|·s·(1 + |x|·(1 − s))
    const Array* g = oracle::Arg(call, "grad_output", 0);
    const Array* x = oracle::Arg(call, "self", 1);
    if (g == nullptr || x == nullptr || g->data.size() != x->data.size()) return std::nullopt;
    Array s = *g;
    for (std::size_t i = 0; i < s.data.size(); ++i) {
      const double sig = 1.0 / (1.0 + std::exp(-x->data[i]));
      s.data[i] = std::fabs(g->data[i]) * sig * (1.0 + std::fabs(x->data[i]) * (1.0 - sig));
    }
    return s;
  }
  if (raw == "_softmax_backward_data" || raw == "_log_softmax_backward_data") {
    const bool log = raw.starts_with("_log_");
    const Array* g = oracle::Arg(call, "grad_output", 0);
    const Array* y = oracle::Arg(call, "output", 1);
    if (g == nullptr || y == nullptr || g->shape != y->shape) return std::nullopt;
    auto dims = oracle::AttrInts(call, "dim", 1, -1);
    if (!dims.ok()) return std::nullopt;
    auto dim = oracle::NormalizeDim((*dims)[0], y->shape.size());
    if (!dim.ok()) return std::nullopt;
    int64_t outer = 1, n = 1, inner = 1;
    for (std::size_t d = 0; d < y->shape.size(); ++d) {
      (d < *dim ? outer : d == *dim ? n : inner) *= y->shape[d];
    }
    Array s = *g;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          const auto at = static_cast<std::size_t>((o * n + j) * inner + i);
          sum += std::fabs(g->data[at]) * (log ? 1.0 : std::fabs(y->data[at]));
        }
        for (int64_t j = 0; j < n; ++j) {
          const auto at = static_cast<std::size_t>((o * n + j) * inner + i);
          const double gy = std::fabs(g->data[at]);
          s.data[at] = log ? gy + std::exp(y->data[at]) * sum : std::fabs(y->data[at]) * (gy + sum);
        }
      }
    }
    return s;
  }
  return std::nullopt;
}

// add, sub, addcmul, addcdiv (and their in-place and _foreach_ forms): per element the sum of
// the magnitudes of the terms, |a| + |α·b| or |a| + |v·b·c|, the op replayed on absolute
// values (sub as add). A sum that cancels keeps the rounding of its terms, not of its result.
std::optional<std::vector<Array>> TermScales(const OpCall& call) {
  std::string base = call.op;
  const bool foreach = base.starts_with("_foreach_");
  if (foreach) base.erase(0, std::string_view("_foreach_").size());
  const bool inplace = base.size() > 1 && base.back() == '_';
  if (inplace) base.pop_back();
  if (base != "add" && base != "sub" && base != "addcmul" && base != "addcdiv") {
    return std::nullopt;
  }
  OpCall magnitudes = call;
  if (base == "sub") {
    magnitudes.op = std::string(foreach ? "_foreach_" : "") + "add" + (inplace ? "_" : "");
  }
  for (Array& a : magnitudes.inputs) {
    for (double& v : a.data) v = std::fabs(v);
  }
  for (auto it = magnitudes.attrs.begin(); it != magnitudes.attrs.end(); ++it) {
    if (it->is_number()) {
      *it = std::fabs(it->get<double>());
    } else if (it->is_array()) {
      for (Json& v : *it) {
        if (v.is_number()) v = std::fabs(v.get<double>());
      }
    }
  }
  auto replayed = Replay(magnitudes);
  if (!replayed.ok()) return std::nullopt;
  return std::move(*replayed);
}

}  // namespace

std::optional<std::vector<Array>> ElementScales(const OpCall& call) {
  if (std::optional<Array> s = ElementwiseScale(call)) return std::vector<Array>{std::move(*s)};
  if (auto s = TermScales(call)) return s;
  // Ops whose replay gives their own per-element scales.
  oracle::Outputs (*own)(const OpCall&) = nullptr;
  if (call.op == "_fused_adam_" || call.op == "_fused_adamw_") own = oracle::FusedAdamScales;
  // torch 2.x's attention kernels: the CPU flash kernel, the GPU kernels by their schemas.
  if (oracle::IsAttentionKernel(call.op)) {
    own = call.op.ends_with("_backward") ? oracle::AttentionBackwardScales
                                         : oracle::AttentionForwardScales;
  }
  if (own != nullptr) {
    auto s = own(call);
    if (!s.ok()) return std::nullopt;
    return std::move(*s);
  }
  static const std::set<std::string> kBilinear = {
      "mm",     "addmm",       "bmm",    "baddbmm", "matmul",
      "linear", "convolution", "conv1d", "conv2d",  "convolution_backward",
      "sum",    "cumsum"};
  std::string base = call.op;
  if (base.size() > 1 && base.back() == '_' && base.front() != '_') base.pop_back();
  if (!kBilinear.count(base)) return std::nullopt;
  OpCall squared = call;
  for (Array& a : squared.inputs) {
    for (double& v : a.data) v *= v;
  }
  for (auto& [key, a] : squared.params) {
    for (double& v : a.data) v *= v;
  }
  for (const char* name : {"alpha", "beta"}) {
    const auto it = squared.attrs.find(name);
    if (it != squared.attrs.end() && it->is_number()) {
      const double v = it->get<double>();
      *it = v * v;
    }
  }
  auto replayed = Replay(squared);
  if (!replayed.ok()) return std::nullopt;
  for (Array& a : *replayed) {
    for (double& v : a.data) v = std::sqrt(std::max(v, 0.0));
  }
  return std::move(*replayed);
}

Result<Tolerance> OutputTolerance(const DumpRecord& record, const LoadedRecord& loaded,
                                  std::size_t index, std::initializer_list<const Json*> manifests,
                                  const std::vector<Array>* element_scales) {
  const Tensor& recorded = loaded.outputs.at(index);
  ToleranceRequest request;
  request.k = ValueReductionLength(loaded.call, index);
  Tolerance t = ResolveTolerance(
      request, {}, record.name,
      RecordContext(record, "output", recorded.dtype(), recorded.meta().shape, manifests, index));
  if (t.needs_output_scale && t.k && t.criterion == Criterion::kAbsRel) {
    std::optional<std::vector<Array>> computed;
    if (element_scales == nullptr) {
      computed = ElementScales(loaded.call);
      if (computed) element_scales = &*computed;
    }
    if (element_scales != nullptr && index < element_scales->size() &&
        (*element_scales)[index].numel() == recorded.numel()) {
      const Array& scales = (*element_scales)[index];
      double sum_sq = 0.0;
      for (double v : scales.data) sum_sq += v * v;
      t.needs_output_scale = false;
      t.scale = scales.data.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(scales.numel()));
      t.scale_source = "summands per element";
      t.atol = t.atol_per_scale * *t.scale;
      t.element_scale = std::make_shared<const std::vector<double>>(scales.data);
      return t;
    }
  }
  if (t.needs_output_scale && t.k) {
    if (const std::optional<double> scale = LossTermScale(loaded.call, index)) {
      t.needs_output_scale = false;
      t.scale = *scale;
      t.scale_source = "summands";
      t.atol = t.atol_per_scale * *scale;
      return t;
    }
    PARITY_ASSIGN_OR_RETURN(
        std::optional<double> scale,
        SummandScale(record.op, *t.k, loaded.inputs, loaded.params, record.attrs, index));
    if (scale) {
      t.needs_output_scale = false;
      t.scale = *scale;
      t.scale_source = "summands";
      t.atol = t.atol_per_scale * *scale;
    }
  }
  return t;
}

Result<OutputJudgement> JudgeOutput(const Tensor& recorded, const Array& expected,
                                    Tolerance tolerance) {
  const Tensor reference = FromArray(expected, recorded.dtype(), "oracle");
  MetricsOptions options;
  options.rtol = tolerance.criterion == Criterion::kAbsRel ? tolerance.rtol : 0.0;
  options.worst = 1;
  if (tolerance.needs_output_scale) {
    PARITY_ASSIGN_OR_RETURN(PairMetrics first, ComputePairMetrics(recorded, reference, options));
    tolerance.SetOutputScale(first.rms_b());
  }
  OutputJudgement j;
  if (tolerance.element_scale && tolerance.criterion == Criterion::kAbsRel &&
      tolerance.element_scale->size() == static_cast<std::size_t>(recorded.numel())) {
    // Each element against its own summands' scale.
    PARITY_ASSIGN_OR_RETURN(j.metrics, ComputePairMetrics(recorded, reference, options));
    PARITY_ASSIGN_OR_RETURN(const Array a, ToArray(recorded));
    PARITY_ASSIGN_OR_RETURN(const Array b, ToArray(reference));
    const std::vector<double>& scale = *tolerance.element_scale;
    PairMetrics& m = j.metrics;
    m.judged = true;
    m.violations = 0;
    m.max_ratio = 0.0;
    double worst = -1.0;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
      const double x = a.data[i], y = b.data[i];
      double ratio = 0.0;
      if (std::isfinite(x) && std::isfinite(y)) {
        const double d = std::fabs(x - y);
        const double allowed = tolerance.atol_per_scale * scale[i] + tolerance.rtol * std::fabs(y);
        ratio = d == 0.0 ? 0.0 : (allowed > 0.0 ? d / allowed : INFINITY);
      } else if (!(x == y || (std::isnan(x) && std::isnan(y)))) {
        ratio = INFINITY;
      }
      m.violations += ratio > 1.0;
      m.max_ratio = std::max(m.max_ratio, ratio);
      if (ratio > worst) {  // the element furthest past its own allowance
        worst = ratio;
        m.worst.assign(1, WorstElement{static_cast<int64_t>(i), x, y, std::fabs(x - y)});
      }
    }
    j.within = m.violations == 0 && m.nan_mismatch == 0 && m.inf_mismatch == 0;
    j.tolerance = std::move(tolerance);
    return j;
  }
  options.tolerance = &tolerance;
  PARITY_ASSIGN_OR_RETURN(j.metrics, ComputePairMetrics(recorded, reference, options));
  j.within = WithinTolerance(j.metrics, tolerance);
  j.tolerance = std::move(tolerance);
  return j;
}

std::optional<RandomCheck> CheckRandomOp(const OpCall& call) {
  const std::string family = FamilyOf(call.op).name;
  if (family != "dropout") return std::nullopt;
  const bool native = call.op != "dropout";
  const double p = call.attrs.value("p", Json(0.5)).is_number() ? call.attrs.value("p", 0.5) : 0.5;
  const Json train = call.attrs.value(native ? "train" : "training", Json(true));
  if (train == Json(false) || p == 0.0) return std::nullopt;  // the identity: judged as one
  // The kept set: the recorded mask (native_dropout's second output), else the output's
  // non-zeros where the input is not zero.
  int64_t n = 0, dropped = 0;
  if (native && call.recorded_outputs.size() == 2) {
    for (double m : call.recorded_outputs[1].data) {
      ++n;
      dropped += m == 0.0;
    }
  } else if (!call.recorded_outputs.empty() && !call.inputs.empty() &&
             call.inputs[0].data.size() == call.recorded_outputs[0].data.size()) {
    const auto& x = call.inputs[0].data;
    const auto& y = call.recorded_outputs[0].data;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i] == 0.0) continue;
      ++n;
      dropped += y[i] == 0.0;
    }
  }
  RandomCheck c;
  if (n == 0) {
    c.text = "not judged (random op): no element to check the drop rate on";
    return c;
  }
  const double rate = static_cast<double>(dropped) / static_cast<double>(n);
  const double sigma = std::sqrt(p * (1.0 - p) / static_cast<double>(n));
  c.holds = std::fabs(rate - p) <= 5.0 * sigma + 0.5 / static_cast<double>(n);
  c.text = fmt::format(
      "not judged (random op: its kept set is the record's own); drop rate {:.4f} over {} "
      "elements {} p = {} (±{:.4f}, 5σ)",
      rate, n, c.holds ? "agrees with" : "DISAGREES with", p, 5.0 * sigma);
  return c;
}

}  // namespace parity
