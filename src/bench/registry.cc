// SPDX-License-Identifier: Apache-2.0
#include "bench/registry.h"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "bench/backend_cpu.h"
#include "core/dynlib.h"
#include "core/spellcheck.h"

namespace parity::bench {
namespace {

struct BuiltinBackend {
  std::string_view name;
  std::unique_ptr<Backend> (*create)();
};
constexpr std::array<BuiltinBackend, 1> kBuiltins = {{{"cpu", NewCpuBackend}}};

// GPU backends built as plugins where their compilers are present (docs/DESIGN.md).
constexpr std::array<std::string_view, 2> kKnownPlugins = {"cuda", "hip"};

constexpr std::string_view kPrefix = "libparity_backend_";
constexpr std::string_view kSuffix = ".so";

std::string PluginFileName(std::string_view name) {
  return fmt::format("{}{}{}", kPrefix, name, kSuffix);
}

std::string ExecutableDirectory() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return exe.parent_path().string();
}

// The plugin's path in the first directory that has it, or nothing.
std::optional<std::string> FindPlugin(std::string_view name) {
  for (const std::string& dir : PluginDirectories()) {
    const std::string path = dir + "/" + PluginFileName(name);
    if (access(path.c_str(), R_OK) == 0) return path;
  }
  return std::nullopt;
}

// Plugin names found in the plugin directories.
std::set<std::string> DiscoveredPlugins() {
  std::set<std::string> names;
  for (const std::string& dir : PluginDirectories()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.size() > kPrefix.size() + kSuffix.size() && file.starts_with(kPrefix) &&
          file.ends_with(kSuffix)) {
        names.insert(file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size()));
      }
    }
  }
  return names;
}

Result<std::unique_ptr<Backend>> LoadPlugin(std::string_view name, const std::string& path) {
  // Plugins stay loaded for the life of the process: a backend's code and any runtime it has
  // started (CUDA, HIP) must outlive every object it handed out.
  Result<void*> handle = OpenLibrary(path);
  if (!handle.ok()) {
    return Status::Unavailable(
        fmt::format("{} backend: cannot load {}: {}", name, path, handle.status().message()));
  }
  int (*abi)() = nullptr;
  Backend* (*create)(std::string*) = nullptr;
  SymbolResolver symbols(*handle, path);
  symbols.Require({"parity_backend_abi_version"}, &abi);
  symbols.Require({"parity_backend_create"}, &create);
  if (!symbols.missing().empty()) {
    return Status::Unavailable(fmt::format(
        "{} backend: {} is not a parity backend plugin (it lacks parity_backend_abi_version or "
        "parity_backend_create)",
        name, path));
  }
  if (const int version = abi(); version != kBackendAbiVersion) {
    return Status::Unavailable(
        fmt::format("{} backend: {} was built for backend interface version {}, this parity has {}",
                    name, path, version, kBackendAbiVersion));
  }
  std::string error;
  Backend* backend = create(&error);
  if (backend == nullptr) {
    return Status::Unavailable(
        fmt::format("{} backend: {}", name, error.empty() ? "the plugin refused to start" : error));
  }
  return std::unique_ptr<Backend>(backend);
}

}  // namespace

std::vector<std::string> PluginDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("PARITY_BACKEND_PATH"); env != nullptr) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (const std::string exe_dir = ExecutableDirectory(); !exe_dir.empty()) {
    dirs.push_back(exe_dir);
    dirs.push_back(exe_dir + "/../lib/parity");
  }
  return dirs;
}

Result<std::unique_ptr<Backend>> OpenBackend(std::string_view name) {
  for (const BuiltinBackend& builtin : kBuiltins) {
    if (builtin.name == name) return builtin.create();
  }
  if (const std::optional<std::string> path = FindPlugin(name)) return LoadPlugin(name, *path);
  const bool known =
      std::find(kKnownPlugins.begin(), kKnownPlugins.end(), name) != kKnownPlugins.end();
  if (known) {
    return Status::Unavailable(fmt::format(
        "{} backend: plugin {} not found in {} (it is built only where the {} compiler is "
        "present)",
        name, PluginFileName(name), fmt::join(PluginDirectories(), ", "),
        name == "cuda" ? "CUDA" : "HIP"));
  }
  std::vector<std::string_view> names;
  for (const BuiltinBackend& builtin : kBuiltins) names.push_back(builtin.name);
  for (std::string_view plugin : kKnownPlugins) names.push_back(plugin);
  const std::set<std::string> discovered = DiscoveredPlugins();
  for (const std::string& plugin : discovered) names.push_back(plugin);
  std::string message =
      fmt::format("unknown backend '{}' (known: {})", name, fmt::join(names, ", "));
  if (auto suggestion = Suggest(name, names)) {
    message += fmt::format("; did you mean '{}'?", *suggestion);
  }
  return Status::Invalid("", message);
}

std::vector<BackendStatus> ProbeBackends(std::vector<std::unique_ptr<Backend>>* backends) {
  std::vector<std::string> names;
  for (const BuiltinBackend& builtin : kBuiltins) names.emplace_back(builtin.name);
  for (std::string_view plugin : kKnownPlugins) names.emplace_back(plugin);
  for (const std::string& plugin : DiscoveredPlugins()) {
    if (std::find(names.begin(), names.end(), plugin) == names.end()) names.push_back(plugin);
  }
  std::vector<BackendStatus> statuses;
  backends->clear();
  for (const std::string& name : names) {
    BackendStatus status;
    status.name = name;
    const bool builtin = std::any_of(kBuiltins.begin(), kBuiltins.end(),
                                     [&](const BuiltinBackend& b) { return b.name == name; });
    status.origin = builtin ? "built-in" : FindPlugin(name).value_or(PluginFileName(name));
    Result<std::unique_ptr<Backend>> backend = OpenBackend(name);
    status.available = backend.ok();
    if (backend.ok()) {
      backends->push_back(std::move(backend).value());
    } else {
      status.reason = backend.status().message();
      backends->push_back(nullptr);
    }
    statuses.push_back(std::move(status));
  }
  return statuses;
}

Json DescribeBackends(std::string* text_out, int* devices_out) {
  std::vector<std::unique_ptr<Backend>> backends;
  const std::vector<BackendStatus> statuses = ProbeBackends(&backends);
  Json doc = Document("parity-devices", 1);
  doc["plugin_directories"] = PluginDirectories();
  Json list = Json::array();
  std::string text;
  int devices_found = 0;
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const BackendStatus& status = statuses[i];
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
    Result<std::vector<DeviceInfo>> devices = backends[i]->Devices();
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
    for (const DeviceInfo& d : *devices) {
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
  if (text_out != nullptr) *text_out = std::move(text);
  if (devices_out != nullptr) *devices_out = devices_found;
  return doc;
}

}  // namespace parity::bench
