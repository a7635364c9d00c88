// SPDX-License-Identifier: Apache-2.0
// The nvml source: NVIDIA GPUs through NVML (libnvidia-ml.so.1, loaded with dlopen, its ABI in
// monitor/nvml_api.h), so parity builds and runs where there is no NVIDIA driver.
#ifndef PARITY_MONITOR_SOURCE_NVML_H_
#define PARITY_MONITOR_SOURCE_NVML_H_

#include <memory>
#include <string>

#include "monitor/telemetry.h"

namespace parity::monitor {

/// A source named "nvml" that loads `library` (a path or a name for dlopen) at Open(); empty
/// means $PARITY_NVML_LIBRARY when it is set and not empty, else "libnvidia-ml.so.1". Open()
/// is kUnavailable when the library doesn't load, lacks a call the source can't do without,
/// fails to initialise or finds no GPU; a call a device or the library doesn't have only
/// leaves its metrics out. XID events count from Open(), per device and XID. Read() is
/// kUnavailable for a device NVML reports lost, kInternal for an index past devices().
std::unique_ptr<TelemetrySource> MakeNvmlSource(std::string library);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SOURCE_NVML_H_
