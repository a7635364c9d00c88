// SPDX-License-Identifier: Apache-2.0
// The table of telemetry sources `parity monitor --source` names.
#ifndef PARITY_MONITOR_SOURCES_H_
#define PARITY_MONITOR_SOURCES_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "monitor/telemetry.h"

namespace parity::monitor {

/// Where sources find what they read: file trees, and vendor libraries (empty: the source's
/// default search, which $PARITY_NVML_LIBRARY / $PARITY_ROCM_SMI_LIBRARY override).
struct SourceOptions {
  Roots roots;
  std::string nvml_library;
  std::string rocm_smi_library;
};

/// One row: a source's name, what it reads, and how to make it.
struct SourceEntry {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<TelemetrySource> (*make)(const SourceOptions& options);
};

/// Every source, in the order the monitor numbers devices: nvml, rocm-smi, amdgpu, host.
std::span<const SourceEntry> SourceTable();
/// The entry named `name`, or nullptr.
const SourceEntry* FindSource(std::string_view name);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SOURCES_H_
