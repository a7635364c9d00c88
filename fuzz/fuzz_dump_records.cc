// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the parity-dump records.jsonl parser. The input is split at the first NUL
// byte into manifest.json and records.jsonl.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view manifest = split == std::string_view::npos
                                        ? R"({"format":"parity-dump","version":1})"
                                        : input.substr(0, split);
  const std::string_view records =
      split == std::string_view::npos ? input : input.substr(split + 1);
  // Tensor files are looked up under a directory that holds none.
  (void)parity::DumpDir::Parse("/nonexistent-parity-fuzz", manifest, records).ok();
  return 0;
}
