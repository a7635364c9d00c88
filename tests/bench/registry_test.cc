// SPDX-License-Identifier: Apache-2.0
// The backend registry: the built-in CPU backend, plugins loaded with dlopen from
// $PARITY_BACKEND_PATH (the fake plugins of tests/bench/fake_backend_plugin.cc), and the reason
// for each one that can't run.
#include "bench/registry.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace parity::bench {
namespace {

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("PARITY_BACKEND_PATH");
    if (old != nullptr) saved_ = old;
    had_ = old != nullptr;
    setenv("PARITY_BACKEND_PATH", "/nonexistent:" PARITY_TEST_PLUGINS, 1);
  }
  void TearDown() override {
    if (had_) {
      setenv("PARITY_BACKEND_PATH", saved_.c_str(), 1);
    } else {
      unsetenv("PARITY_BACKEND_PATH");
    }
    unsetenv("PARITY_FAKE_MODE");
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(RegistryTest, SearchOrderIsEnvironmentThenExecutableDirectory) {
  const auto dirs = PluginDirectories();
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(dirs[0], "/nonexistent");
  EXPECT_EQ(dirs[1], PARITY_TEST_PLUGINS);
  EXPECT_EQ(dirs[3], dirs[2] + "/../lib/parity");
}

TEST_F(RegistryTest, CpuIsBuiltIn) {
  auto cpu = OpenBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->name(), "cpu");
}

TEST_F(RegistryTest, PluginLoadsThroughDlopen) {
  auto fake = OpenBackend("fake");
  ASSERT_TRUE(fake.ok()) << fake.status().message();
  EXPECT_EQ((*fake)->name(), "fake");
  auto devices = (*fake)->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[1].name, "NVIDIA H200");
}

TEST_F(RegistryTest, PluginThatRefusesGivesItsReason) {
  setenv("PARITY_FAKE_MODE", "refuse", 1);
  auto fake = OpenBackend("fake");
  ASSERT_FALSE(fake.ok());
  EXPECT_EQ(fake.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fake.status().message(), "fake backend: fake runtime: no driver loaded");
}

TEST_F(RegistryTest, PluginForAnotherInterfaceVersionIsRefused) {
  auto old = OpenBackend("fakeabi");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(old.status().message().find("interface version 999, this parity has " +
                                        std::to_string(kBackendAbiVersion)),
            std::string::npos)
      << old.status().message();
}

TEST_F(RegistryTest, MissingGpuPluginIsUnavailableUnknownNameIsInvalid) {
  auto cuda = OpenBackend("cuda");
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(cuda.status().message().find("libparity_backend_cuda.so not found"), std::string::npos);
  auto typo = OpenBackend("cudaa");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(typo.status().message().find("did you mean 'cuda'"), std::string::npos);
}

TEST_F(RegistryTest, ProbeListsEveryBackendWithAReasonForEachUnavailable) {
  std::vector<std::unique_ptr<Backend>> backends;
  const auto statuses = ProbeBackends(&backends);
  ASSERT_EQ(statuses.size(), backends.size());
  std::map<std::string, BackendStatus> by_name;
  for (const auto& s : statuses) by_name[s.name] = s;
  ASSERT_TRUE(by_name.contains("cpu") && by_name.contains("cuda") && by_name.contains("hip") &&
              by_name.contains("fake") && by_name.contains("fakeabi"));
  EXPECT_TRUE(by_name["cpu"].available);
  EXPECT_EQ(by_name["cpu"].origin, "built-in");
  EXPECT_TRUE(by_name["fake"].available);
  EXPECT_EQ(by_name["fake"].origin,
            fmt::format("{}/libparity_backend_fake.so", PARITY_TEST_PLUGINS));
  for (const char* name : {"cuda", "hip", "fakeabi"}) {
    EXPECT_FALSE(by_name[name].available) << name;
    EXPECT_FALSE(by_name[name].reason.empty()) << name;
  }
}

}  // namespace
}  // namespace parity::bench
