// SPDX-License-Identifier: Apache-2.0
// The nvml source against a fake of NVML's C ABI (fake_nvml.cc) that reads the devices it
// pretends to have from a JSON file: device info and bus ids, every metric's value, unit and
// labels, calls that aren't supported left out, XID events counted per device and XID across
// reads, reasons bits decoded, older symbol names used where the newer are missing, and each
// way Open() and Read() fail.
#include "monitor/source_nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "monitor/metrics.h"

namespace parity::monitor {
namespace {

using nlohmann::json;

std::string FakePath(const char* name) { return fmt::format("{}/{}", PARITY_TEST_PLUGINS, name); }
const std::string& Fake() {
  static const std::string path = FakePath("libfake_nvml.so");
  return path;
}

// NVML's memory locations in nvmlMemoryLocation_t's order, as the fake's JSON names them.
const char* const kLocations[] = {"l1_cache",       "l2_cache",    "dram", "register_file",
                                  "texture_memory", "texture_shm", "cbu",  "sram"};

/// A device answering every call, with a different value for each.
json FullDevice() {
  json device = R"({
    "name": "NVIDIA H200",
    "uuid": "GPU-5b3a8f4e-1c2d-4e6f-8a9b-0c1d2e3f4a5b",
    "pci_bus_id": "00000000:C1:00.0",
    "pci_device_id": 590483678,
    "temperature_gpu": 51,
    "temperature_thresholds": {"shutdown": 92, "slowdown": 87, "mem_max": 95, "gpu_max": 85},
    "power_usage_mw": 351250,
    "enforced_power_limit_mw": 700000,
    "utilization": {"gpu": 73, "memory": 41},
    "memory": {"total": 150754820096, "used": 1073741824},
    "clocks_mhz": {"graphics": 1755, "sm": 1980, "memory": 2619, "video": 1650},
    "ecc_total": {"volatile": {"corrected": 5, "uncorrected": 1},
                  "aggregate": {"corrected": 40, "uncorrected": 2}},
    "retired_pages": {"multiple_single_bit_ecc": 3, "double_bit_ecc": 0},
    "remapped_rows": {"correctable": 4, "uncorrectable": 1, "pending": 1, "failure": 0},
    "pcie_replay": 12,
    "clocks_event_reasons": 164,
    "pcie_link": {"generation": 5, "width": 16}
  })"_json;
  // l1_cache volatile corrected 1000, uncorrected 1001, aggregate 1010 and 1011; l2_cache 2000…
  for (int i = 0; i < 8; ++i) {
    for (int scope = 0; scope < 2; ++scope) {
      const char* scope_name = scope == 0 ? "volatile" : "aggregate";
      device["ecc_locations"][kLocations[i]][scope_name] = {
          {"corrected", 1000 * (i + 1) + 10 * scope},
          {"uncorrected", 1000 * (i + 1) + 10 * scope + 1}};
    }
  }
  return device;
}

/// A second device, with other values and an other bus.
json OtherDevice() {
  json device = FullDevice();
  device["name"] = "NVIDIA H100 80GB HBM3";
  device["uuid"] = "GPU-00000000-1111-2222-3333-444444444444";
  device["pci_bus_id"] = "00000001:03:1F.7";
  device["temperature_gpu"] = 38;
  device["power_usage_mw"] = 90500;
  device["clocks_event_reasons"] = 0;
  return device;
}

std::optional<double> Value(const std::vector<Reading>& readings, std::string_view metric,
                            const Labels& labels = {}) {
  for (const Reading& reading : readings) {
    if (reading.metric == metric && reading.labels == labels) return reading.value;
  }
  return std::nullopt;
}

int Count(const std::vector<Reading>& readings, std::string_view metric) {
  int count = 0;
  for (const Reading& reading : readings) count += reading.metric == metric ? 1 : 0;
  return count;
}

/// The fake's own hooks (fake_nvml_open_inits and the like), through a handle of its own.
class FakeHooks {
 public:
  explicit FakeHooks(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW)) {}
  ~FakeHooks() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeHooks(const FakeHooks&) = delete;
  FakeHooks& operator=(const FakeHooks&) = delete;

  bool ok() const { return handle_ != nullptr; }
  void* Symbol(const char* name) const { return dlsym(handle_, name); }
  int OpenInits() const { return Call<int>("fake_nvml_open_inits"); }
  int OpenEventSets() const { return Call<int>("fake_nvml_open_event_sets"); }
  void LoseGpu(unsigned int index) const {
    reinterpret_cast<void (*)(unsigned int)>(Symbol("fake_nvml_lose_gpu"))(index);
  }

 private:
  template <typename T>
  T Call(const char* name) const {
    auto fn = reinterpret_cast<T (*)()>(Symbol(name));
    return fn != nullptr ? fn() : T(-1);
  }
  void* handle_;
};

