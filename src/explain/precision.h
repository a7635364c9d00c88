// SPDX-License-Identifier: Apache-2.0
// Which reduced precision an op ran in, inferred by tests rather than by error size alone: the
// grid its outputs lie on, and replays with inputs (and outputs) rounded to each candidate.
#ifndef PARITY_EXPLAIN_PRECISION_H_
#define PARITY_EXPLAIN_PRECISION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/tolerance.h"
#include "core/status.h"
#include "oracle/oracle.h"

namespace parity {

/// A reduced precision an op may have computed in.
enum class Precision { kTf32, kBFloat16, kFloat16 };

/// "tf32", "bf16", "fp16": the names of `effective_precision`.
std::string PrecisionName(Precision p);

/// `effective_precision` where fp16 and tf32 (the same 10 fraction bits) both remain: the data
/// cannot tell them apart and the platform does not rule either out.
inline constexpr std::string_view kFp16OrTf32 = "fp16|tf32";

/// Whether `op` is a matmul or a convolution (aten's mm, addmm, bmm, baddbmm, convolution
/// too): the ops tf32 applies to and autocast runs in its low precision.
bool IsMatmulOrConv(const std::string& op);

/// The unit roundoff of `p` (2^-11 for tf32 and fp16, 2^-8 for bf16).
double PrecisionRoundoff(Precision p);

/// How a conversion to a narrower significand rounds.
enum class Rounding {
  kNearestEven,  ///< to nearest, ties to even (IEEE 754's default; `cvt.rn`)
  kNearestAway,  ///< to nearest, ties away from zero (`cvt.rna`; CUTLASS round_half_ulp_truncate)
  kTowardZero,   ///< truncation: the dropped bits are cleared (`cvt.rz`)
};

/// "ties to even", "ties away from zero", "toward zero".
std::string RoundingName(Rounding r);

/// `x` rounded to `p`'s significand in mode `r`, keeping float32's range for tf32 and bf16 and
/// float16's for fp16 (a finite value past the largest is Inf, or the largest toward zero).
/// tf32 and bf16 round `x` as a float32 (a tensor's values are). NaN and Inf are returned as
/// they are.
double RoundTo(double x, Precision p, Rounding r = Rounding::kNearestEven);

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
  bool sizes_match = true;      ///< every pair of arrays (and the lists) of equal length
  int64_t finite = 0, violations = 0;
  int64_t within = 0;  ///< finite pairs within their allowance
  double sum_sq = 0.0, want_sq = 0.0;
  double allowed_sq = 0.0;  ///< the sum of the squared allowances over the finite pairs
  double max_excess = 0.0;  ///< the largest |got - want| / allowance over the finite pairs

  /// Adds the pairs of `got` and `want`: |got - want| <= atol + rtol·|want| (+ one ulp of
  /// `ulp_of` at want) at every finite pair.
  /// The same with a per-element atol: atol_per_scale·scale[j] (Tolerance::element_scale).
  void AddScaled(const Array& got, const Array& want, double atol_per_scale,
                 const std::vector<double>& scale, double rtol);
  void Add(const Array& got, const Array& want, double atol, double rtol,
           std::optional<Precision> ulp_of = std::nullopt);
  double rmse() const;
  double rel_rmse() const;     ///< rms(got - want) / rms(want); Inf when want is all zero
  double allowed_rms() const;  ///< rms of the allowances; 0 without finite pairs
  /// The share of pairs within their allowance: finite ones within over the finite ones and
  /// the non-finite mismatches; 0 when nothing was compared or sizes differ.
  double share_within() const;
  /// Within the bound as a probabilistic bound allows: every pair within its allowance, or,
  /// over 10^5 pairs and more, at most one in 10^5 past it by at most 4 allowances, with the
  /// rms error within the rms allowance (λ√K·u bounds each element with high probability,
  /// not all of a million). A corrupted element, far past, is never within.
  bool within_bound() const;
};

/// Agreement over lists of arrays (outputs), pairwise; lists of different lengths disagree.
Agreement Agree(const std::vector<Array>& got, const std::vector<Array>& want, double atol,
                double rtol, std::optional<Precision> ulp_of = std::nullopt);

/// The robust agreement rule of precision inference: does a replay variant (`variant`, the
/// side's outputs against the variant's replay) reproduce the side's outputs, given how the
/// plain float64 replay (`plain`) fares? Yes when
///  - at least kVariantShare of the elements lie within the float32 allowance (ties rounded
///    another way, or a rare accumulation outlier, cost a few elements, not the verdict),
///  - the variant's rms residual is at most the rms of the allowance (the elements outside
///    are not large enough to carry the error), and
///  - it is at most kVariantGain times the plain replay's (the rounding explains the error:
///    an output accurate in float32 is farther from any rounded replay than from the plain one).
bool Reproduces(const Agreement& variant, const Agreement& plain);

/// The share of elements a reproducing variant must hold within the allowance.
inline constexpr double kVariantShare = 0.99;
/// How much smaller than the plain replay's a reproducing variant's rms residual must be.
inline constexpr double kVariantGain = 0.25;

