// SPDX-License-Identifier: Apache-2.0
// A fake of ROCm SMI's C ABI (librocm_smi64, as of ROCm 5.2.3), built as libfake_rocm_smi.so for
// the rocm-smi source's tests: the calls the source makes, answering from a JSON description of
// the devices it pretends to have. Built again with FAKE_ROCM_SMI_INCOMPLETE (no
// rsmi_num_monitor_devices) as libfake_rocm_smi_incomplete.so.
//
// Every rsmi_init reads the file named by $PARITY_FAKE_ROCM_SMI afresh (no variable: no
// devices), so one process can load the fake again and again with different devices. The file
// holds one object; every member is optional, and a device value left out makes its call
// answer RSMI_STATUS_NOT_SUPPORTED. Numbers in ABI units, uint64 values also as "0x…" strings;
// a status is its number or its name without "RSMI_STATUS_" ("NOT_SUPPORTED").
//
//   {
//     "init_status": "PERMISSION",          // what rsmi_init answers; success when absent
//     "devices": [{
//       "name": "AMD Instinct MI250X",      // rsmi_dev_name_get
//       "brand": "MI250X",                  // rsmi_dev_brand_get
//       "unique_id": "0x3fa1c2d4e5f60718",  // rsmi_dev_unique_id_get
//       "bdfid": "0xc100",                  // rsmi_dev_pci_id_get, the header's bit layout
//       "power_average": 251000000,         // rsmi_dev_power_ave_get, sensor 0, microwatts
//       "power_cap": 560000000,             // rsmi_dev_power_cap_get, sensor 0, microwatts
//       "busy_percent": 37,                 // rsmi_dev_busy_percent_get
//       "vram_total": 68702699520,          // rsmi_dev_memory_total_get, VRAM, bytes
//       "vram_used": 1073741824,            // rsmi_dev_memory_usage_get, VRAM, bytes
//       "temperature": {                    // rsmi_dev_temp_metric_get, millidegrees Celsius
//         "edge": {"current": 41000}, "junction": {"current": 52500, "critical": 110000},
//         "memory": {"current": 48000}},    // sensors edge/junction/memory, current/critical
//       "clocks": {                         // rsmi_dev_gpu_clk_freq_get, "sys" and "mem"
//         "sys": {"current": 2, "frequencies": [500000000, 1000000000, 1700000000]},
//         "mem": {"current": 0, "frequencies": [1600000000]}},  // Hz; "num_supported" too
//       "pcie_bandwidth": {                 // rsmi_dev_pci_bandwidth_get, transfers/s
//         "current": 1, "transfer_rates": [2500000000, 16000000000], "lanes": [1, 16]},
//       "pcie_replay": 7,                   // rsmi_dev_pci_replay_counter_get
//       "ecc_enabled": ["umc", "gfx"],      // rsmi_dev_ecc_enabled_get: block names or a mask
//       "ecc": {"umc": {"correctable": 5, "uncorrectable": 1}},  // rsmi_dev_ecc_count_get
//       "reserved_pages": [                 // rsmi_dev_memory_reserved_pages_get
//         {"address": 4096, "size": 4096, "status": "reserved"}],  // or pending, unreservable
//       "reserved_pages_appear": 1,         // the count query reports this many fewer pages
//       "fail": {"rsmi_dev_power_ave_get": "PERMISSION", "*": "NOT_FOUND"}  // by call; "*": all
//     }]
//   }
//
// fake_rocm_smi_init_count() says how many rsmi_init calls are not yet shut down, and
// fake_rocm_smi_set_failure(dv_ind, call, status) makes a call ("*": every call) of a device
// fail from then on, as a device that falls off the bus does.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "monitor/rocm_smi_api.h"

