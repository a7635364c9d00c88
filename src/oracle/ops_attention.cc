// SPDX-License-Identifier: Apache-2.0
// scaled_dot_product_attention (attn_mask, is_causal, scale) in float64:
// softmax(Q·Kᵀ·scale + mask)·V over the last two dimensions, batch dimensions broadcast; torch
// 1.13's aten forms (output, attention weights), torch 2.x's kernels (CPU flash; CUDA flash,
// memory-efficient and cuDNN; the overrideable one of other backends) by their schemas
// (output, logsumexp, ...) and their backwards (grad_query, grad_key, grad_value[,
// grad_attn_bias]), recomputed from the inputs.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr std::size_t kNoMask = std::numeric_limits<std::size_t>::max();

// One attention op's schema: where its query is, where its mask or bias is when the record
// names no arguments (version 1 dumps), and whether it is one of torch 2.x's GPU kernels,
// whose tensor outputs past (output, logsumexp) are not values (sequence offsets of nested
// inputs, the dropout RNG's state, debug placeholders) and whose optional tensors shift the
// positions of the others: their records must name their arguments.
struct Schema {
  std::string_view op;
  std::size_t q_at, mask_at;
  bool gpu;
};

constexpr Schema kSchemas[] = {
    {"scaled_dot_product_attention", 0, 3, false},
    {"_scaled_dot_product_attention", 0, 3, false},
    {"_scaled_dot_product_attention_forward", 0, 3, false},
    {"_scaled_dot_product_attention_math", 0, 3, false},
    {"_scaled_dot_product_flash_attention_for_cpu", 0, 3, false},
    {"_scaled_dot_product_flash_attention_for_cpu_backward", 1, 6, false},
    {"_scaled_dot_product_flash_attention", 0, kNoMask, true},
    {"_scaled_dot_product_flash_attention_backward", 1, kNoMask, true},
    {"_scaled_dot_product_efficient_attention", 0, 3, true},
    {"_scaled_dot_product_efficient_attention_backward", 1, 4, true},
    {"_scaled_dot_product_cudnn_attention", 0, 3, true},
    {"_scaled_dot_product_cudnn_attention_backward", 1, 8, true},
    {"_scaled_dot_product_fused_attention_overrideable", 0, 3, true},
    {"_scaled_dot_product_fused_attention_overrideable_backward", 1, 4, true},
};

const Schema* SchemaOf(std::string_view op) {
  for (const Schema& s : kSchemas) {
    if (s.op == op) return &s;
  }
  return nullptr;
}

// The shapes, scale and mask of one attention call over (batch..., L, E) queries, (batch...,
// S, E) keys and (batch..., S, Ev) values, read from the inputs at `q_at` onwards.
struct AttentionArgs {
  const Array* q = nullptr;
  const Array* k = nullptr;
  const Array* v = nullptr;
  std::vector<int64_t> batch;  // the query's
  int64_t l = 0, e = 0, s = 0, ev = 0, batches = 0;
  /// Query heads per key/value head: grouped-query attention (Llama's GQA) gives the keys
  /// and values fewer heads (their batch dimension before L, S) than the queries.
  int64_t group = 1, heads = 1;
  /// The key/value batch of query batch b.
  int64_t Kv(int64_t b) const {
    return group == 1 ? b : (b / heads) * (heads / group) + (b % heads) / group;
  }
  bool causal = false, boolean_mask = false;
  double scale = 1.0;
  Array mask;  // (batch..., L, S), additive or (boolean_mask) a keep-mask
  bool mask_given = false;
};

