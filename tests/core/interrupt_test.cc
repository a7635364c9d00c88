// SPDX-License-Identifier: Apache-2.0
// The one stop flag: set by SIGINT and SIGTERM while a ScopedStopFlag lives, cleared by the
// next outermost one, and the handlers it replaced restored when it goes.
#include "core/interrupt.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace parity {
namespace {

volatile sig_atomic_t g_previous_handler_calls = 0;

extern "C" void CountingHandler(int) { g_previous_handler_calls = g_previous_handler_calls + 1; }

/// Installs CountingHandler for SIGINT and SIGTERM for the test's duration.
class InterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction action {};
    action.sa_handler = CountingHandler;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
    g_previous_handler_calls = 0;
  }
  void TearDown() override {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

TEST_F(InterruptTest, SignalsSetTheFlagWhileTheScopeLives) {
  for (int sig : {SIGINT, SIGTERM}) {
    const ScopedStopFlag scope;
    EXPECT_FALSE(StopRequested());
    ASSERT_EQ(::raise(sig), 0);
    EXPECT_TRUE(StopRequested());
    EXPECT_TRUE(StopFlag().load());
  }
  EXPECT_EQ(g_previous_handler_calls, 0);
}

TEST_F(InterruptTest, RestoresTheHandlersItReplaced) {
  { const ScopedStopFlag scope; }
  ASSERT_EQ(::raise(SIGTERM), 0);
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(g_previous_handler_calls, 2);
}

TEST_F(InterruptTest, AnInnerScopeKeepsAStopAlreadyRequested) {
  const ScopedStopFlag outer;
  ASSERT_EQ(::raise(SIGINT), 0);
  {
    const ScopedStopFlag inner;
    EXPECT_TRUE(StopRequested());
  }
  EXPECT_TRUE(StopRequested());
  ASSERT_EQ(::raise(SIGINT), 0);  // still the outer scope's handler
  EXPECT_EQ(g_previous_handler_calls, 0);
}

}  // namespace
}  // namespace parity
