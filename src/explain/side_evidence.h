// SPDX-License-Identifier: Apache-2.0
// One side of a matched pair against the float64 oracle (internal to explain): its local error
// and the float32 bound it is judged by, and the reduced precision its evidence shows.
#ifndef PARITY_EXPLAIN_SIDE_EVIDENCE_H_
#define PARITY_EXPLAIN_SIDE_EVIDENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/json_util.h"
#include "core/status.h"
#include "explain/precision.h"
#include "io/dump.h"
#include "oracle/replay.h"

namespace parity::explain_internal {

/// "exactly", or "to 3.1e-08 (relative rms)".
std::string MatchText(double rel_rmse);

/// " at 99.6% of its elements" where a replay agrees with fewer than all of them; else "".
std::string ShareText(double share);

/// One side's outputs against its float64 replay.
struct SideEval {
  bool replayed = false;
  std::string not_replayed;  ///< why, when not
  std::vector<Array> oracle;
  Tolerance tolerance;  ///< the first output's, at float32 compute
  Agreement local;
  bool within() const { return replayed && local.within_bound(); }
};

/// Replays one side and judges its outputs against the float32 bound of `auto`. Not replayed
/// (with the reason) where the op has no replay or the replay does not fit the record. Fails
/// only where the tolerance can't be resolved.
Result<SideEval> Evaluate(const DumpRecord& record, const LoadedRecord& loaded);

/// How far apart two local errors may be and still count as "as large" (either at most this
/// many times the other). Both sides beyond the bound by such errors make the bound, not B,
/// the cause (docs/EXPLAIN.md, "Labels").
inline constexpr double kComparableErrors = 2.0;

/// Whether both sides' relative local errors (rms error / rms of the replay) are finite,
/// non-zero and within kComparableErrors of each other.
bool ComparableErrors(const SideEval& a, const SideEval& b);

/// "bitwise", "the float32 bound λ√K·u, K=256" or "the float32 bound".
std::string BoundText(const Tolerance& t);

/// "B's local error 3.1e-04 of rms", or "B not replayed (why)".
std::string LocalText(const std::string& side, const SideEval& e);

/// One side's reduced precision as its evidence shows it.
struct SidePrecision {
  std::optional<Precision> precision;  ///< unset where fp16 and tf32 both remain
  std::string text;                    ///< the evidence, for the reason
  /// PrecisionName, or kFp16OrTf32 where both remain.
  std::string Name() const;
};

/// The evidence for the reduced precision of `side` (beyond the bound: `e`), or nothing where
/// no test names one (InferPrecision). Where the data cannot tell fp16 from tf32, the side's
/// `manifest` may (ResolveTenBits: autocast to float16, a device without TF32); else both are
/// named ("fp16 or tf32: 10 fraction bits"). The text ends with ManifestNote.
std::optional<SidePrecision> PrecisionEvidence(const std::string& side, const std::string& op,
                                               const LoadedRecord& l, const SideEval& e,
                                               const Json& manifest);

}  // namespace parity::explain_internal

#endif  // PARITY_EXPLAIN_SIDE_EVIDENCE_H_
