// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the parity-bench v1 reader of `parity bench compare`, and the comparison of
// what it accepts with itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bench/bench_compare.h"
#include "bench/result.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = parity::bench::ParseBenchDocument(text, "fuzz.json");
  if (doc.ok()) {
    auto report = parity::bench::CompareBench(*doc, *doc, {});
    if (report.ok()) (void)parity::bench::BenchCompareText(*report);
  }
  return 0;
}
