// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a fleet directory's fleet.json. A manifest that parses has members with a
// name that is a directory name and a status of ok or failed; every error names the file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fleet/fleet_collect.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_fleet_manifest: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = parity::fleet::ParseFleetManifest(text, "fleet.json");
  if (!manifest.ok()) {
    if (manifest.status().message().rfind("fleet.json: ", 0) != 0)
      Fail("an error without the file");
    return 0;
  }
  for (const parity::Json& m : (*manifest)["members"]) {
    const std::string name = m["name"], status = m["status"];
    if (name.empty() || name.find('/') != std::string::npos || name == "..") Fail("member name");
    if (status != "ok" && status != "failed") Fail("status");
  }
  return 0;
}