namespace {

namespace rsmi = parity::monitor::rsmi;
using nlohmann::json;
using rsmi::Status;

struct Named {
  const char* name;
  uint64_t value;
};

constexpr Named kStatuses[] = {
    {"SUCCESS", 0},
    {"INVALID_ARGS", 1},
    {"NOT_SUPPORTED", 2},
    {"FILE_ERROR", 3},
    {"PERMISSION", 4},
    {"OUT_OF_RESOURCES", 5},
    {"INTERNAL_EXCEPTION", 6},
    {"INPUT_OUT_OF_BOUNDS", 7},
    {"INIT_ERROR", 8},
    {"NOT_YET_IMPLEMENTED", 9},
    {"NOT_FOUND", 10},
    {"INSUFFICIENT_SIZE", 11},
    {"INTERRUPT", 12},
    {"UNEXPECTED_SIZE", 13},
    {"NO_DATA", 14},
    {"UNEXPECTED_DATA", 15},
    {"BUSY", 16},
    {"REFCOUNT_OVERFLOW", 17},
    {"UNKNOWN_ERROR", 0xFFFFFFFF},
};

constexpr Named kBlocks[] = {
    {"umc", 0x1},       {"sdma", 0x2},  {"gfx", 0x4},        {"mmhub", 0x8},   {"athub", 0x10},
    {"pcie_bif", 0x20}, {"hdp", 0x40},  {"xgmi_wafl", 0x80}, {"df", 0x100},    {"smn", 0x200},
    {"sem", 0x400},     {"mp0", 0x800}, {"mp1", 0x1000},     {"fuse", 0x2000},
};

constexpr Named kSensors[] = {{"edge", 0}, {"junction", 1}, {"memory", 2}};
constexpr Named kTemperatureMetrics[] = {{"current", 0}, {"critical", 5}};
constexpr Named kClocks[] = {{"sys", 0}, {"mem", 4}};
constexpr Named kPageStatuses[] = {{"reserved", 0}, {"pending", 1}, {"unreservable", 2}};

/// One device as the config describes it, in ABI units; absent values answer NOT_SUPPORTED.
struct Device {
  std::optional<std::string> name;
  std::optional<std::string> brand;
  std::optional<uint64_t> unique_id;
  std::optional<uint64_t> bdfid;
  std::optional<uint64_t> power_average;
  std::optional<uint64_t> power_cap;
  std::optional<uint32_t> busy_percent;
  std::optional<uint64_t> vram_total;
  std::optional<uint64_t> vram_used;
  std::map<std::pair<uint64_t, uint64_t>, int64_t> temperature;  // by (sensor, metric)
  std::map<uint64_t, rsmi::Frequencies> clocks;                  // by clock type
  std::optional<rsmi::PcieBandwidth> pcie_bandwidth;
  std::optional<uint64_t> pcie_replay;
  std::optional<uint64_t> ecc_enabled;
  std::map<uint64_t, rsmi::ErrorCount> ecc;  // by block bit
  std::optional<std::vector<rsmi::RetiredPageRecord>> reserved_pages;
  uint32_t reserved_pages_appear = 0;
  std::map<std::string, Status> fail;  // by call name, "*" for every call
};

struct Fake {
  int init_count = 0;
  std::vector<Device> devices;
};

Fake& State() {
  static Fake fake;
  return fake;
}

// Config parsing; throws on malformed input, which rsmi_init turns into its answer.

uint64_t Lookup(const json& value, const Named* table, std::size_t size, const char* what) {
  if (value.is_number()) return value.get<uint64_t>();
  const std::string name = value.get<std::string>();
  for (std::size_t i = 0; i < size; ++i) {
    if (name == table[i].name) return table[i].value;
  }
  throw std::runtime_error(std::string("unknown ") + what + " \"" + name + "\"");
}

template <std::size_t N>
uint64_t Lookup(const json& value, const Named (&table)[N], const char* what) {
  return Lookup(value, table, N, what);
}

uint64_t U64(const json& value) {
  if (value.is_string()) return std::stoull(value.get<std::string>(), nullptr, 0);
  if (value.is_number_float()) return static_cast<uint64_t>(value.get<double>());
  return value.get<uint64_t>();
}

template <typename T>
void Optional(const json& object, const char* key, std::optional<T>* out) {
  if (!object.contains(key)) return;
  if constexpr (std::is_same_v<T, std::string>) {
    *out = object.at(key).get<std::string>();
  } else {
    *out = static_cast<T>(U64(object.at(key)));
  }
}

rsmi::Frequencies ParseFrequencies(const json& object, const char* list) {
  rsmi::Frequencies f{};
  const json& values = object.at(list);
  const std::size_t n = std::min(values.size(), rsmi::kMaxNumFrequencies);
  for (std::size_t i = 0; i < n; ++i) f.frequency[i] = U64(values[i]);
  f.num_supported = object.contains("num_supported")
                        ? static_cast<uint32_t>(U64(object.at("num_supported")))
                        : static_cast<uint32_t>(n);
  f.current = static_cast<uint32_t>(U64(object.value("current", json(0))));
  return f;
}

Device ParseDevice(const json& d) {
  Device device;
  Optional(d, "name", &device.name);
  Optional(d, "brand", &device.brand);
  Optional(d, "unique_id", &device.unique_id);
  Optional(d, "bdfid", &device.bdfid);
  Optional(d, "power_average", &device.power_average);
  Optional(d, "power_cap", &device.power_cap);
  Optional(d, "busy_percent", &device.busy_percent);
  Optional(d, "vram_total", &device.vram_total);
  Optional(d, "vram_used", &device.vram_used);
  Optional(d, "pcie_replay", &device.pcie_replay);
  if (d.contains("temperature")) {
    for (const auto& [sensor, metrics] : d.at("temperature").items()) {
      for (const auto& [metric, value] : metrics.items()) {
        device.temperature[{Lookup(json(sensor), kSensors, "sensor"),
                            Lookup(json(metric), kTemperatureMetrics, "temperature metric")}] =
            value.get<int64_t>();
      }
    }
  }
  if (d.contains("clocks")) {
    for (const auto& [clock, levels] : d.at("clocks").items()) {
      device.clocks[Lookup(json(clock), kClocks, "clock")] =
          ParseFrequencies(levels, "frequencies");
    }
  }
  if (d.contains("pcie_bandwidth")) {
    const json& bw = d.at("pcie_bandwidth");
    rsmi::PcieBandwidth bandwidth{};
    bandwidth.transfer_rate = ParseFrequencies(bw, "transfer_rates");
    const json& lanes = bw.at("lanes");
    for (std::size_t i = 0; i < std::min(lanes.size(), rsmi::kMaxNumFrequencies); ++i) {
      bandwidth.lanes[i] = lanes[i].get<uint32_t>();
    }
    device.pcie_bandwidth = bandwidth;
  }
  if (d.contains("ecc_enabled")) {
    const json& enabled = d.at("ecc_enabled");
    if (enabled.is_array()) {
      uint64_t mask = 0;
      for (const json& block : enabled) mask |= Lookup(block, kBlocks, "block");
      device.ecc_enabled = mask;
    } else {
      device.ecc_enabled = U64(enabled);
    }
  }
  if (d.contains("ecc")) {
    for (const auto& [block, counts] : d.at("ecc").items()) {
      device.ecc[Lookup(json(block), kBlocks, "block")] = {
          U64(counts.value("correctable", json(0))), U64(counts.value("uncorrectable", json(0)))};
    }
  }
  if (d.contains("reserved_pages")) {
    std::vector<rsmi::RetiredPageRecord> pages;
    for (const json& page : d.at("reserved_pages")) {
      pages.push_back({U64(page.value("address", json(0))), U64(page.value("size", json(4096))),
                       static_cast<rsmi::MemoryPageStatus>(
                           Lookup(page.at("status"), kPageStatuses, "page status"))});
    }
    device.reserved_pages = std::move(pages);
  }
  device.reserved_pages_appear = d.value("reserved_pages_appear", 0u);
  if (d.contains("fail")) {
    for (const auto& [call, status] : d.at("fail").items()) {
      device.fail[call] = static_cast<Status>(Lookup(status, kStatuses, "status"));
    }
  }
  return device;
}

/// Reads $PARITY_FAKE_ROCM_SMI into `devices`; returns rsmi_init's answer.
Status Load(std::vector<Device>* devices) {
  devices->clear();
  const char* path = std::getenv("PARITY_FAKE_ROCM_SMI");
  if (path == nullptr || *path == '\0') return Status::kSuccess;
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open the file");
    const json config = json::parse(in);
    if (config.contains("init_status")) {
      const auto status =
          static_cast<Status>(Lookup(config.at("init_status"), kStatuses, "status"));
      if (status != Status::kSuccess) return status;
    }
    if (config.contains("devices")) {
      for (const json& device : config.at("devices")) devices->push_back(ParseDevice(device));
    }
    return Status::kSuccess;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_rocm_smi: %s: %s\n", path, e.what());
    devices->clear();
    return Status::kInternalException;
  }
}

