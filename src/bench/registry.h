// SPDX-License-Identifier: Apache-2.0
// The backend registry: the backends built into parity and the plugins (shared libraries named
// libparity_backend_<name>.so) it can load with dlopen, each either usable or unavailable with
// the reason.
#ifndef PARITY_BENCH_REGISTRY_H_
#define PARITY_BENCH_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::bench {

/// Where `parity` looks for plugins, in order: each directory of $PARITY_BACKEND_PATH (':'
/// separated), the directory of the parity executable, and its ../lib/parity.
std::vector<std::string> PluginDirectories();

/// A backend parity knows of, and whether it can run here.
struct BackendStatus {
  std::string name;
  std::string origin;  ///< "built-in", or the plugin's path (or its file name when not found)
  bool available = false;
  std::string reason;  ///< why not, when unavailable
};

/// Opens backend `name`: a built-in one, or the plugin libparity_backend_<name>.so from the
/// first PluginDirectories() entry that has it. kInvalidInput for a name parity does not know
/// (with "did you mean"); kUnavailable with the reason when the plugin is missing, was built
/// for another interface version, or its runtime refuses (no driver, no library).
Result<std::unique_ptr<Backend>> OpenBackend(std::string_view name);

/// Every built-in backend, every known plugin (cuda, hip) and every other
/// libparity_backend_*.so in PluginDirectories(), each opened to tell whether it is available.
/// `backends` receives the opened ones, in the same order (nullptr where unavailable).
std::vector<BackendStatus> ProbeBackends(std::vector<std::unique_ptr<Backend>>* backends);

/// What `parity devices` reports: the parity-devices v1 document (plugin_directories, backends
/// [{name, origin, available, reason, devices [{index, name, vendor, properties}]}]), its
/// text in `*text` and the number of devices found in `*devices_found` (both may be nullptr).
Json DescribeBackends(std::string* text, int* devices_found);

}  // namespace parity::bench

#endif  // PARITY_BENCH_REGISTRY_H_
