// SPDX-License-Identifier: Apache-2.0
// One sample of every source: what the monitor's rules, --json, --record and the exporter see.
#ifndef PARITY_MONITOR_SAMPLE_H_
#define PARITY_MONITOR_SAMPLE_H_

#include <string>
#include <vector>

#include "core/json_util.h"
#include "monitor/telemetry.h"

namespace parity::monitor {

/// Whether a source answered in this sample, and why not.
struct SourceState {
  std::string name;
  bool up = false;
  std::string reason;  ///< empty when up
};

/// One GPU's readings, under the monitor's device index (0.. across all sources, in the order
/// of the source list).
struct DeviceReadings {
  int device = 0;
  std::string source;  ///< the source that read it ("nvml", "rocm-smi", "amdgpu")
  DeviceInfo info;
  std::vector<Reading> readings;  ///< gpu_* metrics
};

/// Everything read at one instant.
struct Sample {
  double time_unix = 0.0;  ///< wall clock, seconds since 1970
  double monotonic = 0.0;  ///< steady clock, seconds; rates and rule windows use this
  std::vector<SourceState> sources;
  std::vector<DeviceReadings> devices;
  std::vector<Reading> host;  ///< host_* metrics; empty without the host source
};

/// The device labels of a gpu_* series: device (index), uuid, model, vendor (empty ones left out).
Labels DeviceLabels(const DeviceReadings& device);

/// The sample as `parity monitor --json` prints it and --record appends it (one line):
/// {"format":"parity-monitor","version":1,"kind":"sample","time":..,"sources":[..],
///  "devices":[{"device":0,"source":..,"vendor":..,"model":..,"uuid":..,"pci_bus_id":..,
///              "metrics":[{"name":"gpu_power_watts","labels":{},"value":..},..]},..],
///  "host":{"metrics":[..]}}
Json SampleToJson(const Sample& sample);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SAMPLE_H_
