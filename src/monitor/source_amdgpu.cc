// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_amdgpu.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "monitor/sysfs.h"

namespace parity::monitor {
namespace {

/// "card3" -> 3; nullopt for connectors ("card0-DP-1"), render nodes and the rest.
std::optional<uint64_t> CardNumber(std::string_view entry) {
  if (!entry.starts_with("card")) return std::nullopt;
  entry.remove_prefix(4);
  if (entry.empty() || !std::all_of(entry.begin(), entry.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      })) {
    return std::nullopt;
  }
  return ParseUnsigned(entry);
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// PCI_SLOT_NAME from the device's uevent: "0000:c1:00.0".
std::string PciSlot(const std::string& device_dir) {
  auto uevent = ReadSmallFile(JoinPath(device_dir, "uevent"), 4096);
  if (!uevent) return {};
  constexpr std::string_view kKey = "PCI_SLOT_NAME=";
  std::string_view text = *uevent;
  const std::size_t at = text.find(kKey);
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n')) return {};
  text = text.substr(at + kKey.size());
  return Lower(std::string(Trim(text.substr(0, text.find('\n')))));
}

/// The current level of a pp_dpm_* table ("1: 1700Mhz *"), in hertz. nullopt unless exactly
/// one line is marked and its number parses.
std::optional<double> CurrentDpmHertz(const std::string& path) {
  auto text = ReadSmallFile(path, 4096);
  if (!text) return std::nullopt;
  std::optional<double> current;
  int marked = 0;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    if (!line.ends_with("*")) continue;
    ++marked;
    line.remove_suffix(1);
    line = Trim(line);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string value = Lower(std::string(Trim(line.substr(colon + 1))));
    if (!value.ends_with("mhz")) return std::nullopt;
    value.resize(value.size() - 3);
    auto mhz = ParseDecimal(value);
    if (!mhz) return std::nullopt;
    current = *mhz * 1e6;
  }
  if (marked != 1) return std::nullopt;
  return current;
}

/// "16.0 GT/s PCIe" -> 4.
std::optional<double> LinkGeneration(const std::string& path) {
  auto text = ReadTrimmed(path);
  if (!text) return std::nullopt;
  std::string_view view = *text;
  const std::size_t unit = view.find(" GT/s");
  if (unit == std::string_view::npos) return std::nullopt;
  auto rate = ParseDecimal(view.substr(0, unit));
  if (!rate) return std::nullopt;
  constexpr std::pair<double, int> kGenerations[] = {{2.5, 1}, {5, 2},  {8, 3},
                                                     {16, 4},  {32, 5}, {64, 6}};
  for (const auto& [gts, generation] : kGenerations) {
    if (*rate > gts - 0.1 && *rate < gts + 0.1) return generation;
  }
  return std::nullopt;
}

/// "ue: 0\nce: 3\n" -> (uncorrectable, correctable), each absent when its line is not a count.
std::pair<std::optional<uint64_t>, std::optional<uint64_t>> RasCounts(std::string_view text) {
  std::optional<uint64_t> ue, ce;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.starts_with("ue:")) ue = ParseUnsigned(line.substr(3));
    if (line.starts_with("ce:")) ce = ParseUnsigned(line.substr(3));
  }
  return {ue, ce};
}

std::optional<double> AsDouble(std::optional<uint64_t> value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

std::optional<double> Scaled(std::optional<uint64_t> value, double scale) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value) * scale;
}

/// Where a card's readings are: found at Open() and again every kRediscoverReads reads, so a
/// sample opens only the files that hold values (labels and directory listings don't change).
struct Card {
  std::string device_dir;                                         ///< class/drm/cardN/device
  std::string hwmon;                                              ///< device/hwmon/hwmonM, or empty
  std::vector<std::pair<std::string, std::string>> temperatures;  ///< (tempN_input, sensor)
  std::vector<std::pair<std::string, std::string>> ras;           ///< (<block>_err_count, block)
  uint64_t reads = 0;
};

constexpr uint64_t kRediscoverReads = 60;

class AmdgpuSource final : public TelemetrySource {
 public:
  explicit AmdgpuSource(const Roots& roots) : roots_(roots) {}

  std::string_view name() const override { return "amdgpu"; }

  Status Open() override {
    const std::string drm = JoinPath(roots_.sysfs, "class/drm");
    std::vector<std::pair<uint64_t, std::string>> found;
    for (const std::string& entry : ListDirectory(drm)) {
      auto number = CardNumber(entry);
      if (!number) continue;
      const std::string device = JoinPath(JoinPath(drm, entry), "device");
      if (ReadUnsigned(JoinPath(device, "vendor")) != 0x1002u) continue;
      found.emplace_back(*number, device);
    }
    std::sort(found.begin(), found.end());
    for (const auto& [number, device] : found) {
      Card card;
      card.device_dir = device;
      cards_.push_back(std::move(card));
      devices_.push_back(Describe(device));
    }
    if (cards_.empty()) return Status::Unavailable("no AMD GPU under " + drm);
    return Status::Ok();
  }

