// SPDX-License-Identifier: Apache-2.0
// What the stage kinds share: running a command into the stage's log, turning parity's exit
// codes into stage outcomes, reading result files, command templates.
#ifndef PARITY_COLLECT_STAGE_UTIL_H_
#define PARITY_COLLECT_STAGE_UTIL_H_

#include <string>
#include <vector>

#include "collect/stage.h"
#include "core/process.h"

namespace parity::collect {

/// The placeholders a command of an exec, dump or quality stage may use: {out} (the stage's
/// directory), {bundle}, {plan_dir}, {level}, {backend}, {parity} (this executable), {stage}.
const std::vector<std::string>& CommandPlaceholders();

/// Checks a stage's `command` (and `cwd`, `env`) keys: present, placeholders known.
Status CheckCommandKeys(const Json& params);

/// Runs `argv` with the stage's log, time limit and stop flag; `env` and `cwd` from the
/// stage's keys when it has them (cwd relative to the plan's directory).
ProcessResult RunStageProcess(const StageRun& run, const std::vector<std::string>& argv);

/// The stage's `command` with its placeholders expanded.
Result<std::vector<std::string>> ExpandStageCommand(const StageRun& run);

/// Expands the stage's `command` and runs it (RunStageProcess); the outcome by
/// OutcomeOfCommand. `argv` and `process`, when not null, receive what ran and how it ended.
StageOutcome RunStageCommand(const StageRun& run, std::vector<std::string>* argv = nullptr,
                             ProcessResult* process = nullptr);

/// Writes `doc` into the stage's directory as `file` (atomically) and makes it the outcome's
/// result; when the write fails the outcome becomes an error saying so.
void WriteStageResult(const StageRun& run, const std::string& file, const Json& doc,
                      StageOutcome& outcome);

/// The outcome of a `parity ...` child by its exit code: 0 passed, 1 failed, 3 skipped, 130 or
/// a stop interrupted, anything else error; the reason from the log's last "parity: error:".
StageOutcome OutcomeOfParity(const StageRun& run, const ProcessResult& process,
                             std::string_view failed_reason);

/// The outcome of an external command: exit 0 passed, anything else error ("exit 3", "timed
/// out after 60 s", with the log's last line).
StageOutcome OutcomeOfCommand(const StageRun& run, const ProcessResult& process);

/// Reads a JSON result file (at most 256 MiB) that must have "format": `format`.
Result<Json> ReadResultJson(const std::string& path, std::string_view format);

/// "higher" for rates (units ending in "/s"), "lower" for times (s, ms, us, ns), else "".
std::string BetterOfUnit(std::string_view unit);

/// `path` resolved against `dir` unless absolute.
std::string Resolve(const std::string& dir, const std::string& path);

/// Checks that a file a plan names (`key`: rules, matrix) is a regular file, so that checking a
/// plan never blocks on a FIFO or a device.
Status CheckRegularFile(const std::string& key, const std::string& path);

/// The last non-empty line of a log, printable and cut to one line ("" when none).
std::string LastLogLine(const std::string& log_path);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_STAGE_UTIL_H_
