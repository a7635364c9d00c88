// SPDX-License-Identifier: Apache-2.0
// A fake of NVML's C ABI (src/monitor/nvml_api.h), built as libfake_nvml.so for the nvml
// source's tests: the calls the source makes, answering for the devices described by the JSON
// file named by $PARITY_FAKE_NVML, which every nvmlInit* reads afresh (the same library may be
// loaded, initialised and shut down many times in one process).
//
// It exports some calls only under older names, as drivers before 535 do, so that the source's
// fallbacks are exercised: nvmlDeviceGetPciInfo_v2 (no _v3) and
// nvmlDeviceGetCurrentClocksThrottleReasons (no ...ClocksEventReasons). Built again with
// FAKE_NVML_INCOMPLETE as libfake_nvml_incomplete.so: no nvmlDeviceGetHandleByIndex under any
// name, and nvmlInit, nvmlDeviceGetCount and nvmlEventSetWait only under their unversioned names.
//
// The file:
//   {
//     "init_error": 9,          optional: every nvmlInit* fails with this nvmlReturn_t
//     "devices": [              nvmlDeviceGetCount's answer, in index order (at most 64)
//       {
//         "name": "NVIDIA H200",                    nvmlDeviceGetName
//         "uuid": "GPU-…",                          nvmlDeviceGetUUID
//         "pci_bus_id": "00000000:C1:00.0",         nvmlDeviceGetPciInfo_v2's busId; domain,
//                                                   bus and device are parsed from it
//         "pci_device_id": 8837,                    pciDeviceId (optional, default 0)
//         "temperature_gpu": 51,                    °C, nvmlDeviceGetTemperature (GPU sensor)
//         "temperature_thresholds": {"shutdown": 92, "slowdown": 87, "mem_max": 95,
//                                    "gpu_max": 85},  °C, nvmlDeviceGetTemperatureThreshold
//         "power_usage_mw": 351250,                 nvmlDeviceGetPowerUsage
//         "enforced_power_limit_mw": 700000,        nvmlDeviceGetEnforcedPowerLimit
//         "utilization": {"gpu": 73, "memory": 41}, percent, nvmlDeviceGetUtilizationRates
//         "memory": {"total": 150754820096, "used": 1073741824},  bytes, nvmlDeviceGetMemoryInfo
//         "clocks_mhz": {"graphics": 1755, "sm": 1980, "memory": 2619, "video": 1650},
//                                                   nvmlDeviceGetClockInfo
//         "ecc_total": {"volatile": {"corrected": 5, "uncorrected": 1},
//                       "aggregate": {"corrected": 40, "uncorrected": 2}},
//                                                   nvmlDeviceGetTotalEccErrors
//         "ecc_locations": {"dram": {"volatile": {...}, "aggregate": {...}}, ...},
//                                                   nvmlDeviceGetMemoryErrorCounter; locations
//                                                   l1_cache, l2_cache, dram, register_file,
//                                                   texture_memory, texture_shm, cbu, sram
//         "retired_pages": {"multiple_single_bit_ecc": 3, "double_bit_ecc": 0},
//                                                   nvmlDeviceGetRetiredPages (page counts)
//         "remapped_rows": {"correctable": 4, "uncorrectable": 1, "pending": 0, "failure": 0},
//                                                   nvmlDeviceGetRemappedRows
//         "pcie_replay": 12,                        nvmlDeviceGetPcieReplayCounter
//         "clocks_event_reasons": 164,              the reasons bit mask
//         "pcie_link": {"generation": 5, "width": 16},  nvmlDeviceGetCurrPcieLink*
//         "xid_events": [[79, 79, 13], [], [48]],   XIDs by drain, below
//         "not_supported": ["nvmlDeviceGetPowerUsage", ...],
//         "lost": false,                            every call about it: NVML_ERROR_GPU_IS_LOST
//         "handle_error": 15                        nvmlDeviceGetHandleByIndex fails with it
//       }
//     ]
//   }
// A value that is absent makes its call answer NVML_ERROR_NOT_SUPPORTED, as does naming the
// call in "not_supported" (by its unversioned name; both reasons calls are
// "nvmlDeviceGetCurrentClocksEventReasons"; "nvmlDeviceRegisterEvents" makes the device unable
// to report XIDs). Nested objects may hold some keys only.
//
// XID events: an event set delivers them in drains. A drain begins with the first
// nvmlEventSetWait* after the set was created or after the last drain ended; it then holds, for
// every device registered in the set, the next not yet delivered list of its "xid_events", and
// returns its events one per call until a call finds none left, which answers
// NVML_ERROR_TIMEOUT and ends the drain. So a source that drains at each read gets list k at its
// k-th read.
//
// For the tests, beyond NVML: fake_nvml_open_inits() (nvmlInit* calls not yet shut down),
// fake_nvml_open_event_sets(), and fake_nvml_lose_gpu(index), after which the device answers
// NVML_ERROR_GPU_IS_LOST until the next nvmlInit*.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../../src/monitor/nvml_api.h"

