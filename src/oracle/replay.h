// SPDX-License-Identifier: Apache-2.0
// `parity replay`: each recorded op against its float64 replay on the recorded inputs.
#ifndef PARITY_ORACLE_REPLAY_H_
#define PARITY_ORACLE_REPLAY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/json_util.h"
#include "core/status.h"
#include "io/dump.h"
#include "oracle/oracle.h"

namespace parity {

/// How one op call fared against the oracle.
struct OpReplay {
  int64_t seq = 0, rank = 0, step = 0, call = 0;
  std::string name, op, pass;
  bool replayable = false;
  std::string reason;  ///< why not replayable, or the verdict's one line
  // Over every output: the recorded values against the float64 replay.
  double max_abs = 0.0;
  double rmse = 0.0;
  double rel_rmse = 0.0;               ///< rmse / rms of the oracle's output
  std::optional<Tolerance> tolerance;  ///< `auto`'s, for the first output
  bool within_bound = false;
  /// False for a random op (dropout): its kept set comes from the record itself, so the values
  /// can't be judged; `reason` then gives the distribution check, and within_bound is false.
  bool judged = true;
  std::optional<double> time_us;
};

/// The differences between recorded outputs and their replays over the finite pairs, summed
/// output by output into OpReplay's max_abs, rmse and rel_rmse.
struct ReplayError {
  double max_abs = 0.0, sum_sq = 0.0, oracle_sq = 0.0;
  int64_t finite = 0;

  void Add(const Array& recorded, const Array& oracle);
  /// Sets r's max_abs, rmse and rel_rmse (rmse over the oracle's rms).
  void Into(OpReplay* r) const;
};

/// One recorded output against its float64 replay.
struct OutputJudgement {
  Tolerance tolerance;  ///< with its final atol
  PairMetrics metrics;  ///< recorded (a) against the replay rounded to its dtype (b), judged
  bool within = false;
};

/// Judges `recorded` against `expected`, its float64 replay, under `tolerance`; an atol left to
/// the output's scale is set from the replay's rms; per-element scales (element_scale) are
/// applied element by element.
Result<OutputJudgement> JudgeOutput(const Tensor& recorded, const Array& expected,
                                    Tolerance tolerance);

/// For a random op (dropout, native_dropout), the check of its recorded keep mask against p
/// (drop rate within 5 standard deviations of a binomial's): the verdict's text, and whether
/// it holds. Nothing for other ops.
struct RandomCheck {
  std::string text;
  bool holds = true;
};
std::optional<RandomCheck> CheckRandomOp(const OpCall& call);

/// Replays one record of `dump` (tensors loaded one op at a time). Never fails for a record
/// that can't be replayed: that is an OpReplay with replayable = false and the reason. Fails
/// (kInvalidInput) only when a tensor file can't be read.
Result<OpReplay> ReplayRecord(const DumpDir& dump, const DumpRecord& record);

/// A record's tensors, loaded: as Tensors (dtype, shape, data in place) and as the OpCall the
/// oracle replays (float64 arrays, the recorded outputs too).
struct LoadedRecord {
  std::vector<Tensor> inputs;
  std::vector<std::pair<std::string, Tensor>> params;
  std::vector<Tensor> outputs;
  OpCall call;
};

/// Loads every tensor of `record`, or gives the reason it can't be replayed (a tensor the dump
/// does not hold or of a complex dtype, statistics-only tensors, no output) as kInvalidInput
/// "not replayable: ..." ("not replayable: input 1 not stored: sparse_coo layout"). Fails
/// (kInvalidInput) when a tensor file can't be read.
Result<LoadedRecord> LoadRecord(const DumpDir& dump, const DumpRecord& record);

/// The inputs and params of `record` as an OpCall (the recorded outputs too), or the reason
/// they can't be (statistics-only tensors) as kInvalidInput "not replayable: ...".
Result<OpCall> LoadOpCall(const DumpDir& dump, const DumpRecord& record);

/// Why `record` has no replay ("" when it has one): a tensor parity does not compare (not
/// stored, complex; named first, whatever the op), an op without a replay, or tensors saved as
/// statistics only.
std::string NotReplayableReason(const DumpRecord& record);

/// The `auto` tolerance of output `index` of `record` against its float64 replay, with the
/// summand scale taken from the loaded inputs where the op has a formula for it (else it is
/// left to the reference output's rms: needs_output_scale). `manifests` declare the
/// reduced-precision modes the platform allowed; none means float32 compute.
Result<Tolerance> OutputTolerance(const DumpRecord& record, const LoadedRecord& loaded,
                                  std::size_t index, std::initializer_list<const Json*> manifests,
                                  const std::vector<Array>* element_scales = nullptr);

/// For an op whose outputs are sums of products (mm, addmm, bmm, baddbmm, matmul, linear, the
/// convolutions and convolution_backward, sum, cumsum): per output, per element, the ℓ2 norm
/// of its summands, from the op replayed on squared operands (alpha and beta squared too).
/// Nothing for other ops. OutputTolerance computes it when not given.
std::optional<std::vector<Array>> ElementScales(const OpCall& call);

struct ReplayOptions {
  std::string dump;
  std::optional<int64_t> seq;       ///< only the record with this seq
  std::optional<std::string> name;  ///< only records whose name matches this glob
};

struct ReplayReport {
  std::string dump;
  std::vector<OpReplay> ops;
  int64_t replayed = 0, within = 0, outside = 0, not_replayable = 0, not_judged = 0;
  std::vector<std::string> warnings;
};

Result<ReplayReport> RunReplay(const ReplayOptions& options);

/// {"format":"parity-replay","version":1,"summary":{...},"ops":[...]}.
Json ReplayReportJson(const ReplayReport& report);
std::string ReplayReportText(const ReplayReport& report);

}  // namespace parity

#endif  // PARITY_ORACLE_REPLAY_H_
