// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a recorded fingerprint (parity env --json, a bench result, a dump
// manifest) as doctor and env diff read it. Every error names the file; what parses can be
// observed, diagnosed and diffed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "doctor/doctor.h"
#include "env/env_diff.h"
#include "env/fingerprint.h"
#include "env/knowledge.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_env_fingerprint: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = parity::env::ParseFingerprint(text, "fuzz.json");
  if (!doc.ok()) {
    if (doc.status().message().rfind("fuzz.json: ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  if (!(*doc)["host"].is_object()) Fail("a fingerprint without its host");
  auto kb = parity::env::BuiltinKnowledge();
  if (!kb.ok()) Fail("the built-in knowledge base does not load");
  const auto observed = parity::doctor::ObserveFingerprint(*doc, "fuzz.json");
  const auto findings = parity::doctor::Diagnose(**kb, observed);
  (void)parity::Dump(parity::doctor::DoctorJson(findings, observed, **kb));
  const auto settings = parity::env::SettingsOf(*doc);
  (void)parity::Dump(parity::env::EnvDiffJson(parity::env::DiffSettings(settings, {})));
  return 0;
}
