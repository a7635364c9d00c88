// SPDX-License-Identifier: Apache-2.0
// The amdgpu source: AMD GPUs through the files the amdgpu kernel driver puts in sysfs, as
// amdgpu_top and rocm-smi read them (Linux Documentation/gpu/amdgpu/): every
// class/drm/card<N>/device whose PCI vendor is 0x1002.
#ifndef PARITY_MONITOR_SOURCE_AMDGPU_H_
#define PARITY_MONITOR_SOURCE_AMDGPU_H_

#include <memory>
#include <string_view>

#include "monitor/telemetry.h"

namespace parity::monitor {

std::unique_ptr<TelemetrySource> MakeAmdgpuSource(const Roots& roots);

/// The marketing name of an AMD PCI device id, for boards without product_name; empty when
/// the id is not in parity's table.
std::string_view AmdModelName(uint32_t pci_device_id);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SOURCE_AMDGPU_H_
