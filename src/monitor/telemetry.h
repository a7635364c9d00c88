// SPDX-License-Identifier: Apache-2.0
// The TelemetrySource interface: what `parity monitor` needs from NVML, ROCm SMI, amdgpu's
// sysfs files or the host. Readings use the metric names of docs/DESIGN.md "Telemetry" without the
// "parity_" prefix (monitor/metrics.h lists them); a value a source can't read is left out.
#ifndef PARITY_MONITOR_TELEMETRY_H_
#define PARITY_MONITOR_TELEMETRY_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace parity::monitor {

/// Labels of one reading beyond the device labels, e.g. {"sensor": "junction"}.
using Labels = std::map<std::string, std::string>;

/// One value read now: `metric` is a name from monitor/metrics.h ("gpu_temperature_celsius"),
/// in the unit its name says. Counters are totals since the source's own origin (driver load,
/// boot), never deltas.
struct Reading {
  std::string metric;
  Labels labels;
  double value = 0.0;
};

/// Appends {metric, labels, *value} to `out` when `value` holds one: the idiom for "absent, never
/// 0".
inline void AddReading(std::vector<Reading>& out, std::string metric, Labels labels,
                       std::optional<double> value) {
  if (value) out.push_back({std::move(metric), std::move(labels), *value});
}

/// What a device is. Strings the source can't read are empty, numbers absent.
struct DeviceInfo {
  std::string vendor;      ///< "NVIDIA", "AMD"; "host" for the host source's one entry
  std::string model;       ///< "NVIDIA H200", "AMD Instinct MI250X"
  std::string uuid;        ///< as the vendor prints it ("GPU-…"; AMD's unique id in hex)
  std::string pci_bus_id;  ///< "0000:c1:00.0", lower case, domain:bus:device.function
  std::optional<double> power_limit_watts;
  std::optional<double> memory_total_bytes;
  std::optional<double> temperature_limit_celsius;  ///< where the device slows down
};

/// Where file-based sources read: "/" normally, a recorded tree in tests (--sysfs-root,
/// --procfs-root). `sysfs` and `procfs` are the directories that stand for /sys and /proc.
struct Roots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
};

/// A source of readings for a set of devices. Open() once, then Read() each device at every
/// sample. A source never throws; a device whose read fails returns the status and the
/// monitor marks the source down for that sample, and goes on.
class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;

  /// "nvml", "rocm-smi", "amdgpu", "host".
  virtual std::string_view name() const = 0;
  /// Finds the devices and primes counters turned into rates (CPU time, energy). kUnavailable
  /// with the reason ("libnvidia-ml.so.1: cannot open shared object file", "no AMD GPU under
  /// /sys/class/drm") when the source can't run here.
  virtual Status Open() = 0;
  /// The devices Open() found, in the source's order. The host source has one entry.
  virtual const std::vector<DeviceInfo>& devices() const = 0;
  /// Everything device `index` (of devices()) reports now. `now_seconds` is a monotonic time,
  /// used for rates: a rate needs two reads, so the first read after Open() may lack it.
  virtual Result<std::vector<Reading>> Read(std::size_t index, double now_seconds) = 0;
};

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_TELEMETRY_H_
