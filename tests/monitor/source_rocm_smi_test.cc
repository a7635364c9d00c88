// SPDX-License-Identifier: Apache-2.0
// The rocm-smi source against a fake of ROCm SMI's C ABI (fake_rocm_smi.cc), whose devices each
// test describes in JSON: device info and bus id, every reading's value, unit and labels,
// calls that aren't supported left out, ECC for enabled blocks only, retired pages by status,
// a device that stops answering, and Open()'s refusals (library missing, a call missing,
// rsmi_init failing, no device). Last, Debian's real librocm_smi64 on a machine without an AMD
// GPU.
#include "monitor/source_rocm_smi.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "monitor/metrics.h"

namespace parity::monitor {
namespace {

std::string FakePath(const char* name) { return std::string(PARITY_TEST_PLUGINS) + "/" + name; }
std::string FakeLibrary() { return FakePath("libfake_rocm_smi.so"); }

/// Writes `json` to a file of its own and points $PARITY_FAKE_ROCM_SMI at it, for as long as
/// the object lives.
class FakeConfig {
 public:
  explicit FakeConfig(const std::string& json) {
    static int serial = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("parity_fake_rocm_smi_" + std::to_string(getpid()) + "_" + std::to_string(serial++) +
             ".json");
    std::ofstream(path_) << json;
    setenv("PARITY_FAKE_ROCM_SMI", path_.c_str(), 1);
  }
  ~FakeConfig() {
    unsetenv("PARITY_FAKE_ROCM_SMI");
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  FakeConfig(const FakeConfig&) = delete;
  FakeConfig& operator=(const FakeConfig&) = delete;

 private:
  std::filesystem::path path_;
};

/// The fake's own entry points, through a handle of the test's (the same library the source
/// loads, kept loaded while the handle lives).
class FakeControl {
 public:
  FakeControl() : handle_(dlopen(FakeLibrary().c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~FakeControl() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeControl(const FakeControl&) = delete;
  FakeControl& operator=(const FakeControl&) = delete;

  bool ok() const { return handle_ != nullptr; }
  int InitCount() const {
    auto fn = reinterpret_cast<int (*)()>(dlsym(handle_, "fake_rocm_smi_init_count"));
    return fn == nullptr ? -1 : fn();
  }
  void SetFailure(uint32_t device, const char* call, uint32_t status) const {
    auto fn = reinterpret_cast<void (*)(uint32_t, const char*, uint32_t)>(
        dlsym(handle_, "fake_rocm_smi_set_failure"));
    ASSERT_NE(fn, nullptr);
    fn(device, call, status);
  }

 private:
  void* handle_;
};

/// The value of the reading of `metric` with exactly `labels`, if there is one.
std::optional<double> Value(const std::vector<Reading>& readings, const std::string& metric,
                            const Labels& labels = {}) {
  for (const Reading& reading : readings) {
    if (reading.metric == metric && reading.labels == labels) return reading.value;
  }
  return std::nullopt;
}

std::size_t Count(const std::vector<Reading>& readings, const std::string& metric) {
  return static_cast<std::size_t>(std::count_if(
      readings.begin(), readings.end(), [&](const Reading& r) { return r.metric == metric; }));
}

/// Every reading is a catalogue metric with only the catalogue's labels, and none repeats.
void ExpectCatalogued(const std::vector<Reading>& readings) {
  std::set<std::pair<std::string, Labels>> seen;
  for (const Reading& reading : readings) {
    const MetricSpec* spec = FindMetric(reading.metric);
    ASSERT_NE(spec, nullptr) << reading.metric;
    EXPECT_TRUE(IsDeviceMetric(reading.metric)) << reading.metric;
    for (const auto& [label, value] : reading.labels) {
      EXPECT_NE(std::find(spec->labels.begin(), spec->labels.end(), label), spec->labels.end())
          << reading.metric << " has no label " << label;
    }
    EXPECT_TRUE(seen.insert({reading.metric, reading.labels}).second)
        << reading.metric << " reported twice";
  }
}

constexpr const char* kTwoDevices = R"({
  "devices": [{
    "name": "AMD Instinct MI250X",
    "brand": "MI250X",
    "unique_id": "0x3FA1C2D4E5F60718",
    "bdfid": "0x1abcdc1ff",
    "power_average": 251500000,
    "power_cap": 560000000,
    "busy_percent": 37,
    "vram_total": 68702699520,
    "vram_used": 1073741824,
    "temperature": {"edge": {"current": 41000}, "junction": {"current": 52500, "critical": 110000},
                    "memory": {"current": 48000}},
    "clocks": {"sys": {"current": 2, "frequencies": [500000000, 1000000000, 1700000000]},
               "mem": {"current": 0, "frequencies": [1600000000]}},
    "pcie_bandwidth": {"current": 3, "transfer_rates": [2.5e9, 5e9, 8e9, 16e9],
                       "lanes": [16, 16, 16, 8]},
    "pcie_replay": 7,
    "ecc_enabled": ["umc", "gfx", "xgmi_wafl"],
    "ecc": {"umc": {"correctable": 5, "uncorrectable": 1}, "gfx": {"correctable": 2},
            "sdma": {"correctable": 9, "uncorrectable": 9}},
    "reserved_pages": [{"address": 4096, "status": "reserved"},
                       {"address": 8192, "status": "pending"},
                       {"address": 12288, "status": "reserved"}]
  }, {
    "brand": "Radeon PRO W6800",
    "bdfid": "0x0300"
  }]
})";

TEST(RocmSmiSource, DescribesDevicesAndTheirBusIds) {
  FakeConfig config(kTwoDevices);
  auto source = MakeRocmSmiSource(FakeLibrary());
  EXPECT_EQ(source->name(), "rocm-smi");
  ASSERT_TRUE(source->Open().ok());
  ASSERT_EQ(source->devices().size(), 2u);

  const DeviceInfo& mi250 = source->devices()[0];
  EXPECT_EQ(mi250.vendor, "AMD");
  EXPECT_EQ(mi250.model, "AMD Instinct MI250X");  // the name before the brand
  EXPECT_EQ(mi250.uuid, "0x3fa1c2d4e5f60718");    // lower-case hex
  EXPECT_EQ(mi250.pci_bus_id, "0001:c1:1f.7");    // bits 31..16 are reserved, not the bus
  EXPECT_EQ(mi250.power_limit_watts, 560.0);      // from microwatts
  EXPECT_EQ(mi250.memory_total_bytes, 68702699520.0);
  EXPECT_EQ(mi250.temperature_limit_celsius, 110.0);  // junction critical, from millidegrees

  const DeviceInfo& w6800 = source->devices()[1];
  EXPECT_EQ(w6800.vendor, "AMD");
  EXPECT_EQ(w6800.model, "Radeon PRO W6800");  // no name: the brand
  EXPECT_EQ(w6800.uuid, "");
  EXPECT_EQ(w6800.pci_bus_id, "0000:03:00.0");
  EXPECT_FALSE(w6800.power_limit_watts.has_value());
  EXPECT_FALSE(w6800.memory_total_bytes.has_value());
  EXPECT_FALSE(w6800.temperature_limit_celsius.has_value());
}

TEST(RocmSmiSource, ReadsEveryMetricInItsUnitWithItsLabels) {
  FakeConfig config(kTwoDevices);
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  ExpectCatalogued(*readings);
  const std::vector<Reading>& r = *readings;

  EXPECT_EQ(Value(r, "gpu_temperature_celsius", {{"sensor", "edge"}}), 41.0);
  EXPECT_EQ(Value(r, "gpu_temperature_celsius", {{"sensor", "junction"}}), 52.5);
  EXPECT_EQ(Value(r, "gpu_temperature_celsius", {{"sensor", "memory"}}), 48.0);
  EXPECT_EQ(Value(r, "gpu_power_watts"), 251.5);
  EXPECT_EQ(Value(r, "gpu_power_limit_watts"), 560.0);
  EXPECT_EQ(Value(r, "gpu_utilization_ratio"), 0.37);
  EXPECT_EQ(Value(r, "gpu_memory_used_bytes"), 1073741824.0);
  EXPECT_EQ(Value(r, "gpu_memory_total_bytes"), 68702699520.0);
  EXPECT_EQ(Value(r, "gpu_clock_hertz", {{"domain", "sm"}}), 1.7e9);
  EXPECT_EQ(Value(r, "gpu_clock_hertz", {{"domain", "memory"}}), 1.6e9);
  EXPECT_EQ(Value(r, "gpu_pcie_replay_total"), 7.0);
  EXPECT_EQ(Value(r, "gpu_pcie_link_generation"), 4.0);  // 16 GT/s
  EXPECT_EQ(Value(r, "gpu_pcie_link_width"), 8.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "umc"}}), 5.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", "umc"}}),
            1.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "gfx"}}), 2.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", "gfx"}}),
            0.0);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "bad_page_reserved"}}), 2.0);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "bad_page_pending"}}), 1.0);
  EXPECT_EQ(Value(r, "gpu_retired_pages_total", {{"cause", "bad_page_unreservable"}}), 0.0);
  EXPECT_EQ(r.size(), 3u + 2u + 1u + 2u + 2u + 3u + 4u + 3u);

  // The second device supports nothing past its ids: no readings at all, not zeros.
  auto bare = source->Read(1, 1.0);
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_TRUE(bare->empty());
}

