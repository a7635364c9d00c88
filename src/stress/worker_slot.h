// SPDX-License-Identifier: Apache-2.0
// The stress supervisor's record of one worker: its process, the checkpoints it reported
// (checked by digest before one is resumed), its steps, and its summary at the end.
#ifndef PARITY_STRESS_WORKER_SLOT_H_
#define PARITY_STRESS_WORKER_SLOT_H_

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "stress/fault_firing.h"
#include "stress/ledger.h"
#include "stress/supervisor.h"
#include "stress/worker_process.h"

namespace parity::stress {

/// A checkpoint a worker reported, with the digest it had then.
struct CheckpointRecord {
  std::int64_t step = 0;
  std::string path;
  std::string digest;
};

/// kRunning: a process is up; kBackoff: waiting to start one; kDone, kFailed: ended.
enum class SlotState { kRunning, kBackoff, kDone, kFailed };

/// The supervisor's record of one worker, across the processes it runs as.
struct Slot {
  int index = 0;
  int device = 0;
  std::string dir;
  SlotState state = SlotState::kBackoff;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1, in_fd = -1;
  LineReader out_reader, err_reader;
  bool exited = false;
  int exit_status = 0;
  std::int64_t generation = 0;  // processes started so far
  double started = 0.0, last_progress = 0.0, restart_at = 0.0;
  std::int64_t steps_this_process = 0;
  int consecutive_failures = 0;
  std::int64_t restarts = 0;
  StepLedger ledger;
  std::deque<CheckpointRecord> checkpoints;
  Json values = Json::object();  // parameters the process runs with
  bool ever_stepped = false;
  // What the supervisor did to the process, so that its end is understood.
  bool stop_sent = false;  // SIGTERM sent: a graceful stop
  double stop_deadline = 0.0;
  bool restart_after_stop = false;  // a parameter change
  std::int64_t boundary = 0;        // built-in: the worker stops here for a matrix epoch; 0 none
  bool kill_expected = false;       // a fault or the watchdog killed it
  // A corrupt-checkpoint drill: the newest checkpoint when it fired. One the worker reports
  // after that was written while it was being killed, and is not resumed from: the drill's
  // restart must read the corrupted one.
  std::optional<std::int64_t> resume_at_most;
  bool watchdog_fired = false;
  bool disk_full = false;
  std::int64_t disk_full_since_step = 0;
  std::deque<std::string> tail;  // the last lines of output that were not protocol
  std::string last_error;        // the last {"event":"error"} message
  // Throughput of the current process.
  double first_step_time = 0.0, last_step_time = 0.0, process_work = 0.0;
  double work = 0.0, busy = 0.0;
  std::string failure;
};

/// A process of the worker started: its descriptors kept, what was done to the last reset.
void OnProcessStarted(Slot& slot, const StartedProcess& process, double now);

/// A step the process completed at `now` (steady seconds): in the ledger and the throughput.
void OnStep(Slot& slot, const StepLine& line, double now);

/// Keeps one of the last lines of output that were not protocol (the first 400 bytes).
void KeepTail(Slot& slot, const std::string& line);

/// The process was reaped: its descriptors closed, its work and busy time added up.
void OnProcessEnded(Slot& slot);

/// The run's error when the worker's first process ended before any step with a usage error
/// (exit 2: kInvalidInput) or an unavailable backend (exit 3: kUnavailable) that no fault
/// caused: "worker K: " and its last error event, its last line, or `how`.
std::optional<Status> StartError(const Slot& slot, const std::string& how);

/// Seconds before restarting a worker after its nth consecutive failure: the first restart
/// at once, then 0.25 s doubling up to 10 s.
double RestartDelay(int consecutive_failures);

/// Keeps a checkpoint the worker reported with its digest taken now, and only the newest
/// `kept` (at least 1). The message when the file can't be read (it is not kept); "" else.
std::string KeepCheckpoint(Slot& slot, std::int64_t step, const std::string& path,
                           std::size_t kept);

/// The checkpoint to resume from: the newest kept one (not past resume_at_most, which is
/// cleared) whose digest still matches; step 0 and "" when none does. Each one given up is
/// dropped and its message ("checkpoint of step 40 (PATH) not used: ...") appended to
/// `rejected`.
CheckpointRef ChooseResume(Slot& slot, std::vector<std::string>* rejected);

/// What the run reports of the worker once it has ended.
WorkerSummary Summarize(const Slot& slot, bool interrupted);

}  // namespace parity::stress

#endif  // PARITY_STRESS_WORKER_SLOT_H_
