// SPDX-License-Identifier: Apache-2.0
// The Prometheus text exposition format (version 0.0.4) of a sample: what /metrics serves.
#ifndef PARITY_MONITOR_EXPOSITION_H_
#define PARITY_MONITOR_EXPOSITION_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "monitor/sample.h"

namespace parity::monitor {

/// What the exporter adds to a sample: its own counters.
struct ExporterState {
  std::map<std::string, uint64_t> alerts_total;  ///< per rule name; every rule, 0 until it fires
  uint64_t samples_total = 0;
};

/// Every series of `sample` under the "parity_" names, grouped by metric with one HELP and
/// one TYPE line each (catalogue order, then parity_alerts_total, parity_source_up and the
/// monitor's own), label values escaped; a series repeated with the same labels is written
/// once (the first reading wins), as Prometheus rejects a scrape with duplicates.
std::string RenderExposition(const Sample& sample, const ExporterState& state);

/// A label value escaped for the exposition format (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view value);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_EXPOSITION_H_
