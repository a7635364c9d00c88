// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_amdgpu.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "monitor/fixture_util.h"

namespace parity::monitor {
namespace {

using testing::Expected;
using testing::ExpectSameReadings;
using testing::FixtureRoots;

void CheckTree(const std::string& tree) {
  SCOPED_TRACE(tree);
  auto source = MakeAmdgpuSource(FixtureRoots(tree));
  ASSERT_TRUE(source->Open().ok());
  const auto expected = Expected(tree);
  const auto& gpus = expected.at("gpus");
  ASSERT_EQ(source->devices().size(), gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const DeviceInfo& info = source->devices()[i];
    const auto& want = gpus[i];
    EXPECT_EQ(info.vendor, "AMD");
    EXPECT_EQ(info.pci_bus_id, want.at("pci_bus_id").get<std::string>());
    EXPECT_EQ(info.model, want.at("model").get<std::string>());
    EXPECT_EQ(info.uuid, want.at("uuid").is_null() ? "" : want.at("uuid").get<std::string>());
    auto readings = source->Read(i, 1.0);
    ASSERT_TRUE(readings.ok()) << readings.status().message();
    ExpectSameReadings(*readings, want.at("readings"), tree + " gpu " + std::to_string(i));
  }
}

TEST(AmdgpuSource, Mi250NodeHasFourGcds) { CheckTree("mi250-node"); }
TEST(AmdgpuSource, Mi300x) { CheckTree("mi300x"); }
TEST(AmdgpuSource, ConsumerCardWithoutRasAmongOtherDrmEntries) { CheckTree("consumer"); }
TEST(AmdgpuSource, GarbageFilesAreAbsentNotZero) { CheckTree("broken"); }

TEST(AmdgpuSource, NoAmdCardIsUnavailable) {
  auto source = MakeAmdgpuSource(FixtureRoots("host-rapl-edac"));
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("no AMD GPU"), std::string::npos) << status.message();
  auto missing = MakeAmdgpuSource({"/nonexistent/sys", "/nonexistent/proc"});
  EXPECT_EQ(missing->Open().code(), StatusCode::kUnavailable);
}

TEST(AmdgpuSource, ADeviceThatDisappearsFailsItsRead) {
  const auto tmp = std::filesystem::temp_directory_path() / "parity_amdgpu_gone";
  std::filesystem::remove_all(tmp);
  std::filesystem::copy(testing::FixtureDir("mi300x"), tmp,
                        std::filesystem::copy_options::recursive);
  auto source = MakeAmdgpuSource({(tmp / "sys").string(), (tmp / "proc").string()});
  ASSERT_TRUE(source->Open().ok());
  ASSERT_GE(source->devices().size(), 2u);
  // The first AMD card (mi300x's card0 is the BMC's VGA controller).
  for (int card = 0; card < 8; ++card) {
    const auto dir = tmp / fmt::format("sys/class/drm/card{}", card);
    std::ifstream vendor(dir / "device/vendor");
    std::string id;
    if (vendor >> id && id == "0x1002") {
      std::filesystem::remove_all(dir);
      break;
    }
  }
  auto gone = source->Read(0, 2.0);
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(source->Read(1, 2.0).ok());
  EXPECT_EQ(source->Read(7, 2.0).status().code(), StatusCode::kInternal);
  std::filesystem::remove_all(tmp);
}

TEST(AmdgpuSource, ClocksNeedExactlyOneCurrentLevel) {
  const auto tmp = std::filesystem::temp_directory_path() / "parity_amdgpu_dpm";
  std::filesystem::remove_all(tmp);
  const auto dev = tmp / "sys/class/drm/card0/device";
  std::filesystem::create_directories(dev);
  std::ofstream(dev / "vendor") << "0x1002\n";
  std::ofstream(dev / "pp_dpm_sclk") << "0: 500Mhz\n1: 800Mhz *\n2: 1700Mhz *\n";
  std::ofstream(dev / "pp_dpm_mclk") << "0: 400Mhz\n1: 1600MHz *\n";
  auto source = MakeAmdgpuSource({(tmp / "sys").string(), (tmp / "proc").string()});
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok());
  ASSERT_EQ(readings->size(), 1u);
  EXPECT_EQ((*readings)[0].metric, "gpu_clock_hertz");
  EXPECT_EQ((*readings)[0].labels.at("domain"), "memory");
  EXPECT_DOUBLE_EQ((*readings)[0].value, 1.6e9);
  EXPECT_EQ(source->devices()[0].model, "");  // no product_name, no device id
  std::filesystem::remove_all(tmp);
}

TEST(AmdgpuSource, ModelNamesFromPciIds) {
  EXPECT_EQ(AmdModelName(0x740c), "AMD Instinct MI250X/MI250");
  EXPECT_EQ(AmdModelName(0x74a1), "AMD Instinct MI300X");
  EXPECT_EQ(AmdModelName(0x1234), "");
}

}  // namespace
}  // namespace parity::monitor
