// SPDX-License-Identifier: Apache-2.0
// An acceptance plan (`parity collect PLAN`): the stages that collect a platform's evidence, and
// from which level each runs.
//
//   plan: cpu-acceptance          # the plan's name: letters, digits, '.', '_', '-'
//   description: ...              # optional
//   version: 1                    # optional; the plan format's version, 1
//   backend: cpu                  # bench and stress stages run here; --backend overrides
//   vars:                         # optional: names and default values; --var NAME=VALUE sets
//     threads: 1                  #   one; "{var.threads}" in any value of a stage is replaced
//   stages:
//     - kind: env                 # the platform fingerprint
//     - kind: monitor             # telemetry sampled while all the other stages run
//       interval: 1
//     - name: bench               # default: the kind; unique, [a-z0-9][a-z0-9_-]*
//       kind: bench
//       suites: [stream, gemm]
//       n: 4194304
//       by_level:                 # keys that change from a level on; the highest applies last
//         2: {n: 33554432}
//     - kind: stress
//       level: 3                  # runs at --level 3 and above (default 1)
//       workload: gemm-burn
//       duration: 600
//       timeout: 900              # seconds before the stage is stopped (default: none)
//       estimate: 600             # seconds, for the ETA (default: the last run's, else a guess)
//
// Levels include the ones below, as DCGM's and RVS's do: 1 about a minute, 2 about ten
// minutes, 3 about an hour (adds stress with fault drills), 4 hours (soak).
//
// Every problem is kInvalidInput "PATH: line N: stage 'NAME': problem", naming an unknown key
// (with "did you mean"), stage kind or value. A plan is at most 1 MiB and 256 stages.
#ifndef PARITY_COLLECT_PLAN_H_
#define PARITY_COLLECT_PLAN_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::collect {

inline constexpr int kMaxLevel = 4;
inline constexpr std::size_t kMaxPlanBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxStages = 256;

/// One stage as the plan gives it.
struct PlanStage {
  std::string name;
  std::string kind;
  int level = 1;  ///< runs at this level and above
  std::optional<double> timeout;
  std::optional<double> estimate;
  std::string description;
  Json params = Json::object();  ///< the kind's keys, converted by their ValueType
  std::map<int, Json> by_level;  ///< level -> keys replaced from that level on
  int line = 0;                  ///< where the stage starts in the file, 1-based
};

struct Plan {
  std::string path;  ///< as given
  std::string dir;   ///< absolute directory of the plan: relative files resolve here
  std::string name;
  std::string description;
  std::string backend = "cpu";
  std::string text;                         ///< the file's contents, copied into the bundle
  std::map<std::string, std::string> vars;  ///< the values in force (defaults and overrides)
  std::vector<PlanStage> stages;
};

/// The stage's keys in force at `level`: its params with each by_level entry <= level applied
/// in increasing order.
Json EffectiveParams(const PlanStage& stage, int level);

/// Parses a plan's text and checks every stage at every level it runs at. `path` names the
/// file in messages and locates relative files. `vars` override the plan's 'vars' (each must
/// be declared there, else kInvalidInput "--var: ..."); {var.NAME} in a stage's values is
/// replaced before the stage is checked, so a value's digest follows the var.
Result<Plan> ParsePlan(std::string_view text, const std::string& path,
                       const std::map<std::string, std::string>& vars = {});

/// Reads and parses the plan at `path`.
Result<Plan> LoadPlan(const std::string& path, const std::map<std::string, std::string>& vars = {});

/// The plan as JSON, for the bundle's manifest: {"name","description","backend","path","vars",
/// "stages":[{"name","kind","level","timeout","estimate","params","by_level"}]}.
Json PlanToJson(const Plan& plan);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_PLAN_H_
