// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the monitor's rules file (YAML), and a valid file evaluated on samples.
#include <cstddef>
#include <cstdint>
#include <string>

#include "monitor/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto rules = parity::monitor::ParseRules(text, "fuzz.yaml");
  if (!rules.ok()) return 0;
  parity::monitor::RuleEngine engine(std::move(rules).value());
  for (int i = 0; i < 4; ++i) {
    parity::monitor::Sample sample;
    sample.monotonic = 10.0 * i;
    parity::monitor::DeviceReadings device{0, "fuzz", {}, {}};
    device.info.vendor = "AMD";
    device.readings = {
        {"gpu_temperature_celsius", {{"sensor", "junction"}}, 80.0 + 5 * i},
        {"gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", "umc"}}, 1.0 * i},
        {"gpu_throttle_active", {{"reason", "hw_slowdown"}}, i % 2 * 1.0}};
    sample.devices.push_back(device);
    sample.host = {
        {"host_ecc_errors_total", {{"severity", "correctable"}, {"controller", "mc0"}}, 3.0 - i}};
    (void)engine.Evaluate(sample);
  }
  return 0;
}
