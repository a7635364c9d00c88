// SPDX-License-Identifier: Apache-2.0
// The cause of one op call's divergence between two dumps (docs/DESIGN.md "Attribution causes").
#ifndef PARITY_EXPLAIN_ATTRIBUTION_H_
#define PARITY_EXPLAIN_ATTRIBUTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "io/dump.h"

namespace parity {

enum class Cause {
  kIdentical,
  kWithinRounding,
  kReducedPrecision,
  kRngDivergence,
  kNonfinite,
  kInherited,
  kAlgorithmic,
  kStructural,
  /// Not judged: a tensor the judgement needs is not held by the dumps (not stored, of a
  /// complex dtype, or statistics that do not tell); not an origin, never counted as equal.
  kNotJudged,
};

/// The label as docs/DESIGN.md spells it ("reduced-precision", ...).
std::string_view CauseName(Cause cause);

/// Whether a label makes its op an origin (not identical, within-rounding, inherited or
/// not-judged).
bool IsOrigin(Cause cause);

/// One matched op call, attributed.
struct OpExplanation {
  int64_t seq = 0, rank = 0, step = 0, call = 0;
  std::string name, op, pass;
  Cause cause = Cause::kIdentical;
  std::string reason;     ///< one line: the evidence for the label
  bool replayed = false;  ///< false: compared only (the reason says why)
  /// rms(output - float64 replay on the side's own inputs) / rms(replay); absent when not
  /// replayed.
  std::optional<double> local_err_a, local_err_b;
  /// rms(a - b) / rms(a) over the inputs and params (the largest) and over the outputs.
  std::optional<double> input_diff, output_diff;
  bool inputs_identical = true;
  bool params_differ = false;
  /// The inferred reduced precision ("tf32", "bf16", "fp16", or "fp16|tf32" where the
  /// evidence cannot tell those two apart), for reduced-precision only.
  std::optional<std::string> effective_precision;
  /// Both sides replayed beyond the float32 bound by comparable errors (not-judged): the
  /// bound is too tight for this call. The report warns of it.
  bool bound_too_tight = false;
  std::optional<double> time_us_a, time_us_b;
  /// Where the user's code called the op (A's record's `source`, else B's); absent when
  /// neither records one.
  std::optional<RecordSource> source;
};

/// Tells whether an earlier call named `name` (same rank, step and pass) had differing outputs: how
/// a container (`module`) learns that its inner calls explain its own difference.
using DivergedBefore = std::function<bool(const DumpRecord& container)>;

/// Attributes one matched pair of records; either may be null (recorded on one side only:
/// structural). Tensors are loaded for this call only. Fails (kInvalidInput) only when a
/// tensor file can't be read.
Result<OpExplanation> ExplainPair(const DumpDir& a, const DumpRecord* ra, const DumpDir& b,
                                  const DumpRecord* rb, const DivergedBefore& diverged_inside);

}  // namespace parity

#endif  // PARITY_EXPLAIN_ATTRIBUTION_H_
