// SPDX-License-Identifier: Apache-2.0
// The stress supervisor: workers as child processes, a watchdog, checkpoints checked by
// digest, restarts with backoff, a step ledger per worker, faults injected on a seeded
// schedule with their recovery timed, parameters from the stress matrix, and telemetry
// sampled throughout with the monitor's rules applied.
#ifndef PARITY_STRESS_SUPERVISOR_H_
#define PARITY_STRESS_SUPERVISOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "monitor/monitor.h"
#include "monitor/rules.h"
#include "stress/inject.h"
#include "stress/matrix.h"

namespace parity::stress {

struct StressOptions {
  std::string workload;  ///< a built-in workload, or "exec"
  std::string backend = "cpu";
  std::vector<std::string> command;   ///< exec: the template's words (SplitCommand)
  std::optional<double> duration;     ///< seconds; with steps, whichever ends first
  std::optional<std::int64_t> steps;  ///< per worker
  int workers = 1;
  int devices = 1;               ///< worker k runs on device k mod devices
  int worker_threads = 0;        ///< --threads for built-in workers; 0: their default
  Json params = Json::object();  ///< fixed parameters (--param); the matrix's override
  std::optional<Matrix> matrix;
  std::uint64_t seed = 1;
  std::vector<InjectSpec> inject;
  std::string checkpoint_dir;  ///< worker k keeps its checkpoints in worker-k/ below
  std::int64_t checkpoint_every = 50;
  std::size_t checkpoints_kept = 3;
  double hang_timeout = 30.0;  ///< seconds without a completed step: a hung worker
  double stop_grace = 10.0;    ///< seconds a stopping worker gets before SIGKILL
  int max_restarts = 10;       ///< consecutive failures before a worker is given up
  double telemetry_interval = 1.0;
  std::string parity_exe;      ///< the binary built-in workers run as
  bool forward_output = true;  ///< worker output that is not protocol, to stderr
};

/// A fault: injected, or a failure nobody injected (kind "worker-crash", "worker-hang").
struct FaultRecord {
  std::string kind;
  bool injected = true;
  int worker = 0;
  double time = 0.0;  ///< seconds since the start
  bool recovered = false;
  std::optional<double> recovery_seconds;  ///< to the first step completed after it
  std::string detail;
  Json planted;     ///< sdc: where the bit was flipped
  int repeats = 0;  ///< a fault nobody injected: further failures before a step completed
};

struct WorkerSummary {
  int index = 0;
  int device = 0;
  std::int64_t steps = 0;  ///< the last step of the state it ended with
  std::int64_t restarts = 0;
  std::int64_t lost = 0, duplicated = 0, redone = 0, redo_mismatches = 0;
  std::optional<std::int64_t> first_redo_mismatch;
  double work = 0.0;          ///< work of steps after each process's first
  double busy_seconds = 0.0;  ///< from each process's first step to its last
  std::string state;          ///< "done", "failed", "stopped"
  std::string failure;        ///< why it was given up
};

struct StressRun {
  double seconds = 0.0;
  std::int64_t steps = 0;  ///< sum over workers
  std::string unit;        ///< of work
  std::vector<FaultRecord> faults;
  std::vector<WorkerSummary> workers;
  Json sdc_events = Json::array();  ///< the first 1000, each with its worker
  std::int64_t sdc_count = 0;
  std::int64_t nondeterministic = 0;
  std::int64_t checkpoint_failures = 0;
  std::int64_t corrupt_checkpoints = 0;  ///< found by digest before a restart
  std::vector<monitor::Alert> alerts;
  std::vector<monitor::SourceState> sources;
  std::int64_t telemetry_samples = 0;
  Json events = Json::array();             ///< the first 10000
  Json parameter_changes = Json::array();  ///< the first 10000
  bool interrupted = false;
  std::vector<std::string> reasons;  ///< why the verdict is fail; empty: pass
};

/// Runs the stress run to its end (steps done, duration passed, SIGINT/SIGTERM). Returns
/// kInvalidInput/kUnavailable when the first start of a worker fails with a usage error or an
/// unavailable backend (a bad parameter, no such device), and for a checkpoint directory that
/// can't be made; everything else during the run is an event in the result.
Result<StressRun> RunStress(const StressOptions& options, monitor::Sampler* sampler,
                            monitor::RuleEngine* rules);

/// Why the verdict of a finished run is fail (StressRun::reasons): a worker failed or ended
/// short of --steps, steps lost or done twice, silent data corruption, faults not recovered,
/// fatal rule alerts. Empty: pass.
std::vector<std::string> FailReasons(const StressRun& run, const StressOptions& options);

/// The --json document (format parity-stress, version 1).
Json StressRunToJson(const StressRun& run, const StressOptions& options);

/// The human summary.
std::string StressRunText(const StressRun& run, const StressOptions& options);

}  // namespace parity::stress

#endif  // PARITY_STRESS_SUPERVISOR_H_
