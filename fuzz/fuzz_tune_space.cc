// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: parity tune's space file (YAML), checked against the built-in knowledge
// base. A space that parses holds known knobs with valid values, at most 10,000
// configurations, the default first among them, each once; an error names the file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "env/knowledge.h"
#include "workload/model_run.h"
#include "workload/tune_space.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_tune_space: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const parity::env::Knowledge* knowledge = [] {
    auto kb = parity::env::BuiltinKnowledge();
    if (!kb.ok()) Fail("the built-in knowledge base does not load");
    return *kb;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto space = parity::workload::ParseTuneSpace(text, "fuzz.yaml", *knowledge);
  if (!space.ok()) {
    if (space.status().message().rfind("fuzz.yaml: ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  if (space->knobs.empty() && space->env.empty()) Fail("an empty space accepted");
  if (space->Size() > 10000) Fail("more than 10000 configurations");
  for (const auto& [name, values] : space->knobs) {
    const parity::workload::Knob* knob = parity::workload::FindKnob(name);
    if (knob == nullptr) Fail("an unknown knob accepted");
    if (values.empty()) Fail("an empty list accepted");
    for (const auto& v : values) {
      if (!v.is_null() && !parity::workload::CheckKnobValue(*knob, v).empty()) {
        Fail("an invalid value accepted");
      }
    }
  }
  for (const auto& [name, values] : space->env) {
    const parity::env::Setting* s = knowledge->Find(name);
    if (s == nullptr || !s->real()) Fail("a variable the knowledge base refuses accepted");
    if (s->values.empty() && s->pattern.empty()) Fail("a variable whose values can't be checked");
    for (const auto& v : values) {
      if (v && !s->Valid(*v)) Fail("an invalid value accepted");
    }
  }
  const auto configs = parity::workload::Configurations(*space);
  if (configs.empty() || !configs.front().is_default()) Fail("the default is not first");
  std::set<std::string> seen;
  for (const auto& c : configs) {
    if (!seen.insert(c.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
             .second)
      Fail("a configuration twice");
  }
  if (static_cast<double>(configs.size()) > space->Size() + 1) Fail("more configurations");
  return 0;
}