namespace {

namespace nvml = parity::monitor::nvml;
using nlohmann::json;
using nvml::Return;

constexpr std::size_t kMaxDevices = 64;

struct EventSetState {
  std::vector<bool> registered = std::vector<bool>(kMaxDevices, false);
  std::deque<nvml::EventData> pending;
  std::size_t next_list = 0;
  bool draining = false;
};

struct State {
  std::mutex mutex;
  json devices = json::array();
  int inits = 0;
  std::vector<bool> lost = std::vector<bool>(kMaxDevices, false);
  std::vector<std::unique_ptr<EventSetState>> event_sets;
  char handles[kMaxDevices] = {};  // device i's nvmlDevice_t is &handles[i]
};

// Built at first use, so the library has no global constructors; destroyed at dlclose.
State& TheState() {
  static State state;
  return state;
}

nvml::Device HandleOf(State& state, std::size_t index) {
  return reinterpret_cast<nvml::Device>(&state.handles[index]);
}

/// The index of `device` among the configured devices, or -1.
long IndexOf(State& state, nvml::Device device) {
  const auto address = reinterpret_cast<std::uintptr_t>(device);
  const auto first = reinterpret_cast<std::uintptr_t>(&state.handles[0]);
  if (address < first || address >= first + state.devices.size()) return -1;
  return static_cast<long>(address - first);
}

EventSetState* FindSet(State& state, nvml::EventSet set) {
  for (const auto& candidate : state.event_sets) {
    if (reinterpret_cast<nvml::EventSet>(candidate.get()) == set) return candidate.get();
  }
  return nullptr;
}

/// The member `key` of `object`, or nullptr when it has none.
const json* Member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

/// Stores the unsigned number at `path` under `object` in *out: kErrorNotSupported when a key
/// is missing.
template <typename T>
Return Value(const json& object, std::initializer_list<std::string_view> path, T* out) {
  if (out == nullptr) return Return::kErrorInvalidArgument;
  const json* node = &object;
  for (std::string_view key : path) {
    node = Member(*node, key);
    if (node == nullptr) return Return::kErrorNotSupported;
  }
  *out = node->get<T>();
  return Return::kSuccess;
}

Return CopyString(const json& device, const char* key, char* text, unsigned int length) {
  if (text == nullptr) return Return::kErrorInvalidArgument;
  const json* value = Member(device, key);
  if (value == nullptr) return Return::kErrorNotSupported;
  const std::string& s = value->get_ref<const std::string&>();
  if (s.size() + 1 > length) return Return::kErrorInsufficientSize;
  std::memcpy(text, s.c_str(), s.size() + 1);
  return Return::kSuccess;
}

/// Answers a call about `device`: checks the library is initialised and the device is known,
/// lost or lacks `call`, then runs `body(device's JSON, its index)`.
template <typename Body>
Return Answer(nvml::Device device, const char* call, Body body) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  const long index = IndexOf(state, device);
  if (index < 0) return Return::kErrorInvalidArgument;
  try {
    const json& config = state.devices[static_cast<std::size_t>(index)];
    if (state.lost[static_cast<std::size_t>(index)] || config.value("lost", false)) {
      return Return::kErrorGpuIsLost;
    }
    if (const json* unsupported = Member(config, "not_supported"); unsupported != nullptr) {
      for (const json& name : *unsupported) {
        if (name == call) return Return::kErrorNotSupported;
      }
    }
    return body(config, static_cast<std::size_t>(index));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: %s: %s\n", call, e.what());
    return Return::kErrorUnknown;
  }
}