TEST(RocmSmiSource, UnsupportedOrUnreadableValuesAreLeftOut) {
  FakeConfig config(R"({"devices": [{
    "power_average": 100000000, "power_cap": 300000000, "busy_percent": 250,
    "vram_total": 1000, "vram_used": 10,
    "temperature": {"edge": {"current": 40000}, "junction": {"current": 50000}},
    "clocks": {"sys": {"current": 4294967295, "frequencies": [500000000]},
               "mem": {"current": 35, "num_supported": 40, "frequencies": [1, 2, 3]}},
    "pcie_bandwidth": {"current": 0, "transfer_rates": [3000000000], "lanes": [4]},
    "pcie_replay": 0,
    "fail": {"rsmi_dev_power_ave_get": "NOT_SUPPORTED", "rsmi_dev_memory_usage_get": "PERMISSION",
             "rsmi_dev_ecc_enabled_get": "NOT_SUPPORTED"}
  }]})");
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  ExpectCatalogued(*readings);
  const std::vector<Reading>& r = *readings;
  EXPECT_EQ(Count(r, "gpu_power_watts"), 0u);        // NOT_SUPPORTED
  EXPECT_EQ(Count(r, "gpu_memory_used_bytes"), 0u);  // PERMISSION
  EXPECT_EQ(Value(r, "gpu_memory_total_bytes"), 1000.0);
  EXPECT_EQ(Count(r, "gpu_utilization_ratio"), 0u);  // 250 % is no ratio
  EXPECT_EQ(Count(r, "gpu_temperature_celsius"), 2u);
  EXPECT_FALSE(Value(r, "gpu_temperature_celsius", {{"sensor", "memory"}}).has_value());
  EXPECT_EQ(Count(r, "gpu_clock_hertz"), 0u);           // no current level; one past the table
  EXPECT_EQ(Count(r, "gpu_pcie_link_generation"), 0u);  // 3 GT/s is no generation
  EXPECT_EQ(Value(r, "gpu_pcie_link_width"), 4.0);
  EXPECT_EQ(Value(r, "gpu_pcie_replay_total"), 0.0);  // a real zero is kept
  EXPECT_EQ(Count(r, "gpu_ecc_errors_total"), 0u);
  EXPECT_EQ(Count(r, "gpu_retired_pages_total"), 0u);
  EXPECT_EQ(Value(r, "gpu_power_limit_watts"), 300.0);
}

