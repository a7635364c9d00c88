// SPDX-License-Identifier: Apache-2.0
// What a dump covers: the ops it recorded, how many of their calls replay can replay, the ops
// its manifest says were left out, its steps and ranks (`parity inspect`, `parity explain`).
#ifndef PARITY_ORACLE_COVERAGE_H_
#define PARITY_ORACLE_COVERAGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "io/dump.h"

namespace parity {

/// The records of one op.
struct OpCoverage {
  int64_t records = 0;
  bool replayable = false;                ///< the oracle has a float64 replay of the op
  std::map<std::string, int64_t> passes;  ///< records per pass
};

struct DumpCoverage {
  int version = 1;
  std::string level, mode;
  int64_t records = 0;
  std::map<std::string, OpCoverage> ops;  ///< by op name
  /// Records `parity replay` replays (NotReplayableReason is empty: an op with a replay and
  /// tensors with data), and the others, which are compared only.
  int64_t replayable = 0, compared_only = 0;
  /// Tensors parity does not compare (not stored, complex), in all; and by their reason
  /// (DumpTensorRef::not_comparable).
  int64_t not_comparable = 0;
  std::map<std::string, int64_t> not_comparable_reasons;
  std::map<std::string, int64_t> omitted;  ///< the manifests' ops not recorded, with counts
  std::vector<int64_t> steps;              ///< the steps that have records
  std::vector<int64_t> ranks;
};

/// Counts the records of `dump` (reads no tensor).
DumpCoverage CoverageOf(const DumpDir& dump);

/// {"ops":{"addmm":{"records":12,"replayable":true,"passes":{"forward":8,"backward":4}}},
///  "records":N,"replayable":N,"compared_only":M,"not_comparable":T,
///  "not_comparable_reasons":{"not stored: sparse_coo layout":T},"omitted":{..},"steps":[..],
///  "ranks":[..],"version":V,"level":"aten","mode":"tensors"}.
Json CoverageJson(const DumpCoverage& coverage);

/// One line: "412 records of 37 ops (300 replayable, 112 compared only), steps 0-2, rank 0,
/// 137 omitted (view 120, t 14, empty 3)", and where there are some ", 4 tensors not
/// comparable (4 not stored: sparse_coo layout)".
std::string CoverageLine(const DumpCoverage& coverage);

/// CoverageLine, then a table of the ops (records per pass, replayable) and the omitted ops.
std::string CoverageText(const DumpCoverage& coverage, const std::string& indent);

}  // namespace parity

#endif  // PARITY_ORACLE_COVERAGE_H_
