// SPDX-License-Identifier: Apache-2.0
// Running a command as a child process: output to a log, a time limit, stopped with
// its whole process group when the caller stops it, killed if the caller dies.
#ifndef PARITY_CORE_PROCESS_H_
#define PARITY_CORE_PROCESS_H_

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity {

struct ProcessSpec {
  std::vector<std::string> argv;           ///< argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  ///< set on top of this process's environment
  /// Variables of this process's environment whose names start with this are not passed on.
  std::string env_unset_prefix;
  std::string cwd;                ///< "" = this process's
  std::string log_path;           ///< stdout and stderr appended here; "" = /dev/null
  std::optional<double> timeout;  ///< seconds
  double stop_grace = 5.0;        ///< seconds between SIGTERM and SIGKILL when stopping it
  /// Called with the child's pid (also its process group) once it has started.
  std::function<void(int)> on_start;
};

struct ProcessResult {
  bool started = false;
  std::string error;         ///< why it did not start ("python3: No such file or directory")
  int exit_code = -1;        ///< when it exited
  int signal = 0;            ///< when a signal ended it
  bool timed_out = false;    ///< stopped at the time limit
  bool interrupted = false;  ///< stopped because *stop was set
  double seconds = 0.0;

  /// One line: "exit 0", "killed by signal 9 (Killed)", "timed out after 30 s", ...
  std::string Describe() const;
};

/// Runs the command to its end. The child gets its own process group, stdin from /dev/null,
/// and SIGKILL should this process die first. When the time limit passes or *stop becomes true,
/// the group gets SIGTERM, then SIGKILL after stop_grace.
ProcessResult RunProcess(const ProcessSpec& spec, const std::atomic<bool>* stop);

/// A child StartProcess started: the caller reads its output, writes its input, reaps it
/// (waitpid) and closes the descriptors.
struct StartedProcess {
  int pid = -1;        ///< also its process group
  int stdin_fd = -1;   ///< the write end of its stdin; -1 when its stdin is /dev/null
  int stdout_fd = -1;  ///< the read ends of its stdout and stderr
  int stderr_fd = -1;
};

/// Starts the command with its stdout and stderr on pipes, and with `stdin_pipe` its stdin
/// too (else /dev/null); the ends here are non-blocking. The child gets its own process
/// group and SIGKILL should this process die first; log_path, timeout, stop_grace and
/// on_start are not used. A command that cannot be run still starts: the child writes
/// "parity: error: cannot run <argv[0]>: <reason>" to its stderr and exits with 127. Fails
/// only when pipes or the fork do.
Result<StartedProcess> StartProcess(const ProcessSpec& spec, bool stdin_pipe);

/// The last `max_bytes` of a log file, for metrics and messages ("" when unreadable).
std::string LogTail(const std::string& path, std::size_t max_bytes);

/// The last line of a log that starts with "parity: error: ", without that prefix; "" if none.
std::string LastParityError(const std::string& log);

}  // namespace parity

#endif  // PARITY_CORE_PROCESS_H_