TEST(RocmSmiSource, EccOnlyForEnabledBlocksThatAnswer) {
  FakeConfig config(R"({"devices": [{
    "ecc_enabled": 8194,
    "ecc": {"sdma": {"correctable": 3, "uncorrectable": 4}, "fuse": {"uncorrectable": 1},
            "umc": {"correctable": 100, "uncorrectable": 100}}
  }, {
    "ecc_enabled": ["umc", "mmhub"],
    "ecc": {"umc": {"correctable": 1}, "mmhub": {"correctable": 2}},
    "fail": {"rsmi_dev_ecc_count_get": "NOT_SUPPORTED"}
  }]})");
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  ExpectCatalogued(*readings);
  const std::vector<Reading>& r = *readings;
  // 8194 = sdma (0x2) | fuse (0x2000); umc has counts but ECC off.
  EXPECT_EQ(Count(r, "gpu_ecc_errors_total"), 4u);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "sdma"}}),
            3.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", "sdma"}}),
            4.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "fuse"}}),
            0.0);
  EXPECT_EQ(Value(r, "gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", "fuse"}}),
            1.0);
  for (const Reading& reading : r) EXPECT_EQ(reading.labels.count("scope"), 0u);

  auto silent = source->Read(1, 1.0);  // enabled, but the counts don't answer
  ASSERT_TRUE(silent.ok()) << silent.status().message();
  EXPECT_EQ(Count(*silent, "gpu_ecc_errors_total"), 0u);
}

