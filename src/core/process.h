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

namespace parity {

struct ProcessSpec {
  std::vector<std::string> argv;           ///< argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  ///< set on top of this process's environment
  std::string cwd;                         ///< "" = this process's
  std::string log_path;                    ///< stdout and stderr appended here; "" = /dev/null
  std::optional<double> timeout;           ///< seconds
  double stop_grace = 5.0;                 ///< seconds between SIGTERM and SIGKILL when stopping it
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

/// The last `max_bytes` of a log file, for metrics and messages ("" when unreadable).
std::string LogTail(const std::string& path, std::size_t max_bytes);

/// The last line of a log that starts with "parity: error: ", without that prefix; "" if none.
std::string LastParityError(const std::string& log);

}  // namespace parity

#endif  // PARITY_CORE_PROCESS_H_