// The attention mask: the input named attn_mask (attn_bias in the GPU kernels), or (calls
// without names) the input at the schema's `mask_at`.
Result<AttentionArgs> ReadArgs(const OpCall& call) {
  const Schema* schema = SchemaOf(call.op);
  if (schema == nullptr) return Unfit("not an attention op");
  if (schema->gpu && call.input_args.empty()) {
    return Unfit("the record names no arguments: its bias can't be told from its other tensors");
  }
  const std::size_t q_at = schema->q_at;
  std::size_t mask_at = schema->mask_at;
  if (call.inputs.size() < q_at + 3) return Unfit("attention needs query, key and value");
  AttentionArgs a;
  a.q = &call.inputs[q_at];
  a.k = &call.inputs[q_at + 1];
  a.v = &call.inputs[q_at + 2];
  const Array &q = *a.q, &k = *a.k, &v = *a.v;
  if (q.shape.size() < 2 || k.shape.size() != q.shape.size() || v.shape.size() != q.shape.size()) {
    return Unfit("query, key and value need the same rank, at least 2");
  }
  const std::size_t r = q.shape.size();
  a.l = q.shape[r - 2];
  a.e = q.shape[r - 1];
  a.s = k.shape[r - 2];
  a.ev = v.shape[r - 1];
  if (k.shape[r - 1] != a.e || v.shape[r - 2] != a.s) {
    return Unfit(fmt::format("query {}, key {}, value {} do not fit", ShapeString(q.shape),
                             ShapeString(k.shape), ShapeString(v.shape)));
  }
  a.batch.assign(q.shape.begin(), q.shape.end() - 2);
  if (!std::equal(k.shape.begin(), k.shape.end() - 2, v.shape.begin())) {
    return Unfit("key and value batch dimensions differ");
  }
  if (!std::equal(a.batch.begin(), a.batch.end(), k.shape.begin())) {
    // Grouped-query attention: only the heads (the last batch dimension) may differ, the
    // queries' a multiple of the keys'.
    const int64_t qh = r >= 3 ? q.shape[r - 3] : 0, kh = r >= 3 ? k.shape[r - 3] : 0;
    if (r < 3 || !std::equal(a.batch.begin(), a.batch.end() - 1, k.shape.begin()) || kh <= 0 ||
        qh % kh != 0) {
      return Unfit("query, key and value batch dimensions differ");
    }
    a.heads = qh;
    a.group = qh / kh;
  }
  PARITY_ASSIGN_OR_RETURN(a.causal, AttrBool(call, "is_causal", false));
  PARITY_ASSIGN_OR_RETURN(a.scale,
                          AttrNumber(call, "scale", 1.0 / std::sqrt(static_cast<double>(a.e))));
  PARITY_ASSIGN_OR_RETURN(double dropout_p, AttrNumber(call, "dropout_p", 0.0));
  if (dropout_p != 0.0) return Unfit("attention with dropout draws random numbers");
  std::vector<int64_t> mask_shape = a.batch;
  mask_shape.push_back(a.l);
  mask_shape.push_back(a.s);
  a.mask = Array::Filled(mask_shape, 0.0);
  const Array* mask = nullptr;
  if (!call.input_args.empty()) {
    for (std::size_t i = 0; i < call.inputs.size() && i < call.input_args.size(); ++i) {
      if (call.input_args[i] == "attn_mask" || call.input_args[i] == "attn_bias") {
        mask = &call.inputs[i];
        mask_at = i;
      }
    }
  } else if (mask_at != kNoMask && call.inputs.size() > mask_at) {
    mask = &call.inputs[mask_at];
  }
  if (mask != nullptr) {
    a.mask_given = true;
    PARITY_ASSIGN_OR_RETURN(a.mask, Broadcast(a.mask, *mask, [](double, double m) { return m; }));
    if (a.mask.shape != mask_shape) return Unfit("attn_mask does not broadcast to the scores");
    a.boolean_mask =
        call.input_dtypes.size() > mask_at && call.input_dtypes[mask_at] == DType::kBool;
  }
  a.batches = q.numel() / std::max<int64_t>(a.l * a.e, 1);
  return a;
}

// The softmax weights P (L x S) of batch b, and each row's log-sum-exp of the scaled, masked
// scores (-inf for a row every key is masked out of; its weights are then 0).
void Weights(const AttentionArgs& a, int64_t b, std::vector<double>* p, std::vector<double>* lse) {
  const int64_t l = a.l, s = a.s, e = a.e;
  p->assign(static_cast<std::size_t>(l * s), 0.0);
  lse->assign(static_cast<std::size_t>(l), kNegInf);
  Gemm(a.q->data.data() + b * l * e, a.k->data.data() + a.Kv(b) * s * e, p->data(), l, s, e, true);
  for (int64_t i = 0; i < l; ++i) {
    double top = kNegInf;
    for (int64_t j = 0; j < s; ++j) {
      double& x = (*p)[i * s + j];
      x *= a.scale;
      const double m = a.mask.data[b * l * s + i * s + j];
      if (a.boolean_mask) {
        if (m == 0.0) x = kNegInf;
      } else {
        x += m;
      }
      if (a.causal && j > i) x = kNegInf;
      top = std::max(top, x);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < s; ++j) {
      double& x = (*p)[i * s + j];
      x = top == kNegInf ? 0.0 : std::exp(x - top);
      sum += x;
    }
    for (int64_t j = 0; j < s; ++j) (*p)[i * s + j] = sum > 0 ? (*p)[i * s + j] / sum : 0.0;
    if (sum > 0) (*lse)[i] = top + std::log(sum);
  }
}

