// SPDX-License-Identifier: Apache-2.0
// Which reduced precision an op ran in, inferred by tests rather than by error size alone: the
// grid its outputs lie on, and replays with inputs (and outputs) rounded to each candidate.
#ifndef PARITY_EXPLAIN_PRECISION_H_
#define PARITY_EXPLAIN_PRECISION_H_

#include <optional>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/status.h"
#include "oracle/oracle.h"

namespace parity {

/// A reduced precision an op may have computed in.
enum class Precision { kTf32, kBFloat16, kFloat16 };

/// "tf32", "bf16", "fp16": the names of `effective_precision`.
std::string PrecisionName(Precision p);

/// The unit roundoff of `p` (2^-11 for tf32 and fp16, 2^-8 for bf16).
double PrecisionRoundoff(Precision p);

/// `x` rounded to `p`'s significand (to nearest even, or toward zero where `truncate`), keeping
/// float32's range for tf32 and bf16 and float16's for fp16.
double RoundTo(double x, Precision p, bool truncate = false);

/// One unit in the last place of `p` at |x| (subnormal spacing below its smallest normal).
double UlpOf(double x, Precision p);

/// The grid test: the narrowest of bf16 and fp16 whose grid holds every finite value of
/// `outputs`, when they hold at least `min_values` finite values (fewer prove nothing).
std::optional<Precision> OutputGrid(const std::vector<Array>& outputs, int64_t min_values = 8);

/// How closely `got` matches `want` elementwise under an absolute/relative allowance,
/// accumulated over one or more array pairs.
struct Agreement {
  bool all_within = true;       ///< every finite pair within its allowance, shapes equal
  bool nonfinite_match = true;  ///< NaN/Inf at the same positions with the same values
  int64_t finite = 0, violations = 0;
  double sum_sq = 0.0, want_sq = 0.0;

  /// Adds the pairs of `got` and `want`: |got - want| <= atol + rtol·|want| (+ one ulp of
  /// `ulp_of` at want) at every finite pair.
  void Add(const Array& got, const Array& want, double atol, double rtol,
           std::optional<Precision> ulp_of = std::nullopt);
  double rmse() const;
  double rel_rmse() const;  ///< rms(got - want) / rms(want); Inf when want is all zero
};

/// Agreement over lists of arrays (outputs), pairwise; lists of different lengths disagree.
Agreement Agree(const std::vector<Array>& got, const std::vector<Array>& want, double atol,
                double rtol, std::optional<Precision> ulp_of = std::nullopt);

/// A replay of the call with its float inputs and params rounded to `precision` (tf32 with
/// ties to even or truncated; tf32 leaves a bias alone, as tensor cores add it in float32
/// after the products), and its outputs rounded too when `round_output`.
struct Variant {
  Precision precision = Precision::kTf32;
  bool truncate = false;
  bool round_inputs = true;
  bool round_output = false;
  /// "tf32-rounded inputs", "bf16-rounded inputs and output", ...
  std::string Describe() const;
};

/// The variants worth trying for `op`: tf32 only for matmuls and convolutions; output rounding
/// for the precision of `grid` when the outputs lie on one.
std::vector<Variant> CandidateVariants(const std::string& op, std::optional<Precision> grid);

/// Replays `call` under `variant` (in float64, after rounding).
Result<std::vector<Array>> ReplayVariant(const OpCall& call, const Variant& variant);

/// The outcome of inferring one side's precision.
struct PrecisionFinding {
  std::optional<Precision> precision;  ///< set when a test names one
  std::optional<Precision> grid;       ///< the grid test's answer
  std::optional<Variant> variant;      ///< the replay variant that reproduced the output
  double variant_rel_rmse = 0.0;       ///< how closely it did
  std::string magnitude;               ///< the magnitude test, in words (MagnitudeText)
};

/// The magnitude test in words: the rms error `local_rmse` per unit of `tolerance`'s scale
/// (the summands' l2 norm, or the output's rms) as a power of two, and the candidate u it is
/// nearest: rounding an op's operands to u moves its output by about u times that scale.
/// Empty without a scale.
std::string MagnitudeText(const Tolerance& tolerance, double local_rmse);

/// Infers the precision of `outputs` (recorded by one side on `call`'s inputs): grid test,
/// then each candidate variant judged with `tolerance`'s float32 allowance (atol, rtol) plus
/// one ulp of the variant's precision when it rounds its output; the magnitude test describes
/// `local_rmse` (the rms error against the float64 replay).
PrecisionFinding InferPrecision(const OpCall& call, const std::vector<Array>& outputs,
                                const Tolerance& tolerance, double local_rmse);

}  // namespace parity

#endif  // PARITY_EXPLAIN_PRECISION_H_
