// SPDX-License-Identifier: Apache-2.0
// SIGINT/SIGTERM handling: the process exits with code 130, as docs/DESIGN.md fixes, or, while
// a ScopedStopFlag lives, sets the one flag that long-running loops check to stop cleanly.
#ifndef PARITY_CORE_INTERRUPT_H_
#define PARITY_CORE_INTERRUPT_H_

#include <signal.h>

#include <atomic>

namespace parity {

/// Installs handlers so that SIGINT and SIGTERM end the process at once with exit code 130
/// and the line "parity: interrupted" on stderr. Commands with state to save install
/// their own handling instead.
void ExitOnInterrupt();

/// While it lives, SIGINT and SIGTERM set the stop flag instead of what they did before;
/// the handlers it replaced are restored when it goes. The flag is cleared when one is made
/// with no other alive, so a stop requested in one scope does not carry into the next.
class ScopedStopFlag {
 public:
  ScopedStopFlag();
  ~ScopedStopFlag();
  ScopedStopFlag(const ScopedStopFlag&) = delete;
  ScopedStopFlag& operator=(const ScopedStopFlag&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

/// Whether SIGINT or SIGTERM arrived under a ScopedStopFlag since the flag was last cleared.
bool StopRequested();

/// The stop flag itself, for code that takes a `const std::atomic<bool>*` to poll.
const std::atomic<bool>& StopFlag();

}  // namespace parity

#endif  // PARITY_CORE_INTERRUPT_H_
