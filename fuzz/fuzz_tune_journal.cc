// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: parity tune's journal (tune_journal.h) read back for a fixed run. It opens
// or fails naming the file, never crashes; a journal that opens holds only finished trials,
// found again by their key, and takes one more line without breaking.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "workload/tune_journal.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_tune_journal: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/fuzz_tune_journal." + std::to_string(::getpid());
  static const parity::Json run = {{"workload", "cnn"}, {"seed", 0}};
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto journal = parity::workload::TuneJournal::Open(path, run);
  if (!journal.ok()) {
    if (journal.status().message().find(path) == std::string::npos) {
      Fail("an error without the file");
    }
    return 0;
  }
  const parity::Json trial = {{"config", {{"knobs", parity::Json::object()}}},
                              {"rung", 0},
                              {"steps", 3},
                              {"seed", 7u},
                              {"envelope", false},
                              {"status", "ok"},
                              {"seconds", 1.5},
                              {"samples", {1.0, 2.0}}};
  if (!journal->Append(trial).ok()) Fail("a line could not be appended");
  auto again = parity::workload::TuneJournal::Open(path, run);
  if (!again.ok()) Fail("a journal that opened does not open after one more trial");
  if (again->Find(trial["config"], 0, 3, 7, false) == nullptr) Fail("the appended trial is lost");
  return 0;
}
