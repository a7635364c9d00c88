// SPDX-License-Identifier: Apache-2.0
#include "compare/tolerance.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error_bound.h"
#include "core/yaml_util.h"

namespace parity {
namespace {

// Elementwise ops: the auto model with K = 1 and a λ of 16, i.e. about 8 ulps of the value or
// of the output's rms; transcendental ones (erf, exp) lose a few ulps to cancellation.
constexpr double kElementwiseLambda = 16.0;

double ComputeRoundoff(const std::string& compute) {
  if (compute == "float64") return std::ldexp(1.0, -53);
  if (compute == "tf32" || compute == "float16") return std::ldexp(1.0, -11);
  if (compute == "bfloat16") return std::ldexp(1.0, -8);
  return std::ldexp(1.0, -24);  // float32
}

bool IsMatmulFamily(const std::string& op) {
  const std::string family = FamilyOf(op).name;
  return family == "linear" || family == "matmul" || family == "bmm" ||
         family == "scaled_dot_product_attention";
}

bool IsConvFamily(const std::string& op) {
  const std::string family = FamilyOf(op).name;
  return family == "conv1d" || family == "conv2d" || family == "convolution_backward";
}

Tolerance Torch(DType dtype, std::string reason) {
  Tolerance t;
  t.policy = "torch";
  if (!IsFloat(dtype)) {
    t.criterion = Criterion::kUlps;
    t.reason = fmt::format("{} compares exactly", Name(dtype));
    return t;
  }
  std::tie(t.rtol, t.atol) = TorchDefaults(dtype);
  t.reason = std::move(reason);
  return t;
}

Tolerance Exact(const char* policy, std::string reason) {
  Tolerance t;
  t.policy = policy;
  t.criterion = Criterion::kUlps;
  t.max_ulps = 0;
  t.reason = std::move(reason);
  return t;
}

Tolerance Auto(const ToleranceRequest& request, const TensorContext& c) {
  if (!IsFloat(c.dtype)) return Exact("auto", fmt::format("{} compares exactly", Name(c.dtype)));
  const bool in_dump = !c.op.empty();
  if (in_dump && c.role != "output") {
    return Torch(c.dtype, fmt::format("an op's {} has no reduction of its own here: "
                                      "torch.testing defaults for {}",
                                      c.role, Name(c.dtype)));
  }
  const OpClass op_class = in_dump ? ClassifyOp(c.op) : OpClass::kUnknown;
  if (op_class == OpClass::kDataMovement) {
    Tolerance t;
    t.policy = "auto";
    t.criterion = Criterion::kBitwise;
    t.reason = fmt::format("{} moves data without arithmetic: bitwise equal", c.op);
    return t;
  }
  std::optional<int64_t> k = request.k;
  double lambda = request.lambda;
  const bool no_sum = op_class == OpClass::kReduction && ReducesNothing(c);
  if (op_class == OpClass::kElementwise || no_sum) {
    k = 1;
    lambda = kElementwiseLambda;
  }
  if (!k && op_class == OpClass::kReduction) k = ReductionLength(c);
  if (!k) {
    return Torch(c.dtype, in_dump
                              ? fmt::format("no reduction length known for op '{}' (give --k): "
                                            "torch.testing defaults for {}",
                                            c.op, Name(c.dtype))
                              : fmt::format("no reduction length known (plain files; give --k): "
                                            "torch.testing defaults for {}",
                                            Name(c.dtype)));
  }
  Tolerance t;
  t.policy = "auto";
  t.k = std::max<int64_t>(*k, 1);
  t.lambda = lambda;
  t.u_storage = UnitRoundoff(c.dtype);
  std::string why_compute;
  if (request.compute) {
    t.compute = *request.compute;
    why_compute = "--compute";
  } else if (c.dtype == DType::kFloat64) {
    t.compute = "float64";
  } else if (c.dtype == DType::kFloat32 && IsMatmulFamily(c.op) && c.bf16_matmul) {
    t.compute = "bfloat16";
    why_compute = "float32_matmul_precision allows bfloat16";
  } else if (c.dtype == DType::kFloat32 && IsMatmulFamily(c.op) && c.tf32_matmul) {
    t.compute = "tf32";
    why_compute = "the manifest allows tf32 matmuls";
  } else if (c.dtype == DType::kFloat32 && IsConvFamily(c.op) && c.tf32_conv) {
    t.compute = "tf32";
    why_compute = "the manifest allows tf32 convolutions";
  } else {
    t.compute = "float32";  // narrow storage dtypes accumulate in float32
  }
  t.u_compute = ComputeRoundoff(t.compute);
  const double growth = DotProductGrowth(*t.k, t.u_compute, t.lambda);
  // The storage rounding of each side's output adds up to one ulp of the stored dtype.
  t.rtol = growth + 2.0 * t.u_storage;
  t.atol_per_scale = growth;
  if (c.summand_scale) {
    t.scale = *c.summand_scale;
    t.scale_source = "summands";
    t.atol = growth * *t.scale;
  } else {
    t.needs_output_scale = true;
    t.scale_source = "output rms";
  }
  t.reason = fmt::format("{}{}K={}: λ·√K·u = {:.3g}·√{}·2^{} ({}{}{})", in_dump ? c.op + " " : "",
                         op_class == OpClass::kElementwise ? "is elementwise, "
                         : no_sum                          ? "sums nothing here, "
                                                           : "",
                         *t.k, t.lambda, *t.k, std::lround(std::log2(t.u_compute)), t.compute,
                         why_compute.empty() ? "" : ", ", why_compute);
  return t;
}

Tolerance FromPolicy(const std::string& policy, const ToleranceRequest& request,
                     const TensorContext& c) {
  if (request.rtol || request.atol) {
    Tolerance t;
    t.policy = "explicit";
    t.rtol = request.rtol.value_or(0.0);
    t.atol = request.atol.value_or(0.0);
    if (!IsFloat(c.dtype)) {
      t.criterion = Criterion::kUlps;
      t.reason = fmt::format("{} compares exactly", Name(c.dtype));
    } else {
      t.reason = fmt::format("given: rtol {:g}, atol {:g}", t.rtol, t.atol);
    }
    return t;
  }
  if (policy == "torch") {
    return Torch(c.dtype, fmt::format("torch.testing defaults for {}", Name(c.dtype)));
  }
  if (policy == "exact") return Exact("exact", "equal values (+0 = -0, NaN where NaN)");
  return Auto(request, c);
}

constexpr std::string_view kRuleKeys[] = {"match", "policy", "rtol", "atol", "k"};

// One rule of a tolerance file: {match: GLOB, rtol: X, atol: Y} or {match: GLOB, policy: P}.
Status ReadRule(const YAML::Node& item, ToleranceRule* rule) {
  rule->line = item.Mark().line + 1;
  if (!item.IsMap()) return YamlAt(item, "a rule is not a mapping");
  PARITY_ASSIGN_OR_RETURN(const YamlFields fields, YamlFields::Read(item, "a rule", kRuleKeys));
  const YAML::Node* match = fields.Find("match");
  if (match == nullptr || match->IsNull()) return YamlAt(item, "the rule has no 'match'");
  PARITY_ASSIGN_OR_RETURN(rule->match, YamlString(*match, "'match'"));
  if (const YAML::Node* policy = fields.Find("policy")) {
    PARITY_ASSIGN_OR_RETURN(rule->policy, YamlString(*policy, "'policy'"));
    if (*rule->policy != "auto" && *rule->policy != "torch" && *rule->policy != "exact") {
      return YamlAt(*policy,
                    fmt::format("unknown policy '{}' (auto, torch, exact)", *rule->policy));
    }
  }
  if (const YAML::Node* rtol = fields.Find("rtol")) {
    PARITY_ASSIGN_OR_RETURN(rule->rtol, YamlNumber(*rtol, "'rtol'"));
  }
  if (const YAML::Node* atol = fields.Find("atol")) {
    PARITY_ASSIGN_OR_RETURN(rule->atol, YamlNumber(*atol, "'atol'"));
  }
  if (const YAML::Node* k = fields.Find("k")) {
    PARITY_ASSIGN_OR_RETURN(rule->k, YamlInteger(*k, "'k'"));
  }
  if (rule->policy && (rule->rtol || rule->atol)) {
    return YamlAt(item, "give either 'policy' or rtol/atol");
  }
  if (!rule->policy && !rule->rtol && !rule->atol) {
    return YamlAt(item, "give 'policy' or rtol/atol");
  }
  if ((rule->rtol && *rule->rtol < 0) || (rule->atol && *rule->atol < 0)) {
    return YamlAt(item, "tolerances must not be negative");
  }
  return Status::Ok();
}

}  // namespace

void Tolerance::SetOutputScale(double rms) {
  if (!needs_output_scale) return;
  needs_output_scale = false;
  scale = rms;
  atol = atol_per_scale * rms;
}

Json Tolerance::ToJson() const {
  Json j = Json::object();
  j["policy"] = policy;
  j["criterion"] = criterion == Criterion::kAbsRel ? "abs_rel"
                   : criterion == Criterion::kUlps ? "ulps"
                                                   : "bitwise";
  if (criterion == Criterion::kAbsRel) {
    SetNumber(j, "rtol", rtol);
    SetNumber(j, "atol", atol);
  }
  if (criterion == Criterion::kUlps) j["max_ulps"] = max_ulps;
  if (k) {
    j["compute"] = compute;
    j["u_storage"] = u_storage;
    j["u_compute"] = u_compute;
    j["k"] = *k;
    j["lambda"] = lambda;
    if (scale) SetNumber(j, "scale", *scale);
    j["scale_source"] = scale_source;
  }
  j["reason"] = reason;
  return j;
}

std::pair<double, double> TorchDefaults(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {1e-3, 1e-5};
    case DType::kBFloat16:
      return {1.6e-2, 1e-5};
    case DType::kFloat32:
      return {1.3e-6, 1e-5};
    case DType::kFloat64:
      return {1e-7, 1e-7};
    default:
      return {0.0, 0.0};  // integers, bool and float8: exact
  }
}