template <typename T, std::size_t N>
const char* NameOf(const char* const (&names)[N], T value) {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : nullptr;
}

constexpr const char* kThresholds[] = {"shutdown", "slowdown", "mem_max", "gpu_max"};
constexpr const char* kClocks[] = {"graphics", "sm", "memory", "video"};
constexpr const char* kScopes[] = {"volatile", "aggregate"};
constexpr const char* kSeverities[] = {"corrected", "uncorrected"};
constexpr const char* kLocations[] = {"l1_cache",       "l2_cache",    "dram", "register_file",
                                      "texture_memory", "texture_shm", "cbu",  "sram"};
constexpr const char* kCauses[] = {"multiple_single_bit_ecc", "double_bit_ecc"};

Return Init() {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  const char* path = std::getenv("PARITY_FAKE_NVML");
  if (path == nullptr || *path == '\0') return Return::kErrorDriverNotLoaded;
  try {
    std::ifstream in(path);
    if (!in) return Return::kErrorDriverNotLoaded;
    const json config = json::parse(in);
    if (const json* code = Member(config, "init_error"); code != nullptr) {
      return static_cast<Return>(code->get<unsigned int>());
    }
    const json* devices = Member(config, "devices");
    if (devices == nullptr || !devices->is_array() || devices->size() > kMaxDevices) {
      std::fprintf(stderr, "fake_nvml: %s: no \"devices\" list of at most %zu\n", path,
                   kMaxDevices);
      return Return::kErrorUnknown;
    }
    state.devices = *devices;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: %s: %s\n", path, e.what());
    return Return::kErrorUnknown;
  }
  state.lost.assign(kMaxDevices, false);
  ++state.inits;
  return Return::kSuccess;
}

Return GetCount(unsigned int* count) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  if (count == nullptr) return Return::kErrorInvalidArgument;
  *count = static_cast<unsigned int>(state.devices.size());
  return Return::kSuccess;
}

[[maybe_unused]] Return GetHandleByIndex(unsigned int index, nvml::Device* device) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  if (device == nullptr || index >= state.devices.size()) return Return::kErrorInvalidArgument;
  try {
    if (const json* error = Member(state.devices[index], "handle_error"); error != nullptr) {
      return static_cast<Return>(error->get<unsigned int>());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: handle_error: %s\n", e.what());
    return Return::kErrorUnknown;
  }
  *device = HandleOf(state, index);
  return Return::kSuccess;
}

Return GetPciInfo(nvml::Device device, nvml::PciInfo* pci) {
  return Answer(device, "nvmlDeviceGetPciInfo", [pci](const json& config, std::size_t) {
    if (pci == nullptr) return Return::kErrorInvalidArgument;
    const json* bus_id = Member(config, "pci_bus_id");
    if (bus_id == nullptr) return Return::kErrorNotSupported;
    const std::string& text = bus_id->get_ref<const std::string&>();
    unsigned int domain = 0, bus = 0, dev = 0, function = 0;
    if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &function) != 4 ||
        text.size() >= sizeof(pci->bus_id)) {
      return Return::kErrorUnknown;
    }
    *pci = nvml::PciInfo{};
    std::memcpy(pci->bus_id, text.c_str(), text.size() + 1);
    std::snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "%04X:%02X:%02X.0",
                  domain & 0xffff, bus, dev);
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    pci->pci_device_id = config.value("pci_device_id", 0u);
    return Return::kSuccess;
  });
}

Return GetClocksEventReasons(nvml::Device device, unsigned long long* reasons) {
  return Answer(device, "nvmlDeviceGetCurrentClocksEventReasons",
                [reasons](const json& config, std::size_t) {
                  return Value(config, {"clocks_event_reasons"}, reasons);
                });
}

