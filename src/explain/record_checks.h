// SPDX-License-Identifier: Apache-2.0
// What two matched records say without a replay (internal to explain): their structure, their
// recorded statistics, tensors the dumps do not hold, their arguments, and the tests of random
// ops (dropout masks, samples of one distribution).
#ifndef PARITY_EXPLAIN_RECORD_CHECKS_H_
#define PARITY_EXPLAIN_RECORD_CHECKS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "explain/attribution.h"
#include "io/dump.h"
#include "oracle/oracle.h"

namespace parity::explain_internal {

/// How two sides' values differ, accumulated over pairs of arrays.
struct Difference {
  bool identical = true;  ///< same values, NaN at the same places
  int64_t nonfinite_a = 0, nonfinite_b = 0;
  bool nonfinite_mismatch = false;
  double sum_sq = 0.0, a_sq = 0.0;

  /// Adds the elementwise differences of `a` and `b` (over their common length).
  void Add(const Array& a, const Array& b);
  /// rms(a - b) / rms(a) over the finite pairs; inf when a is 0 and they differ.
  double rel() const {
    if (a_sq > 0) return std::sqrt(sum_sq / a_sq);
    return sum_sq > 0 ? INFINITY : 0.0;
  }
};

/// A number in a reason: two significant digits.
std::string Sci(double x);

/// Why two records are not the same call ("op 'x' in A, 'y' in B", a count, a shape or a dtype
/// kind of one of their tensors that differs); "" when they are. A shape is compared where both
/// sides record one; dtypes differ structurally unless both are parity's float dtypes.
std::string StructuralMismatch(const DumpRecord& a, const DumpRecord& b);

/// The first tensor of either record (matched, not structurally different) that parity does
/// not compare, and why: "input 1 in A and B not stored: sparse_coo layout", "output 0 in B is
/// complex64: parity compares real dtypes only (...)", with "(and N more tensors)" after it;
/// "" when every tensor of both is comparable.
std::string NotComparableTensors(const DumpRecord& a, const DumpRecord& b);

/// Labels a pair of records of which some tensor is not comparable (`what`, from
/// NotComparableTensors), never from what is absent: `identical` when every output is held on
/// both sides and bitwise equal (or, statistics only, has equal recorded statistics); else
/// `algorithmic` when the records give other arguments (attrs other than placement), else
/// `not-judged` with the reason (outputs that differ, or outputs not held). Fails only when a
/// tensor file can't be read.
Status ExplainNotComparable(const DumpDir& a, const DumpRecord& ra, const DumpDir& b,
                            const DumpRecord& rb, const std::string& what, OpExplanation* e);

/// Whether some tensor of `r` is held as statistics only.
bool HasStatsOnly(const DumpRecord& r);

/// Labels a pair of records saved (in part) as statistics, on the statistics both sides
/// recorded (l2, NaN and Inf counts, min, max, mean). With `digests` (both dumps name the same
/// hash algorithm), two tensors that both carry a digest are the same exactly when their
/// digests are. A statistic recorded on one side only is no evidence: when what both sides
/// recorded cannot tell (no output statistic in common; inputs or l2 norms not recorded on both
/// sides where the label depends on them), the label is `not-judged`, never `identical` or
/// `within-rounding`.
void ExplainFromStats(const DumpRecord& a, const DumpRecord& b, bool digests, OpExplanation* e);

/// The ops that only change a tensor's dtype (autocast inserts them on one side only).
bool IsCastOp(std::string_view op);

/// The attrs the two records give differently, "name A value, B value" each ("" when equal);
/// placement attrs (device, layout, memory_format ...) are left out.
std::string AttrDifference(const DumpRecord& a, const DumpRecord& b);

/// Two dropout calls' masks compared where both inputs are non-zero.
struct MaskTest {
  bool applies = false;  ///< training dropout with 0 < p < 1
  double p = 0.0;
  int64_t n = 0;         ///< positions where both inputs are non-zero
  int64_t disagree = 0;  ///< of those, where one side dropped and the other kept
  double rate_a = 0.0, rate_b = 0.0;
};

/// The masks of two dropout calls (dropped: a zero output of a non-zero input).
MaskTest CompareMasks(const OpCall& a, const OpCall& b);

/// Whether a drop rate measured on n positions agrees with p (five standard deviations).
bool RateAgrees(double rate, double p, int64_t n);

/// The aten ops whose outputs are drawn from a generator (version 2 dumps name aten ops).
bool IsRandomOp(std::string_view op);

/// Whether two samples agree in distribution: means within five standard errors and variances
/// within five standard errors of their log ratio. Fills `why` with the figures.
bool SamplesAgree(const Array& a, const Array& b, std::string* why);

}  // namespace parity::explain_internal

#endif  // PARITY_EXPLAIN_RECORD_CHECKS_H_
