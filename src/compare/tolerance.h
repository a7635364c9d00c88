// SPDX-License-Identifier: Apache-2.0
// Tolerance policies for `parity compare`: torch, exact, explicit, per-name rules from a YAML
// file, and `auto`, derived from the unit roundoff, the reduction length K and the magnitude of
// the summands (the probabilistic bound λ·√K·u of Higham & Mary 2019).
#ifndef PARITY_COMPARE_TOLERANCE_H_
#define PARITY_COMPARE_TOLERANCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error_bound.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity {

/// What an element must satisfy to agree.
enum class Criterion {
  kAbsRel,   ///< |a - b| <= atol + rtol·|b|
  kUlps,     ///< at most max_ulps units in the last place of the dtype apart
  kBitwise,  ///< identical bit patterns
};

/// The tolerance applied to one tensor, with how it was derived (all of it reported in JSON).
struct Tolerance {
  std::string policy;  ///< "auto", "torch", "exact", "explicit", "file"
  Criterion criterion = Criterion::kAbsRel;
  double rtol = 0.0;
  double atol = 0.0;
  int64_t max_ulps = 0;
  // The derivation of `auto`, when it applied.
  std::string compute;       ///< effective compute precision: "float32", "tf32", "bfloat16", ...
  double u_storage = 0.0;    ///< unit roundoff of the stored dtype
  double u_compute = 0.0;    ///< unit roundoff of the compute precision
  std::optional<int64_t> k;  ///< reduction length
  double lambda = 0.0;
  /// atol = atol_per_scale · scale, once the scale is known.
  double atol_per_scale = 0.0;
  std::optional<double> scale;
  std::string scale_source;  ///< "summands", "summands per element" or "output rms"
  /// Per output element (C order), the ℓ2 norm of the summands it is a sum of, where the op
  /// gives it (replay's bilinear ops); the abs/rel criterion then allows
  /// atol_per_scale·element_scale[i] + rtol·|b| at element i, and `scale` holds their rms.
  std::shared_ptr<const std::vector<double>> element_scale;
  bool needs_output_scale = false;  ///< scale still to come from the reference output's rms
  std::string reason;               ///< one line: why this tolerance

  /// Sets the scale (and atol) from the reference output's rms when it was left open.
  void SetOutputScale(double rms);
  Json ToJson() const;
};

/// How the user asked tolerances to be chosen.
struct ToleranceRequest {
  std::string policy = "auto";         ///< auto, torch, exact, or explicit (when rtol/atol given)
  std::optional<double> rtol, atol;    ///< --rtol / --atol
  std::optional<int64_t> k;            ///< --k: reduction length for plain files
  std::optional<std::string> compute;  ///< --compute: float32, tf32, bfloat16, float16
  double lambda = kDefaultLambda;      ///< --lambda
};

/// One rule of a --tol-file: tensors whose name matches `match` (a glob) get this policy or
/// these tolerances.
struct ToleranceRule {
  std::string match;
  std::optional<std::string> policy;
  std::optional<double> rtol, atol;
  std::optional<int64_t> k;
  int line = 0;
};

/// Reads a --tol-file: a YAML list of {match: GLOB, rtol: X, atol: Y} or {match: GLOB,
/// policy: auto|torch|exact} (optionally k:). Unknown keys or values fail naming the line.
Result<std::vector<ToleranceRule>> LoadToleranceRules(const std::string& path);
/// The same, on the file's text; `path` names it in messages.
Result<std::vector<ToleranceRule>> ParseToleranceRules(const std::string& text,
                                                       const std::string& path);

/// What is known about the tensor being judged.
struct TensorContext {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  /// From a dump record: the op, its attrs and the shapes of its inputs and params, and the
  /// role of this tensor ("output", "input", "param"); empty for plain files.
  std::string op;
  std::string role;
  /// The tensor's position among the record's tensors of its role: which output of a
  /// multi-output op (convolution_backward's grad_input, grad_weight, grad_bias) is judged.
  std::size_t index = 0;
  Json attrs = Json::object();
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::pair<std::string, std::vector<int64_t>>> param_shapes;
  /// Reduced-precision modes the dump manifest says the platform allowed, per op family.
  bool tf32_matmul = false;
  bool tf32_conv = false;
  bool bf16_matmul = false;  ///< float32_matmul_precision "medium"
  /// The rms of the ℓ2 norms of the summands of an output element, from the op's inputs.
  std::optional<double> summand_scale;
};

/// How the tolerance model reads an op: the family it is judged as (aten's `addmm` as
/// `matmul`, `_softmax` as `softmax`, `add_` as `add`; any other op as itself) and the position
/// of the input that plays the family's first input (1 for addmm and baddbmm, whose `self` is
/// the added term).
struct OpFamily {
  std::string name;
  std::size_t first_input = 0;
};
OpFamily FamilyOf(const std::string& op);

/// How an op's output may differ between correct implementations.
enum class OpClass { kReduction, kElementwise, kDataMovement, kUnknown };
OpClass ClassifyOp(const std::string& op);

/// The reduction length of an op's output (output `context.index`) from its inputs, params
/// and attrs, if it can tell: per output for multi-output ops (convolution_backward with
/// `groups`, the norms' backward), 1 for a loss with reduction 'none'.
std::optional<int64_t> ReductionLength(const TensorContext& context);

/// Whether output `context.index` of a reduction op computes no sum here: a loss with
/// reduction 'none' (judged as elementwise), nll_loss's gather.
bool ReducesNothing(const TensorContext& context);

/// The tolerance for one tensor named `name`: the first matching rule, else the request.
Tolerance ResolveTolerance(const ToleranceRequest& request, const std::vector<ToleranceRule>& rules,
                           const std::string& name, const TensorContext& context);

/// torch.testing.assert_close's default (rtol, atol) for a dtype.
std::pair<double, double> TorchDefaults(DType dtype);

}  // namespace parity

#endif  // PARITY_COMPARE_TOLERANCE_H_