TEST(RocmSmiSource, RetiredPagesAreCountedByStatus) {
  FakeConfig config(R"({"devices": [{
    "reserved_pages": [{"status": "reserved"}, {"status": "unreservable"}, {"status": 1},
                       {"status": "pending"}, {"status": "unreservable"},
                       {"status": "unreservable"}],
    "reserved_pages_appear": 2
  }, {
    "reserved_pages": []
  }]})");
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  // The count query reports 4 of the 6 pages: the source asks again with room for all.
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  ExpectCatalogued(*readings);
  EXPECT_EQ(Value(*readings, "gpu_retired_pages_total", {{"cause", "bad_page_reserved"}}), 1.0);
  EXPECT_EQ(Value(*readings, "gpu_retired_pages_total", {{"cause", "bad_page_pending"}}), 2.0);
  EXPECT_EQ(Value(*readings, "gpu_retired_pages_total", {{"cause", "bad_page_unreservable"}}), 3.0);

  auto none = source->Read(1, 1.0);  // none retired: zeros, since the call answered
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(Count(*none, "gpu_retired_pages_total"), 3u);
  for (const Reading& reading : *none) EXPECT_EQ(reading.value, 0.0) << reading.labels.at("cause");
}

TEST(RocmSmiSource, DeviceThatStopsAnsweringIsUnavailable) {
  FakeConfig config(R"({"devices": [
    {"bdfid": "0xc100", "busy_percent": 10, "pcie_replay": 1},
    {"busy_percent": 20},
    {"fail": {"*": "NOT_FOUND"}}
  ]})");
  FakeControl fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  ASSERT_EQ(source->devices().size(), 3u);
  EXPECT_TRUE(source->Read(0, 1.0).ok());

  auto gone = source->Read(2, 1.0);  // never answered anything
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable);

  fake.SetFailure(0, "*", 10);  // RSMI_STATUS_NOT_FOUND from every call from now on
  auto fell_off = source->Read(0, 2.0);
  ASSERT_FALSE(fell_off.ok());
  EXPECT_EQ(fell_off.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(fell_off.status().message().find("device 0 (0000:c1:00.0)"), std::string::npos)
      << fell_off.status().message();
  EXPECT_NE(fell_off.status().message().find("fake: not found (rsmi_status_t 10)"),
            std::string::npos)
      << fell_off.status().message();

  auto other = source->Read(1, 2.0);  // the other device reads on
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(Value(*other, "gpu_utilization_ratio"), 0.2);
}

TEST(RocmSmiSource, IndexOutOfRangeIsInternal) {
  FakeConfig config(R"({"devices": [{}]})");
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(1, 1.0);
  ASSERT_FALSE(readings.ok());
  EXPECT_EQ(readings.status().code(), StatusCode::kInternal);
}

TEST(RocmSmiSource, ShutsDownAndReadsTheConfigAgainAtEachOpen) {
  FakeControl fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  {
    FakeConfig config(R"({"devices": [{"name": "first"}]})");
    auto source = MakeRocmSmiSource(FakeLibrary());
    ASSERT_TRUE(source->Open().ok());
    EXPECT_EQ(fake.InitCount(), 1);
    ASSERT_EQ(source->devices().size(), 1u);
    EXPECT_EQ(source->devices()[0].model, "first");
  }
  EXPECT_EQ(fake.InitCount(), 0);  // rsmi_shut_down when the source goes
  FakeConfig config(R"({"devices": [{"name": "second"}, {"name": "third"}]})");
  auto source = MakeRocmSmiSource(FakeLibrary());
  ASSERT_TRUE(source->Open().ok());
  ASSERT_EQ(source->devices().size(), 2u);
  EXPECT_EQ(source->devices()[1].model, "third");
  ASSERT_TRUE(source->Open().ok());  // opening again shuts the first session down
  EXPECT_EQ(fake.InitCount(), 1);
}

