// SPDX-License-Identifier: Apache-2.0
// The GPUs of the fingerprint: the telemetry sources' devices (NVML, ROCm SMI, amdgpu's sysfs),
// then any other display-class PCI function of NVIDIA or AMD, each completed from sysfs (PCIe
// link, NUMA node, VBIOS), procfs (NVIDIA's driver) and the KFD topology (AMD's gfx target).
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "env/fingerprint.h"
#include "monitor/source_amdgpu.h"
#include "monitor/source_nvml.h"
#include "monitor/source_rocm_smi.h"
#include "monitor/sysfs.h"

namespace parity::env {
namespace {

using monitor::JoinPath;
using monitor::ListDirectory;
using monitor::ReadTrimmed;
using monitor::ReadUnsigned;

struct Paths {
  std::string sys, proc;
};

Paths PathsOf(const FingerprintOptions& options) {
  if (options.fs_root.empty()) return {"/sys", "/proc"};
  return {JoinPath(options.fs_root, "sys"), JoinPath(options.fs_root, "proc")};
}

/// "16.0 GT/s PCIe" -> 4 (PCIe generations by transfer rate).
std::optional<int> Generation(const std::optional<std::string>& speed) {
  if (!speed) return std::nullopt;
  const std::size_t space = speed->find(' ');
  const std::optional<double> rate = monitor::ParseDecimal(speed->substr(0, space));
  if (!rate) return std::nullopt;
  constexpr std::pair<double, int> kRates[] = {{2.5, 1},  {5.0, 2},  {8.0, 3},
                                               {16.0, 4}, {32.0, 5}, {64.0, 6}};
  for (auto [r, gen] : kRates) {
    if (*rate == r) return gen;
  }
  return std::nullopt;
}

/// The PCI device directory of `bus_id`: /sys/bus/pci/devices/ID, else the drm card whose
/// uevent names it (recorded trees copy the card's device directory). "" when neither.
std::string DeviceDirectory(const Paths& p, const std::string& bus_id) {
  const std::string direct = JoinPath(p.sys, "bus/pci/devices/" + bus_id);
  if (ReadTrimmed(JoinPath(direct, "vendor"))) return direct;
  const std::string drm = JoinPath(p.sys, "class/drm");
  for (const std::string& card : ListDirectory(drm)) {
    if (card.rfind("card", 0) != 0 || card.find('-') != std::string::npos) continue;
    const std::string dir = JoinPath(drm, card + "/device");
    const auto uevent = monitor::ReadSmallFile(JoinPath(dir, "uevent"), 4096);
    if (uevent && uevent->find("PCI_SLOT_NAME=" + bus_id + "\n") != std::string::npos) {
      return dir;
    }
  }
  return "";
}

/// "0000:c1:00.0" -> (domain 0, KFD location_id bus << 8 | device << 3 | function).
std::optional<std::pair<uint64_t, uint64_t>> Location(const std::string& bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) {
    return std::nullopt;
  }
  return std::pair<uint64_t, uint64_t>{domain, (bus << 8) | (device << 3) | function};
}

/// gfx_target_version 90010 -> "gfx90a" (major, then minor and stepping as hex digits).
std::string GfxName(uint64_t version) {
  const uint64_t major = version / 10000, minor = version / 100 % 100, step = version % 100;
  if (major == 0 || minor > 15 || step > 15) return "";
  return fmt::format("gfx{}{:x}{:x}", major, minor, step);
}

/// The KFD node of the GPU at `bus_id`: its gfx target.
std::string GfxTarget(const Paths& p, const std::string& bus_id) {
  const auto location = Location(bus_id);
  if (!location) return "";
  const std::string nodes = JoinPath(p.sys, "class/kfd/kfd/topology/nodes");
  for (const std::string& node : ListDirectory(nodes)) {
    const auto text = monitor::ReadSmallFile(JoinPath(nodes, node + "/properties"), 16384);
    if (!text) continue;
    std::map<std::string, uint64_t> props;
    std::size_t start = 0;
    while (start < text->size()) {
      std::size_t end = text->find('\n', start);
      if (end == std::string::npos) end = text->size();
      const std::string line = text->substr(start, end - start);
      start = end + 1;
      const std::size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      if (auto v = monitor::ParseUnsigned(line.substr(space + 1)))
        props[line.substr(0, space)] = *v;
    }
    if (!props.count("gfx_target_version") || props["gfx_target_version"] == 0) continue;
    if (props.count("location_id") && props["location_id"] == location->second &&
        props["domain"] == location->first) {
      return GfxName(props["gfx_target_version"]);
    }
  }
  return "";
}

/// NVIDIA's kernel module version from /proc/driver/nvidia/version ("... Kernel Module  550.54.15
/// ...").
std::string NvidiaDriver(const Paths& p) {
  const auto text = monitor::ReadSmallFile(JoinPath(p.proc, "driver/nvidia/version"), 4096);
  if (!text) return "";
  const std::size_t at = text->find("Kernel Module");
  if (at == std::string::npos) return "";
  std::size_t i = at + 13;
  while (i < text->size() && (*text)[i] == ' ') ++i;
  std::size_t j = i;
  while (j < text->size() &&
         ((*text)[j] == '.' || std::isdigit(static_cast<unsigned char>((*text)[j]))))
    ++j;
  return text->substr(i, j - i);
}

void Complete(const Paths& p, Json& gpu) {
  const std::string bus_id = StringField(gpu, "pci_bus_id");
  const std::string vendor = StringField(gpu, "vendor");
  Json driver = Json::object();
  if (vendor == "NVIDIA") {
    driver["name"] = "nvidia";
    if (std::string v = NvidiaDriver(p); !v.empty()) driver["version"] = v;
  } else if (vendor == "AMD") {
    driver["name"] = "amdgpu";
    if (auto v = ReadTrimmed(JoinPath(p.sys, "module/amdgpu/version"))) driver["version"] = *v;
  }
  if (!driver.empty()) gpu["driver"] = driver;
  if (bus_id.empty()) return;
  const std::string dir = DeviceDirectory(p, bus_id);
  if (dir.empty()) return;
  if (auto v = ReadTrimmed(JoinPath(dir, "vbios_version"))) gpu["vbios"] = *v;
  if (vendor == "AMD") {
    if (std::string gfx = GfxTarget(p, bus_id); !gfx.empty()) gpu["gfx_target"] = gfx;
  }
  Json pcie = Json::object();
  if (auto g = Generation(ReadTrimmed(JoinPath(dir, "current_link_speed"))))
    pcie["generation"] = *g;
  if (auto w = ReadUnsigned(JoinPath(dir, "current_link_width")); w && *w > 0) pcie["width"] = *w;
  if (auto g = Generation(ReadTrimmed(JoinPath(dir, "max_link_speed"))))
    pcie["max_generation"] = *g;
  if (auto w = ReadUnsigned(JoinPath(dir, "max_link_width")); w && *w > 0) pcie["max_width"] = *w;
  if (!pcie.empty()) gpu["pcie"] = pcie;
  // numa_node is -1 where the platform has no NUMA affinity for the device: not a value.
  if (auto n = monitor::ReadSigned(JoinPath(dir, "numa_node")); n && *n >= 0) gpu["numa_node"] = *n;
}

Json FromDevice(std::string_view source, const monitor::DeviceInfo& d) {
  Json gpu = {{"source", std::string(source)}};
  if (!d.vendor.empty()) gpu["vendor"] = d.vendor;
  if (!d.model.empty()) gpu["model"] = d.model;
  if (!d.uuid.empty()) gpu["uuid"] = d.uuid;
  if (!d.pci_bus_id.empty()) gpu["pci_bus_id"] = d.pci_bus_id;
  if (d.memory_total_bytes) gpu["memory_total_bytes"] = *d.memory_total_bytes;
  if (d.power_limit_watts) gpu["power_limit_watts"] = *d.power_limit_watts;
  return gpu;
}

}  // namespace

