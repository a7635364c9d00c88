// SPDX-License-Identifier: Apache-2.0
// The exec stage's metrics: a number taken from a JSON file the command wrote, or from its
// output by a regular expression.
//
//   metrics:
//     - {name: auc, json: metrics.json, key: eval.auc, better: higher}
//     - {name: throughput, regex: 'samples/s: ([0-9.eE+-]+)', unit: samples/s}
//
// `json` is a file relative to the stage's directory ({out}); `key` a dotted path (list items
// by index: "runs.0.auc") or a JSON pointer ("/eval/auc"). `regex` (ECMAScript) is searched in
// the command's output; the last match counts, its first group if it has one.
#ifndef PARITY_COLLECT_METRIC_EXTRACT_H_
#define PARITY_COLLECT_METRIC_EXTRACT_H_

#include <string>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::collect {

/// Checks one metric definition (name, exactly one of json/regex, key only with json and then
/// required, a regex that compiles, better higher|lower).
Status CheckMetricSpec(const Json& spec);

/// The value at `key` in `doc` (dotted path or JSON pointer); kInvalidInput saying what is
/// missing or not a number.
Result<double> ValueAtKey(const Json& doc, const std::string& key);

/// The last match of `pattern` in `text` as a number.
Result<double> ValueByRegex(const std::string& text, const std::string& pattern);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_METRIC_EXTRACT_H_
