// SPDX-License-Identifier: Apache-2.0
// The part of ROCm SMI's C ABI (librocm_smi64, rocm_smi/rocm_smi.h as of ROCm 5.2.3) that the
// rocm-smi telemetry source calls, declared here so parity builds without ROCm's headers and
// loads the library with dlopen. Every value, layout and signature below is checked against
// the real header by tests/monitor/rocm_smi_abi_test.cc where librocm-smi-dev is installed.
#ifndef PARITY_MONITOR_ROCM_SMI_API_H_
#define PARITY_MONITOR_ROCM_SMI_API_H_

#include <cstddef>
#include <cstdint>

namespace parity::monitor::rsmi {

/// RSMI_MAX_NUM_FREQUENCIES: the capacity of Frequencies and PcieBandwidth's tables.
inline constexpr std::size_t kMaxNumFrequencies = 32;

/// rsmi_status_t. Other codes than these may come back from a newer library.
enum class Status : uint32_t {
  kSuccess = 0,
  kInvalidArgs = 1,
  kNotSupported = 2,
  kFileError = 3,
  kPermission = 4,
  kOutOfResources = 5,
  kInternalException = 6,
  kInputOutOfBounds = 7,
  kInitError = 8,
  kNotYetImplemented = 9,
  kNotFound = 10,
  kInsufficientSize = 11,
  kInterrupt = 12,
  kUnexpectedSize = 13,
  kNoData = 14,
  kUnexpectedData = 15,
  kBusy = 16,
  kRefcountOverflow = 17,
  kUnknownError = 0xFFFFFFFF,
};

/// rsmi_temperature_type_t. rsmi_dev_temp_metric_get takes it as a plain uint32_t.
enum class TemperatureType : uint32_t {
  kEdge = 0,
  kJunction = 1,
  kMemory = 2,
};

/// rsmi_temperature_metric_t: which value of a temperature sensor.
enum class TemperatureMetric : uint32_t {
  kCurrent = 0,
  kCritical = 5,
};

/// rsmi_clk_type_t.
enum class ClkType : uint32_t {
  kSys = 0,  ///< the graphics/compute (shader) clock
  kMem = 4,
};

/// rsmi_memory_type_t.
enum class MemoryType : uint32_t {
  kVram = 0,
};

/// rsmi_gpu_block_t: one bit each, as rsmi_dev_ecc_enabled_get's mask has them.
enum class GpuBlock : uint64_t {
  kUmc = 0x1,
  kSdma = 0x2,
  kGfx = 0x4,
  kMmhub = 0x8,
  kAthub = 0x10,
  kPcieBif = 0x20,
  kHdp = 0x40,
  kXgmiWafl = 0x80,
  kDf = 0x100,
  kSmn = 0x200,
  kSem = 0x400,
  kMp0 = 0x800,
  kMp1 = 0x1000,
  kFuse = 0x2000,
};

/// rsmi_ras_err_state_t: a block's RAS/ECC state (rsmi_dev_ecc_status_get).
enum class RasErrState : uint32_t {
  kNone = 0,
  kDisabled = 1,
  kParity = 2,
  kSingleCorrectable = 3,
  kMultipleUncorrectable = 4,
  kPoison = 5,
  kEnabled = 6,
  kInvalid = 0xFFFFFFFF,
};

/// rsmi_memory_page_status_t: what became of a retired page.
enum class MemoryPageStatus : uint32_t {
  kReserved = 0,      ///< retired, no longer used
  kPending = 1,       ///< marked bad, retired at the next opportunity
  kUnreservable = 2,  ///< bad, and could not be retired
};

/// rsmi_frequencies_t: the levels a clock can run at, in Hz, and the one it runs at now. The
/// library sets `current` to 0xFFFFFFFF when no level is marked current.
struct Frequencies {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[kMaxNumFrequencies];
};

/// rsmi_pcie_bandwidth_t: the PCIe link's levels, transfer rates in transfers per second with
/// their lane counts, and the current level's index in transfer_rate.current.
struct PcieBandwidth {
  Frequencies transfer_rate;
  uint32_t lanes[kMaxNumFrequencies];
};

/// rsmi_error_count_t: one block's accumulated ECC error counts.
struct ErrorCount {
  uint64_t correctable_err;
  uint64_t uncorrectable_err;
};

/// rsmi_retired_page_record_t.
struct RetiredPageRecord {
  uint64_t page_address;
  uint64_t page_size;
  MemoryPageStatus status;
};

/// rsmi_init(init_flags).
using InitFn = Status (*)(uint64_t init_flags);
/// rsmi_shut_down().
using ShutDownFn = Status (*)();
/// rsmi_num_monitor_devices(num_devices).
using NumMonitorDevicesFn = Status (*)(uint32_t* num_devices);
/// rsmi_status_string(status, status_string): a static description of `status`.
using StatusStringFn = Status (*)(Status status, const char** status_string);
/// rsmi_dev_name_get(dv_ind, name, len).
using DevNameGetFn = Status (*)(uint32_t dv_ind, char* name, std::size_t len);
/// rsmi_dev_brand_get(dv_ind, brand, len): note the uint32_t length, unlike name's size_t.
using DevBrandGetFn = Status (*)(uint32_t dv_ind, char* brand, uint32_t len);
/// rsmi_dev_unique_id_get(dv_ind, id).
using DevUniqueIdGetFn = Status (*)(uint32_t dv_ind, uint64_t* id);
/// rsmi_dev_pci_id_get(dv_ind, bdfid): domain in bits 63..32, bus 15..8, device 7..3,
/// function 2..0.
using DevPciIdGetFn = Status (*)(uint32_t dv_ind, uint64_t* bdfid);
/// rsmi_dev_pci_bandwidth_get(dv_ind, bandwidth).
using DevPciBandwidthGetFn = Status (*)(uint32_t dv_ind, PcieBandwidth* bandwidth);
/// rsmi_dev_pci_replay_counter_get(dv_ind, counter).
using DevPciReplayCounterGetFn = Status (*)(uint32_t dv_ind, uint64_t* counter);
/// rsmi_dev_power_ave_get(dv_ind, sensor_ind, power): microwatts.
using DevPowerAveGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* power);
/// rsmi_dev_power_cap_get(dv_ind, sensor_ind, cap): microwatts.
using DevPowerCapGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* cap);
/// rsmi_dev_memory_total_get(dv_ind, mem_type, total): bytes.
using DevMemoryTotalGetFn = Status (*)(uint32_t dv_ind, MemoryType mem_type, uint64_t* total);
/// rsmi_dev_memory_usage_get(dv_ind, mem_type, used): bytes.
using DevMemoryUsageGetFn = Status (*)(uint32_t dv_ind, MemoryType mem_type, uint64_t* used);
/// rsmi_dev_memory_reserved_pages_get(dv_ind, num_pages, records): with records null, the
/// count alone comes back in *num_pages; otherwise *num_pages is the capacity on the way in
/// and the count on the way out (kInsufficientSize when more pages exist than fit).
using DevMemoryReservedPagesGetFn = Status (*)(uint32_t dv_ind, uint32_t* num_pages,
                                               RetiredPageRecord* records);
/// rsmi_dev_temp_metric_get(dv_ind, sensor_type, metric, temperature): sensor_type is a
/// TemperatureType's value; millidegrees Celsius.
using DevTempMetricGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_type,
                                      TemperatureMetric metric, int64_t* temperature);
/// rsmi_dev_busy_percent_get(dv_ind, busy_percent).
using DevBusyPercentGetFn = Status (*)(uint32_t dv_ind, uint32_t* busy_percent);
/// rsmi_dev_gpu_clk_freq_get(dv_ind, clk_type, f).
using DevGpuClkFreqGetFn = Status (*)(uint32_t dv_ind, ClkType clk_type, Frequencies* f);
/// rsmi_dev_ecc_enabled_get(dv_ind, enabled_blocks): a mask of GpuBlock bits.
using DevEccEnabledGetFn = Status (*)(uint32_t dv_ind, uint64_t* enabled_blocks);
/// rsmi_dev_ecc_count_get(dv_ind, block, ec).
using DevEccCountGetFn = Status (*)(uint32_t dv_ind, GpuBlock block, ErrorCount* ec);

}  // namespace parity::monitor::rsmi

#endif  // PARITY_MONITOR_ROCM_SMI_API_H_
