// SPDX-License-Identifier: Apache-2.0
// Compiled regions (records of op "compiled_region") judged against the float64 replay
// PyTorch computed by running each region's graph (python/parity_dump/regions.py).
#ifndef PARITY_ORACLE_REGIONS_H_
#define PARITY_ORACLE_REGIONS_H_

#include "core/status.h"
#include "io/dump.h"
#include "oracle/replay.h"

namespace parity {

/// The op name of a compiled region's records.
inline constexpr std::string_view kCompiledRegionOp = "compiled_region";

/// `r` (its identity filled in) completed for a compiled region's record: each output judged
/// against its float64 replay in the record's directory's oracle/regions.json with the `auto`
/// tolerance of a reduction of the region's K; "compared only" with the reason (no replay
/// written, the region's own reason, an index or file that can't be read) otherwise. Never
/// fails on the index's content; fails only as loading the record's own tensors does.
Result<OpReplay> ReplayRegion(const DumpDir& dump, const DumpRecord& record, OpReplay r);

}  // namespace parity

#endif  // PARITY_ORACLE_REGIONS_H_