/// Runs `answer` on device `dv_ind` unless the fake is not initialised, the index is out of
/// range or the config makes `call` fail.
template <typename Answer>
Status Call(uint32_t dv_ind, const char* call, Answer answer) {
  Fake& fake = State();
  if (fake.init_count == 0) return Status::kInitError;
  if (dv_ind >= fake.devices.size()) return Status::kInvalidArgs;
  const Device& device = fake.devices[dv_ind];
  if (auto it = device.fail.find(call); it != device.fail.end()) return it->second;
  if (auto it = device.fail.find("*"); it != device.fail.end()) return it->second;
  return answer(device);
}

template <typename T, typename U>
Status Put(const std::optional<T>& value, U* out) {
  if (!value) return Status::kNotSupported;
  if (out == nullptr) return Status::kInvalidArgs;
  *out = static_cast<U>(*value);
  return Status::kSuccess;
}

template <typename Length>
Status PutString(const std::optional<std::string>& value, char* out, Length len) {
  if (!value) return Status::kNotSupported;
  if (out == nullptr || len == 0) return Status::kInvalidArgs;
  const std::size_t n = std::min<std::size_t>(value->size(), len - 1);
  std::memcpy(out, value->data(), n);
  out[n] = '\0';
  return n < value->size() ? Status::kInsufficientSize : Status::kSuccess;
}

}  // namespace

