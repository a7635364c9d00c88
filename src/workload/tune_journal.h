// SPDX-License-Identifier: Apache-2.0
// parity tune's journal: the finished trials of a run, one JSON line each as it ends, so that a
// run killed and started again with the same file continues where it stopped (as an Optuna
// study with storage does).
#ifndef PARITY_WORKLOAD_TUNE_JOURNAL_H_
#define PARITY_WORKLOAD_TUNE_JOURNAL_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::workload {

/// The file: a first line {"format": "parity-tune-journal", "version": 1, "run": RUN} (what
/// decides the search: the workload and its settings, the space, the rungs, seeds and
/// sampling; not the budget), then one line per finished trial: {"config", "rung", "steps",
/// "seed", "envelope", "status", "error", "seconds", "samples", "losses"}.
class TuneJournal {
 public:
  /// Opens `path` for the run `run` describes: reads the trials a former run wrote there
  /// (dropping a last line cut off mid-write, as a kill leaves it: `dropped` says so), or
  /// starts the file. kInvalidInput naming the file, the line and the problem when the file
  /// is another run's (the first field of `run` that differs named) or a line is malformed.
  static Result<TuneJournal> Open(const std::string& path, const Json& run);

  /// The finished trial of (config, rung, steps, seed, envelope) a former run wrote; null if
  /// none.
  const Json* Find(const Json& config, int rung, int steps, uint64_t seed, bool envelope) const;
  /// Appends a finished trial (a line as above), flushed before this returns.
  Status Append(const Json& trial);

  std::size_t loaded() const { return trials_.size(); }
  bool dropped() const { return dropped_; }
  const std::string& path() const { return path_; }

 private:
  static std::string Key(const Json& config, int rung, int steps, uint64_t seed, bool envelope);
  std::string path_;
  std::map<std::string, Json> trials_;
  bool dropped_ = false;
};

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_TUNE_JOURNAL_H_