std::vector<int64_t> With(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// The records' own outputs from `from` on, copied: a GPU kernel's tensors that are not values.
void AppendRecorded(const OpCall& call, std::size_t from, std::vector<Array>* outputs) {
  for (std::size_t i = from; i < call.recorded_outputs.size(); ++i) {
    outputs->push_back(call.recorded_outputs[i]);
  }
}

// A logsumexp (batch..., L) as a GPU kernel's record holds it: the same values in another
// shape (cuDNN's trailing 1), or rows padded past L (the memory-efficient kernel pads them to
// a multiple of 32) whose padding is the kernel's filler, not a value: copied from the record
// (`filler` false: 0, for the rounding scales). Empty where the record's is (the
// memory-efficient kernel without compute_log_sumexp).
Result<Array> FitLogsumexp(Array lse, const AttentionArgs& a, const OpCall& call, bool filler) {
  if (call.recorded_outputs.size() < 2) return lse;
  const Array& recorded = call.recorded_outputs[1];
  if (recorded.numel() == 0) return Array::Filled(recorded.shape);
  if (recorded.numel() == lse.numel()) {
    lse.shape = recorded.shape;
    return lse;
  }
  const std::vector<int64_t>& r = recorded.shape;
  if (r.size() == a.batch.size() + 1 && std::equal(a.batch.begin(), a.batch.end(), r.begin()) &&
      r.back() > a.l) {
    Array padded = filler ? recorded : Array::Filled(r);
    for (int64_t b = 0; b < a.batches; ++b) {
      std::copy_n(lse.data.begin() + b * a.l, a.l, padded.data.begin() + b * r.back());
    }
    return padded;
  }
  return Unfit(fmt::format("the recorded logsumexp {} does not fit {} queries", ShapeString(r),
                           ShapeString(With(a.batch, {a.l}))));
}

// The backward kernels (the CPU flash kernel's: grad_out, query, key, value, out, logsumexp,
// dropout_p, is_causal, *, attn_mask, scale; the GPU kernels' by their schemas): with P
// recomputed from the inputs, dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ∘ (dP − rowsum(P ∘ dP)),
// dQ = scale·dS·K, dK = scale·dSᵀ·Q, and where the record has it (the memory-efficient
// kernel's grad_attn_bias) dS. The recorded out and logsumexp are not read: they are functions
// of the inputs.
//
// With `magnitudes`, per element of each gradient the magnitude its rounding scales with
// instead: the row terms that cancel in dS (P ∘ (|dO|·|V|ᵀ + Σ P·|dO|·|V|ᵀ)) carried through
// the last product as the ℓ2 norm of its summands, as the bilinear ops are judged.
Outputs Backward(const OpCall& call, bool magnitudes) {
  PARITY_ASSIGN_OR_RETURN(AttentionArgs a, ReadArgs(call));
  const int64_t l = a.l, s = a.s, e = a.e, ev = a.ev;
  if (call.inputs[0].shape != With(a.batch, {l, ev})) {
    return Unfit(
        fmt::format("grad_out {} does not fit the output", ShapeString(call.inputs[0].shape)));
  }
  // The operands of each product: as given, or (magnitudes) absolute values for dP's and
  // squares for the ℓ2 norms of the others.
  auto map = [magnitudes](const Array& x, bool square) {
    Array y = x;
    if (magnitudes) {
      for (double& v : y.data) v = square ? v * v : std::fabs(v);
    }
    return y;
  };
  const Array g = map(call.inputs[0], false), g_dv = map(call.inputs[0], true),
              v = map(*a.v, false), q = map(*a.q, true), k = map(*a.k, true);
  const double scale = magnitudes ? std::fabs(a.scale) : a.scale;
  Array dq = Array::Filled(a.q->shape), dk = Array::Filled(a.k->shape),
        dv = Array::Filled(a.v->shape);
  std::vector<double> p, lse;
  std::vector<double> dp(static_cast<std::size_t>(l * s)), pt(dp.size()), dst(dp.size());
  // grad_attn_bias: dS over the bias's (broadcast) scores, or as empty as the record's.
  const bool bias_grad = call.recorded_outputs.size() > 3 && call.recorded_outputs[3].numel() > 0;
  if (bias_grad && (!a.mask_given || call.recorded_outputs[3].shape != a.mask.shape)) {
    return Unfit(fmt::format("grad_attn_bias {} is not the gradient of a bias of the scores {}",
                             ShapeString(call.recorded_outputs[3].shape),
                             ShapeString(a.mask.shape)));
  }
  Array dbias = Array::Filled(bias_grad                          ? a.mask.shape
                              : call.recorded_outputs.size() > 3 ? call.recorded_outputs[3].shape
                                                                 : std::vector<int64_t>{0});
  for (int64_t b = 0; b < a.batches; ++b) {
    Weights(a, b, &p, &lse);
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        pt[j * l + i] = magnitudes ? p[i * s + j] * p[i * s + j] : p[i * s + j];
      }
    }
    // A key/value head's gradients sum over the query heads of its group.
    const int64_t kv = a.Kv(b);
    const bool accumulate = a.group > 1 && b % a.group != 0;
    Gemm(pt.data(), g_dv.data.data() + b * l * ev, dv.data.data() + kv * s * ev, s, ev, l, false,
         accumulate);  // Pᵀ·dO
    Gemm(g.data.data() + b * l * ev, v.data.data() + kv * s * ev, dp.data(), l, s, ev,
         true);  // dO·Vᵀ
    for (int64_t i = 0; i < l; ++i) {
      double d = 0.0;
      for (int64_t j = 0; j < s; ++j) d += p[i * s + j] * dp[i * s + j];
      for (int64_t j = 0; j < s; ++j) {
        const double ds = p[i * s + j] * (magnitudes ? dp[i * s + j] + d : dp[i * s + j] - d);
        if (bias_grad) dbias.data[(b * l + i) * s + j] = ds;
        dp[i * s + j] = dst[j * l + i] =
            magnitudes ? ds * scale * ds * scale : ds * scale;  // dS·scale, in place
      }
    }
    Gemm(dp.data(), k.data.data() + kv * s * e, dq.data.data() + b * l * e, l, e, s, false);
    Gemm(dst.data(), q.data.data() + b * l * e, dk.data.data() + kv * s * e, s, e, l, false,
         accumulate);
  }
  if (magnitudes) {
    for (Array* x : {&dq, &dk, &dv}) {
      for (double& y : x->data) y = std::sqrt(y);
    }
  }
  std::vector<Array> grads{std::move(dq), std::move(dk), std::move(dv)};
  if (call.recorded_outputs.size() > 3) grads.push_back(std::move(dbias));
  return grads;
}

}  // namespace