Return EventSetWait(nvml::EventSet set, nvml::EventData* data, unsigned int /*timeout_ms*/) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  EventSetState* events = FindSet(state, set);
  if (events == nullptr || data == nullptr) return Return::kErrorInvalidArgument;
  try {
    if (!events->draining) {
      events->draining = true;
      for (std::size_t d = 0; d < state.devices.size(); ++d) {
        const json* lists = Member(state.devices[d], "xid_events");
        if (!events->registered[d] || lists == nullptr || events->next_list >= lists->size()) {
          continue;
        }
        for (const json& xid : (*lists)[events->next_list]) {
          events->pending.push_back(
              nvml::EventData{HandleOf(state, d), nvml::kEventTypeXidCriticalError,
                              xid.get<unsigned long long>(), 0xFFFFFFFF, 0xFFFFFFFF});
        }
      }
      ++events->next_list;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: xid_events: %s\n", e.what());
    return Return::kErrorUnknown;
  }
  if (events->pending.empty()) {
    events->draining = false;
    return Return::kErrorTimeout;
  }
  *data = events->pending.front();
  events->pending.pop_front();
  return Return::kSuccess;
}

}  // namespace

extern "C" {

#ifdef FAKE_NVML_INCOMPLETE
Return nvmlInit() { return Init(); }
Return nvmlDeviceGetCount(unsigned int* count) { return GetCount(count); }
Return nvmlDeviceGetPciInfo_v3(nvml::Device device, nvml::PciInfo* pci) {
  return GetPciInfo(device, pci);
}
Return nvmlDeviceGetCurrentClocksEventReasons(nvml::Device device, unsigned long long* reasons) {
  return GetClocksEventReasons(device, reasons);
}
Return nvmlEventSetWait(nvml::EventSet set, nvml::EventData* data, unsigned int timeout_ms) {
  return EventSetWait(set, data, timeout_ms);
}
#else
Return nvmlInit_v2() { return Init(); }
Return nvmlDeviceGetCount_v2(unsigned int* count) { return GetCount(count); }
Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml::Device* device) {
  return GetHandleByIndex(index, device);
}
Return nvmlDeviceGetPciInfo_v2(nvml::Device device, nvml::PciInfo* pci) {
  return GetPciInfo(device, pci);
}
Return nvmlDeviceGetCurrentClocksThrottleReasons(nvml::Device device, unsigned long long* reasons) {
  return GetClocksEventReasons(device, reasons);
}
Return nvmlEventSetWait_v2(nvml::EventSet set, nvml::EventData* data, unsigned int timeout_ms) {
  return EventSetWait(set, data, timeout_ms);
}
#endif

Return nvmlShutdown() {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  --state.inits;
  return Return::kSuccess;
}

