// SPDX-License-Identifier: Apache-2.0
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/convert.h"
#include "io/tensor_file.h"

namespace parity::testing {

const std::string& TestDataDir() {
  static const std::string dir = [] {
    const char* env = std::getenv("PARITY_TESTDATA");
    if (env == nullptr || *env == '\0') {
      std::fprintf(stderr,
                   "PARITY_TESTDATA is not set: run the tests through ctest, which "
                   "generates the data first (tests/gen/gen_testdata.py)\n");
      std::abort();
    }
    return std::string(env);
  }();
  return dir;
}

std::string TestDataPath(const std::string& rel) { return TestDataDir() + "/" + rel; }

std::string SourcePath(const std::string& rel) {
  if (const char* dir = std::getenv("PARITY_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/" + rel;
  }
#ifdef PARITY_SOURCE_DIR_DEFAULT
  return std::string(PARITY_SOURCE_DIR_DEFAULT) + "/" + rel;
#else
  return rel;
#endif
}

const nlohmann::json& Expected() {
  static const nlohmann::json expected = [] {
    std::ifstream in(TestDataPath("expected.json"));
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", TestDataPath("expected.json").c_str());
      std::abort();
    }
    return nlohmann::json::parse(in);
  }();
  return expected;
}

Tensor LoadNpy(const std::string& rel) {
  auto file = OpenTensorFile(TestDataPath(rel));
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return {};
  auto tensor = (*file)->Load(0);
  EXPECT_TRUE(tensor.ok()) << tensor.status().message();
  return tensor.ok() ? *tensor : Tensor{};
}

std::vector<double> ToDoubles(const Tensor& tensor) {
  std::vector<double> out(static_cast<std::size_t>(tensor.numel()));
  ConvertToFloat64(tensor.dtype(), tensor.bytes().data(), out);
  return out;
}

}  // namespace parity::testing
