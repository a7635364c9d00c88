// SPDX-License-Identifier: Apache-2.0
// `parity explain`: where a divergence between two dumps starts, and why.
#ifndef PARITY_EXPLAIN_EXPLAIN_H_
#define PARITY_EXPLAIN_EXPLAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "explain/attribution.h"
#include "explain/evidence.h"
#include "oracle/coverage.h"

namespace parity {

struct ExplainOptions {
  std::string a, b;                 ///< two parity-dump directories
  std::optional<std::string> name;  ///< only records whose name matches this glob
  int slowest = 10;                 ///< how many ops slowest on B relative to A to list
};

/// An op much slower on B than on A (both recorded time_us).
struct SlowOp {
  int64_t seq = 0, step = 0;
  std::string name, op;
  double time_us_a = 0.0, time_us_b = 0.0;
  double ratio() const { return time_us_a > 0 ? time_us_b / time_us_a : 0.0; }
};

struct ExplainReport {
  std::string a, b;
  DumpCoverage coverage_a, coverage_b;  ///< what each dump recorded
  RunEvidence evidence;                 ///< the manifests' per-step evidence, compared
  /// A divergence already present in the data the workload started from: the first op's
  /// inputs, or the params of an op of the first step.
  bool input_difference = false;
  std::string input_difference_detail;
  std::vector<OpExplanation> ops;  ///< execution order (A's)
  std::vector<const OpExplanation*> origins() const;
  /// The calls labelled not-judged (a tensor the dumps do not hold), execution order.
  std::vector<const OpExplanation*> not_judged() const;
  std::vector<SlowOp> slowest_on_b;
  std::vector<std::string> warnings;
  /// 1 when an origin or an input-data difference was found, else 0 (calls not judged are
  /// neither).
  int exit_code() const;
};

/// Matches the records of two dumps (by rank, step, name, pass and call, then seq) and attributes
/// each matched call. Tensors are loaded one op call at a time, so memory follows the largest
/// call, not the dump. Fails (exit 2) on an unreadable or malformed dump.
Result<ExplainReport> RunExplain(const ExplainOptions& options);

/// {"format":"parity-explain","version":1,"coverage":{"a":..,"b":..},"evidence":{..},
///  "input_difference":..,"origins":[..],"ops":[..],..}.
Json ExplainReportJson(const ExplainReport& report);
/// One op call as ExplainReportJson lists it: {"seq","rank","step","name","op","pass","call",
/// "cause","reason","replayed","local_err_a","local_err_b","input_diff","output_diff",
/// "effective_precision","time_us_a","time_us_b"}, and "source" {"file","line","function",
/// "code"} when a record gives one.
Json OpExplanationJson(const OpExplanation& e);
/// A record's source as JSON: {"file","line","function","code"} (function and code only when
/// recorded).
Json SourceJson(const RecordSource& source);
/// "at FILE:LINE in FUNCTION: CODE" (the parts recorded).
std::string SourceText(const RecordSource& source);

std::string ExplainReportText(const ExplainReport& report);

}  // namespace parity

#endif  // PARITY_EXPLAIN_EXPLAIN_H_