extern "C" {

Status rsmi_init(uint64_t /*init_flags*/) {
  Fake& fake = State();
  const Status status = Load(&fake.devices);
  if (status == Status::kSuccess) ++fake.init_count;
  return status;
}

Status rsmi_shut_down() {
  Fake& fake = State();
  if (fake.init_count == 0) return Status::kInitError;
  if (--fake.init_count == 0) fake.devices.clear();
  return Status::kSuccess;
}

#ifndef FAKE_ROCM_SMI_INCOMPLETE
Status rsmi_num_monitor_devices(uint32_t* num_devices) {
  if (num_devices == nullptr) return Status::kInvalidArgs;
  if (State().init_count == 0) return Status::kInitError;
  *num_devices = static_cast<uint32_t>(State().devices.size());
  return Status::kSuccess;
}
#endif

Status rsmi_status_string(Status status, const char** status_string) {
  if (status_string == nullptr) return Status::kInvalidArgs;
  // Static texts: the real library hands out pointers that stay valid.
  static constexpr struct {
    Status status;
    const char* text;
  } kTexts[] = {
      {Status::kSuccess, "fake: success"},
      {Status::kInvalidArgs, "fake: invalid arguments"},
      {Status::kNotSupported, "fake: not supported"},
      {Status::kFileError, "fake: file error"},
      {Status::kPermission, "fake: permission denied"},
      {Status::kInitError, "fake: initialization error"},
      {Status::kNotFound, "fake: not found"},
      {Status::kInsufficientSize, "fake: insufficient size"},
  };
  for (const auto& entry : kTexts) {
    if (entry.status == status) {
      *status_string = entry.text;
      return Status::kSuccess;
    }
  }
  *status_string = "fake: unknown error";
  return Status::kUnknownError;
}

Status rsmi_dev_name_get(uint32_t dv_ind, char* name, std::size_t len) {
  return Call(dv_ind, __func__, [&](const Device& d) { return PutString(d.name, name, len); });
}

Status rsmi_dev_brand_get(uint32_t dv_ind, char* brand, uint32_t len) {
  return Call(dv_ind, __func__, [&](const Device& d) { return PutString(d.brand, brand, len); });
}

Status rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t* id) {
  return Call(dv_ind, __func__, [&](const Device& d) { return Put(d.unique_id, id); });
}

Status rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t* bdfid) {
  return Call(dv_ind, __func__, [&](const Device& d) { return Put(d.bdfid, bdfid); });
}

Status rsmi_dev_pci_bandwidth_get(uint32_t dv_ind, rsmi::PcieBandwidth* bandwidth) {
  return Call(dv_ind, __func__, [&](const Device& d) { return Put(d.pcie_bandwidth, bandwidth); });
}

Status rsmi_dev_pci_replay_counter_get(uint32_t dv_ind, uint64_t* counter) {
  return Call(dv_ind, __func__, [&](const Device& d) { return Put(d.pcie_replay, counter); });
}

Status rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* power) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    return sensor_ind == 0 ? Put(d.power_average, power) : Status::kNotSupported;
  });
}

Status rsmi_dev_power_cap_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* cap) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    return sensor_ind == 0 ? Put(d.power_cap, cap) : Status::kNotSupported;
  });
}

Status rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi::MemoryType mem_type, uint64_t* total) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    return mem_type == rsmi::MemoryType::kVram ? Put(d.vram_total, total) : Status::kNotSupported;
  });
}

Status rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi::MemoryType mem_type, uint64_t* used) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    return mem_type == rsmi::MemoryType::kVram ? Put(d.vram_used, used) : Status::kNotSupported;
  });
}