class NvmlSource : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("PARITY_FAKE_NVML");
    if (!config_.empty()) std::filesystem::remove(config_);
  }

  /// Writes `config` where $PARITY_FAKE_NVML names it.
  void UseConfig(const json& config) {
    if (config_.empty()) {
      const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
      config_ = std::filesystem::temp_directory_path() /
                ("parity_fake_nvml_" + std::to_string(getpid()) + "_" + test + ".json");
    }
    std::ofstream(config_) << config.dump(2);
    setenv("PARITY_FAKE_NVML", config_.c_str(), 1);
  }
  void UseDevices(const std::vector<json>& devices) { UseConfig({{"devices", devices}}); }

  /// A source on the fake, opened: fails the test when Open() doesn't succeed.
  std::unique_ptr<TelemetrySource> OpenFake() {
    auto source = MakeNvmlSource(Fake());
    const Status status = source->Open();
    EXPECT_TRUE(status.ok()) << status.message();
    return source;
  }

  std::filesystem::path config_;
};

TEST_F(NvmlSource, DescribesDevicesWithNormalisedBusIds) {
  UseDevices({FullDevice(), OtherDevice()});
  auto source = OpenFake();
  EXPECT_EQ(source->name(), "nvml");
  ASSERT_EQ(source->devices().size(), 2u);
  const DeviceInfo& first = source->devices()[0];
  EXPECT_EQ(first.vendor, "NVIDIA");
  EXPECT_EQ(first.model, "NVIDIA H200");
  EXPECT_EQ(first.uuid, "GPU-5b3a8f4e-1c2d-4e6f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(first.pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(first.power_limit_watts, 700.0);
  EXPECT_EQ(first.memory_total_bytes, 150754820096.0);
  EXPECT_EQ(first.temperature_limit_celsius, 87.0);  // slowdown, not shutdown or gpu_max
  const DeviceInfo& second = source->devices()[1];
  EXPECT_EQ(second.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(second.pci_bus_id, "0001:03:1f.7");
}

TEST_F(NvmlSource, ReadsEveryMetricInItsUnitWithItsLabels) {
  UseDevices({FullDevice()});
  auto source = OpenFake();
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  const std::vector<Reading>& r = *readings;

  EXPECT_EQ(Value(r, "gpu_temperature_celsius", {{"sensor", "junction"}}), 51.0);
  EXPECT_EQ(Value(r, "gpu_power_watts"), 351.25);
  EXPECT_EQ(Value(r, "gpu_power_limit_watts"), 700.0);
  EXPECT_EQ(Value(r, "gpu_utilization_ratio"), 0.73);
  EXPECT_EQ(Value(r, "gpu_memory_used_bytes"), 1073741824.0);
  EXPECT_EQ(Value(r, "gpu_memory_total_bytes"), 150754820096.0);
  EXPECT_EQ(Value(r, "gpu_clock_hertz", {{"domain", "sm"}}), 1980e6);
  EXPECT_EQ(Value(r, "gpu_clock_hertz", {{"domain", "memory"}}), 2619e6);
  EXPECT_EQ(Count(r, "gpu_clock_hertz"), 2);

  EXPECT_EQ(Value(r, "gpu_ecc_errors_total",
                  {{"severity", "correctable"}, {"block", "all"}, {"scope", "volatile"}}),
            5.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total",
                  {{"severity", "uncorrectable"}, {"block", "all"}, {"scope", "volatile"}}),
            1.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total",
                  {{"severity", "correctable"}, {"block", "all"}, {"scope", "aggregate"}}),
            40.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total",
                  {{"severity", "uncorrectable"}, {"block", "all"}, {"scope", "aggregate"}}),
            2.0);
  for (int i = 0; i < 8; ++i) {
    for (int scope = 0; scope < 2; ++scope) {
      const std::string scope_name = scope == 0 ? "volatile" : "aggregate";
      const double base = 1000 * (i + 1) + 10 * scope;
      EXPECT_EQ(
          Value(r, "gpu_ecc_errors_total",
                {{"severity", "correctable"}, {"block", kLocations[i]}, {"scope", scope_name}}),
          base)
          << kLocations[i] << " " << scope_name;
      EXPECT_EQ(
          Value(r, "gpu_ecc_errors_total",
                {{"severity", "uncorrectable"}, {"block", kLocations[i]}, {"scope", scope_name}}),
          base + 1)
          << kLocations[i] << " " << scope_name;
    }
  }
  EXPECT_EQ(Count(r, "gpu_ecc_errors_total"), 4 + 8 * 4);

  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "multiple_single_bit_ecc"}}), 3.0);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "double_bit_ecc"}}), 0.0);  // a real 0
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "row_remap_correctable"}}), 4.0);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "row_remap_uncorrectable"}}), 1.0);
  EXPECT_EQ(Count(r, "gpu_retired_pages_total"), 4);
  EXPECT_EQ(Value(r, "gpu_pcie_replay_total"), 12.0);
  EXPECT_EQ(Value(r, "gpu_pcie_link_generation"), 5.0);
  EXPECT_EQ(Value(r, "gpu_pcie_link_width"), 16.0);
  EXPECT_EQ(Count(r, "gpu_throttle_active"), 9);
  EXPECT_EQ(Count(r, "gpu_xid_events_total"), 0);  // none configured
  EXPECT_EQ(r.size(), 1u + 2 + 1 + 2 + 2 + 36 + 4 + 1 + 9 + 2);

  // Only catalogue metrics, each with exactly the catalogue's labels.
  for (const Reading& reading : r) {
    const MetricSpec* spec = FindMetric(reading.metric);
    ASSERT_NE(spec, nullptr) << reading.metric;
    std::vector<std::string_view> keys;
    for (const auto& [key, value] : reading.labels) keys.push_back(key);
    std::vector<std::string_view> want(spec->labels.begin(), spec->labels.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(keys, want) << reading.metric;
  }
}

