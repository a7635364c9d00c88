// SPDX-License-Identifier: Apache-2.0
#include "monitor/metrics.h"

#include <algorithm>

namespace parity::monitor {
namespace {

using enum MetricType;

const std::vector<MetricSpec>& Table() {
  static const std::vector<MetricSpec> table = {
      {"gpu_temperature_celsius",
       kGauge,
       {"sensor"},
       "GPU temperature by sensor (edge, junction/hotspot, memory), degrees Celsius."},
      {"gpu_power_watts", kGauge, {}, "GPU board power draw, watts."},
      {"gpu_power_limit_watts", kGauge, {}, "GPU power limit in force, watts."},
      {"gpu_utilization_ratio", kGauge, {}, "Share of time the GPU was busy, 0..1."},
      {"gpu_memory_used_bytes", kGauge, {}, "GPU memory in use, bytes."},
      {"gpu_memory_total_bytes", kGauge, {}, "GPU memory in all, bytes."},
      {"gpu_clock_hertz", kGauge, {"domain"}, "Current GPU clock by domain (sm, memory), hertz."},
      {"gpu_ecc_errors_total",
       kCounter,
       {"severity", "block", "scope"},
       "ECC/RAS errors by severity (correctable, uncorrectable) and block; scope volatile "
       "(since driver load) or aggregate (lifetime) where the source has both."},
      {"gpu_retired_pages_total",
       kCounter,
       {"cause"},
       "Memory pages retired or rows remapped, by cause."},
      {"gpu_pcie_replay_total", kCounter, {}, "PCIe replay counter."},
      {"gpu_xid_events_total",
       kCounter,
       {"xid"},
       "NVIDIA XID error events seen while monitoring, by XID."},
      {"gpu_throttle_active",
       kGauge,
       {"reason"},
       "1 while the clocks are held down for this reason, else 0."},
      {"gpu_pcie_link_generation", kGauge, {}, "Current PCIe link generation."},
      {"gpu_pcie_link_width", kGauge, {}, "Current PCIe link width, lanes."},
      {"host_cpu_utilization_ratio",
       kGauge,
       {},
       "Share of CPU time not idle or waiting for I/O since the last sample, 0..1."},
      {"host_memory_used_bytes", kGauge, {}, "Host memory in use (MemTotal - MemAvailable)."},
      {"host_memory_total_bytes", kGauge, {}, "Host memory in all (MemTotal)."},
      {"host_temperature_celsius",
       kGauge,
       {"chip", "sensor"},
       "Host hwmon temperatures, degrees Celsius."},
      {"host_power_watts",
       kGauge,
       {"domain"},
       "Host power from RAPL energy counters over the last sample interval, watts."},
      {"host_ecc_errors_total",
       kCounter,
       {"severity", "controller"},
       "Host memory errors counted by EDAC, by severity and memory controller."},
  };
  return table;
}

}  // namespace

std::span<const MetricSpec> Catalogue() { return Table(); }

const MetricSpec* FindMetric(std::string_view name) {
  const auto& table = Table();
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const MetricSpec& spec) { return spec.name == name; });
  return it == table.end() ? nullptr : &*it;
}

bool IsDeviceMetric(std::string_view name) { return name.starts_with("gpu_"); }

}  // namespace parity::monitor
