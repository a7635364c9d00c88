// SPDX-License-Identifier: Apache-2.0
// Runs and trends of the results store as JSON: the objects `parity history --json` and
// `parity serve`'s API answer with.
#ifndef PARITY_STORE_JSON_H_
#define PARITY_STORE_JSON_H_

#include "core/json_util.h"
#include "store/store.h"
#include "store/trend.h"

namespace parity::store {

/// {"id","uid","kind","node","started","finished","level","backend","plan","bundle","status",
/// "tool_version","stages":[{"name","kind","status","reason","seconds"}]}; absent values are
/// null; "stages" only when `stages`.
Json RunJson(const RunRecord& run, bool stages = true);

/// {"node","name","dtype","params","unit","better","points","first","last","min","max",
/// "first_started","last_started","change","vs_previous","verdict"}.
Json TrendJson(const Trend& trend);

}  // namespace parity::store

#endif  // PARITY_STORE_JSON_H_
