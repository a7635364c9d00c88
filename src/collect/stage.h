// SPDX-License-Identifier: Apache-2.0
// The extension point of `parity collect`: a stage kind (env, bench, monitor, stress, exec, dump,
// quality) says which plan keys it takes, checks them, and runs one stage into the bundle.
#ifndef PARITY_COLLECT_STAGE_H_
#define PARITY_COLLECT_STAGE_H_

#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "store/store.h"

namespace parity::collect {

/// The type of a plan key's value; the plan parser converts the YAML into JSON by it.
enum class ValueType {
  kString,      ///< a scalar, as text
  kInt,         ///< a whole number >= 0
  kNumber,      ///< a finite number > 0 (seconds, sizes)
  kBool,        ///< true or false
  kStringList,  ///< a list of scalars as text; a single scalar is a list of one
  kCommand,     ///< a command: a string (split like a shell, without one) or a list of words
  kStringMap,   ///< a map of names to scalars, as text (an environment)
  kParamMap,    ///< a map of names to numbers or strings (workload parameters)
  kMetrics,     ///< exec's list of metric definitions (see stage_exec.cc)
};

/// One key a stage kind takes, besides those every stage has (name, kind, level, by_level,
/// timeout, estimate, description).
struct KeySpec {
  std::string_view key;
  ValueType type;
};

/// Where a plan is, for checking the files a stage names.
struct CheckContext {
  std::string plan_dir;  ///< relative file names in the plan are relative to this
};

/// Everything a stage needs to run.
struct StageRun {
  std::string name;
  Json params;  ///< the stage's keys as in force at `level` (EffectiveParams)
  int level = 1;
  std::string backend;
  std::string bundle_dir;                   ///< absolute
  std::string stage_dir;                    ///< absolute, BUNDLE/stages/NAME, created and empty
  std::string stage_rel;                    ///< "stages/NAME"
  std::string log_path;                     ///< absolute: the stage's stdout and stderr go here
  std::string plan_dir;                     ///< absolute
  std::string parity;                       ///< this executable, for stages that run parity itself
  std::optional<double> timeout;            ///< seconds; none: no limit
  const std::atomic<bool>* stop = nullptr;  ///< set when the collect is interrupted
};

/// How a stage ended.
struct StageOutcome {
  /// "passed", "failed" (it ran and a check failed), "error" (it could not produce its result),
  /// "skipped" (it can't run here: backend unavailable), "interrupted".
  std::string status = "error";
  std::string reason;  ///< one line; "" when passed
  std::string result;  ///< its result file, relative to the bundle; "" when none
  std::vector<store::MetricRecord> metrics;
  Json summary = Json::object();  ///< a few figures for the manifest and the progress line
};

/// A kind of stage. Implementations are stateless; one instance each, in StageKinds().
class StageKind {
 public:
  virtual ~StageKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  /// The keys it takes; the parser rejects any other.
  virtual std::span<const KeySpec> keys() const = 0;
  /// Checks a stage's keys as in force at one level (required keys, values, files the plan
  /// names). kInvalidInput with the problem; the parser adds the file, line and stage.
  virtual Status Check(const Json& params, const CheckContext& context) const = 0;
  /// How long the stage is expected to take, in seconds, for the ETA when the results store
  /// has no earlier run of it.
  virtual double Estimate(const Json& params) const = 0;
  /// True for a kind that runs beside all the other stages (monitor) rather than in turn.
  virtual bool background() const { return false; }
  /// Runs the stage. Never throws; whatever goes wrong is in the outcome.
  virtual StageOutcome Run(const StageRun& run) const = 0;
};

/// Every stage kind, in the order the documentation lists them.
std::span<const StageKind* const> StageKinds();

/// The kind called `name`, or null.
const StageKind* FindStageKind(std::string_view name);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_STAGE_H_