Status rsmi_dev_memory_reserved_pages_get(uint32_t dv_ind, uint32_t* num_pages,
                                          rsmi::RetiredPageRecord* records) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    if (!d.reserved_pages) return Status::kNotSupported;
    if (num_pages == nullptr) return Status::kInvalidArgs;
    const auto count = static_cast<uint32_t>(d.reserved_pages->size());
    if (records == nullptr) {
      *num_pages = count - std::min(count, d.reserved_pages_appear);
      return Status::kSuccess;
    }
    const uint32_t written = std::min(*num_pages, count);
    std::copy_n(d.reserved_pages->begin(), written, records);
    *num_pages = written;
    return written < count ? Status::kInsufficientSize : Status::kSuccess;
  });
}

Status rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type,
                                rsmi::TemperatureMetric metric, int64_t* temperature) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    auto it = d.temperature.find({sensor_type, static_cast<uint64_t>(metric)});
    if (it == d.temperature.end()) return Status::kNotSupported;
    return Put(std::optional<int64_t>(it->second), temperature);
  });
}

Status rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t* busy_percent) {
  return Call(dv_ind, __func__, [&](const Device& d) { return Put(d.busy_percent, busy_percent); });
}

Status rsmi_dev_gpu_clk_freq_get(uint32_t dv_ind, rsmi::ClkType clk_type, rsmi::Frequencies* f) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    auto it = d.clocks.find(static_cast<uint64_t>(clk_type));
    if (it == d.clocks.end()) return Status::kNotSupported;
    return Put(std::optional<rsmi::Frequencies>(it->second), f);
  });
}

Status rsmi_dev_ecc_enabled_get(uint32_t dv_ind, uint64_t* enabled_blocks) {
  return Call(dv_ind, __func__,
              [&](const Device& d) { return Put(d.ecc_enabled, enabled_blocks); });
}

Status rsmi_dev_ecc_count_get(uint32_t dv_ind, rsmi::GpuBlock block, rsmi::ErrorCount* ec) {
  return Call(dv_ind, __func__, [&](const Device& d) {
    auto it = d.ecc.find(static_cast<uint64_t>(block));
    if (it == d.ecc.end()) return Status::kNotSupported;
    return Put(std::optional<rsmi::ErrorCount>(it->second), ec);
  });
}

/// How many rsmi_init calls have not been shut down.
int fake_rocm_smi_init_count() { return State().init_count; }

/// Makes `call` ("*": every call) of device `dv_ind` answer `status` from now on.
void fake_rocm_smi_set_failure(uint32_t dv_ind, const char* call, uint32_t status) {
  Fake& fake = State();
  if (dv_ind < fake.devices.size()) fake.devices[dv_ind].fail[call] = static_cast<Status>(status);
}

}  // extern "C"

// The exports have the types parity's declarations give them (checked against the real header
// by rocm_smi_abi_test.cc), so the source calls them through pointers of their own types.
static_assert(std::is_same_v<decltype(&rsmi_init), rsmi::InitFn>);
static_assert(std::is_same_v<decltype(&rsmi_shut_down), rsmi::ShutDownFn>);
#ifndef FAKE_ROCM_SMI_INCOMPLETE
static_assert(std::is_same_v<decltype(&rsmi_num_monitor_devices), rsmi::NumMonitorDevicesFn>);
#endif
static_assert(std::is_same_v<decltype(&rsmi_status_string), rsmi::StatusStringFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_name_get), rsmi::DevNameGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_brand_get), rsmi::DevBrandGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_unique_id_get), rsmi::DevUniqueIdGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_pci_id_get), rsmi::DevPciIdGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_pci_bandwidth_get), rsmi::DevPciBandwidthGetFn>);
static_assert(
    std::is_same_v<decltype(&rsmi_dev_pci_replay_counter_get), rsmi::DevPciReplayCounterGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_power_ave_get), rsmi::DevPowerAveGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_power_cap_get), rsmi::DevPowerCapGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_memory_total_get), rsmi::DevMemoryTotalGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_memory_usage_get), rsmi::DevMemoryUsageGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_memory_reserved_pages_get),
                             rsmi::DevMemoryReservedPagesGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_temp_metric_get), rsmi::DevTempMetricGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_busy_percent_get), rsmi::DevBusyPercentGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_gpu_clk_freq_get), rsmi::DevGpuClkFreqGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_ecc_enabled_get), rsmi::DevEccEnabledGetFn>);
static_assert(std::is_same_v<decltype(&rsmi_dev_ecc_count_get), rsmi::DevEccCountGetFn>);
