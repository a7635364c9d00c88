// SPDX-License-Identifier: Apache-2.0
// The built-in stage kinds, one file each; stages.cc lists them in StageKinds().
#ifndef PARITY_COLLECT_STAGE_KINDS_H_
#define PARITY_COLLECT_STAGE_KINDS_H_

#include "collect/stage.h"

namespace parity::collect {

const StageKind& EnvStageKind();
const StageKind& BenchStageKind();
const StageKind& MonitorStageKind();
const StageKind& StressStageKind();
const StageKind& ExecStageKind();
const StageKind& DumpStageKind();
const StageKind& QualityStageKind();

}  // namespace parity::collect

#endif  // PARITY_COLLECT_STAGE_KINDS_H_
