// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_host.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "monitor/fixture_util.h"

namespace parity::monitor {
namespace {

using testing::Expected;
using testing::ExpectSameReadings;
using testing::FixtureRoots;

const Reading* Find(const std::vector<Reading>& readings, const std::string& metric,
                    const Labels& labels = {}) {
  for (const Reading& r : readings) {
    if (r.metric == metric && r.labels == labels) return &r;
  }
  return nullptr;
}

void CheckTree(const std::string& tree) {
  SCOPED_TRACE(tree);
  auto source = MakeHostSource(FixtureRoots(tree));
  ASSERT_TRUE(source->Open().ok());
  ASSERT_EQ(source->devices().size(), 1u);
  EXPECT_EQ(source->devices()[0].vendor, "host");
  // The first read has no rates (CPU utilisation, RAPL power): they need two.
  auto readings = source->Read(0, 10.0);
  ASSERT_TRUE(readings.ok()) << readings.status().message();
  ExpectSameReadings(*readings, Expected(tree).at("host").at("readings"), tree + " host");
}

TEST(HostSource, RaplAndEdacServer) { CheckTree("host-rapl-edac"); }
TEST(HostSource, Mi250NodeSkipsTheGpuHwmon) { CheckTree("mi250-node"); }
TEST(HostSource, ConsumerWithoutEdac) { CheckTree("consumer"); }
TEST(HostSource, Mi300xNode) { CheckTree("mi300x"); }
TEST(HostSource, GarbageIsAbsent) { CheckTree("broken"); }

class HostRates : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("parity_host_rates_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "proc");
    std::filesystem::create_directories(root_ / "sys/class/powercap/intel-rapl:0");
    std::filesystem::create_directories(root_ / "sys/class/powercap/intel-rapl:0:0");
    Write("sys/class/powercap/intel-rapl:0/name", "package-0\n");
    Write("sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    Write("sys/class/powercap/intel-rapl:0:0/name", "dram\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(root_ / path) << text;
  }
  Roots roots() const { return {(root_ / "sys").string(), (root_ / "proc").string()}; }

  std::filesystem::path root_;
};

TEST_F(HostRates, CpuUtilisationIsBusyShareOfTheInterval) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  Write("proc/stat", "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 100 0 50 800 50 0 0 0 0 0\n");
  auto source = MakeHostSource(roots());
  ASSERT_TRUE(source->Open().ok());
  auto first = source->Read(0, 1.0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Find(*first, "host_cpu_utilization_ratio"), nullptr);
  // +300 busy (user 200, system 50, irq 50), +100 idle, +100 iowait: 300 / 500.
  Write("proc/stat", "cpu  300 0 100 900 150 50 0 0 0 0\n");
  auto second = source->Read(0, 2.0);
  ASSERT_TRUE(second.ok());
  const Reading* cpu = Find(*second, "host_cpu_utilization_ratio");
  ASSERT_NE(cpu, nullptr);
  EXPECT_DOUBLE_EQ(cpu->value, 0.6);
  // No time passed in the counters: no ratio rather than 0/0.
  auto third = source->Read(0, 3.0);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(Find(*third, "host_cpu_utilization_ratio"), nullptr);
}

TEST_F(HostRates, RaplEnergyBecomesWattsAcrossAWrap) {
  Write("sys/class/powercap/intel-rapl:0/energy_uj", "262143000000\n");
  Write("sys/class/powercap/intel-rapl:0:0/energy_uj", "5000000\n");
  auto source = MakeHostSource(roots());
  ASSERT_TRUE(source->Open().ok());
  auto first = source->Read(0, 100.0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Find(*first, "host_power_watts", {{"domain", "package-0"}}), nullptr);
  // Package: wraps at max_energy_range_uj; 328850 + 199671150 µJ = 200 J in 2 s = 100 W.
  Write("sys/class/powercap/intel-rapl:0/energy_uj", "199671150\n");
  Write("sys/class/powercap/intel-rapl:0:0/energy_uj", "35000000\n");
  auto second = source->Read(0, 102.0);
  ASSERT_TRUE(second.ok());
  const Reading* package = Find(*second, "host_power_watts", {{"domain", "package-0"}});
  const Reading* dram = Find(*second, "host_power_watts", {{"domain", "package-0/dram"}});
  ASSERT_NE(package, nullptr);
  ASSERT_NE(dram, nullptr);
  EXPECT_NEAR(package->value, 100.0, 1e-9);
  EXPECT_NEAR(dram->value, 15.0, 1e-9);
}

TEST_F(HostRates, NothingReadableIsUnavailable) {
  auto source = MakeHostSource({"/nonexistent/sys", "/nonexistent/proc"});
  const Status status = source->Open();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("/nonexistent/proc"), std::string::npos);
}

TEST_F(HostRates, SameNamedChipsGetDistinctLabels) {
  for (int i = 0; i < 2; ++i) {
    const std::string dir = "sys/class/hwmon/hwmon" + std::to_string(i);
    std::filesystem::create_directories(root_ / dir);
    Write(dir + "/name", "coretemp\n");
    Write(dir + "/temp2_label", "Core 0\n");
    Write(dir + "/temp2_input", std::to_string(40000 + 1000 * i) + "\n");
  }
  auto source = MakeHostSource(roots());
  ASSERT_TRUE(source->Open().ok());
  auto readings = source->Read(0, 1.0);
  ASSERT_TRUE(readings.ok());
  const Reading* a =
      Find(*readings, "host_temperature_celsius", {{"chip", "coretemp.0"}, {"sensor", "Core 0"}});
  const Reading* b =
      Find(*readings, "host_temperature_celsius", {{"chip", "coretemp.1"}, {"sensor", "Core 0"}});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(a->value, 40.0);
  EXPECT_DOUBLE_EQ(b->value, 41.0);
}

}  // namespace
}  // namespace parity::monitor