const char* nvmlErrorString(Return result) {
  switch (result) {
    case Return::kSuccess:
      return "Success";
    case Return::kErrorUninitialized:
      return "Uninitialized";
    case Return::kErrorInvalidArgument:
      return "Invalid Argument";
    case Return::kErrorNotSupported:
      return "Not Supported";
    case Return::kErrorNoPermission:
      return "Insufficient Permissions";
    case Return::kErrorNotFound:
      return "Not Found";
    case Return::kErrorInsufficientSize:
      return "Insufficient Size";
    case Return::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case Return::kErrorTimeout:
      return "Timeout";
    case Return::kErrorFunctionNotFound:
      return "Function Not Found";
    case Return::kErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

Return nvmlDeviceGetName(nvml::Device device, char* name, unsigned int length) {
  return Answer(device, "nvmlDeviceGetName", [=](const json& config, std::size_t) {
    return CopyString(config, "name", name, length);
  });
}

Return nvmlDeviceGetUUID(nvml::Device device, char* uuid, unsigned int length) {
  return Answer(device, "nvmlDeviceGetUUID", [=](const json& config, std::size_t) {
    return CopyString(config, "uuid", uuid, length);
  });
}

Return nvmlDeviceGetTemperature(nvml::Device device, nvml::TemperatureSensor sensor,
                                unsigned int* celsius) {
  return Answer(device, "nvmlDeviceGetTemperature", [=](const json& config, std::size_t) {
    if (sensor != nvml::TemperatureSensor::kGpu) return Return::kErrorInvalidArgument;
    return Value(config, {"temperature_gpu"}, celsius);
  });
}

Return nvmlDeviceGetTemperatureThreshold(nvml::Device device, nvml::TemperatureThreshold type,
                                         unsigned int* celsius) {
  return Answer(device, "nvmlDeviceGetTemperatureThreshold", [=](const json& config, std::size_t) {
    const char* name = NameOf(kThresholds, type);
    if (name == nullptr) return Return::kErrorNotSupported;
    return Value(config, {"temperature_thresholds", name}, celsius);
  });
}

Return nvmlDeviceGetPowerUsage(nvml::Device device, unsigned int* milliwatts) {
  return Answer(device, "nvmlDeviceGetPowerUsage", [=](const json& config, std::size_t) {
    return Value(config, {"power_usage_mw"}, milliwatts);
  });
}

Return nvmlDeviceGetEnforcedPowerLimit(nvml::Device device, unsigned int* milliwatts) {
  return Answer(device, "nvmlDeviceGetEnforcedPowerLimit", [=](const json& config, std::size_t) {
    return Value(config, {"enforced_power_limit_mw"}, milliwatts);
  });
}

Return nvmlDeviceGetUtilizationRates(nvml::Device device, nvml::Utilization* utilization) {
  return Answer(device, "nvmlDeviceGetUtilizationRates", [=](const json& config, std::size_t) {
    if (utilization == nullptr) return Return::kErrorInvalidArgument;
    nvml::Utilization u{};
    if (Return r = Value(config, {"utilization", "gpu"}, &u.gpu); r != Return::kSuccess) return r;
    if (Return r = Value(config, {"utilization", "memory"}, &u.memory); r != Return::kSuccess) {
      return r;
    }
    *utilization = u;
    return Return::kSuccess;
  });
}

Return nvmlDeviceGetMemoryInfo(nvml::Device device, nvml::Memory* memory) {
  return Answer(device, "nvmlDeviceGetMemoryInfo", [=](const json& config, std::size_t) {
    if (memory == nullptr) return Return::kErrorInvalidArgument;
    nvml::Memory m{};
    if (Return r = Value(config, {"memory", "total"}, &m.total); r != Return::kSuccess) return r;
    if (Return r = Value(config, {"memory", "used"}, &m.used); r != Return::kSuccess) return r;
    if (m.used > m.total) return Return::kErrorUnknown;
    m.free = m.total - m.used;
    *memory = m;
    return Return::kSuccess;
  });
}

Return nvmlDeviceGetClockInfo(nvml::Device device, nvml::ClockType type, unsigned int* mhz) {
  return Answer(device, "nvmlDeviceGetClockInfo", [=](const json& config, std::size_t) {
    const char* name = NameOf(kClocks, type);
    if (name == nullptr) return Return::kErrorInvalidArgument;
    return Value(config, {"clocks_mhz", name}, mhz);
  });
}

Return nvmlDeviceGetTotalEccErrors(nvml::Device device, nvml::MemoryErrorType error_type,
                                   nvml::EccCounterType counter_type, unsigned long long* count) {
  return Answer(device, "nvmlDeviceGetTotalEccErrors", [=](const json& config, std::size_t) {
    const char* scope = NameOf(kScopes, counter_type);
    const char* severity = NameOf(kSeverities, error_type);
    if (scope == nullptr || severity == nullptr) return Return::kErrorInvalidArgument;
    return Value(config, {"ecc_total", scope, severity}, count);
  });
}

Return nvmlDeviceGetMemoryErrorCounter(nvml::Device device, nvml::MemoryErrorType error_type,
                                       nvml::EccCounterType counter_type,
                                       nvml::MemoryLocation location, unsigned long long* count) {
  return Answer(device, "nvmlDeviceGetMemoryErrorCounter", [=](const json& config, std::size_t) {
    const char* scope = NameOf(kScopes, counter_type);
    const char* severity = NameOf(kSeverities, error_type);
    const char* block = NameOf(kLocations, location);
    if (scope == nullptr || severity == nullptr || block == nullptr) {
      return Return::kErrorInvalidArgument;
    }
    return Value(config, {"ecc_locations", block, scope, severity}, count);
  });
}

Return nvmlDeviceGetRetiredPages(nvml::Device device, nvml::PageRetirementCause cause,
                                 unsigned int* page_count, unsigned long long* addresses) {
  return Answer(device, "nvmlDeviceGetRetiredPages", [=](const json& config, std::size_t) {
    const char* name = NameOf(kCauses, cause);
    if (name == nullptr || page_count == nullptr) return Return::kErrorInvalidArgument;
    unsigned int pages = 0;
    if (Return r = Value(config, {"retired_pages", name}, &pages); r != Return::kSuccess) {
      return r;
    }
    if (*page_count < pages) {
      *page_count = pages;
      return Return::kErrorInsufficientSize;
    }
    if (pages > 0 && addresses == nullptr) return Return::kErrorInvalidArgument;
    for (unsigned int i = 0; i < pages; ++i) addresses[i] = 0x1000ull * (i + 1);
    *page_count = pages;
    return Return::kSuccess;
  });
}

Return nvmlDeviceGetRemappedRows(nvml::Device device, unsigned int* correctable,
                                 unsigned int* uncorrectable, unsigned int* is_pending,
                                 unsigned int* failure_occurred) {
  return Answer(device, "nvmlDeviceGetRemappedRows", [=](const json& config, std::size_t) {
    if (correctable == nullptr || uncorrectable == nullptr || is_pending == nullptr ||
        failure_occurred == nullptr) {
      return Return::kErrorInvalidArgument;
    }
    const json* rows = Member(config, "remapped_rows");
    if (rows == nullptr) return Return::kErrorNotSupported;
    *correctable = rows->value("correctable", 0u);
    *uncorrectable = rows->value("uncorrectable", 0u);
    *is_pending = rows->value("pending", 0u);
    *failure_occurred = rows->value("failure", 0u);
    return Return::kSuccess;
  });
}

Return nvmlDeviceGetPcieReplayCounter(nvml::Device device, unsigned int* value) {
  return Answer(device, "nvmlDeviceGetPcieReplayCounter", [=](const json& config, std::size_t) {
    return Value(config, {"pcie_replay"}, value);
  });
}

Return nvmlDeviceGetCurrPcieLinkGeneration(nvml::Device device, unsigned int* generation) {
  return Answer(device, "nvmlDeviceGetCurrPcieLinkGeneration",
                [=](const json& config, std::size_t) {
                  return Value(config, {"pcie_link", "generation"}, generation);
                });
}

Return nvmlDeviceGetCurrPcieLinkWidth(nvml::Device device, unsigned int* width) {
  return Answer(device, "nvmlDeviceGetCurrPcieLinkWidth", [=](const json& config, std::size_t) {
    return Value(config, {"pcie_link", "width"}, width);
  });
}

Return nvmlEventSetCreate(nvml::EventSet* set) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  if (set == nullptr) return Return::kErrorInvalidArgument;
  state.event_sets.push_back(std::make_unique<EventSetState>());
  *set = reinterpret_cast<nvml::EventSet>(state.event_sets.back().get());
  return Return::kSuccess;
}

Return nvmlDeviceRegisterEvents(nvml::Device device, unsigned long long event_types,
                                nvml::EventSet set) {
  // Answer() holds the lock, which covers the event sets too.
  return Answer(device, "nvmlDeviceRegisterEvents", [=](const json&, std::size_t index) {
    EventSetState* events = FindSet(TheState(), set);
    if (events == nullptr || event_types == 0) return Return::kErrorInvalidArgument;
    if ((event_types & ~nvml::kEventTypeXidCriticalError) != 0) return Return::kErrorNotSupported;
    events->registered[index] = true;
    return Return::kSuccess;
  });
}

Return nvmlEventSetFree(nvml::EventSet set) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.inits == 0) return Return::kErrorUninitialized;
  for (auto it = state.event_sets.begin(); it != state.event_sets.end(); ++it) {
    if (reinterpret_cast<nvml::EventSet>(it->get()) == set) {
      state.event_sets.erase(it);
      return Return::kSuccess;
    }
  }
  return Return::kErrorInvalidArgument;
}

/// nvmlInit* calls not yet matched by nvmlShutdown.
int fake_nvml_open_inits() {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  return state.inits;
}

/// Event sets created and not freed.
int fake_nvml_open_event_sets() {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  return static_cast<int>(state.event_sets.size());
}

/// Device `index` answers NVML_ERROR_GPU_IS_LOST from now until the next nvmlInit*.
void fake_nvml_lose_gpu(unsigned int index) {
  State& state = TheState();
  std::lock_guard lock(state.mutex);
  if (index < kMaxDevices) state.lost[index] = true;
}

}  // extern "C"
