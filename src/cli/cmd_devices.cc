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
  std::string text;
  int devices_found = 0;
  const Json doc = bench::DescribeBackends(&text, &devices_found);
  if (common.human()) std::fputs(text.c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return devices_found > 0 ? kExitOk : kExitUnavailable;
}

}  // namespace parity::cli
