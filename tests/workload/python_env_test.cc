// SPDX-License-Identifier: Apache-2.0
#include "workload/python_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace parity::workload {
namespace {

// PYTHONPATH set for one test, the former value put back after.
class PythonPath {
 public:
  explicit PythonPath(const char* value) {
    if (const char* old = std::getenv("PYTHONPATH")) old_ = old;
    ::setenv("PYTHONPATH", value, 1);
  }
  ~PythonPath() {
    if (old_) {
      ::setenv("PYTHONPATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PYTHONPATH");
    }
  }

 private:
  std::optional<std::string> old_;
};

// A stray parity_workloads (or parity_dump) on the user's path must not stand in for parity's
// own: parity's directory comes first, the user's path after it.
TEST(WorkloadEnvironment, ParitysPackagesComeBeforeTheUsersPath) {
  const std::string own = ParityPythonDirectory();
  ASSERT_FALSE(own.empty()) << "a build tree finds its checkout's python/";
  PythonPath stray("/tmp/stray-site:/tmp/other");
  const auto env = WorkloadEnvironment();
  ASSERT_TRUE(env.contains("PYTHONPATH"));
  EXPECT_EQ(env.at("PYTHONPATH"), own + ":/tmp/stray-site:/tmp/other");
}

}  // namespace
}  // namespace parity::workload
