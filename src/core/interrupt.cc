// SPDX-License-Identifier: Apache-2.0
#include "core/interrupt.h"

#include <unistd.h>

#include <csignal>

#include "core/exit_code.h"

namespace parity {
namespace {

extern "C" void OnInterrupt(int /*signal*/) {
  static const char kMessage[] = "parity: interrupted\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  ::_exit(kExitInterrupted);
}

}  // namespace

void ExitOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace parity
