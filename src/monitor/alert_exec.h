// SPDX-License-Identifier: Apache-2.0
// --alert-exec CMD: each alert handed to a program of the user's, as JSON on its standard
// input, without a shell in between.
#ifndef PARITY_MONITOR_ALERT_EXEC_H_
#define PARITY_MONITOR_ALERT_EXEC_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace parity::monitor {

/// Runs alert programs one per alert, never waiting on them in the sampling loop: children are
/// reaped as they end; one still running after `timeout_seconds` is killed. At most 16 run at
/// once; an alert beyond that is dropped with a warning rather than stall the monitor.
class AlertRunner {
 public:
  AlertRunner(std::vector<std::string> argv, double timeout_seconds = 30.0);
  ~AlertRunner();
  AlertRunner(const AlertRunner&) = delete;
  AlertRunner& operator=(const AlertRunner&) = delete;

  /// Starts the program with `json` (plus a newline) on its standard input. A failure to start
  /// it is returned, to be reported; the monitor goes on.
  Status Run(const std::string& json, double now_seconds);
  /// Reaps finished children and kills overdue ones; returns one message per program that
  /// failed (exit status not 0, killed).
  std::vector<std::string> Poll(double now_seconds);
  /// Waits up to `seconds` for every child, then kills the rest.
  std::vector<std::string> Finish(double seconds);

 private:
  struct Child {
    int pid;
    double started;
  };
  std::vector<std::string> argv_;
  double timeout_;
  std::vector<Child> children_;
};

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_ALERT_EXEC_H_
