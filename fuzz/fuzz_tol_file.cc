// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the --tol-file (YAML) parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compare/tolerance.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)parity::ParseToleranceRules(text, "fuzz.yaml").ok();
  return 0;
}
