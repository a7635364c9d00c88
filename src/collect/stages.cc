// SPDX-License-Identifier: Apache-2.0
#include <array>

#include "collect/stage.h"
#include "collect/stage_kinds.h"

namespace parity::collect {

std::span<const StageKind* const> StageKinds() {
  static const std::array<const StageKind*, 8> kKinds = {
      &EnvStageKind(),    &BenchStageKind(), &ModelStageKind(), &MonitorStageKind(),
      &StressStageKind(), &ExecStageKind(),  &DumpStageKind(),  &QualityStageKind(),
  };
  return kKinds;
}

const StageKind* FindStageKind(std::string_view name) {
  for (const StageKind* kind : StageKinds()) {
    if (kind->name() == name) return kind;
  }
  return nullptr;
}

}  // namespace parity::collect
