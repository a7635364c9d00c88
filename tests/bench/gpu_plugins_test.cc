// SPDX-License-Identifier: Apache-2.0
// The real cuda and hip plugins, as built, loaded through the registry. Where the machine has no
// GPU (CI) each must report it as the runtime does: unavailable with the runtime's own error
// (cudaErrorInsufficientDriver, 35, without a driver; cudaErrorNoDevice or hipErrorNoDevice
// without a device). Where it has one, its devices must be listed with their properties.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bench/registry.h"

namespace parity::bench {
namespace {

[[maybe_unused]] void CheckPlugin(const std::string& name,
                                  std::initializer_list<const char*> no_device_errors) {
  setenv("PARITY_BACKEND_PATH", PARITY_GPU_PLUGIN_DIR, 1);
  Result<std::unique_ptr<Backend>> backend = OpenBackend(name);
  unsetenv("PARITY_BACKEND_PATH");
  if (!backend.ok()) {
    EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable);
    const std::string& message = backend.status().message();
    EXPECT_EQ(message.find("cannot load"), std::string::npos) << message;  // it loaded
    bool named = false;
    for (const char* error : no_device_errors)
      named = named || message.find(error) != std::string::npos;
    EXPECT_TRUE(named) << message;
    EXPECT_EQ(message.rfind(name + " backend: ", 0), 0u) << message;
    return;
  }
  EXPECT_EQ((*backend)->name(), name);
  Result<std::vector<DeviceInfo>> devices = (*backend)->Devices();
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_FALSE(devices->empty());
  for (const DeviceInfo& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(d.properties.contains("memory_bytes"));
    EXPECT_TRUE(d.properties.contains("compute_units"));
  }
}

#if defined(PARITY_CUDA_PLUGIN)
TEST(GpuPlugins, CudaLoadsAndSaysWhyItCannotRun) {
  CheckPlugin("cuda", {"cudaErrorInsufficientDriver (35)", "cudaErrorNoDevice (100)"});
}
#endif

#if defined(PARITY_HIP_PLUGIN)
TEST(GpuPlugins, HipLoadsAndSaysWhyItCannotRun) { CheckPlugin("hip", {"hipErrorNoDevice (100)"}); }
#endif

}  // namespace
}  // namespace parity::bench
