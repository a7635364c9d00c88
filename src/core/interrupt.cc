// SPDX-License-Identifier: Apache-2.0
#include "core/interrupt.h"

#include <unistd.h>

#include <csignal>

#include "core/exit_code.h"

namespace parity {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_scopes{0};

static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set in a signal handler");

extern "C" void OnInterrupt(int /*signal*/) {
  static const char kMessage[] = "parity: interrupted\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  ::_exit(kExitInterrupted);
}

extern "C" void OnStopSignal(int /*signal*/) { g_stop.store(true); }

}  // namespace

void ExitOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

ScopedStopFlag::ScopedStopFlag() {
  if (g_scopes.fetch_add(1) == 0) g_stop.store(false);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &old_int_);
  ::sigaction(SIGTERM, &action, &old_term_);
}

ScopedStopFlag::~ScopedStopFlag() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_scopes.fetch_sub(1);
}

bool StopRequested() { return g_stop.load(); }

const std::atomic<bool>& StopFlag() { return g_stop; }

}  // namespace parity