TEST(RocmSmiSource, MissingLibraryIsUnavailableAndNamed) {
  const std::string missing = "/nonexistent/librocm_smi64.so.1";
  auto source = MakeRocmSmiSource(missing);
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(missing), std::string::npos) << status.message();
  EXPECT_TRUE(source->devices().empty());

  // An empty name takes $PARITY_ROCM_SMI_LIBRARY.
  setenv("PARITY_ROCM_SMI_LIBRARY", missing.c_str(), 1);
  const Status from_env = MakeRocmSmiSource("")->Open();
  EXPECT_EQ(from_env.code(), StatusCode::kUnavailable);
  EXPECT_NE(from_env.message().find(missing), std::string::npos) << from_env.message();
  FakeConfig config(R"({"devices": [{"name": "from the environment"}]})");
  setenv("PARITY_ROCM_SMI_LIBRARY", FakeLibrary().c_str(), 1);
  auto found = MakeRocmSmiSource("");
  const Status opened = found->Open();
  unsetenv("PARITY_ROCM_SMI_LIBRARY");
  ASSERT_TRUE(opened.ok()) << opened.message();
  EXPECT_EQ(found->devices().at(0).model, "from the environment");
}

TEST(RocmSmiSource, LibraryWithoutARequiredCallIsUnavailableAndNamed) {
  FakeConfig config(R"({"devices": [{}]})");
  const std::string incomplete = FakePath("libfake_rocm_smi_incomplete.so");
  const Status status = MakeRocmSmiSource(incomplete)->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), incomplete + ": lacks rsmi_num_monitor_devices");
}

TEST(RocmSmiSource, InitFailureSaysWhatRocmSmiSaid) {
  FakeConfig config(R"({"init_status": "PERMISSION", "devices": [{}]})");
  FakeControl fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  auto source = MakeRocmSmiSource(FakeLibrary());
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            FakeLibrary() + ": rsmi_init failed: fake: permission denied (rsmi_status_t 4)");
  EXPECT_TRUE(source->devices().empty());
  EXPECT_EQ(fake.InitCount(), 0);
}

TEST(RocmSmiSource, NoDeviceIsUnavailable) {
  FakeConfig config(R"({"devices": []})");
  FakeControl fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  auto source = MakeRocmSmiSource(FakeLibrary());
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("no AMD GPU"), std::string::npos) << status.message();
  EXPECT_EQ(fake.InitCount(), 0);  // shut down at once
  EXPECT_FALSE(source->Read(0, 1.0).ok());
}

// Debian's librocm_smi64 5.2.3 on a machine without amdgpu: rsmi_init fails with
// RSMI_STATUS_INIT_ERROR ("Failed to open drm root directory /sys/class/drm" on stderr) when
// there is no /sys/class/drm; where there is one without an AMD card it may instead succeed
// with no device. Either way Open() must answer kUnavailable, promptly.
TEST(RocmSmiSource, RealLibraryWithoutAnAmdGpuIsUnavailable) {
  const std::string real = "/usr/lib/librocm_smi64.so.1";
  if (!std::filesystem::exists(real)) {
    GTEST_SKIP() << real << " is not installed (Debian's librocm-smi64-1)";
  }
  if (std::filesystem::exists("/dev/kfd")) {
    GTEST_SKIP() << "/dev/kfd exists: this machine may have an AMD GPU, and the test checks the "
                    "library's answer without one";
  }
  auto source = MakeRocmSmiSource(real);
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.message();
  EXPECT_TRUE(source->devices().empty());
  const std::string& message = status.message();
  EXPECT_EQ(message.rfind(real + ": ", 0), 0u) << message;
  if (!std::filesystem::exists("/sys/class/drm")) {
    EXPECT_NE(message.find(": rsmi_init failed: "), std::string::npos) << message;
    EXPECT_NE(message.find("(rsmi_status_t 8)"), std::string::npos) << message;
  } else {
    EXPECT_TRUE(message.find(": rsmi_init failed: ") != std::string::npos ||
                message.find(": no AMD GPU") != std::string::npos)
        << message;
  }
  // Opening again in the same process answers the same.
  EXPECT_EQ(source->Open().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace parity::monitor