Outputs Attention(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(AttentionArgs a, ReadArgs(call));
  const int64_t l = a.l, s = a.s, ev = a.ev;
  Array out = Array::Filled(With(a.batch, {l, ev}));
  // torch 1.13's aten _scaled_dot_product_attention* return (output, attention weights); the
  // weights are empty unless need_attn_weights. torch 2.x's CPU flash kernel returns (output,
  // logsumexp), the latter (batch..., L); the GPU kernels (output, logsumexp, ...), the rest
  // not values (kSchemas).
  const bool aten = call.op.starts_with("_scaled_dot_product_attention");
  const bool gpu = SchemaOf(call.op)->gpu;
  const bool flash = call.op == "_scaled_dot_product_flash_attention_for_cpu" || gpu;
  std::vector<int64_t> weights_shape = With(a.batch, {l, s});
  if (aten && (call.recorded_outputs.size() != 2 || call.recorded_outputs[1].numel() == 0)) {
    weights_shape = call.recorded_outputs.size() == 2 ? call.recorded_outputs[1].shape
                                                      : std::vector<int64_t>{0};
  }
  Array weights = Array::Filled(aten ? weights_shape : std::vector<int64_t>{0});
  const bool keep_weights = weights.numel() == a.batches * l * s && weights.numel() > 0;
  Array logsumexp = Array::Filled(flash ? With(a.batch, {l}) : std::vector<int64_t>{0});
  std::vector<double> p, lse;
  for (int64_t b = 0; b < a.batches; ++b) {
    Weights(a, b, &p, &lse);
    if (keep_weights) std::copy(p.begin(), p.end(), weights.data.begin() + b * l * s);
    if (flash) std::copy(lse.begin(), lse.end(), logsumexp.data.begin() + b * l);
    Gemm(p.data(), a.v->data.data() + a.Kv(b) * s * ev, out.data.data() + b * l * ev, l, ev, s,
         false);
  }
  if (aten) return std::vector<Array>{std::move(out), std::move(weights)};
  if (gpu) {
    PARITY_ASSIGN_OR_RETURN(Array fitted, FitLogsumexp(std::move(logsumexp), a, call, true));
    std::vector<Array> outputs{std::move(out), std::move(fitted)};
    AppendRecorded(call, 2, &outputs);
    return outputs;
  }
  if (flash) return std::vector<Array>{std::move(out), std::move(logsumexp)};
  return std::vector<Array>{std::move(out)};
}

