// SPDX-License-Identifier: Apache-2.0
// The handlers of `parity serve`'s JSON API (docs/SERVE.md), one file per area: runs, trend,
// compare, reports, explain. Each reads its query parameters, refuses unknown ones (400) and
// unknown ids (404), and answers a document with "format" and "version".
#ifndef PARITY_SERVE_API_H_
#define PARITY_SERVE_API_H_

#include "serve/context.h"
#include "serve/params.h"

namespace parity::serve {

/// /api/runs: {"format":"parity-runs","version":1,"total","offset","limit","runs":[..]}.
Answer RunsApi(Context& context, const Params& params);
/// /api/run?id=ID: {"format":"parity-run","version":1,"run":{.., "stages":[..]}}.
Answer RunApi(Context& context, const Params& params);
/// /api/metrics: {"format":"parity-metrics","version":1,"metrics":[{"name","points"}]}.
Answer MetricsApi(Context& context, const Params& params);
/// /api/trend?metric=NAME: {"format":"parity-trend","version":1,"series":[..]}.
Answer TrendApi(Context& context, const Params& params);
/// /api/compare?a=ID&b=ID: {"format":"parity-serve-compare","version":1,..}.
Answer CompareApi(Context& context, const Params& params);
/// /api/reports: {"format":"parity-reports","version":1,"reports":[..]}.
Answer ReportsApi(Context& context, const Params& params);
/// /api/explain?a=..&b=..: {"format":"parity-explain-page","version":1,..}.
Answer ExplainApi(Context& context, const Params& params);

/// A status as an answer: 400 for kInvalidInput, 500 otherwise.
Answer StatusAnswer(const Status& status);

}  // namespace parity::serve

#endif  // PARITY_SERVE_API_H_
