// SPDX-License-Identifier: Apache-2.0
// The built-in stage kinds, one file each; stages.cc lists them in StageKinds().
#ifndef PARITY_COLLECT_STAGE_KINDS_H_
#define PARITY_COLLECT_STAGE_KINDS_H_

#include <string>

#include "collect/stage.h"
#include "core/process.h"

namespace parity::collect {

const StageKind& EnvStageKind();
const StageKind& BenchStageKind();
const StageKind& MonitorStageKind();
const StageKind& StressStageKind();
const StageKind& ExecStageKind();
const StageKind& DumpStageKind();
const StageKind& QualityStageKind();
const StageKind& ModelStageKind();

/// The outcome of a stage that ran `parity bench` (bench, model): its parity-bench result
/// `file` in the stage directory kept, every valid figure a metric of the store; failed when
/// a result is invalid.
StageOutcome BenchOutcome(const StageRun& run, const ProcessResult& process,
                          const std::string& file);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_STAGE_KINDS_H_
