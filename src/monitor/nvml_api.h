// SPDX-License-Identifier: Apache-2.0
// The part of NVML's C ABI (libnvidia-ml.so.1) that the nvml telemetry source calls, declared
// here so parity builds without NVIDIA's headers and loads the library with dlopen. Values,
// layouts and signatures follow nvml.h of NVML 13.3.29 (CUDA 13.3, as NVIDIA/go-nvml vendors
// it in gen/nvml/nvml.h), and all of them read the same in that repository's first copy of the
// header (NVML API 11, 2020) except where a comment says otherwise. NVML's C enums are passed as
// the unsigned int GCC and Clang give them. The fake library of the tests
// (tests/monitor/fake_nvml.cc) uses these same declarations, so that UBSan's function-type check
// sees one type for each call.
#ifndef PARITY_MONITOR_NVML_API_H_
#define PARITY_MONITOR_NVML_API_H_

#include <cstddef>

namespace parity::monitor::nvml {

/// nvmlReturn_t. A newer library may return other codes than these.
enum class Return : unsigned int {
  kSuccess = 0,
  kErrorUninitialized = 1,
  kErrorInvalidArgument = 2,
  kErrorNotSupported = 3,
  kErrorNoPermission = 4,
  kErrorNotFound = 6,
  kErrorInsufficientSize = 7,
  kErrorDriverNotLoaded = 9,
  kErrorTimeout = 10,
  kErrorFunctionNotFound = 13,
  kErrorGpuIsLost = 15,
  kErrorUnknown = 999,
};

/// nvmlTemperatureSensors_t.
enum class TemperatureSensor : unsigned int {
  kGpu = 0,  ///< NVML_TEMPERATURE_GPU: the GPU die
};

/// nvmlTemperatureThresholds_t.
enum class TemperatureThreshold : unsigned int {
  kShutdown = 0,
  kSlowdown = 1,  ///< where the hardware starts slowing the clocks down
  kMemMax = 2,
  kGpuMax = 3,
};

/// nvmlClockType_t. Clocks are in MHz.
enum class ClockType : unsigned int {
  kGraphics = 0,
  kSm = 1,
  kMem = 2,
  kVideo = 3,
};

/// nvmlMemoryErrorType_t.
enum class MemoryErrorType : unsigned int {
  kCorrected = 0,    ///< single-bit ECC errors
  kUncorrected = 1,  ///< double-bit ECC errors
};

/// nvmlEccCounterType_t.
enum class EccCounterType : unsigned int {
  kVolatile = 0,   ///< reset when the driver loads
  kAggregate = 1,  ///< for the lifetime of the device
};

/// nvmlMemoryLocation_t (DEVICE_MEMORY is another name for DRAM).
enum class MemoryLocation : unsigned int {
  kL1Cache = 0,
  kL2Cache = 1,
  kDram = 2,
  kRegisterFile = 3,
  kTextureMemory = 4,
  kTextureShm = 5,
  kCbu = 6,
  kSram = 7,
};
/// NVML_MEMORY_LOCATION_COUNT.
inline constexpr unsigned int kMemoryLocationCount = 8;

/// nvmlPageRetirementCause_t.
enum class PageRetirementCause : unsigned int {
  kMultipleSingleBitEccErrors = 0,
  kDoubleBitEccError = 1,
};

/// nvmlEventTypeXidCriticalError, a bit of the event type masks.
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

/// The bits of nvmlDeviceGetCurrentClocksEventReasons' mask: nvmlClocksEventReason*, called
/// nvmlClocksThrottleReason* (same values) in NVML 11, where only
/// nvmlDeviceGetCurrentClocksThrottleReasons returns it.
inline constexpr unsigned long long kClocksEventReasonGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventReasonApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventReasonSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksEventReasonHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventReasonSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventReasonSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksEventReasonHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksEventReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kClocksEventReasonDisplayClockSetting = 0x100;

/// NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE: enough for any name or
/// UUID nvmlDeviceGetName and nvmlDeviceGetUUID return, the terminating NUL included (NVML 11
/// names fit in 64).
inline constexpr unsigned int kDeviceNameBufferSize = 96;
inline constexpr unsigned int kDeviceUuidBufferSize = 96;
/// NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE and NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE.
inline constexpr std::size_t kPciBusIdLegacyBufferSize = 16;
inline constexpr std::size_t kPciBusIdBufferSize = 32;

struct DeviceOpaque;
struct EventSetOpaque;
/// nvmlDevice_t: a device handle, valid while NVML is initialised.
using Device = DeviceOpaque*;
/// nvmlEventSet_t.
using EventSet = EventSetOpaque*;

/// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v2 and _v3 fill it. The unversioned
/// nvmlDeviceGetPciInfo of old drivers fills an older, smaller layout (NVIDIA/nccl's
/// src/include/nvmlwrap.h): its 16-byte busId where bus_id_legacy is, the same numbers after
/// it, and nothing in bus_id.
struct PciInfo {
  char bus_id_legacy[kPciBusIdLegacyBufferSize];  ///< "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;  ///< device id << 16 | vendor id
  unsigned int pci_sub_system_id;
  char bus_id[kPciBusIdBufferSize];  ///< "%08X:%02X:%02X.0"
};

/// nvmlMemory_t (v1, nvmlDeviceGetMemoryInfo), bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

/// nvmlUtilization_t, percent over the driver's last sample period.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

/// nvmlEventData_t as nvmlEventSetWait_v2 fills it; the v1 call fills the first three fields.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  ///< the XID of an XID critical error event, 999 unknown
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

static_assert(sizeof(PciInfo) == 68 && offsetof(PciInfo, domain) == 16 &&
              offsetof(PciInfo, bus_id) == 36);
static_assert(sizeof(Memory) == 24 && offsetof(Memory, used) == 16);
static_assert(sizeof(Utilization) == 8);
static_assert(sizeof(void*) != 8 ||
              (sizeof(EventData) == 32 && offsetof(EventData, event_data) == 16 &&
               offsetof(EventData, gpu_instance_id) == 24));

/// nvmlInit_v2, nvmlInit, nvmlShutdown.
using InitFn = Return (*)();
/// nvmlErrorString: a static string naming the code.
using ErrorStringFn = const char* (*)(Return);
/// nvmlDeviceGetCount_v2, nvmlDeviceGetCount.
using DeviceGetCountFn = Return (*)(unsigned int* count);
/// nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByIndex.
using DeviceGetHandleByIndexFn = Return (*)(unsigned int index, Device* device);
/// nvmlDeviceGetName, nvmlDeviceGetUUID: `length` counts the NUL.
using DeviceGetStringFn = Return (*)(Device device, char* text, unsigned int length);
/// nvmlDeviceGetPciInfo_v3, _v2, nvmlDeviceGetPciInfo.
using DeviceGetPciInfoFn = Return (*)(Device device, PciInfo* pci);
/// nvmlDeviceGetPowerUsage (mW), nvmlDeviceGetEnforcedPowerLimit (mW),
/// nvmlDeviceGetPcieReplayCounter, nvmlDeviceGetCurrPcieLinkGeneration and
/// nvmlDeviceGetCurrPcieLinkWidth.
using DeviceGetUintFn = Return (*)(Device device, unsigned int* value);
/// nvmlDeviceGetTemperature (°C; deprecated in NVML 13 for nvmlDeviceGetTemperatureV, still
/// exported).
using DeviceGetTemperatureFn = Return (*)(Device device, TemperatureSensor sensor,
                                          unsigned int* celsius);
/// nvmlDeviceGetTemperatureThreshold (°C).
using DeviceGetTemperatureThresholdFn = Return (*)(Device device, TemperatureThreshold threshold,
                                                   unsigned int* celsius);
/// nvmlDeviceGetClockInfo (MHz).
using DeviceGetClockInfoFn = Return (*)(Device device, ClockType type, unsigned int* mhz);
/// nvmlDeviceGetUtilizationRates.
using DeviceGetUtilizationRatesFn = Return (*)(Device device, Utilization* utilization);
/// nvmlDeviceGetMemoryInfo.
using DeviceGetMemoryInfoFn = Return (*)(Device device, Memory* memory);
/// nvmlDeviceGetTotalEccErrors.
using DeviceGetTotalEccErrorsFn = Return (*)(Device device, MemoryErrorType error_type,
                                             EccCounterType counter_type,
                                             unsigned long long* count);
/// nvmlDeviceGetMemoryErrorCounter.
using DeviceGetMemoryErrorCounterFn = Return (*)(Device device, MemoryErrorType error_type,
                                                 EccCounterType counter_type,
                                                 MemoryLocation location,
                                                 unsigned long long* count);
/// nvmlDeviceGetRetiredPages. Called with *page_count 0 it stores the number of pages retired
/// for `cause` in *page_count and returns kErrorInsufficientSize when there are some, kSuccess
/// when there are none.
using DeviceGetRetiredPagesFn = Return (*)(Device device, PageRetirementCause cause,
                                           unsigned int* page_count, unsigned long long* addresses);
/// nvmlDeviceGetRemappedRows.
using DeviceGetRemappedRowsFn = Return (*)(Device device, unsigned int* correctable_rows,
                                           unsigned int* uncorrectable_rows,
                                           unsigned int* is_pending,
                                           unsigned int* failure_occurred);
/// nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksThrottleReasons.
using DeviceGetClocksEventReasonsFn = Return (*)(Device device, unsigned long long* reasons);
/// nvmlEventSetCreate.
using EventSetCreateFn = Return (*)(EventSet* set);
/// nvmlDeviceRegisterEvents: kErrorNotSupported when the device has none of `event_types`;
/// the set stays usable.
using DeviceRegisterEventsFn = Return (*)(Device device, unsigned long long event_types,
                                          EventSet set);
/// nvmlEventSetWait_v2, nvmlEventSetWait: one pending event, or kErrorTimeout when none came
/// within `timeout_ms`.
using EventSetWaitFn = Return (*)(EventSet set, EventData* data, unsigned int timeout_ms);
/// nvmlEventSetFree.
using EventSetFreeFn = Return (*)(EventSet set);

}  // namespace parity::monitor::nvml

#endif  // PARITY_MONITOR_NVML_API_H_
