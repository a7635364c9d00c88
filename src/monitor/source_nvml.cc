// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_nvml.h"

#include <dlfcn.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/dynlib.h"
#include "monitor/nvml_api.h"

namespace parity::monitor {
namespace {

constexpr char kDefaultLibrary[] = "libnvidia-ml.so.1";
// Bounds one drain of the event set, should a driver keep answering kSuccess.
constexpr int kMaxEventsPerDrain = 4096;

using nvml::Return;

struct Severity {
  nvml::MemoryErrorType type;
  const char* label;
};
constexpr std::array<Severity, 2> kSeverities = {{
    {nvml::MemoryErrorType::kCorrected, "correctable"},
    {nvml::MemoryErrorType::kUncorrected, "uncorrectable"},
}};

struct Scope {
  nvml::EccCounterType type;
  const char* label;
};
constexpr std::array<Scope, 2> kScopes = {{
    {nvml::EccCounterType::kVolatile, "volatile"},
    {nvml::EccCounterType::kAggregate, "aggregate"},
}};

struct Block {
  nvml::MemoryLocation location;
  const char* label;
};
constexpr std::array<Block, nvml::kMemoryLocationCount> kBlocks = {{
    {nvml::MemoryLocation::kL1Cache, "l1_cache"},
    {nvml::MemoryLocation::kL2Cache, "l2_cache"},
    {nvml::MemoryLocation::kDram, "dram"},
    {nvml::MemoryLocation::kRegisterFile, "register_file"},
    {nvml::MemoryLocation::kTextureMemory, "texture_memory"},
    {nvml::MemoryLocation::kTextureShm, "texture_shm"},
    {nvml::MemoryLocation::kCbu, "cbu"},
    {nvml::MemoryLocation::kSram, "sram"},
}};

struct ThrottleReason {
  unsigned long long bit;
  const char* label;
};
constexpr std::array<ThrottleReason, 9> kThrottleReasons = {{
    {nvml::kClocksEventReasonGpuIdle, "gpu_idle"},
    {nvml::kClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
    {nvml::kClocksEventReasonSwPowerCap, "sw_power_cap"},
    {nvml::kClocksEventReasonHwSlowdown, "hw_slowdown"},
    {nvml::kClocksEventReasonSyncBoost, "sync_boost"},
    {nvml::kClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvml::kClocksEventReasonHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvml::kClocksEventReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {nvml::kClocksEventReasonDisplayClockSetting, "display_clock_setting"},
}};

/// The NVML calls the source makes, resolved by name; null where the library lacks them.
struct Api {
  nvml::InitFn init = nullptr;
  nvml::InitFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::DeviceGetCountFn get_count = nullptr;
  nvml::DeviceGetHandleByIndexFn get_handle = nullptr;
  nvml::DeviceGetStringFn get_name = nullptr;
  nvml::DeviceGetStringFn get_uuid = nullptr;
  nvml::DeviceGetPciInfoFn get_pci_info = nullptr;
  nvml::DeviceGetUintFn get_power_usage = nullptr;
  nvml::DeviceGetUintFn get_enforced_power_limit = nullptr;
  nvml::DeviceGetUintFn get_pcie_replay_counter = nullptr;
  nvml::DeviceGetUintFn get_pcie_link_generation = nullptr;
  nvml::DeviceGetUintFn get_pcie_link_width = nullptr;
  nvml::DeviceGetTemperatureFn get_temperature = nullptr;
  nvml::DeviceGetTemperatureThresholdFn get_temperature_threshold = nullptr;
  nvml::DeviceGetClockInfoFn get_clock_info = nullptr;
  nvml::DeviceGetUtilizationRatesFn get_utilization = nullptr;
  nvml::DeviceGetMemoryInfoFn get_memory_info = nullptr;
  nvml::DeviceGetTotalEccErrorsFn get_total_ecc_errors = nullptr;
  nvml::DeviceGetMemoryErrorCounterFn get_memory_error_counter = nullptr;
  nvml::DeviceGetRetiredPagesFn get_retired_pages = nullptr;
  nvml::DeviceGetRemappedRowsFn get_remapped_rows = nullptr;
  nvml::DeviceGetClocksEventReasonsFn get_clocks_event_reasons = nullptr;
  nvml::EventSetCreateFn event_set_create = nullptr;
  nvml::DeviceRegisterEventsFn register_events = nullptr;
  nvml::EventSetWaitFn event_set_wait = nullptr;
  nvml::EventSetFreeFn event_set_free = nullptr;
};

/// Parses one hexadecimal field of a bus id ending at `end` (or at the end of `text`).
bool ParseHexField(std::string_view* text, char end, std::size_t max_digits, unsigned int* out) {
  const std::size_t length = end == '\0' ? text->size() : text->find(end);
  if (length == 0 || length == std::string_view::npos || length > max_digits) return false;
  const char* first = text->data();
  auto [ptr, ec] = std::from_chars(first, first + length, *out, 16);
  if (ec != std::errc() || ptr != first + length) return false;
  text->remove_prefix(end == '\0' ? length : length + 1);
  return true;
}

/// "00000000:C1:00.0" (or the legacy "0000:C1:00.0") as "0000:c1:00.0"; empty when `text` is
/// not domain:bus:device.function.
std::string NormalisePciBusId(std::string_view text) {
  unsigned int domain = 0, bus = 0, device = 0, function = 0;
  if (!ParseHexField(&text, ':', 8, &domain) || !ParseHexField(&text, ':', 2, &bus) ||
      !ParseHexField(&text, '.', 2, &device) || !ParseHexField(&text, '\0', 1, &function) ||
      device > 0x1f || function > 7) {
    return "";
  }
  std::array<char, 32> out{};
  std::snprintf(out.data(), out.size(), "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out.data();
}

/// The bus id of a filled PciInfo: bus_id, else bus_id_legacy (what the unversioned call
/// fills), else the numbers (function 0, as NVML prints it).
std::string PciBusId(const nvml::PciInfo& pci) {
  for (const char* text : {pci.bus_id, pci.bus_id_legacy}) {
    const std::size_t size = text == pci.bus_id ? sizeof(pci.bus_id) : sizeof(pci.bus_id_legacy);
    std::string normal = NormalisePciBusId(std::string_view(text, strnlen(text, size)));
    if (!normal.empty()) return normal;
  }
  std::array<char, 32> out{};
  std::snprintf(out.data(), out.size(), "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
  return out.data();
}

/// Calls into NVML for one device, remembering whether it reported the GPU lost; once it has,
/// no further calls are made and each answers kErrorGpuIsLost.
class DeviceCalls {
 public:
  template <typename Fn, typename... Args>
  Return operator()(Fn fn, Args... args) {
    if (lost_) return Return::kErrorGpuIsLost;
    if (fn == nullptr) return Return::kErrorFunctionNotFound;
    const Return result = fn(args...);
    if (result == Return::kErrorGpuIsLost) lost_ = true;
    return result;
  }
  bool lost() const { return lost_; }

 private:
  bool lost_ = false;
};

class NvmlTelemetrySource final : public TelemetrySource {
 public:
  explicit NvmlTelemetrySource(std::string library) : library_(std::move(library)) {}
  ~NvmlTelemetrySource() override { Close(); }
  NvmlTelemetrySource(const NvmlTelemetrySource&) = delete;
  NvmlTelemetrySource& operator=(const NvmlTelemetrySource&) = delete;

  std::string_view name() const override { return "nvml"; }
  Status Open() override;
  const std::vector<DeviceInfo>& devices() const override { return devices_; }
  Result<std::vector<Reading>> Read(std::size_t index, double now_seconds) override;

 private:
  Status OpenLibrary();
  Status ResolveSymbols();
  void RegisterXidEvents();
  DeviceInfo Describe(nvml::Device device);
  void DrainEvents();
  void Close();
  /// "Driver Not Loaded (NVML error 9)".
  std::string ErrorText(Return code) const;
  /// "nvml: GPU 1 (0000:c1:00.0)".
  std::string DeviceName(std::size_t index) const;

  std::string library_;
  void* handle_ = nullptr;
  bool initialized_ = false;
  const char* init_name_ = "";
  const char* count_name_ = "";
  const char* handle_name_ = "";
  Api api_;
  nvml::EventSet event_set_ = nullptr;
  std::vector<DeviceInfo> devices_;
  std::vector<nvml::Device> handles_;       // null where nvmlDeviceGetHandleByIndex failed
  std::vector<std::string> handle_errors_;  // why, for those
  std::vector<std::map<unsigned long long, std::uint64_t>> xid_counts_;  // by XID, per device
};

Status NvmlTelemetrySource::Open() {
  Close();
  Status status = OpenLibrary();
  if (!status.ok()) Close();
  return status;
}

Status NvmlTelemetrySource::OpenLibrary() {
  PARITY_ASSIGN_OR_RETURN(handle_, parity::OpenLibrary(library_));
  PARITY_RETURN_IF_ERROR(ResolveSymbols());

  const Return init = api_.init();
  if (init != Return::kSuccess) {
    return Status::Unavailable(library_ + ": " + init_name_ + " failed: " + ErrorText(init));
  }
  initialized_ = true;

  unsigned int count = 0;
  if (const Return r = api_.get_count(&count); r != Return::kSuccess) {
    return Status::Unavailable(library_ + ": " + count_name_ + " failed: " + ErrorText(r));
  }
  if (count == 0) return Status::Unavailable("no NVIDIA GPU (" + library_ + " found none)");

  for (unsigned int index = 0; index < count; ++index) {
    nvml::Device device = nullptr;
    const Return r = api_.get_handle(index, &device);
    if (r != Return::kSuccess) device = nullptr;
    handles_.push_back(device);
    handle_errors_.push_back(r == Return::kSuccess ? ""
                             : r == Return::kErrorGpuIsLost
                                 ? "GPU is lost"
                                 : std::string(handle_name_) + " failed: " + ErrorText(r));
    devices_.push_back(Describe(device));
  }
  xid_counts_.resize(count);
  RegisterXidEvents();
  return Status::Ok();
}

Status NvmlTelemetrySource::ResolveSymbols() {
  SymbolResolver symbols(handle_, library_);
  init_name_ = symbols.Require({"nvmlInit_v2", "nvmlInit"}, &api_.init);
  symbols.Require({"nvmlShutdown"}, &api_.shutdown);
  count_name_ = symbols.Require({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, &api_.get_count);
  handle_name_ = symbols.Require({"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
                                 &api_.get_handle);
  PARITY_RETURN_IF_ERROR(symbols.status());

  symbols.Optional({"nvmlErrorString"}, &api_.error_string);
  symbols.Optional({"nvmlDeviceGetName"}, &api_.get_name);
  symbols.Optional({"nvmlDeviceGetUUID"}, &api_.get_uuid);
  symbols.Optional({"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
                   &api_.get_pci_info);
  symbols.Optional({"nvmlDeviceGetPowerUsage"}, &api_.get_power_usage);
  symbols.Optional({"nvmlDeviceGetEnforcedPowerLimit"}, &api_.get_enforced_power_limit);
  symbols.Optional({"nvmlDeviceGetPcieReplayCounter"}, &api_.get_pcie_replay_counter);
  symbols.Optional({"nvmlDeviceGetCurrPcieLinkGeneration"}, &api_.get_pcie_link_generation);
  symbols.Optional({"nvmlDeviceGetCurrPcieLinkWidth"}, &api_.get_pcie_link_width);
  symbols.Optional({"nvmlDeviceGetTemperature"}, &api_.get_temperature);
  symbols.Optional({"nvmlDeviceGetTemperatureThreshold"}, &api_.get_temperature_threshold);
  symbols.Optional({"nvmlDeviceGetClockInfo"}, &api_.get_clock_info);
  symbols.Optional({"nvmlDeviceGetUtilizationRates"}, &api_.get_utilization);
  symbols.Optional({"nvmlDeviceGetMemoryInfo"}, &api_.get_memory_info);
  symbols.Optional({"nvmlDeviceGetTotalEccErrors"}, &api_.get_total_ecc_errors);
  symbols.Optional({"nvmlDeviceGetMemoryErrorCounter"}, &api_.get_memory_error_counter);
  symbols.Optional({"nvmlDeviceGetRetiredPages"}, &api_.get_retired_pages);
  symbols.Optional({"nvmlDeviceGetRemappedRows"}, &api_.get_remapped_rows);
  symbols.Optional(
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
      &api_.get_clocks_event_reasons);
  symbols.Optional({"nvmlEventSetCreate"}, &api_.event_set_create);
  symbols.Optional({"nvmlDeviceRegisterEvents"}, &api_.register_events);
  symbols.Optional({"nvmlEventSetWait_v2", "nvmlEventSetWait"}, &api_.event_set_wait);
  symbols.Optional({"nvmlEventSetFree"}, &api_.event_set_free);
  return Status::Ok();
}

DeviceInfo NvmlTelemetrySource::Describe(nvml::Device device) {
  DeviceInfo info;
  info.vendor = "NVIDIA";
  if (device == nullptr) return info;
  DeviceCalls call;
  std::array<char, nvml::kDeviceNameBufferSize> name{};
  if (call(api_.get_name, device, name.data(), nvml::kDeviceNameBufferSize) == Return::kSuccess) {
    info.model = std::string(name.data(), strnlen(name.data(), name.size()));
  }
  std::array<char, nvml::kDeviceUuidBufferSize> uuid{};
  if (call(api_.get_uuid, device, uuid.data(), nvml::kDeviceUuidBufferSize) == Return::kSuccess) {
    info.uuid = std::string(uuid.data(), strnlen(uuid.data(), uuid.size()));
  }
  nvml::PciInfo pci{};
  if (call(api_.get_pci_info, device, &pci) == Return::kSuccess) info.pci_bus_id = PciBusId(pci);
  unsigned int milliwatts = 0;
  if (call(api_.get_enforced_power_limit, device, &milliwatts) == Return::kSuccess) {
    info.power_limit_watts = milliwatts / 1000.0;
  }
  nvml::Memory memory{};
  if (call(api_.get_memory_info, device, &memory) == Return::kSuccess) {
    info.memory_total_bytes = static_cast<double>(memory.total);
  }
  unsigned int celsius = 0;
  if (call(api_.get_temperature_threshold, device, nvml::TemperatureThreshold::kSlowdown,
           &celsius) == Return::kSuccess) {
    info.temperature_limit_celsius = celsius;
  }
  return info;
}

void NvmlTelemetrySource::RegisterXidEvents() {
  if (api_.event_set_create == nullptr || api_.register_events == nullptr ||
      api_.event_set_wait == nullptr || api_.event_set_free == nullptr ||
      api_.event_set_create(&event_set_) != Return::kSuccess) {
    event_set_ = nullptr;
    return;
  }
  // A device that can't report XIDs (kErrorNotSupported and the like) is left out of the set.
  for (nvml::Device device : handles_) {
    if (device != nullptr) {
      static_cast<void>(api_.register_events(device, nvml::kEventTypeXidCriticalError, event_set_));
    }
  }
}

void NvmlTelemetrySource::DrainEvents() {
  if (event_set_ == nullptr) return;
  for (int i = 0; i < kMaxEventsPerDrain; ++i) {
    nvml::EventData event{};
    if (api_.event_set_wait(event_set_, &event, 0) != Return::kSuccess) return;
    if ((event.event_type & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (std::size_t d = 0; d < handles_.size(); ++d) {
      if (handles_[d] != nullptr && handles_[d] == event.device) ++xid_counts_[d][event.event_data];
    }
  }
}

Result<std::vector<Reading>> NvmlTelemetrySource::Read(std::size_t index, double /*now_seconds*/) {
  if (index >= devices_.size()) {
    return Status::Internal("nvml: no device " + std::to_string(index) + " (" +
                            std::to_string(devices_.size()) + " opened)");
  }
  DrainEvents();
  const nvml::Device device = handles_[index];
  if (device == nullptr)
    return Status::Unavailable(DeviceName(index) + ": " + handle_errors_[index]);

  std::vector<Reading> out;
  auto add = [&out](const char* metric, Labels labels, double value) {
    out.push_back(Reading{metric, std::move(labels), value});
  };
  DeviceCalls call;
  constexpr Return kOk = Return::kSuccess;

  unsigned int value = 0;
  if (call(api_.get_temperature, device, nvml::TemperatureSensor::kGpu, &value) == kOk) {
    add("gpu_temperature_celsius", {{"sensor", "junction"}}, value);
  }
  if (call(api_.get_power_usage, device, &value) == kOk) add("gpu_power_watts", {}, value / 1e3);
  if (call(api_.get_enforced_power_limit, device, &value) == kOk) {
    add("gpu_power_limit_watts", {}, value / 1e3);
  }
  nvml::Utilization utilization{};
  if (call(api_.get_utilization, device, &utilization) == kOk) {
    add("gpu_utilization_ratio", {}, utilization.gpu / 100.0);
  }
  nvml::Memory memory{};
  if (call(api_.get_memory_info, device, &memory) == kOk) {
    add("gpu_memory_used_bytes", {}, static_cast<double>(memory.used));
    add("gpu_memory_total_bytes", {}, static_cast<double>(memory.total));
  }
  for (auto [type, domain] :
       {std::pair{nvml::ClockType::kSm, "sm"}, std::pair{nvml::ClockType::kMem, "memory"}}) {
    if (call(api_.get_clock_info, device, type, &value) == kOk) {
      add("gpu_clock_hertz", {{"domain", domain}}, value * 1e6);
    }
  }

  for (const Severity& severity : kSeverities) {
    for (const Scope& scope : kScopes) {
      unsigned long long count = 0;
      if (call(api_.get_total_ecc_errors, device, severity.type, scope.type, &count) == kOk) {
        add("gpu_ecc_errors_total",
            {{"severity", severity.label}, {"block", "all"}, {"scope", scope.label}},
            static_cast<double>(count));
      }
      for (const Block& block : kBlocks) {
        if (call(api_.get_memory_error_counter, device, severity.type, scope.type, block.location,
                 &count) == kOk) {
          add("gpu_ecc_errors_total",
              {{"severity", severity.label}, {"block", block.label}, {"scope", scope.label}},
              static_cast<double>(count));
        }
      }
    }
  }

  for (auto [cause, label] :
       {std::pair{nvml::PageRetirementCause::kMultipleSingleBitEccErrors,
                  "multiple_single_bit_ecc"},
        std::pair{nvml::PageRetirementCause::kDoubleBitEccError, "double_bit_ecc"}}) {
    unsigned int pages = 0;
    unsigned long long unused_address = 0;  // a size query writes no address
    const Return r = call(api_.get_retired_pages, device, cause, &pages, &unused_address);
    if (r == kOk || r == Return::kErrorInsufficientSize) {
      add("gpu_retired_pages_total", {{"cause", label}}, pages);
    }
  }
  unsigned int correctable = 0, uncorrectable = 0, pending = 0, failed = 0;
  if (call(api_.get_remapped_rows, device, &correctable, &uncorrectable, &pending, &failed) ==
      kOk) {
    add("gpu_retired_pages_total", {{"cause", "row_remap_correctable"}}, correctable);
    add("gpu_retired_pages_total", {{"cause", "row_remap_uncorrectable"}}, uncorrectable);
  }
  if (call(api_.get_pcie_replay_counter, device, &value) == kOk) {
    add("gpu_pcie_replay_total", {}, value);
  }
  for (const auto& [xid, count] : xid_counts_[index]) {
    add("gpu_xid_events_total", {{"xid", std::to_string(xid)}}, static_cast<double>(count));
  }
  unsigned long long reasons = 0;
  if (call(api_.get_clocks_event_reasons, device, &reasons) == kOk) {
    for (const ThrottleReason& reason : kThrottleReasons) {
      add("gpu_throttle_active", {{"reason", reason.label}}, (reasons & reason.bit) != 0 ? 1 : 0);
    }
  }
  if (call(api_.get_pcie_link_generation, device, &value) == kOk) {
    add("gpu_pcie_link_generation", {}, value);
  }
  if (call(api_.get_pcie_link_width, device, &value) == kOk) add("gpu_pcie_link_width", {}, value);

  if (call.lost()) return Status::Unavailable(DeviceName(index) + ": GPU is lost");
  return out;
}

void NvmlTelemetrySource::Close() {
  if (event_set_ != nullptr) static_cast<void>(api_.event_set_free(event_set_));
  event_set_ = nullptr;
  if (initialized_) static_cast<void>(api_.shutdown());
  initialized_ = false;
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
  api_ = Api{};
  devices_.clear();
  handles_.clear();
  handle_errors_.clear();
  xid_counts_.clear();
}

std::string NvmlTelemetrySource::ErrorText(Return code) const {
  const std::string number = "NVML error " + std::to_string(static_cast<unsigned int>(code));
  const char* text = api_.error_string != nullptr ? api_.error_string(code) : nullptr;
  if (text == nullptr || *text == '\0') return number;
  return std::string(text) + " (" + number + ")";
}

std::string NvmlTelemetrySource::DeviceName(std::size_t index) const {
  std::string name = "nvml: GPU " + std::to_string(index);
  if (!devices_[index].pci_bus_id.empty()) name += " (" + devices_[index].pci_bus_id + ")";
  return name;
}

}  // namespace

std::unique_ptr<TelemetrySource> MakeNvmlSource(std::string library) {
  if (library.empty()) {
    const char* from_env = std::getenv("PARITY_NVML_LIBRARY");
    library = from_env != nullptr && *from_env != '\0' ? from_env : kDefaultLibrary;
  }
  return std::make_unique<NvmlTelemetrySource>(std::move(library));
}

}  // namespace parity::monitor