TEST_F(NvmlSource, LeavesOutWhatIsNotSupportedRatherThanZero) {
  json device = FullDevice();
  device["not_supported"] = {"nvmlDeviceGetPowerUsage",
                             "nvmlDeviceGetTemperature",
                             "nvmlDeviceGetTotalEccErrors",
                             "nvmlDeviceGetRetiredPages",
                             "nvmlDeviceGetCurrentClocksEventReasons",
                             "nvmlDeviceGetTemperatureThreshold"};
  device["ecc_locations"] = {{"dram", device["ecc_locations"]["dram"]}};
  device.erase("pcie_link");
  device.erase("utilization");
  UseDevices({device});
  auto source = OpenFake();
  EXPECT_FALSE(source->devices()[0].temperature_limit_celsius.has_value());
  EXPECT_EQ(source->devices()[0].power_limit_watts, 700.0);
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  const std::vector<Reading>& r = *readings;
  for (const char* absent :
       {"gpu_power_watts", "gpu_temperature_celsius", "gpu_throttle_active",
        "gpu_pcie_link_generation", "gpu_pcie_link_width", "gpu_utilization_ratio"}) {
    EXPECT_EQ(Count(r, absent), 0) << absent;
  }
  // Only DRAM answers per block, and there is no block="all".
  EXPECT_EQ(Count(r, "gpu_ecc_errors_total"), 4);
  for (const Reading& reading : r) {
    if (reading.metric == "gpu_ecc_errors_total") {
      EXPECT_EQ(reading.labels.at("block"), "dram");
    }
  }
  // Pages retired aren't known, rows remapped are.
  EXPECT_EQ(Count(r, "gpu_retired_pages_total"), 2);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "row_remap_correctable"}}), 4.0);
  EXPECT_EQ(Value(r, "gpu_power_limit_watts"), 700.0);
  EXPECT_EQ(Value(r, "gpu_pcie_replay_total"), 12.0);
}

TEST_F(NvmlSource, CountsXidEventsPerDeviceAndXidAcrossReads) {
  json first = FullDevice(), second = OtherDevice(), third = OtherDevice();
  // One list per drain, and the source drains at every read.
  first["xid_events"] = json::array({json::array({79, 79, 13}), json::array(), json::array({13})});
  second["xid_events"] = json::array({json::array({48}), json::array({94})});
  third["pci_bus_id"] = "00000000:04:00.0";
  third["xid_events"] = json::array({json::array({31}), json::array({31}), json::array({31})});
  third["not_supported"] = json::array({"nvmlDeviceRegisterEvents"});
  UseDevices({first, second, third});
  auto source = OpenFake();

  auto read = [&](std::size_t index) {
    auto readings = source->Read(index, 1.0);
    EXPECT_TRUE(readings.ok()) << readings.status().message();
    return readings.ok() ? *readings : std::vector<Reading>{};
  };
  std::vector<Reading> r = read(0);  // drain 1: 79, 79, 13 for the first, 48 for the second
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "79"}}), 2.0);
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "13"}}), 1.0);
  EXPECT_EQ(Count(r, "gpu_xid_events_total"), 2);

  r = read(1);  // drain 2: 94 for the second
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "48"}}), 1.0);
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "94"}}), 1.0);
  EXPECT_EQ(Count(r, "gpu_xid_events_total"), 2);

  r = read(2);  // drain 3: 13 for the first; the third registered for nothing
  EXPECT_EQ(Count(r, "gpu_xid_events_total"), 0);

  r = read(0);  // drain 4: nothing new
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "79"}}), 2.0);
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "13"}}), 2.0);
  EXPECT_EQ(Count(r, "gpu_xid_events_total"), 2);

  r = read(1);
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "48"}}), 1.0);
  EXPECT_EQ(Value(r, "gpu_xid_events_total", {{"xid", "94"}}), 1.0);
}

