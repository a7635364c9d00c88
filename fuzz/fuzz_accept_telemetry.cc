// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a bundle's telemetry.jsonl as accept reads it. A record that reads has
// series of matching lengths, and its decimated form has at most the buckets asked for.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "accept/telemetry_record.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_accept_telemetry: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("telemetry.jsonl", 0);
  if (fd < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto record = parity::accept::ReadTelemetry(path);
  ::close(fd);
  if (!record.ok()) {
    if (record.status().message().rfind(path + ": ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  for (const auto& s : record->series) {
    if (s.t.size() != s.v.size() || s.t.empty()) Fail("a series' times and values differ");
  }
  if (record->series.size() > parity::accept::kMaxTelemetrySeries) Fail("too many series");
  const parity::Json doc = parity::accept::TelemetryJson(*record, 50);
  // A record spanning more than a day may take buckets of whole days: at most one more.
  for (const parity::Json& s : doc["series"]) {
    if (s["t"].size() > 51) Fail("more buckets than asked for");
  }
  (void)parity::Dump(doc);
  return 0;
}
