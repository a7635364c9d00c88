// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the amdgpu and host sources on a sysfs/procfs tree whose files hold the
// input. The input is split at NUL bytes into the contents of the files below, in order.
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "monitor/source_amdgpu.h"
#include "monitor/source_host.h"

namespace {

constexpr std::array<std::string_view, 16> kFiles = {
    "sys/class/drm/card0/device/uevent",
    "sys/class/drm/card0/device/pp_dpm_sclk",
    "sys/class/drm/card0/device/pp_dpm_mclk",
    "sys/class/drm/card0/device/ras/umc_err_count",
    "sys/class/drm/card0/device/ras/gpu_vram_bad_pages",
    "sys/class/drm/card0/device/hwmon/hwmon0/temp1_input",
    "sys/class/drm/card0/device/hwmon/hwmon0/temp2_label",
    "sys/class/drm/card0/device/hwmon/hwmon0/power1_average",
    "sys/class/drm/card0/device/current_link_speed",
    "sys/class/drm/card0/device/gpu_busy_percent",
    "sys/class/drm/card0/device/unique_id",
    "proc/stat",
    "proc/meminfo",
    "sys/class/powercap/intel-rapl:0/energy_uj",
    "sys/class/hwmon/hwmon1/temp1_input",
    "sys/devices/system/edac/mc/mc0/ce_count",
};

/// The tree, made once per process and removed at exit.
struct Tree {
  std::filesystem::path dir;
  ~Tree() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

const std::filesystem::path& Root() {
  static const Tree tree{[] {
    auto dir = std::filesystem::temp_directory_path() /
               ("parity_fuzz_sysfs_" + std::to_string(::getpid()));
    for (std::string_view file : kFiles) {
      std::filesystem::create_directories((dir / file).parent_path());
    }
    std::ofstream(dir / "sys/class/drm/card0/device/vendor") << "0x1002\n";
    std::ofstream(dir / "sys/class/drm/card0/device/device") << "0x74a1\n";
    std::ofstream(dir / "sys/class/powercap/intel-rapl:0/name") << "package-0\n";
    std::ofstream(dir / "sys/class/hwmon/hwmon1/name") << "coretemp\n";
    return dir;
  }()};
  return tree.dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t at = 0;
  for (std::string_view file : kFiles) {
    const std::size_t end = std::min(input.find('\0', at), input.size());
    const std::string_view part = at <= input.size() ? input.substr(at, end - at) : "";
    std::ofstream(Root() / file, std::ios::binary | std::ios::trunc) << part;
    at = end + 1;
  }
  const parity::monitor::Roots roots{(Root() / "sys").string(), (Root() / "proc").string()};
  std::unique_ptr<parity::monitor::TelemetrySource> sources[] = {
      parity::monitor::MakeAmdgpuSource(roots), parity::monitor::MakeHostSource(roots)};
  for (auto& source : sources) {
    if (!source->Open().ok()) continue;
    for (std::size_t i = 0; i < source->devices().size(); ++i) {
      (void)source->Read(i, 1.0).ok();
      (void)source->Read(i, 2.0).ok();
    }
  }
  return 0;
}
