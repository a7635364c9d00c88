// SPDX-License-Identifier: Apache-2.0
// A stress worker: one built-in workload run step by step in its own process, under the
// supervisor, or inline (in parity's own process, for measuring the workload alone).
//
// The protocol the supervisor reads is the one `exec` commands speak: one JSON object per line
// on standard output. A step: {"step": N, "work": W, "seconds": S, "loss": L,
// "checkpoint": PATH} ("loss" when the workload has one, "checkpoint" when one was written,
// "checkpoint_error": MESSAGE when writing it failed, "sdc_unlisted": N for corrupt entries
// beyond the SDC events listed). Events: {"event": "ready" | "sdc" |
// "planted" | "oom" | "error" | "stopped", ...}. The supervisor sends control lines on standard
// input: {"plant": "sdc", "seed": N} and {"oom": {"limit_bytes": N}}.
#ifndef PARITY_STRESS_WORKER_H_
#define PARITY_STRESS_WORKER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::stress {

/// Exit codes of a worker process, beyond 0 (done or stopped), 2 (bad parameters or
/// checkpoint) and 3 (backend unavailable).
inline constexpr int kWorkerExitFailed = 1;  ///< the backend failed mid-run
inline constexpr int kWorkerExitOom = 4;     ///< an allocation failed (the oom drill)

struct WorkerOptions {
  std::string workload;
  std::string backend = "cpu";
  int device = 0;
  Json params = Json::object();
  std::string checkpoint_dir;  ///< where checkpoints go; empty: none are written
  std::string resume;          ///< the checkpoint to resume from; empty: from the start
  std::int64_t checkpoint_every = 50;
  std::int64_t steps = 0;  ///< stop after this step (a final checkpoint); 0: until told
  std::size_t checkpoints_kept = 3;
};

/// Runs a supervised worker until options.steps are done or SIGTERM/SIGINT arrives (then it
/// finishes the step, writes a final checkpoint and exits 0). Returns the exit code.
int RunWorker(const WorkerOptions& options);

/// What an inline run measured.
struct InlineRun {
  std::int64_t steps = 0;
  double seconds = 0.0;  ///< from the end of the first step to the end of the last
  double work = 0.0;     ///< work of the steps after the first, in `unit`
  std::string unit;
  std::int64_t sdc_events = 0;
  Json sdc = Json::array();  ///< the first 100
  bool interrupted = false;
};

/// Runs the workload in this process, without supervisor, checkpoints or restarts, for
/// options.steps steps or `duration` seconds, whichever ends first (at least 2 steps).
Result<InlineRun> RunInline(const WorkerOptions& options, std::optional<double> duration);

}  // namespace parity::stress

#endif  // PARITY_STRESS_WORKER_H_
