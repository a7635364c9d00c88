// SPDX-License-Identifier: Apache-2.0
// What the manifests of two version 2 dumps say about each step beyond the tensors: the state
// of the random generators and the GradScaler's scale and skipped steps, compared.
#ifndef PARITY_EXPLAIN_EVIDENCE_H_
#define PARITY_EXPLAIN_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "io/dump.h"

namespace parity {

/// The first step at which a generator's state digest differs between the two dumps.
struct GeneratorDifference {
  int64_t step = 0;
  std::vector<std::string> generators;  ///< the generators that differ at that step, by name
  std::vector<int64_t> ranks;           ///< the ranks where they differ
};

/// The GradScaler on each side: its scale per step and the steps it skipped.
struct ScalerEvidence {
  std::vector<double> a, b;  ///< the scale at each step that records one, in step order
  std::vector<int64_t> skipped_a, skipped_b;  ///< the steps whose optimizer step was skipped
  /// The first step both sides record at which the scale or the skipped flag differ.
  std::optional<int64_t> first_differ_step;
  bool differ() const { return first_differ_step.has_value(); }
};

struct RunEvidence {
  /// Steps at which both dumps record a digest of at least one same-named generator (of the
  /// same rank); generators recorded on one side only are not compared.
  int64_t generator_steps_compared = 0;
  std::optional<GeneratorDifference> generators_first_differ;
  /// Absent when neither dump records a scaler. Read from each dump's lowest rank that records
  /// steps (the GradScaler agrees across ranks).
  std::optional<ScalerEvidence> scaler;
};

/// Compares the per-step evidence of the manifests of `a` and `b` (empty for version 1 dumps).
RunEvidence CompareEvidence(const DumpDir& a, const DumpDir& b);

/// {"generators_first_differ":{"step":S,"generators":[..],"ranks":[..]} or null,
///  "generator_steps_compared":N,
///  "scaler":{"a":[..],"b":[..],"skipped_a":[..],"skipped_b":[..],"differ":bool,
///            "first_differ_step":S or null} or null}.
Json EvidenceJson(const RunEvidence& evidence);

/// Two lines: "generators: ..." and "scaler: ...", each ending in '\n', after `indent`.
std::string EvidenceText(const RunEvidence& evidence, const std::string& indent);

}  // namespace parity

#endif  // PARITY_EXPLAIN_EVIDENCE_H_
