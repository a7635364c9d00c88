// SPDX-License-Identifier: Apache-2.0
// The host source: CPU utilisation (/proc/stat), memory (/proc/meminfo), hwmon temperatures,
// RAPL energy counters turned into watts (/sys/class/powercap), EDAC memory-error counts.
#ifndef PARITY_MONITOR_SOURCE_HOST_H_
#define PARITY_MONITOR_SOURCE_HOST_H_

#include <memory>

#include "monitor/telemetry.h"

namespace parity::monitor {

/// Reads under `roots` (sysfs for hwmon, powercap and EDAC; procfs for stat and meminfo).
/// hwmon chips that belong to a GPU (amdgpu) are left to the GPU sources.
std::unique_ptr<TelemetrySource> MakeHostSource(const Roots& roots);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SOURCE_HOST_H_
