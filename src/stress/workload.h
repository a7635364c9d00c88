// SPDX-License-Identifier: Apache-2.0
// The StressWorkload interface: what `parity stress` runs, step by step, inside a worker
// process, on any backend of `parity bench`. A workload validates its own results: a burn
// workload reports silent data corruption it finds, the training workload reports its loss.
#ifndef PARITY_STRESS_WORKLOAD_H_
#define PARITY_STRESS_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::stress {

/// A result that is wrong beyond what rounding explains, or not finite.
struct SdcEvent {
  int device = 0;
  int64_t step = 0;
  std::string check;              ///< "repeat" (against the first result), "float64", "analytic"
  std::string array;              ///< the result it is in: "C" for a GEMM, "a"/"b"/"c" for stream
  std::vector<int64_t> position;  ///< [row, column] in a matrix, [index] in a vector
  double expected = 0.0;          ///< the value it should have (NaN: unknown)
  double got = 0.0;
  double bound = 0.0;  ///< the largest difference rounding explains there
};

/// {"device":..,"step":..,"check":..,"array":..,"position":[..],"expected":..,"got":..,
///  "bound":..}, non-finite values as null with a flag (core/json_util.h).
Json SdcEventToJson(const SdcEvent& event);

/// What one step did.
struct StepResult {
  std::optional<double> loss;  ///< the training loss of the step (train only)
  double work = 0.0;           ///< work done, in the workload's work_unit()
  std::vector<SdcEvent> sdc;   ///< corruption found in this step's results (empty: none)
  /// Further corrupt entries found beyond those listed in `sdc` (a workload lists a few).
  int64_t sdc_unlisted = 0;
  /// Result entries that differ bitwise from the first result but within the rounding bound
  /// (a nondeterministic library, not corruption).
  int64_t nondeterministic = 0;
  /// When PlantBitFlip() was armed for this step: where the bit was flipped, as
  /// {"array":..,"position":[..],"bit":..}; null otherwise.
  Json planted;
};

/// A workload's parameters: a JSON object of the matrix's current values and the flags, by
/// name (numbers or strings).
using Params = Json;

class StressWorkload {
 public:
  virtual ~StressWorkload() = default;

  virtual std::string_view name() const = 0;
  /// The unit of StepResult::work: "GFLOP" (GEMM), "GB" (stream), "samples" (train).
  virtual std::string_view work_unit() const = 0;

  /// Prepares to run on `backend` (already opened on `device`) with `params`. `state` is what
  /// Save() returned in an earlier process (the next step is then the step saved plus one),
  /// or empty for a fresh start. kInvalidInput for a parameter it does not take or a bad
  /// value (naming it); kInvalidInput for a state it can't read (wrong workload, truncated);
  /// kUnavailable when the backend can't run it (no GEMM of that dtype).
  virtual Status Start(bench::Backend& backend, int device, const Params& params,
                       std::string_view state) = 0;

  /// Runs step `step` (counted from 1; consecutive after Start). Errors are backend failures.
  virtual Result<StepResult> Step(int64_t step) = 0;

  /// The state after the last completed step, for a checkpoint; Start(.., state) resumes
  /// from it with results identical to a run that did not stop.
  virtual Result<std::string> Save() = 0;

  /// Arms the silent-data-corruption drill: the next Step flips one bit of one element of its
  /// result, after computing it and before validating it, at a place chosen by `seed`, and says
  /// where in StepResult::planted. The bit is one that rounding can't explain (the exponent or
  /// the leading fraction bits), so validation must report that very position.
  /// kUnavailable for a workload with no result to corrupt in place (train).
  virtual Status PlantBitFlip(uint64_t seed) = 0;

  /// Device memory the workload holds now, in bytes (for the oom drill's report).
  virtual std::size_t bytes_in_use() const = 0;
};

/// A workload parity can run. `create` is null for `exec`, which runs an external command
/// instead of a workload in the worker.
struct WorkloadInfo {
  std::string_view name;
  std::string_view summary;  ///< one line, for --help
  std::unique_ptr<StressWorkload> (*create)();
  /// The parameters it takes, with their defaults, for --help and for checking a matrix.
  std::string_view params;
};

/// Every workload, in the order --help lists them.
std::span<const WorkloadInfo> Workloads();

/// The workload called `name`; kInvalidInput with "did you mean" for an unknown one.
Result<const WorkloadInfo*> FindWorkload(std::string_view name);

}  // namespace parity::stress

#endif  // PARITY_STRESS_WORKLOAD_H_
