// SPDX-License-Identifier: Apache-2.0
// The extension point of `parity accept`: a Part (numerics, quality, throughput, stability)
// turns the two bundles into criteria, each PASS, FAIL, SKIP or ERROR with its reason and
// evidence. Parts are listed in one table (parts.cc).
#ifndef PARITY_ACCEPT_CRITERION_H_
#define PARITY_ACCEPT_CRITERION_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accept/bundle_view.h"
#include "accept/criteria.h"
#include "accept/telemetry_record.h"
#include "core/json_util.h"

namespace parity::accept {

enum class Verdict { kPass, kFail, kSkip, kError };

/// "pass", "fail", "skip", "error".
std::string_view VerdictName(Verdict verdict);

/// One criterion's outcome.
struct CriterionResult {
  std::string id;     ///< "numerics.dump", "throughput.bench.stream", "stability.temperature"
  std::string part;   ///< numerics, quality, throughput, stability
  std::string stage;  ///< the bundle stage it judged ("" when it judged none)
  std::string title;  ///< what it requires, one line
  Verdict status = Verdict::kSkip;
  std::string reason;              ///< one line; why it passed, failed, was skipped or errored
  Json evidence = Json::object();  ///< the numbers behind the verdict
};

/// What every part reads.
struct AcceptInput {
  const BundleView& baseline;
  const BundleView& candidate;
  const Criteria& criteria;
  /// The candidate's telemetry.jsonl, read once: null when it has none or it can't be read
  /// (then `candidate_telemetry_problem` says why).
  const TelemetryRecord* candidate_telemetry = nullptr;
  std::string candidate_telemetry_problem;
};

class Part {
 public:
  virtual ~Part() = default;
  virtual std::string_view name() const = 0;
  /// Its criteria, in a stable order. Never fails: a problem with a bundle's files is an
  /// ERROR criterion naming the file.
  virtual std::vector<CriterionResult> Evaluate(const AcceptInput& input) const = 0;
};

/// The parts, in the report's order.
const std::vector<const Part*>& Parts();

const Part* NumericsPart();
const Part* QualityPart();
const Part* ThroughputPart();
const Part* StabilityPart();

/// A stage of one kind as both bundles have it, by name.
struct StagePair {
  std::string name;
  const StageView* baseline = nullptr;  ///< null: not in the baseline's manifest
  const StageView* candidate = nullptr;
};

/// The stages of `kind` in either bundle, paired by name (the baseline's order, then the
/// candidate's own).
std::vector<StagePair> PairStages(const AcceptInput& input, std::string_view kind);

/// Why one bundle's stage (`side`: "baseline" or "candidate") gives no result: ERROR when it
/// did not produce one, SKIP when it was skipped; nothing when it passed or failed with one.
std::optional<std::pair<Verdict, std::string>> SideProblem(std::string_view side,
                                                           const StageView& stage);

/// Why a pair can't be judged, as a criterion's status and reason: ERROR when a bundle can't
/// be read, lacks the stage or the stage did not produce its result; SKIP when it was skipped.
/// Nothing when both sides produced a result (passed or failed).
std::optional<std::pair<Verdict, std::string>> PairProblem(const AcceptInput& input,
                                                           const StagePair& pair);

/// The criterion `part` gives when neither bundle has a stage of `kind`: SKIP saying so, or
/// ERROR when a bundle's manifest can't be read.
CriterionResult NoStage(const AcceptInput& input, std::string_view part, std::string_view title,
                        std::string_view kind);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_CRITERION_H_