TEST_F(NvmlSource, DecodesEveryReasonBit) {
  json busy = FullDevice();
  busy["clocks_event_reasons"] = 0x1 | 0x8 | 0x40 | 0x100 | 0x10000;  // and a bit NVML may add
  UseDevices({busy, OtherDevice()});
  auto source = OpenFake();
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  const std::vector<std::pair<const char*, double>> want = {
      {"gpu_idle", 1},
      {"applications_clocks_setting", 0},
      {"sw_power_cap", 0},
      {"hw_slowdown", 1},
      {"sync_boost", 0},
      {"sw_thermal_slowdown", 0},
      {"hw_thermal_slowdown", 1},
      {"hw_power_brake_slowdown", 0},
      {"display_clock_setting", 1},
  };
  for (const auto& [reason, value] : want) {
    EXPECT_EQ(Value(*readings, "gpu_throttle_active", {{"reason", reason}}), value) << reason;
  }
  EXPECT_EQ(Count(*readings, "gpu_throttle_active"), 9);

  // The full device's 164: sw_power_cap, sw_thermal_slowdown, hw_power_brake_slowdown.
  busy["clocks_event_reasons"] = 164;
  UseDevices({busy, OtherDevice()});
  source = OpenFake();
  readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  for (const auto& [reason, value] :
       std::vector<std::pair<const char*, double>>{{"gpu_idle", 0},
                                                   {"sw_power_cap", 1},
                                                   {"sw_thermal_slowdown", 1},
                                                   {"hw_thermal_slowdown", 0},
                                                   {"hw_power_brake_slowdown", 1}}) {
    EXPECT_EQ(Value(*readings, "gpu_throttle_active", {{"reason", reason}}), value) << reason;
  }
  readings = source->Read(1, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  for (const Reading& reading : *readings) {
    if (reading.metric == "gpu_throttle_active") {
      EXPECT_EQ(reading.value, 0.0);
    }
  }
}

TEST_F(NvmlSource, FallsBackToOlderSymbolNames) {
  FakeHooks fake(Fake());
  ASSERT_TRUE(fake.ok()) << dlerror();
  // The fake has only the older names of these two calls.
  EXPECT_EQ(fake.Symbol("nvmlDeviceGetPciInfo_v3"), nullptr);
  EXPECT_NE(fake.Symbol("nvmlDeviceGetPciInfo_v2"), nullptr);
  EXPECT_EQ(fake.Symbol("nvmlDeviceGetCurrentClocksEventReasons"), nullptr);
  EXPECT_NE(fake.Symbol("nvmlDeviceGetCurrentClocksThrottleReasons"), nullptr);

  UseDevices({FullDevice()});
  auto source = OpenFake();
  EXPECT_EQ(source->devices()[0].pci_bus_id, "0000:c1:00.0");
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  EXPECT_EQ(Value(*readings, "gpu_throttle_active", {{"reason", "sw_power_cap"}}), 1.0);
}

TEST_F(NvmlSource, MissingLibraryIsUnavailableNamingIt) {
  const std::string path = FakePath("libnvidia-ml-absent.so.1");
  auto source = MakeNvmlSource(path);
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_TRUE(source->devices().empty());
}

TEST_F(NvmlSource, LibraryFromTheEnvironmentWhenNoneIsGiven) {
  UseDevices({FullDevice()});
  const char* saved = std::getenv("PARITY_NVML_LIBRARY");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("PARITY_NVML_LIBRARY", Fake().c_str(), 1);
  auto source = MakeNvmlSource("");
  const Status found = source->Open();
  EXPECT_TRUE(found.ok()) << found.message();
  EXPECT_EQ(source->devices().size(), 1u);

  const std::string absent = FakePath("libnvidia-ml-elsewhere.so.1");
  setenv("PARITY_NVML_LIBRARY", absent.c_str(), 1);
  const Status missing = MakeNvmlSource("")->Open();
  EXPECT_EQ(missing.code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.message().find(absent), std::string::npos) << missing.message();

  if (saved != nullptr) {
    setenv("PARITY_NVML_LIBRARY", restore.c_str(), 1);
  } else {
    unsetenv("PARITY_NVML_LIBRARY");
  }
}

TEST_F(NvmlSource, LibraryWithoutARequiredCallNamesIt) {
  UseDevices({FullDevice()});
  const std::string path = FakePath("libfake_nvml_incomplete.so");
  FakeHooks fake(path);
  ASSERT_TRUE(fake.ok()) << dlerror();
  auto source = MakeNvmlSource(path);
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), path +
                                  ": lacks nvmlDeviceGetHandleByIndex_v2 and "
                                  "nvmlDeviceGetHandleByIndex");
  EXPECT_EQ(fake.OpenInits(), 0);  // refused before nvmlInit
}

