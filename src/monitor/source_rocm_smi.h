// SPDX-License-Identifier: Apache-2.0
// The "rocm-smi" telemetry source: AMD GPUs through ROCm SMI (librocm_smi64), loaded with
// dlopen so parity runs where ROCm is not installed.
#ifndef PARITY_MONITOR_SOURCE_ROCM_SMI_H_
#define PARITY_MONITOR_SOURCE_ROCM_SMI_H_

#include <memory>
#include <string>

#include "monitor/telemetry.h"

namespace parity::monitor {

/// A source reading the AMD GPUs ROCm SMI enumerates. `library` is the path or soname to load;
/// empty means $PARITY_ROCM_SMI_LIBRARY if set, else the first of librocm_smi64.so.1,
/// librocm_smi64.so and /opt/rocm/lib/librocm_smi64.so.1 that loads. Open() answers
/// kUnavailable when the library doesn't load (with dlerror's text), lacks a call it can't do
/// without ("LIB: lacks rsmi_init"), fails rsmi_init (with ROCm SMI's description and code), or
/// finds no device ("no AMD GPU"). Readings the library can't give, for want of the call or of
/// support on the device, are left out.
std::unique_ptr<TelemetrySource> MakeRocmSmiSource(std::string library);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SOURCE_ROCM_SMI_H_
