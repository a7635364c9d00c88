// SPDX-License-Identifier: Apache-2.0
// One run of a training workload through python/parity_workloads' harness (a child process),
// its report checked, and the `model` suite of `parity bench` built on it.
#ifndef PARITY_WORKLOAD_MODEL_RUN_H_
#define PARITY_WORKLOAD_MODEL_RUN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/result.h"
#include "bench/runner.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::workload {

/// A setting of a training run that the harness applies (and `parity tune` searches).
struct Knob {
  enum class Type { kInt, kBool, kString };
  std::string_view name;  ///< "batch_size", "num_workers", ...
  Type type;
  std::string_view flag;  ///< the harness's option: "--batch-size"
  std::string_view help;
  std::span<const std::string_view> values = {};  ///< a kString knob's allowed values
};

/// Every knob, in the order the documentation lists them.
std::span<const Knob> Knobs();
const Knob* FindKnob(std::string_view name);
/// Checks `value` against the knob's type and range (ints >= 1, num_workers and
/// prefetch_factor >= 0; a string one of the knob's values): "" when fine, else the problem.
std::string CheckKnobValue(const Knob& knob, const Json& value);

/// The value of knob `key` written as text ("128", "true", "bf16"), checked; kInvalidInput
/// "unknown setting 'K' (the settings: ...)" or CheckKnobValue's problem.
Result<Json> KnobFromText(std::string_view key, std::string_view text);

struct ModelRunOptions {
  std::string python;    ///< the interpreter (FindPython)
  std::string workload;  ///< a reference name or MODULE:FUNCTION
  std::string size = "small";
  int steps = 20;
  int warmup = 3;
  std::string device = "cpu";  ///< torch's device: "cpu", "cuda:0"
  uint64_t seed = 0;
  Json settings = Json::object();          ///< knob name -> value (checked by CheckKnobValue)
  std::map<std::string, std::string> env;  ///< extra environment variables for the run
  std::optional<double> timeout;           ///< seconds
  std::string log_path;  ///< the harness's stderr goes here ("" = a temporary file, removed)
  const std::atomic<bool>* stop = nullptr;
  /// The harness's --knobs: the report is the settings the workload has ("parity-workload-
  /// knobs"), not a training run's.
  bool knobs_only = false;
};

/// How a run ended: its report, or why it failed (the workload raised, timed out, was
/// stopped).
struct ModelRunOutcome {
  Json report;          ///< the checked "parity-model-run" report; null when it failed
  std::string failure;  ///< one line; "" when it ran
  double seconds = 0.0;
};

/// Runs the harness once. kInvalidInput for what the harness refuses as bad input (an unknown
/// workload, a module missing or raising on import, settings that can't apply: its exit 2,
/// with its message); kUnavailable when the interpreter can't be started. A run that starts
/// but fails is an outcome with `failure` set.
Result<ModelRunOutcome> RunModel(const ModelRunOptions& options);

/// The knobs a workload has, found by the harness watching one forward pass (channels_last
/// needs a 2-d convolution, sdpa_backend scaled_dot_product_attention), and why it lacks the
/// others.
struct WorkloadKnobs {
  std::vector<std::string> has;
  std::map<std::string, std::string> lacks;  ///< knob -> why the workload lacks it
};

/// Runs the harness's --knobs for `options`' workload (settings, steps ignored). Errors as
/// RunModel's; a probe that fails is kInvalidInput with its failure.
Result<WorkloadKnobs> ProbeKnobs(const ModelRunOptions& options);

/// Per-step losses (a report's "losses", null for a loss that was not finite) as the CSV
/// `parity quality curve` reads: "step,value" and one row per step from 0.
std::string LossCurveCsv(const Json& losses);

/// Checks a "parity-model-run" v1 report: kInvalidInput naming `path` and the field.
Status CheckModelReport(const Json& report, std::string_view path);

/// The parity-bench result of a checked report: benchmark "model.<workload>.train", dtype by
/// AMP (float32, bfloat16, float16), samples/s per step, invalid when a loss is not finite.
bench::BenchResult ModelResult(const Json& report);

struct ModelSuiteOptions {
  ModelRunOptions run;                 ///< everything but the workload
  std::vector<std::string> workloads;  ///< empty: the reference workloads
  int repeat = 1;
  std::string backend = "cpu";
  Json platform;           ///< the fingerprint the document carries
  std::string curves_dir;  ///< "" or where each run's losses go as CSV (step,value)
  std::function<void(std::string_view)> progress;
};

/// The reference workloads, in the order the suite runs them.
std::span<const std::string_view> ReferenceWorkloads();

/// `parity bench --suite model`: every workload `repeat` times, as a parity-bench v1 run.
Result<bench::BenchRun> RunModelSuite(const ModelSuiteOptions& options);

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_MODEL_RUN_H_
