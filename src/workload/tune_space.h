// SPDX-License-Identifier: Apache-2.0
// The search space of `parity tune`: a YAML file of training settings (knobs) and environment
// variables, each with its candidate values, every environment variable checked against the
// knowledge base (data/knowledge/settings.yaml) before anything runs.
#ifndef PARITY_WORKLOAD_TUNE_SPACE_H_
#define PARITY_WORKLOAD_TUNE_SPACE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "env/knowledge.h"
#include "workload/model_run.h"

namespace parity::workload {

/// A space file:
///
///   knobs:                      # model.h's knobs; each a list of candidate values
///     batch_size: [64, 128]
///     num_workers: [0, 2, 4]
///   env:                        # environment variables; each a list of values
///     OMP_NUM_THREADS: ["1", "2"]
///
/// A value `default` in a list stands for the workload's own setting (the knob not given, the
/// variable not set). The configuration of every knob and variable at its default is always
/// tried first, and the speed-up is measured against it.
struct TuneSpace {
  std::vector<std::pair<std::string, std::vector<Json>>> knobs;  ///< null Json = default
  /// nullopt = unset (default).
  std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>> env;
  std::string path;

  /// How many configurations the space holds (the product of the list sizes).
  double Size() const;
};

/// One point of the space: knob values (absent = the workload's) and environment variables.
struct TuneConfig {
  Json knobs = Json::object();
  std::map<std::string, std::string> env;
  bool is_default() const { return knobs.empty() && env.empty(); }
  /// "batch_size=128 num_workers=2 OMP_NUM_THREADS=2", "default" for the default.
  std::string Label() const;
  Json ToJson() const;
};

/// Reads and checks a space file. kInvalidInput "PATH: line N: problem" for an unknown
/// section or knob, an empty list, a value of the wrong type, a list with a value twice, and
/// an environment variable the knowledge base does not know, or marks invented
/// (does-not-exist), another vendor's, or given a value in the wrong format (the entry's
/// claim and its primary source in the message).
Result<TuneSpace> LoadTuneSpace(const std::string& path, const env::Knowledge& knowledge);

/// kInvalidInput naming the space file when it lists a knob `workload` lacks (the harness's
/// probe, `knobs`): "workload 'W' has no knob 'K': REASON (its knobs: ...)".
Status CheckSpaceKnobs(const TuneSpace& space, const WorkloadKnobs& knobs,
                       std::string_view workload);

/// The same for the text of a space file; `path` names it in messages.
Result<TuneSpace> ParseTuneSpace(std::string_view text, const std::string& path,
                                 const env::Knowledge& knowledge);

/// Every configuration of the space, the default first, each once.
std::vector<TuneConfig> Configurations(const TuneSpace& space);

/// Seconds from "90", "120s", "10m", "2h" (a positive number, optionally with s, m or h);
/// kInvalidInput naming `what` otherwise.
Result<double> ParseDuration(std::string_view text, std::string_view what);

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_TUNE_SPACE_H_
