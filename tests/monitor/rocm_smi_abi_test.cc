// SPDX-License-Identifier: Apache-2.0
// parity's own declarations of ROCm SMI's ABI (monitor/rocm_smi_api.h) against the real header
// (librocm-smi-dev): every enum value and underlying type, every struct's size, alignment and
// field offsets, and every function-pointer type. The checks are static_asserts: a mismatch
// fails the build. Function types are compared after mapping each real enum and struct to its
// local counterpart (Local below), the mapping itself being checked by the asserts above it.
#include <gtest/gtest.h>
#include <rocm_smi/rocm_smi.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "monitor/rocm_smi_api.h"

namespace parity::monitor {
namespace {

/// The local type standing for a real ROCm SMI type: itself for the fundamental types, the
/// rsmi:: counterpart for the enums and structs, applied through pointers, const and function
/// signatures.
template <typename T>
struct Local {
  using type = T;
};
template <typename T>
using LocalT = typename Local<T>::type;
template <typename T>
struct Local<const T> {
  using type = const LocalT<T>;
};
template <typename T>
struct Local<T*> {
  using type = LocalT<T>*;
};
template <typename R, typename... Args>
struct Local<R (*)(Args...)> {
  using type = LocalT<R> (*)(LocalT<Args>...);
};

#define PARITY_RSMI_MAP(real, ours) \
  template <>                       \
  struct Local<real> {              \
    using type = rsmi::ours;        \
  }
PARITY_RSMI_MAP(::rsmi_status_t, Status);
PARITY_RSMI_MAP(::rsmi_temperature_type_t, TemperatureType);
PARITY_RSMI_MAP(::rsmi_temperature_metric_t, TemperatureMetric);
PARITY_RSMI_MAP(::rsmi_clk_type_t, ClkType);
PARITY_RSMI_MAP(::rsmi_memory_type_t, MemoryType);
PARITY_RSMI_MAP(::rsmi_gpu_block_t, GpuBlock);
PARITY_RSMI_MAP(::rsmi_ras_err_state_t, RasErrState);
PARITY_RSMI_MAP(::rsmi_memory_page_status_t, MemoryPageStatus);
PARITY_RSMI_MAP(::rsmi_frequencies_t, Frequencies);
PARITY_RSMI_MAP(::rsmi_pcie_bandwidth_t, PcieBandwidth);
PARITY_RSMI_MAP(::rsmi_error_count_t, ErrorCount);
PARITY_RSMI_MAP(::rsmi_retired_page_record_t, RetiredPageRecord);
#undef PARITY_RSMI_MAP

// Enums: the same underlying type (so the same size and passing convention) and values.
template <typename Real, typename Ours>
constexpr bool kSameRepresentation =
    std::is_same_v<std::underlying_type_t<Real>, std::underlying_type_t<Ours>>;
static_assert(kSameRepresentation<::rsmi_status_t, rsmi::Status>);
static_assert(kSameRepresentation<::rsmi_temperature_type_t, rsmi::TemperatureType>);
static_assert(kSameRepresentation<::rsmi_temperature_metric_t, rsmi::TemperatureMetric>);
static_assert(kSameRepresentation<::rsmi_clk_type_t, rsmi::ClkType>);
static_assert(kSameRepresentation<::rsmi_memory_type_t, rsmi::MemoryType>);
static_assert(kSameRepresentation<::rsmi_gpu_block_t, rsmi::GpuBlock>);
static_assert(kSameRepresentation<::rsmi_ras_err_state_t, rsmi::RasErrState>);
static_assert(kSameRepresentation<::rsmi_memory_page_status_t, rsmi::MemoryPageStatus>);

#define PARITY_RSMI_VALUE(ours, real)                                                          \
  static_assert(static_cast<std::underlying_type_t<decltype(rsmi::ours)>>(rsmi::ours) == real, \
                #real)
PARITY_RSMI_VALUE(Status::kSuccess, RSMI_STATUS_SUCCESS);
PARITY_RSMI_VALUE(Status::kInvalidArgs, RSMI_STATUS_INVALID_ARGS);
PARITY_RSMI_VALUE(Status::kNotSupported, RSMI_STATUS_NOT_SUPPORTED);
PARITY_RSMI_VALUE(Status::kFileError, RSMI_STATUS_FILE_ERROR);
PARITY_RSMI_VALUE(Status::kPermission, RSMI_STATUS_PERMISSION);
PARITY_RSMI_VALUE(Status::kOutOfResources, RSMI_STATUS_OUT_OF_RESOURCES);
PARITY_RSMI_VALUE(Status::kInternalException, RSMI_STATUS_INTERNAL_EXCEPTION);
PARITY_RSMI_VALUE(Status::kInputOutOfBounds, RSMI_STATUS_INPUT_OUT_OF_BOUNDS);
PARITY_RSMI_VALUE(Status::kInitError, RSMI_STATUS_INIT_ERROR);
PARITY_RSMI_VALUE(Status::kNotYetImplemented, RSMI_STATUS_NOT_YET_IMPLEMENTED);
PARITY_RSMI_VALUE(Status::kNotFound, RSMI_STATUS_NOT_FOUND);
PARITY_RSMI_VALUE(Status::kInsufficientSize, RSMI_STATUS_INSUFFICIENT_SIZE);
PARITY_RSMI_VALUE(Status::kInterrupt, RSMI_STATUS_INTERRUPT);
PARITY_RSMI_VALUE(Status::kUnexpectedSize, RSMI_STATUS_UNEXPECTED_SIZE);
PARITY_RSMI_VALUE(Status::kNoData, RSMI_STATUS_NO_DATA);
PARITY_RSMI_VALUE(Status::kUnexpectedData, RSMI_STATUS_UNEXPECTED_DATA);
PARITY_RSMI_VALUE(Status::kBusy, RSMI_STATUS_BUSY);
PARITY_RSMI_VALUE(Status::kRefcountOverflow, RSMI_STATUS_REFCOUNT_OVERFLOW);
PARITY_RSMI_VALUE(Status::kUnknownError, RSMI_STATUS_UNKNOWN_ERROR);
PARITY_RSMI_VALUE(TemperatureType::kEdge, RSMI_TEMP_TYPE_EDGE);
PARITY_RSMI_VALUE(TemperatureType::kJunction, RSMI_TEMP_TYPE_JUNCTION);
PARITY_RSMI_VALUE(TemperatureType::kMemory, RSMI_TEMP_TYPE_MEMORY);
PARITY_RSMI_VALUE(TemperatureMetric::kCurrent, RSMI_TEMP_CURRENT);
PARITY_RSMI_VALUE(TemperatureMetric::kCritical, RSMI_TEMP_CRITICAL);
PARITY_RSMI_VALUE(ClkType::kSys, RSMI_CLK_TYPE_SYS);
PARITY_RSMI_VALUE(ClkType::kMem, RSMI_CLK_TYPE_MEM);
PARITY_RSMI_VALUE(MemoryType::kVram, RSMI_MEM_TYPE_VRAM);
PARITY_RSMI_VALUE(GpuBlock::kUmc, RSMI_GPU_BLOCK_UMC);
PARITY_RSMI_VALUE(GpuBlock::kSdma, RSMI_GPU_BLOCK_SDMA);
PARITY_RSMI_VALUE(GpuBlock::kGfx, RSMI_GPU_BLOCK_GFX);
PARITY_RSMI_VALUE(GpuBlock::kMmhub, RSMI_GPU_BLOCK_MMHUB);
PARITY_RSMI_VALUE(GpuBlock::kAthub, RSMI_GPU_BLOCK_ATHUB);
PARITY_RSMI_VALUE(GpuBlock::kPcieBif, RSMI_GPU_BLOCK_PCIE_BIF);
PARITY_RSMI_VALUE(GpuBlock::kHdp, RSMI_GPU_BLOCK_HDP);
PARITY_RSMI_VALUE(GpuBlock::kXgmiWafl, RSMI_GPU_BLOCK_XGMI_WAFL);
PARITY_RSMI_VALUE(GpuBlock::kDf, RSMI_GPU_BLOCK_DF);
PARITY_RSMI_VALUE(GpuBlock::kSmn, RSMI_GPU_BLOCK_SMN);
PARITY_RSMI_VALUE(GpuBlock::kSem, RSMI_GPU_BLOCK_SEM);
PARITY_RSMI_VALUE(GpuBlock::kMp0, RSMI_GPU_BLOCK_MP0);
PARITY_RSMI_VALUE(GpuBlock::kMp1, RSMI_GPU_BLOCK_MP1);
PARITY_RSMI_VALUE(GpuBlock::kFuse, RSMI_GPU_BLOCK_FUSE);
PARITY_RSMI_VALUE(RasErrState::kNone, RSMI_RAS_ERR_STATE_NONE);
PARITY_RSMI_VALUE(RasErrState::kDisabled, RSMI_RAS_ERR_STATE_DISABLED);
PARITY_RSMI_VALUE(RasErrState::kParity, RSMI_RAS_ERR_STATE_PARITY);
PARITY_RSMI_VALUE(RasErrState::kSingleCorrectable, RSMI_RAS_ERR_STATE_SING_C);
PARITY_RSMI_VALUE(RasErrState::kMultipleUncorrectable, RSMI_RAS_ERR_STATE_MULT_UC);
PARITY_RSMI_VALUE(RasErrState::kPoison, RSMI_RAS_ERR_STATE_POISON);
PARITY_RSMI_VALUE(RasErrState::kEnabled, RSMI_RAS_ERR_STATE_ENABLED);
PARITY_RSMI_VALUE(RasErrState::kInvalid, RSMI_RAS_ERR_STATE_INVALID);
PARITY_RSMI_VALUE(MemoryPageStatus::kReserved, RSMI_MEM_PAGE_STATUS_RESERVED);
PARITY_RSMI_VALUE(MemoryPageStatus::kPending, RSMI_MEM_PAGE_STATUS_PENDING);
PARITY_RSMI_VALUE(MemoryPageStatus::kUnreservable, RSMI_MEM_PAGE_STATUS_UNRESERVABLE);
#undef PARITY_RSMI_VALUE
static_assert(rsmi::kMaxNumFrequencies == RSMI_MAX_NUM_FREQUENCIES);
// The blocks parity names are all the header has between FIRST and LAST.
static_assert(RSMI_GPU_BLOCK_FIRST == RSMI_GPU_BLOCK_UMC);
static_assert(RSMI_GPU_BLOCK_LAST == RSMI_GPU_BLOCK_FUSE);

// Structs: size, alignment, and each field at the same offset with the (mapped) same type.
#define PARITY_RSMI_STRUCT(ours, real)                                     \
  static_assert(sizeof(rsmi::ours) == sizeof(real), #real " size");        \
  static_assert(alignof(rsmi::ours) == alignof(real), #real " alignment"); \
  static_assert(std::is_standard_layout_v<rsmi::ours>, #ours " standard layout")
#define PARITY_RSMI_FIELD(ours, real, field)                                                \
  static_assert(offsetof(rsmi::ours, field) == offsetof(real, field), #real "." #field);    \
  static_assert(std::is_same_v<decltype(rsmi::ours::field), LocalT<decltype(real::field)>>, \
                #real "." #field " type")
PARITY_RSMI_STRUCT(Frequencies, ::rsmi_frequencies_t);
PARITY_RSMI_FIELD(Frequencies, ::rsmi_frequencies_t, num_supported);
PARITY_RSMI_FIELD(Frequencies, ::rsmi_frequencies_t, current);
PARITY_RSMI_FIELD(Frequencies, ::rsmi_frequencies_t, frequency);
PARITY_RSMI_STRUCT(PcieBandwidth, ::rsmi_pcie_bandwidth_t);
PARITY_RSMI_FIELD(PcieBandwidth, ::rsmi_pcie_bandwidth_t, transfer_rate);
PARITY_RSMI_FIELD(PcieBandwidth, ::rsmi_pcie_bandwidth_t, lanes);
PARITY_RSMI_STRUCT(ErrorCount, ::rsmi_error_count_t);
PARITY_RSMI_FIELD(ErrorCount, ::rsmi_error_count_t, correctable_err);
PARITY_RSMI_FIELD(ErrorCount, ::rsmi_error_count_t, uncorrectable_err);
PARITY_RSMI_STRUCT(RetiredPageRecord, ::rsmi_retired_page_record_t);
PARITY_RSMI_FIELD(RetiredPageRecord, ::rsmi_retired_page_record_t, page_address);
PARITY_RSMI_FIELD(RetiredPageRecord, ::rsmi_retired_page_record_t, page_size);
PARITY_RSMI_FIELD(RetiredPageRecord, ::rsmi_retired_page_record_t, status);
#undef PARITY_RSMI_FIELD
#undef PARITY_RSMI_STRUCT

// Functions: each typedef is the real function's pointer type, enums and structs mapped.
#define PARITY_RSMI_FUNCTION(ours, real) \
  static_assert(std::is_same_v<rsmi::ours, LocalT<decltype(&::real)>>, #real)
PARITY_RSMI_FUNCTION(InitFn, rsmi_init);
PARITY_RSMI_FUNCTION(ShutDownFn, rsmi_shut_down);
PARITY_RSMI_FUNCTION(NumMonitorDevicesFn, rsmi_num_monitor_devices);
PARITY_RSMI_FUNCTION(StatusStringFn, rsmi_status_string);
PARITY_RSMI_FUNCTION(DevNameGetFn, rsmi_dev_name_get);
PARITY_RSMI_FUNCTION(DevBrandGetFn, rsmi_dev_brand_get);
PARITY_RSMI_FUNCTION(DevUniqueIdGetFn, rsmi_dev_unique_id_get);
PARITY_RSMI_FUNCTION(DevPciIdGetFn, rsmi_dev_pci_id_get);
PARITY_RSMI_FUNCTION(DevPciBandwidthGetFn, rsmi_dev_pci_bandwidth_get);
PARITY_RSMI_FUNCTION(DevPciReplayCounterGetFn, rsmi_dev_pci_replay_counter_get);
PARITY_RSMI_FUNCTION(DevPowerAveGetFn, rsmi_dev_power_ave_get);
PARITY_RSMI_FUNCTION(DevPowerCapGetFn, rsmi_dev_power_cap_get);
PARITY_RSMI_FUNCTION(DevMemoryTotalGetFn, rsmi_dev_memory_total_get);
PARITY_RSMI_FUNCTION(DevMemoryUsageGetFn, rsmi_dev_memory_usage_get);
PARITY_RSMI_FUNCTION(DevMemoryReservedPagesGetFn, rsmi_dev_memory_reserved_pages_get);
PARITY_RSMI_FUNCTION(DevTempMetricGetFn, rsmi_dev_temp_metric_get);
PARITY_RSMI_FUNCTION(DevBusyPercentGetFn, rsmi_dev_busy_percent_get);
PARITY_RSMI_FUNCTION(DevGpuClkFreqGetFn, rsmi_dev_gpu_clk_freq_get);
PARITY_RSMI_FUNCTION(DevEccEnabledGetFn, rsmi_dev_ecc_enabled_get);
PARITY_RSMI_FUNCTION(DevEccCountGetFn, rsmi_dev_ecc_count_get);
#undef PARITY_RSMI_FUNCTION

// The mapping is not the identity: a real type left unmapped would compare unequal above.
static_assert(!std::is_same_v<LocalT<::rsmi_status_t>, ::rsmi_status_t>);

TEST(RocmSmiAbi, LocalDeclarationsMatchTheHeader) {
  // Everything is checked at compile time; this records that the check was built.
  SUCCEED();
}

}  // namespace
}  // namespace parity::monitor
