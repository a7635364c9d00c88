// SPDX-License-Identifier: Apache-2.0
// A stress worker as a child process: its command line, its start with pipes, and the line
// protocol it speaks (steps and events on stdout, control messages on stdin).
#ifndef PARITY_STRESS_WORKER_PROCESS_H_
#define PARITY_STRESS_WORKER_PROCESS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/process.h"
#include "core/status.h"
#include "stress/supervisor.h"

namespace parity::stress {

/// Where a worker process starts: its slot, its parameters and the state it resumes.
struct WorkerLaunch {
  int index = 0;
  int device = 0;
  std::string dir;     ///< its checkpoint directory
  Json values;         ///< the parameters it runs with
  std::string resume;  ///< the checkpoint to resume from; "" from the beginning
  std::int64_t resume_step = 0;
  std::int64_t stop_at = 0;  ///< built-in: the step to stop at; 0 none
};

/// The command line of a worker: `parity stress --worker ...` for a built-in workload, the
/// expanded template for `exec` (kInvalidInput for a placeholder without a value).
Result<std::vector<std::string>> WorkerArgv(const StressOptions& options,
                                            const WorkerLaunch& launch);

/// Starts a worker with PARITY_STRESS_WORKER, PARITY_STRESS_DEVICE and
/// PARITY_STRESS_CHECKPOINT_DIR set (no other PARITY_STRESS_ variable passed on); with
/// `control`, its stdin is a pipe for control messages. See StartProcess.
Result<StartedProcess> StartWorkerProcess(const std::vector<std::string>& argv,
                                          const WorkerLaunch& launch, bool control);

/// "exit 3", "signal 9 (Killed)": a waitpid status.
std::string DescribeExit(int status);

/// Splits a worker's output into lines.
class LineReader {
 public:
  using OnLine = std::function<void(const std::string&)>;

  /// Adds bytes, calling on_line for each line they complete (without its '\n'). An
  /// unfinished line past 1 MiB is dropped and on_overflow called; what follows of it is
  /// taken as a new line.
  void Feed(std::string_view bytes, const OnLine& on_line,
            const std::function<void()>& on_overflow);
  /// Feeds what `fd` (non-blocking) has: at most 16 reads, or with `drain` until it has no
  /// more or is at its end.
  void Read(int fd, bool drain, const OnLine& on_line, const std::function<void()>& on_overflow);
  /// Forgets an unfinished line.
  void Clear() { buffer_.clear(); }

 private:
  std::string buffer_;
};

/// What a line on a worker's stdout is.
enum class LineKind {
  kEvent,   ///< {"event": "..."}: only built-in workers send events
  kStep,    ///< {"step": N, ...}: a completed step
  kOutput,  ///< anything else: the workload's own output, not interpreted
};

struct WorkerLine {
  LineKind kind = LineKind::kOutput;
  Json json;  ///< the object, for kEvent and kStep
};

/// Classifies one line; `builtin` when it came from a built-in worker.
WorkerLine ParseWorkerLine(const std::string& line, bool builtin);

/// The fields of a step line, with their defaults where a line lacks them.
struct StepLine {
  std::int64_t step = 0;
  std::optional<double> loss;
  double work = 1.0;
  std::int64_t sdc_unlisted = 0;  ///< never negative
  std::int64_t nondeterministic = 0;
  std::optional<std::string> checkpoint;        ///< the checkpoint written after the step
  std::optional<std::string> checkpoint_error;  ///< "(no message)" when it is not a string
};

/// The fields of a kStep line's object.
StepLine ParseStepLine(const Json& line);

/// The event message of an {"event":"oom"} line: whether the worker survived allocating
/// past its limit, and how much it allocated.
std::string OomEventMessage(int worker, const Json& line);

/// The control message that asks a built-in worker to flip a bit in its next result.
std::string PlantMessage(std::uint64_t seed);

/// The control message that asks a built-in worker to allocate up to `limit_bytes`.
std::string OomMessage(std::uint64_t limit_bytes);

/// Writes a control message to a worker's stdin; lost, not blocked on, when the pipe is full
/// or the worker gone.
void SendControl(int stdin_fd, const std::string& message);

}  // namespace parity::stress

#endif  // PARITY_STRESS_WORKER_PROCESS_H_