  const std::vector<DeviceInfo>& devices() const override { return devices_; }

  Result<std::vector<Reading>> Read(std::size_t index, double /*now_seconds*/) override {
    if (index >= cards_.size()) {
      return Status::Internal("amdgpu source: no device " + std::to_string(index));
    }
    Card& card = cards_[index];
    const std::string& dir = card.device_dir;
    if (ReadUnsigned(JoinPath(dir, "vendor")) != 0x1002u) {
      return Status::Unavailable(dir + ": the device is gone");
    }
    if (card.reads++ % kRediscoverReads == 0) Discover(card);
    std::vector<Reading> out;
    if (!card.hwmon.empty()) ReadHwmon(card, out);
    auto busy = ReadUnsigned(JoinPath(dir, "gpu_busy_percent"));
    if (busy && *busy <= 100) {
      AddReading(out, "gpu_utilization_ratio", {}, static_cast<double>(*busy) / 100.0);
    }
    AddReading(out, "gpu_memory_used_bytes", {},
               AsDouble(ReadUnsigned(JoinPath(dir, "mem_info_vram_used"))));
    AddReading(out, "gpu_memory_total_bytes", {},
               AsDouble(ReadUnsigned(JoinPath(dir, "mem_info_vram_total"))));
    AddReading(out, "gpu_clock_hertz", {{"domain", "sm"}},
               CurrentDpmHertz(JoinPath(dir, "pp_dpm_sclk")));
    AddReading(out, "gpu_clock_hertz", {{"domain", "memory"}},
               CurrentDpmHertz(JoinPath(dir, "pp_dpm_mclk")));
    ReadRas(card, out);
    AddReading(out, "gpu_pcie_replay_total", {},
               AsDouble(ReadUnsigned(JoinPath(dir, "pcie_replay_count"))));
    AddReading(out, "gpu_pcie_link_generation", {},
               LinkGeneration(JoinPath(dir, "current_link_speed")));
    auto width = ReadUnsigned(JoinPath(dir, "current_link_width"));
    if (width && *width > 0 && *width <= 32) {
      AddReading(out, "gpu_pcie_link_width", {}, static_cast<double>(*width));
    }
    return out;
  }

 private:
  /// The first hwmon directory of the device; empty when it has none.
  static std::string Hwmon(const std::string& device_dir) {
    const std::string base = JoinPath(device_dir, "hwmon");
    for (const std::string& entry : ListDirectory(base)) {
      if (entry.starts_with("hwmon")) return JoinPath(base, entry);
    }
    return {};
  }

