// SPDX-License-Identifier: Apache-2.0
// Metric catalogue: every name a TelemetrySource may report (docs/DESIGN.md "Telemetry", without
// the "parity_" prefix), its type, its labels and its help text. Rules and the exporter accept
// only these names.
#ifndef PARITY_MONITOR_METRICS_H_
#define PARITY_MONITOR_METRICS_H_

#include <span>
#include <string_view>
#include <vector>

namespace parity::monitor {

enum class MetricType { kGauge, kCounter };

/// One metric of the catalogue.
struct MetricSpec {
  std::string_view name;  ///< without "parity_": "gpu_temperature_celsius"
  MetricType type;
  /// Labels a reading of it carries beyond the device labels (device, uuid, model, vendor for
  /// gpu_* metrics; none for host_* ones).
  std::vector<std::string_view> labels;
  std::string_view help;
};

/// Every metric, in the order the exporter prints them.
std::span<const MetricSpec> Catalogue();
/// The entry named `name` (without the prefix), or nullptr.
const MetricSpec* FindMetric(std::string_view name);
/// Whether `name` is a per-device metric (gpu_*), which carries the device labels.
bool IsDeviceMetric(std::string_view name);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_METRICS_H_
