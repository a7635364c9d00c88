// SPDX-License-Identifier: Apache-2.0
#include "monitor/sources.h"

#include <array>

#include "monitor/source_amdgpu.h"
#include "monitor/source_host.h"
#include "monitor/source_nvml.h"
#include "monitor/source_rocm_smi.h"

namespace parity::monitor {
namespace {

std::unique_ptr<TelemetrySource> MakeNvml(const SourceOptions& o) {
  return MakeNvmlSource(o.nvml_library);
}
std::unique_ptr<TelemetrySource> MakeRocmSmi(const SourceOptions& o) {
  return MakeRocmSmiSource(o.rocm_smi_library);
}
std::unique_ptr<TelemetrySource> MakeAmdgpu(const SourceOptions& o) {
  return MakeAmdgpuSource(o.roots);
}
std::unique_ptr<TelemetrySource> MakeHost(const SourceOptions& o) {
  return MakeHostSource(o.roots);
}

constexpr std::array<SourceEntry, 4> kSources = {{
    {"nvml", "NVIDIA GPUs through libnvidia-ml.so.1 (dlopen)", MakeNvml},
    {"rocm-smi", "AMD GPUs through librocm_smi64 (dlopen), preferred to sysfs where it answers",
     MakeRocmSmi},
    {"amdgpu", "AMD GPUs through the amdgpu driver's sysfs files", MakeAmdgpu},
    {"host", "CPU utilisation, memory, hwmon temperatures, RAPL power, EDAC errors", MakeHost},
}};

}  // namespace

std::span<const SourceEntry> SourceTable() { return kSources; }

const SourceEntry* FindSource(std::string_view name) {
  for (const SourceEntry& entry : kSources) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace parity::monitor