TEST_F(NvmlSource, InitFailureCarriesNvmlsMessageAndCode) {
  UseConfig({{"init_error", 9}, {"devices", json::array({FullDevice()})}});
  FakeHooks fake(Fake());
  auto source = MakeNvmlSource(Fake());
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), Fake() + ": nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)");
  EXPECT_EQ(fake.OpenInits(), 0);
}

TEST_F(NvmlSource, NoDevicesIsUnavailable) {
  UseDevices({});
  FakeHooks fake(Fake());
  auto source = MakeNvmlSource(Fake());
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("no NVIDIA GPU"), std::string::npos) << status.message();
  EXPECT_EQ(fake.OpenInits(), 0);  // shut down again
  EXPECT_TRUE(source->devices().empty());
}

TEST_F(NvmlSource, LostGpuFailsItsReadsWhileOthersStillRead) {
  json lost_from_start = OtherDevice();
  lost_from_start["pci_bus_id"] = "00000000:05:00.0";
  lost_from_start["lost"] = true;
  json no_handle = OtherDevice();
  no_handle["handle_error"] = 15;
  UseDevices({FullDevice(), OtherDevice(), lost_from_start, no_handle});
  FakeHooks fake(Fake());
  auto source = OpenFake();
  ASSERT_EQ(source->devices().size(), 4u);
  EXPECT_EQ(source->devices()[2].model, "");  // nothing readable, still listed
  EXPECT_EQ(source->devices()[2].vendor, "NVIDIA");

  auto before = source->Read(1, 1.0);
  ASSERT_TRUE(before.ok()) << before.status().message();
  fake.LoseGpu(1);
  auto after = source->Read(1, 2.0);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(after.status().message(), "nvml: GPU 1 (0001:03:1f.7): GPU is lost");

  for (std::size_t lost : {2u, 3u}) {
    auto readings = source->Read(lost, 2.0);
    ASSERT_FALSE(readings.ok()) << lost;
    EXPECT_EQ(readings.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(readings.status().message().find(": GPU is lost"), std::string::npos)
        << readings.status().message();
  }

  auto still = source->Read(0, 2.0);
  ASSERT_TRUE(still.ok()) << still.status().message();
  EXPECT_EQ(Value(*still, "gpu_power_watts"), 351.25);
}

TEST_F(NvmlSource, IndexPastTheDevicesIsInternal) {
  UseDevices({FullDevice()});
  auto source = OpenFake();
  auto readings = source->Read(1, 1.0);
  ASSERT_FALSE(readings.ok());
  EXPECT_EQ(readings.status().code(), StatusCode::kInternal);
}

TEST_F(NvmlSource, ShutsDownAndFreesTheEventSetWhenDestroyed) {
  UseDevices({FullDevice(), OtherDevice()});
  FakeHooks fake(Fake());
  ASSERT_TRUE(fake.ok()) << dlerror();
  auto source = OpenFake();
  EXPECT_EQ(fake.OpenInits(), 1);
  EXPECT_EQ(fake.OpenEventSets(), 1);
  const Status again = source->Open();  // a second Open() starts over
  EXPECT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(fake.OpenInits(), 1);
  EXPECT_EQ(fake.OpenEventSets(), 1);
  source.reset();
  EXPECT_EQ(fake.OpenInits(), 0);
  EXPECT_EQ(fake.OpenEventSets(), 0);
}

}  // namespace
}  // namespace parity::monitor
