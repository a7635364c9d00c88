// SPDX-License-Identifier: Apache-2.0
// parity devices: the backends built in and the plugins found, their devices, and why any is
// unavailable.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/registry.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"

namespace parity::cli {

int RunDevices(int argc, char** argv) {
  CommonOptions common;
  auto app = MakeApp(
      "devices",
      "List the benchmark backends: built in (cpu) and plugins (libparity_backend_<name>.so, "
      "looked for in $PARITY_BACKEND_PATH, beside the parity executable and in its "
      "../lib/parity), each device with its properties, and for each backend or device that "
      "can't run here, why. Exit 3 when no backend has a device.",
      &common);
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  std::vector<std::unique_ptr<bench::Backend>> backends;
  const std::vector<bench::BackendStatus> statuses = bench::ProbeBackends(&backends);
  Json doc = Document("parity-devices", 1);
  doc["plugin_directories"] = bench::PluginDirectories();
  Json list = Json::array();
  std::string text;
  int devices_found = 0;
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const bench::BackendStatus& status = statuses[i];
    Json j = {{"name", status.name}, {"origin", status.origin}};
    text += fmt::format("{} ({})", status.name, status.origin);
    if (!status.available) {
      j["available"] = false;
      j["reason"] = status.reason;
      j["devices"] = Json::array();
      text += fmt::format(": unavailable: {}\n", status.reason);
      list.push_back(std::move(j));
      continue;
    }
    Result<std::vector<bench::DeviceInfo>> devices = backends[i]->Devices();
    if (!devices.ok() || devices->empty()) {
      const std::string reason = devices.ok() ? "no devices" : devices.status().message();
      j["available"] = false;
      j["reason"] = reason;
      j["devices"] = Json::array();
      text += fmt::format(": unavailable: {}\n", reason);
      list.push_back(std::move(j));
      continue;
    }
    j["available"] = true;
    Json dev_list = Json::array();
    text += "\n";
    for (const bench::DeviceInfo& d : *devices) {
      ++devices_found;
      dev_list.push_back({{"index", d.index},
                          {"name", d.name},
                          {"vendor", d.vendor},
                          {"properties", d.properties}});
      text += fmt::format("  {}: {}{}\n", d.index, d.name,
                          d.vendor.empty() ? "" : fmt::format(" ({})", d.vendor));
      for (const auto& [key, value] : d.properties.items()) {
        text += fmt::format("      {}: {}\n", key,
                            value.is_string() ? value.get<std::string>() : value.dump());
      }
    }
    j["devices"] = std::move(dev_list);
    list.push_back(std::move(j));
  }
  doc["backends"] = std::move(list);
  if (common.human()) std::fputs(text.c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return devices_found > 0 ? kExitOk : kExitUnavailable;
}

}  // namespace parity::cli
