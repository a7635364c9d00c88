// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the knowledge base's files (settings.yaml, symptoms.yaml). Every error
// names the file; a settings file that parses can be diagnosed against any platform.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "doctor/doctor.h"
#include "env/knowledge.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_knowledge: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto symptoms = parity::env::ParseSymptoms(text, "fuzz.yaml");
  if (!symptoms.ok() && symptoms.status().message().rfind("fuzz.yaml: ", 0) != 0) {
    Fail("a symptoms error without the file");
  }
  auto settings = parity::env::ParseSettings(text, "fuzz.yaml");
  if (!settings.ok()) {
    if (settings.status().message().rfind("fuzz.yaml: ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  for (const auto& s : *settings) {
    if (s.sources.empty() || s.name.empty() || s.advice.empty()) Fail("an entry without its keys");
  }
  auto kb = parity::env::MakeKnowledge(
      std::move(settings).value(),
      symptoms.ok() ? std::move(symptoms).value() : std::vector<parity::env::Symptom>{},
      "fuzz.yaml", "fuzz.yaml");
  if (!kb.ok()) return 0;
  parity::doctor::Observed observed{"fuzz", {}, {"nvidia", "amd"}, {{"torch", "2.1.0"}}};
  for (const auto& s : kb->settings) {
    observed.values[s.name] = s.values.empty() ? std::string(size % 7, 'x') : s.values[0].value;
  }
  const auto findings = parity::doctor::Diagnose(*kb, observed);
  (void)parity::Dump(parity::doctor::DoctorJson(findings, observed, *kb));
  (void)parity::Dump(parity::env::RulesJson(*kb));
  return 0;
}