OpFamily FamilyOf(const std::string& op) {
  struct Alias {
    std::string_view op, family;
    std::size_t first_input;
  };
  static constexpr Alias kAliases[] = {
      {"mm", "matmul", 0},
      {"addmm", "matmul", 1},
      {"baddbmm", "matmul", 1},
      {"convolution", "conv2d", 0},  // K is the weight's size past its first dim, 1-d or 2-d
      {"_softmax", "softmax", 0},
      {"_safe_softmax", "softmax", 0},
      {"_log_softmax", "log_softmax", 0},
      {"native_layer_norm", "layer_norm", 0},
      {"_fused_rms_norm", "rms_norm", 0},
      {"native_batch_norm", "batch_norm", 0},
      {"native_dropout", "dropout", 0},
      {"_embedding_bag_forward_only", "_embedding_bag", 0},
      {"nll_loss2d_forward", "nll_loss_forward", 0},
      {"binary_cross_entropy", "mse_loss", 0},
      {"_scaled_dot_product_attention", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_attention_forward", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_attention_math", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_flash_attention_for_cpu", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_flash_attention_for_cpu_backward", "scaled_dot_product_attention", 1},
      {"_scaled_dot_product_flash_attention", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_flash_attention_backward", "scaled_dot_product_attention", 1},
      {"_scaled_dot_product_efficient_attention", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_efficient_attention_backward", "scaled_dot_product_attention", 1},
      {"_scaled_dot_product_cudnn_attention", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_cudnn_attention_backward", "scaled_dot_product_attention", 1},
      {"_scaled_dot_product_fused_attention_overrideable", "scaled_dot_product_attention", 0},
      {"_scaled_dot_product_fused_attention_overrideable_backward", "scaled_dot_product_attention",
       1},
      {"_softmax_backward_data", "softmax", 0},
      {"_log_softmax_backward_data", "softmax", 0},
      {"native_batch_norm_backward", "batch_norm", 1},
      {"max_pool2d_with_indices_backward", "avg_pool2d", 0},
      {"avg_pool2d_backward", "avg_pool2d", 0},
      {"_adaptive_avg_pool2d_backward", "_adaptive_avg_pool2d", 0},
      {"embedding_dense_backward", "_embedding_bag", 0},
      {"_embedding_bag_dense_backward", "_embedding_bag", 0},
      {"_embedding_bag_backward", "_embedding_bag", 0},
      {"nll_loss_backward", "nll_loss_forward", 1},
      {"nll_loss2d_backward", "nll_loss_forward", 1},
  };
  for (const Alias& a : kAliases) {
    if (a.op == op) return {std::string(a.family), a.first_input};
  }
  if (op.starts_with("_foreach_")) return FamilyOf(op.substr(std::string_view("_foreach_").size()));
  // In-place forms (add_, relu_ ...) are judged as their functional op; embedding_renorm_ is
  // not one.
  if (op.size() > 1 && op.back() == '_' && op.front() != '_' && op != "embedding_renorm_") {
    return {op.substr(0, op.size() - 1), 0};
  }
  return {op, 0};
}

OpClass ClassifyOp(const std::string& raw_op) {
  const std::string op = FamilyOf(raw_op).name;
  static const std::set<std::string> kReductions = {"linear",
                                                    "matmul",
                                                    "bmm",
                                                    "conv1d",
                                                    "conv2d",
                                                    "softmax",
                                                    "log_softmax",
                                                    "layer_norm",
                                                    "rms_norm",
                                                    "batch_norm",
                                                    "sum",
                                                    "mean",
                                                    "scaled_dot_product_attention",
                                                    "cumsum",
                                                    "embedding_renorm_",
                                                    "_embedding_bag",
                                                    "avg_pool2d",
                                                    "_adaptive_avg_pool2d",
                                                    "mse_loss",
                                                    "binary_cross_entropy_with_logits",
                                                    "nll_loss_forward",
                                                    "native_layer_norm_backward",
                                                    "_fused_rms_norm_backward",
                                                    "convolution_backward"};
  static const std::set<std::string> kElementwise = {"gelu",
                                                     "silu",
                                                     "add",
                                                     "mul",
                                                     "sub",
                                                     "div",
                                                     "exp",
                                                     "tanh",
                                                     "sigmoid",
                                                     "dropout",
                                                     "sqrt",
                                                     "addcmul",
                                                     "addcdiv",
                                                     "lerp",
                                                     "sigmoid_backward",
                                                     "tanh_backward",
                                                     "gelu_backward",
                                                     "mse_loss_backward",
                                                     "binary_cross_entropy_backward",
                                                     "reciprocal",
                                                     "sin",
                                                     "cos",
                                                     "rsqrt",
                                                     "pow",
                                                     "silu_backward",
                                                     "arange",
                                                     "index_put",
                                                     "_fused_adam_",
                                                     "_fused_adamw_"};
  static const std::set<std::string> kMovement = {"relu",
                                                  "gather",
                                                  "transpose",
                                                  "copy",
                                                  "embedding",
                                                  "reshape",
                                                  "view",
                                                  "permute",
                                                  "contiguous",
                                                  "cat",
                                                  "index_select",
                                                  "max_pool2d_with_indices",
                                                  "threshold_backward",
                                                  "zeros",
                                                  "ones",
                                                  "full",
                                                  "zeros_like",
                                                  "ones_like",
                                                  "full_like",
                                                  "new_zeros",
                                                  "new_ones",
                                                  "new_full",
                                                  "fill",
                                                  "zero",
                                                  "clone",
                                                  "_to_copy",
                                                  "stack",
                                                  "neg",
                                                  "clamp",
                                                  "clamp_min",
                                                  "clamp_max",
                                                  "eq",
                                                  "ne",
                                                  "ge",
                                                  "gt",
                                                  "le",
                                                  "lt",
                                                  "bitwise_and",
                                                  "bitwise_or",
                                                  "bitwise_not",
                                                  "logical_not",
                                                  "where",
                                                  "all",
                                                  "any",
                                                  "slice_backward",
                                                  "select_backward",
                                                  "index",
                                                  "scalar_tensor"};
  if (kReductions.count(op)) return OpClass::kReduction;
  if (kElementwise.count(op)) return OpClass::kElementwise;
  if (kMovement.count(op)) return OpClass::kDataMovement;
  return OpClass::kUnknown;
}

Tolerance ResolveTolerance(const ToleranceRequest& request, const std::vector<ToleranceRule>& rules,
                           const std::string& name, const TensorContext& context) {
  for (const ToleranceRule& rule : rules) {
    if (::fnmatch(rule.match.c_str(), name.c_str(), 0) != 0) continue;
    ToleranceRequest r = request;
    r.rtol = rule.rtol;
    r.atol = rule.atol;
    if (rule.k) r.k = rule.k;
    Tolerance t = FromPolicy(rule.policy.value_or(request.policy), r, context);
    t.policy = "file";
    t.reason = fmt::format("rule '{}' (line {}): {}", rule.match, rule.line, t.reason);
    return t;
  }
  return FromPolicy(request.policy, request, context);
}

Result<std::vector<ToleranceRule>> LoadToleranceRules(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid(path, "cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseToleranceRules(text.str(), path);
}

Result<std::vector<ToleranceRule>> ParseToleranceRules(const std::string& text,
                                                       const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, path));
  if (!root.IsSequence()) {
    return Status::Invalid(path,
                           "expected a list of rules ({match: GLOB, rtol: X, atol: Y} or "
                           "{match: GLOB, policy: auto|torch|exact})");
  }
  std::vector<ToleranceRule> rules;
  for (const YAML::Node& item : root) {
    ToleranceRule rule;
    if (Status status = ReadRule(item, &rule); !status.ok()) {
      return Status::Invalid(path, status.message());
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace parity
