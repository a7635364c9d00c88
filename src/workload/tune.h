// SPDX-License-Identifier: Apache-2.0
// `parity tune`: successive halving over a space of training settings (tune_space.h), every
// configuration measured by the model suite's harness in a fresh process, the fastest one
// whose loss curve stays inside the default's seed envelope recommended, with its speed-up
// over the default and a bootstrap interval.
#ifndef PARITY_WORKLOAD_TUNE_H_
#define PARITY_WORKLOAD_TUNE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "workload/model_run.h"
#include "workload/tune_space.h"

namespace parity::workload {

/// The confidence of the speed-up's bootstrap interval.
inline constexpr double kTuneConfidence = 0.95;

struct TuneOptions {
  ModelRunOptions run;  ///< python, workload, size, device, warmup, seed, timeout
  TuneSpace space;
  double budget_s = 600.0;  ///< wall time for the search; trials that would pass it are not run
  int min_steps = 5;        ///< timed steps of the first rung
  int max_steps = 45;       ///< timed steps of the last rung
  int eta = 3;              ///< each rung keeps the fastest 1/eta (and the default)
  int seeds = 3;            ///< runs of the default (seeds 0..seeds-1) that make the envelope
  int max_configs = 81;     ///< a larger space is sampled (the default always in)
  uint64_t sample_seed = 1;
  int64_t patience = 3;  ///< steps outside the envelope in a row that flag a configuration
  /// Whether a configuration whose losses leave the envelope ("changes results") may still
  /// be promoted and recommended; it is marked so in the report either way.
  bool allow_result_changes = false;
  /// Pairs of re-runs of the default and the best, interleaved, after the search: their
  /// steps join the final rung's in the speed-up and its interval (0: none).
  int confirm = 2;
  /// The journal file (tune_journal.h): finished trials written there as they end, and taken
  /// from it instead of run again by a run started later with the same file; "" for none.
  std::string journal;
  std::function<void(std::string_view)> progress;
};

/// One configuration run once.
struct TuneTrial {
  int id = 0;
  std::size_t config = 0;  ///< index into TuneReport::configs
  int rung = 0;
  int steps = 0;
  uint64_t seed = 0;
  std::string status;  ///< "ok", "failed", "not-run" (the budget ran out)
  std::string error;
  std::vector<double> samples;  ///< samples/s per timed step
  std::optional<double> rate;   ///< median samples/s
  Json losses;
  double seconds = 0.0;
  bool envelope = false;  ///< a run of the default with another seed, for the envelope only
  bool resumed = false;   ///< taken from the journal, finished by an earlier run
  /// A re-run of the default or the best after the search (rung: one past the last).
  bool confirmation = false;
  /// Whether its losses stay inside the default's seed envelope at its rung (absent: not
  /// checked), and the first step from which they leave it.
  std::optional<bool> inside;
  std::optional<double> departure;
};

struct TuneReport {
  std::string workload;
  std::vector<TuneConfig> configs;  ///< configs[0] is the default
  std::size_t space_size = 0;       ///< configurations in the space (before sampling)
  std::vector<int> rung_steps;
  std::vector<TuneTrial> trials;
  int final_rung = -1;  ///< the last rung every surviving configuration finished; -1: none
  /// Per configuration at the final rung: whether its losses stay inside the default's
  /// envelope (absent: not checked), and the first step from which they do not.
  std::vector<std::optional<bool>> inside;
  std::vector<std::optional<double>> departure;
  std::optional<std::size_t> best;           ///< the recommended configuration
  std::optional<double> speedup, low, high;  ///< best / default, 95% bootstrap interval
  int confirmed_pairs = 0;  ///< interleaved re-run pairs whose steps are in the speed-up
  bool stopped_by_budget = false;
  int resumed_trials = 0;  ///< trials taken from the journal
  double budget_s = 0.0, elapsed_s = 0.0;
  std::string lr_rule = "held";  ///< how the learning rate followed batch_size (knobs.py)
  bool allow_result_changes = false;
  std::string note;  ///< why there is no recommendation, when there is none
};

/// Runs the search. kInvalidInput for what the harness refuses as bad input (the workload
/// itself); kUnavailable when the interpreter can't start. Failed trials are in the report.
Result<TuneReport> RunTune(const TuneOptions& options);

/// {"format": "parity-tune", "version": 1, "workload", "default", "best", "speedup",
/// "trials": [...], ...}.
Json TuneJson(const TuneReport& report);
std::string TuneText(const TuneReport& report);
/// The best configuration as a plan's `vars:` map (knob names; env_NAME for variables).
std::string TunePlanVars(const TuneReport& report);

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_TUNE_H_
