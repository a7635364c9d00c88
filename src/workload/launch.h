// SPDX-License-Identifier: Apache-2.0
// `parity capture -- COMMAND...`: which commands can be captured, and running one with its
// standard streams, exit code and signals passed through (docs/DESIGN.md "Capture launcher").
#ifndef PARITY_WORKLOAD_LAUNCH_H_
#define PARITY_WORKLOAD_LAUNCH_H_

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity::workload {

/// A command parity can capture: a Python interpreter (python SCRIPT, python -m MODULE), a
/// script or console entry point whose #! line names python (torchrun, ./train.py).
struct PythonCommand {
  std::string program;  ///< argv[0] as found (a path)
  /// torchrun, python -m torch.distributed.run or .launch: only the worker processes (those
  /// with $RANK) capture, never the agent that starts them.
  bool workers_only = false;
};

/// Classifies `argv` (non-empty). kInvalidInput naming the command when it can't be found, is
/// not Python, or runs Python with a flag that keeps the capture out (-I, -S, -E: no
/// sitecustomize or no PYTHONPATH).
Result<PythonCommand> ClassifyCommand(const std::vector<std::string>& argv);

/// Checks the dump directory before the command starts: missing (it is created) or an empty
/// directory, and writable. kInvalidInput "DIR: problem" otherwise.
Status PrepareDumpRoot(const std::string& dir);

/// Runs `argv` with `env` set on top of this environment, in this process group with this
/// process's stdin, stdout and stderr, and waits for it. SIGINT and SIGTERM sent to this
/// process alone (kill(2)) are passed on to the child; those a terminal sends reach the child
/// by themselves (same process group) and are not sent twice. Returns the child's exit code,
/// or 128 + the signal that ended it; kInvalidInput when it could not be started.
Result<int> RunPassingThrough(const std::vector<std::string>& argv,
                              const std::map<std::string, std::string>& env);

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_LAUNCH_H_
