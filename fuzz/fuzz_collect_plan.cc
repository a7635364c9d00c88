// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the acceptance plan (YAML). A plan that parses has known kinds, unique
// names and levels 1 to 4; its keys at every level and its JSON form can be made.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "collect/plan.h"
#include "collect/stage.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_collect_plan: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = parity::collect::ParsePlan(text, "fuzz.yaml");
  if (!plan.ok()) {
    if (plan.status().message().rfind("fuzz.yaml: ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  if (plan->stages.empty() || plan->stages.size() > parity::collect::kMaxStages) {
    Fail("stage count");
  }
  std::set<std::string> names;
  for (const parity::collect::PlanStage& stage : plan->stages) {
    if (parity::collect::FindStageKind(stage.kind) == nullptr) Fail("unknown kind accepted");
    if (!names.insert(stage.name).second) Fail("a name twice");
    if (stage.level < 1 || stage.level > parity::collect::kMaxLevel) Fail("level");
    for (int level = 1; level <= parity::collect::kMaxLevel; ++level) {
      if (!parity::collect::EffectiveParams(stage, level).is_object()) Fail("params");
    }
  }
  (void)parity::Dump(parity::collect::PlanToJson(*plan));
  return 0;
}