bool IsAttentionKernel(std::string_view op) {
  const Schema* schema = SchemaOf(op);
  return schema != nullptr && (schema->gpu || op.starts_with("_scaled_dot_product_flash"));
}

std::size_t AttentionValueOutputs(const OpCall& call, std::size_t outputs) {
  const Schema* schema = SchemaOf(call.op);
  const bool forward = schema != nullptr && schema->q_at == 0;
  return schema != nullptr && schema->gpu && forward ? std::min<std::size_t>(outputs, 2) : outputs;
}

// Per element of the flash kernels' outputs (output, logsumexp), the magnitude their rounding
// scales with. A score's error scales with its summands, S_ij = |scale|·Σ_k |q_ik|·|k_jk|, not with
// the score, and moves the output by P_ij·δs_ij·(v_je − out_ie) (softmax's Jacobian): out_ie's
// scale is Σ_j P_ij·(S_ij·|v_je − out_ie| + |v_je|), logsumexp_i's Σ_j P_ij·S_ij + |logsumexp_i|.
Outputs AttentionForwardScales(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(AttentionArgs a, ReadArgs(call));
  const int64_t l = a.l, s = a.s, e = a.e, ev = a.ev;
  Array q_abs = *a.q, k_abs = *a.k;
  for (double& v : q_abs.data) v = std::fabs(v);
  for (double& v : k_abs.data) v = std::fabs(v);
  Array out = Array::Filled(With(a.batch, {l, ev}));
  Array lse_scale = Array::Filled(With(a.batch, {l}));
  std::vector<double> p, lse, magnitudes(static_cast<std::size_t>(l * s)),
      o(static_cast<std::size_t>(ev));
  for (int64_t b = 0; b < a.batches; ++b) {
    Weights(a, b, &p, &lse);
    const int64_t kv = a.Kv(b);
    const double* v = a.v->data.data() + kv * s * ev;
    Gemm(q_abs.data.data() + b * l * e, k_abs.data.data() + kv * s * e, magnitudes.data(), l, s, e,
         true);
    for (int64_t i = 0; i < l; ++i) {
      std::fill(o.begin(), o.end(), 0.0);
      for (int64_t j = 0; j < s; ++j) {
        for (int64_t c = 0; c < ev; ++c) o[c] += p[i * s + j] * v[j * ev + c];
      }
      double lse_terms = std::isfinite(lse[i]) ? std::fabs(lse[i]) : 0.0;
      for (int64_t c = 0; c < ev; ++c) out.data[(b * l + i) * ev + c] = 0.0;
      for (int64_t j = 0; j < s; ++j) {
        const double pj = p[i * s + j], sj = std::fabs(a.scale) * magnitudes[i * s + j];
        if (pj == 0.0) continue;
        lse_terms += pj * sj;
        for (int64_t c = 0; c < ev; ++c) {
          out.data[(b * l + i) * ev + c] +=
              pj * (sj * std::fabs(v[j * ev + c] - o[c]) + std::fabs(v[j * ev + c]));
        }
      }
      lse_scale.data[b * l + i] = lse_terms;
    }
  }
  if (SchemaOf(call.op)->gpu) {
    PARITY_ASSIGN_OR_RETURN(lse_scale, FitLogsumexp(std::move(lse_scale), a, call, false));
  }
  return std::vector<Array>{std::move(out), std::move(lse_scale)};
}

Outputs AttentionBackward(const OpCall& call) { return Backward(call, false); }

Outputs AttentionBackwardScales(const OpCall& call) { return Backward(call, true); }

}  // namespace parity::oracle