  static DeviceInfo Describe(const std::string& dir) {
    DeviceInfo info;
    info.vendor = "AMD";
    info.pci_bus_id = PciSlot(dir);
    if (auto product = ReadTrimmed(JoinPath(dir, "product_name"))) {
      info.model = *product;
    } else if (auto id = ReadUnsigned(JoinPath(dir, "device")); id && *id <= 0xffff) {
      info.model = std::string(AmdModelName(static_cast<uint32_t>(*id)));
      if (info.model.empty()) {
        char buffer[32];
        std::snprintf(buffer, sizeof(buffer), "AMD GPU 0x%04x", static_cast<unsigned>(*id));
        info.model = buffer;
      }
    }
    if (auto unique = ReadTrimmed(JoinPath(dir, "unique_id"))) {
      std::string hex = Lower(*unique);
      if (hex.starts_with("0x")) hex.erase(0, 2);
      if (!hex.empty() && std::all_of(hex.begin(), hex.end(), [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) != 0;
          })) {
        info.uuid = "0x" + hex;
      }
    }
    info.memory_total_bytes = AsDouble(ReadUnsigned(JoinPath(dir, "mem_info_vram_total")));
    const std::string hwmon = Hwmon(dir);
    if (!hwmon.empty()) {
      info.power_limit_watts = Scaled(ReadUnsigned(JoinPath(hwmon, "power1_cap")), 1e-6);
      auto crit = ReadSigned(JoinPath(hwmon, "temp2_crit"));
      if (crit) info.temperature_limit_celsius = static_cast<double>(*crit) / 1000.0;
    }
    return info;
  }

  /// The card's hwmon directory, its temperature sensors and its RAS counters.
  static void Discover(Card& card) {
    card.hwmon = Hwmon(card.device_dir);
    card.temperatures.clear();
    if (!card.hwmon.empty()) {
      // temp1/2/3 are edge, junction and memory (Documentation/gpu/amdgpu/thermal.rst); the
      // label files say which, and a board without a sensor has neither file.
      constexpr std::string_view kDefaultSensor[] = {"edge", "junction", "memory"};
      for (int i = 1; i <= 3; ++i) {
        const std::string prefix = JoinPath(card.hwmon, "temp" + std::to_string(i));
        std::string sensor(kDefaultSensor[i - 1]);
        if (auto label = ReadTrimmed(prefix + "_label")) {
          sensor = *label == "mem" ? "memory" : *label;
          if (sensor != "edge" && sensor != "junction" && sensor != "memory") continue;
        }
        card.temperatures.emplace_back(prefix + "_input", sensor);
      }
    }
    card.ras.clear();
    const std::string ras = JoinPath(card.device_dir, "ras");
    for (const std::string& entry : ListDirectory(ras, 64)) {
      constexpr std::string_view kSuffix = "_err_count";
      if (!std::string_view(entry).ends_with(kSuffix)) continue;
      card.ras.emplace_back(JoinPath(ras, entry), entry.substr(0, entry.size() - kSuffix.size()));
    }
  }

  static void ReadHwmon(const Card& card, std::vector<Reading>& out) {
    const std::string& hwmon = card.hwmon;
    for (const auto& [input, sensor] : card.temperatures) {
      auto milli = ReadSigned(input);
      if (!milli) continue;
      AddReading(out, "gpu_temperature_celsius", {{"sensor", sensor}},
                 static_cast<double>(*milli) / 1000.0);
    }
    // Power: power1_average (older kernels, MI200), else power1_input (newer, MI300). The
    // package's power is reported on one GCD of an MI250; the other reads exactly 0 ("for
    // secondary die show the value as 0", drivers/gpu/drm/amd/pm/swsmu/smu13/aldebaran_ppt.c)
    // or has no file: absent either way, as a powered GPU never draws 0 µW.
    auto power = ReadUnsigned(JoinPath(hwmon, "power1_average"));
    if (!power) power = ReadUnsigned(JoinPath(hwmon, "power1_input"));
    if (power == 0u) power.reset();
    AddReading(out, "gpu_power_watts", {}, Scaled(power, 1e-6));
    AddReading(out, "gpu_power_limit_watts", {},
               Scaled(ReadUnsigned(JoinPath(hwmon, "power1_cap")), 1e-6));
  }

  static void ReadRas(const Card& card, std::vector<Reading>& out) {
    for (const auto& [path, block] : card.ras) {
      auto text = ReadSmallFile(path, 4096);
      if (!text) continue;
      const auto [ue, ce] = RasCounts(*text);
      AddReading(out, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", block}},
                 AsDouble(ce));
      AddReading(out, "gpu_ecc_errors_total", {{"severity", "uncorrectable"}, {"block", block}},
                 AsDouble(ue));
    }
    // gpu_vram_bad_pages: "pfn : size : flag" per page, flag R (reserved), P (pending) or F
    // (failed to reserve). Any other line makes the counts unreliable: all three absent.
    auto pages = ReadSmallFile(JoinPath(card.device_dir, "ras/gpu_vram_bad_pages"), 1 << 20);
    if (!pages) return;
    uint64_t reserved = 0, pending = 0, failed = 0;
    std::string_view rest = *pages;
    while (!rest.empty()) {
      const std::size_t eol = rest.find('\n');
      std::string_view line = Trim(rest.substr(0, eol));
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
      if (line.empty()) continue;
      const std::size_t colon = line.rfind(':');
      if (colon == std::string_view::npos || line.find(':') == colon) return;
      const std::string_view flag = Trim(line.substr(colon + 1));
      if (flag == "R") {
        ++reserved;
      } else if (flag == "P") {
        ++pending;
      } else if (flag == "F") {
        ++failed;
      } else {
        return;
      }
    }
    AddReading(out, "gpu_retired_pages_total", {{"cause", "bad_page_reserved"}},
               static_cast<double>(reserved));
    AddReading(out, "gpu_retired_pages_total", {{"cause", "bad_page_pending"}},
               static_cast<double>(pending));
    AddReading(out, "gpu_retired_pages_total", {{"cause", "bad_page_unreservable"}},
               static_cast<double>(failed));
  }

  Roots roots_;
  std::vector<Card> cards_;
  std::vector<DeviceInfo> devices_;
};

}  // namespace

std::string_view AmdModelName(uint32_t pci_device_id) {
  // PCI ids from the Linux PCI ID repository (pci.ids, vendor 1002).
  switch (pci_device_id) {
    case 0x738c:
      return "AMD Instinct MI100";
    case 0x7408:
      return "AMD Instinct MI250X";
    case 0x740c:
      return "AMD Instinct MI250X/MI250";
    case 0x740f:
      return "AMD Instinct MI210";
    case 0x74a1:
      return "AMD Instinct MI300X";
    case 0x74a5:
      return "AMD Instinct MI325X";
    case 0x74b5:
      return "AMD Instinct MI300X VF";
    case 0x73bf:
      return "AMD Radeon RX 6800/6800 XT / 6900 XT";
    case 0x744c:
      return "AMD Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M";
    default:
      return {};
  }
}

std::unique_ptr<TelemetrySource> MakeAmdgpuSource(const Roots& roots) {
  return std::make_unique<AmdgpuSource>(roots);
}

}  // namespace parity::monitor
