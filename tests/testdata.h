// SPDX-License-Identifier: Apache-2.0
// Access to the generated test data (tests/gen/gen_testdata.py, run as a CTest fixture).
#ifndef PARITY_TESTS_TESTDATA_H_
#define PARITY_TESTS_TESTDATA_H_

#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/tensor.h"

namespace parity::testing {

/// $PARITY_TESTDATA; aborts the test binary with a message when it is not set, since every
/// test that needs it would otherwise fail for the wrong reason.
const std::string& TestDataDir();

/// TestDataDir() + "/" + rel.
std::string TestDataPath(const std::string& rel);

/// A checked-in file of the source tree: $PARITY_SOURCE_DIR/rel, else under the source tree
/// the build was configured from (PARITY_SOURCE_DIR_DEFAULT), else rel itself.
std::string SourcePath(const std::string& rel);

/// expected.json, parsed.
const nlohmann::json& Expected();

/// Loads the single tensor of an .npy test file; fails the test on error.
Tensor LoadNpy(const std::string& rel);

/// A tensor's elements converted to float64.
std::vector<double> ToDoubles(const Tensor& tensor);

/// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "parity-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// path()/name.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace parity::testing

#endif  // PARITY_TESTS_TESTDATA_H_