/// A replay of the call with its float inputs and params rounded to `precision` in mode
/// `rounding` (tf32 leaves a bias alone, as tensor cores add it in float32 after the
/// products; so does any precision with `keep_added`), and its outputs rounded too (to
/// nearest even) when `round_output`.
struct Variant {
  Precision precision = Precision::kTf32;
  Rounding rounding = Rounding::kNearestEven;
  bool round_inputs = true;
  bool round_output = false;
  /// Leaves the added term (a bias, addmm's and baddbmm's self) as it is: what tf32 always
  /// does, and fp16 operands with a float32 bias do.
  bool keep_added = false;
  /// "tf32-rounded inputs (ties away from zero)", "tf32-truncated inputs (toward zero)",
  /// "bf16-rounded inputs and output (ties to even)", "fp16-rounded inputs, the bias as is
  /// (ties to even)" ...
  std::string Describe() const;
};

/// The variants worth trying for `op`, in the order that breaks ties between equally good
/// ones: tf32 (to nearest even, ties away from zero, toward zero) only for matmuls and
/// convolutions, then bf16 and fp16 inputs to nearest even, each with output rounding and
/// output rounding alone for the precision of `grid` when the outputs lie on one; last, for
/// matmuls and convolutions, fp16 inputs with the added term as is (tf32's counterpart: the
/// two replay alike where every operand lies in fp16's normal range).
std::vector<Variant> CandidateVariants(const std::string& op, std::optional<Precision> grid);

/// Replays `call` under `variant` (in float64, after rounding).
Result<std::vector<Array>> ReplayVariant(const OpCall& call, const Variant& variant);

/// The outcome of inferring one side's precision.
struct PrecisionFinding {
  std::optional<Precision> precision;  ///< set when a test names one
  std::optional<Precision> grid;       ///< the grid test's answer
  std::optional<Variant> variant;      ///< the replay variant that reproduced the output best
  double variant_rel_rmse = 0.0;       ///< how closely it did
  double variant_share = 0.0;          ///< the share of its elements within the allowance
  /// Other variants whose replays are exactly as close (the data cannot tell them apart:
  /// inputs without ties give equal replays to nearest even and away from zero). Without the
  /// other of fp16 and tf32 when `fp16_or_tf32` says so.
  std::vector<Variant> equally_close;
  std::string magnitude;  ///< the magnitude test, in words (MagnitudeText)
  /// True when the best variant rounds the inputs of a matmul or convolution to fp16 or tf32
  /// (not the output) and the data cannot tell which: the same replay in the other precision,
  /// with the added term (bias) treated alike and to nearest even, reproduces the output too
  /// and its rms residual is within kTellApart of the best's (of float32's rounding of the
  /// output, 2^-24 of its rms, where the best's is smaller). fp16 and tf32 keep the same 10
  /// fraction bits and round alike every operand inside fp16's normal range. `precision` is
  /// then the first of the two in CandidateVariants order, and only the platform (autocast,
  /// the device) may choose between them (explain's ResolveTenBits).
  bool fp16_or_tf32 = false;
  /// Where the best variant is fp16 or tf32 on the rounded inputs of a matmul or convolution,
  /// what the data say about the two, in words: what told them apart (operands outside fp16's
  /// normal range, a rounding mode no cast to fp16 uses) or why they cannot. Empty otherwise.
  std::string ten_bits_evidence;
};

/// How much larger than the best's the rms residual of the other of fp16 and tf32 must be for
/// the data to tell them apart (when that other replay reproduces the output at all).
inline constexpr double kTellApart = 2.0;

/// fp16's normal range: |x| in [2^-14, 65504]. Outside it (a finite non-zero |x| below 2^-14,
/// subnormal in fp16, or above 65504, beyond fp16) fp16 and tf32 round a value differently.
bool InFp16NormalRange(double x);

/// The float operands of `call` (inputs and params; the added term, a bias or addmm's self,
/// only `with_added`) against fp16's normal range: how many finite values lie outside it, and
/// the largest and smallest non-zero magnitudes among all finite values.
struct Fp16RangeCheck {
  int64_t outside = 0;
  double largest = 0.0, smallest_nonzero = 0.0;
};
Fp16RangeCheck CheckFp16Range(const OpCall& call, bool with_added = false);

/// The magnitude test in words: the rms error `local_rmse` per unit of `tolerance`'s scale
/// (the summands' l2 norm, or the output's rms) as a power of two, and the candidate u it is
/// nearest: rounding an op's operands to u moves its output by about u times that scale.
/// Empty without a scale.
std::string MagnitudeText(const Tolerance& tolerance, double local_rmse);

/// Infers the precision of `outputs` (recorded by one side on `call`'s inputs). Nothing when
/// the plain float64 replay already meets the share rule of `Reproduces` under `tolerance`'s
/// float32 allowance (an output accurate in float32 up to a few elements is not reduced
/// precision). Else the grid test, then every candidate variant judged by `Reproduces` with the
/// float32 allowance (atol, rtol) plus one ulp of the variant's precision when it rounds its
/// output; of those that reproduce the output, the one with the smallest rms residual wins,
/// the first in `CandidateVariants` order among equals. Where that winner is fp16 or tf32 on
/// rounded inputs, the same replay in the other of the two says whether the data tell them
/// apart (`fp16_or_tf32`, `ten_bits_evidence`). The magnitude test describes `local_rmse` (the
/// rms error against the float64 replay).
PrecisionFinding InferPrecision(const OpCall& call, const std::vector<Array>& outputs,
                                const Tolerance& tolerance, double local_rmse);

}  // namespace parity

#endif  // PARITY_EXPLAIN_PRECISION_H_