Json GpuFingerprint(const FingerprintOptions& options) {
  const Paths p = PathsOf(options);
  const bool real = options.fs_root.empty();
  std::vector<std::pair<std::string, std::unique_ptr<monitor::TelemetrySource>>> sources;
  if (real || !options.nvml_library.empty()) {
    sources.emplace_back("nvml", monitor::MakeNvmlSource(options.nvml_library));
  }
  if (real || !options.rocm_smi_library.empty()) {
    sources.emplace_back("rocm-smi", monitor::MakeRocmSmiSource(options.rocm_smi_library));
  }
  sources.emplace_back("amdgpu", monitor::MakeAmdgpuSource({p.sys, p.proc}));
  Json gpus = Json::array();
  std::set<std::string> seen;
  for (auto& [name, source] : sources) {
    if (!source || !source->Open().ok()) continue;
    for (const monitor::DeviceInfo& d : source->devices()) {
      if (!d.pci_bus_id.empty() && !seen.insert(d.pci_bus_id).second) continue;
      gpus.push_back(FromDevice(name, d));
    }
  }
  // Display-class functions (class 0x03xxxx) of NVIDIA and AMD that no source reported.
  const std::string pci = JoinPath(p.sys, "bus/pci/devices");
  for (const std::string& id : ListDirectory(pci)) {
    const std::string dir = JoinPath(pci, id);
    const auto vendor = ReadUnsigned(JoinPath(dir, "vendor"));
    const auto klass = ReadUnsigned(JoinPath(dir, "class"));
    if (!vendor || !klass || (*klass >> 16) != 0x03) continue;
    if (*vendor != 0x10de && *vendor != 0x1002) continue;
    if (seen.count(id)) continue;
    seen.insert(id);
    Json gpu = {
        {"source", "pci"}, {"vendor", *vendor == 0x10de ? "NVIDIA" : "AMD"}, {"pci_bus_id", id}};
    if (auto device = ReadUnsigned(JoinPath(dir, "device"))) {
      gpu["pci_device_id"] = fmt::format("0x{:04x}", *device);
    }
    gpus.push_back(std::move(gpu));
  }
  for (Json& gpu : gpus) Complete(p, gpu);
  return gpus;
}

}  // namespace parity::env
