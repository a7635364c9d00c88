// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_host.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitor/sysfs.h"

namespace parity::monitor {
namespace {

/// hwmon chips whose sensors a GPU source already reports.
bool IsGpuHwmon(std::string_view name) { return name == "amdgpu" || name == "nouveau"; }

/// "…/hwmon12" -> 12, so hwmon10 sorts after hwmon9.
uint64_t HwmonNumber(const std::string& dir) {
  const std::size_t at = dir.rfind("hwmon");
  if (at == std::string::npos) return UINT64_MAX;
  return ParseUnsigned(std::string_view(dir).substr(at + 5)).value_or(UINT64_MAX);
}

struct CpuTimes {
  uint64_t busy = 0;
  uint64_t total = 0;
};

/// The aggregate "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal
/// (guest time is already inside user). Busy is everything but idle and iowait.
std::optional<CpuTimes> ParseCpuLine(std::string_view text) {
  if (!text.starts_with("cpu ")) return std::nullopt;
  text = text.substr(0, text.find('\n'));
  text.remove_prefix(4);
  std::vector<uint64_t> fields;
  while (fields.size() < 8) {
    text = Trim(text);
    if (text.empty()) break;
    const std::size_t end = text.find_first_of(" \t");
    auto value = ParseUnsigned(text.substr(0, end));
    if (!value) return std::nullopt;
    fields.push_back(*value);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end);
  }
  if (fields.size() < 5) return std::nullopt;
  CpuTimes times;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    times.total += fields[i];
    if (i != 3 && i != 4) times.busy += fields[i];
  }
  return times;
}

/// "Key:   123 kB" lines of /proc/meminfo, in bytes.
std::map<std::string, uint64_t, std::less<>> ParseMeminfo(std::string_view text) {
  std::map<std::string, uint64_t, std::less<>> out;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = Trim(line.substr(colon + 1));
    uint64_t scale = 1;
    if (value.ends_with(" kB")) {
      value.remove_suffix(3);
      scale = 1024;
    }
    auto number = ParseUnsigned(value);
    if (number && *number <= UINT64_MAX / scale)
      out.emplace(line.substr(0, colon), *number * scale);
  }
  return out;
}

/// One RAPL zone: its energy counter and what is needed to turn two reads into watts.
struct RaplZone {
  std::string dir;
  std::string domain;  ///< "package-0", or "package-0/dram" for a subzone
  std::optional<uint64_t> max_range_uj;
  std::optional<uint64_t> last_uj;
  double last_time = 0.0;
};

class HostSource final : public TelemetrySource {
 public:
  explicit HostSource(const Roots& roots) : roots_(roots) {}

  std::string_view name() const override { return "host"; }

  Status Open() override {
    DeviceInfo info;
    info.vendor = "host";
    if (auto cpuinfo = ReadSmallFile(JoinPath(roots_.procfs, "cpuinfo"), 1 << 16)) {
      const std::size_t at = cpuinfo->find("model name");
      if (at != std::string::npos) {
        std::string_view line = std::string_view(*cpuinfo).substr(at);
        line = line.substr(0, line.find('\n'));
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos) info.model = std::string(Trim(line.substr(colon + 1)));
      }
    }
    devices_ = {info};
    FindRaplZones();
    const bool any = ReadSmallFile(JoinPath(roots_.procfs, "stat")).has_value() ||
                     ReadSmallFile(JoinPath(roots_.procfs, "meminfo")).has_value() ||
                     !ListDirectory(JoinPath(roots_.sysfs, "class/hwmon")).empty() ||
                     !rapl_.empty() ||
                     !ListDirectory(JoinPath(roots_.sysfs, "devices/system/edac/mc")).empty();
    if (!any) {
      return Status::Unavailable("nothing readable under " + roots_.procfs +
                                 " (stat, meminfo) or " + roots_.sysfs +
                                 " (hwmon, powercap, edac)");
    }
    return Status::Ok();
  }

  const std::vector<DeviceInfo>& devices() const override { return devices_; }

  Result<std::vector<Reading>> Read(std::size_t index, double now_seconds) override {
    if (index != 0) return Status::Internal("host source: no device " + std::to_string(index));
    std::vector<Reading> out;
    ReadCpu(out);
    ReadMemory(out);
    ReadHwmon(out);
    ReadRapl(out, now_seconds);
    ReadEdac(out);
    return out;
  }

 private:
  void ReadCpu(std::vector<Reading>& out) {
    auto text = ReadSmallFile(JoinPath(roots_.procfs, "stat"), 1 << 12);
    std::optional<CpuTimes> now = text ? ParseCpuLine(*text) : std::nullopt;
    if (now && last_cpu_ && now->total > last_cpu_->total && now->busy >= last_cpu_->busy) {
      const double busy = static_cast<double>(now->busy - last_cpu_->busy);
      const double total = static_cast<double>(now->total - last_cpu_->total);
      AddReading(out, "host_cpu_utilization_ratio", {}, std::min(1.0, busy / total));
    }
    if (now) last_cpu_ = now;
  }

  void ReadMemory(std::vector<Reading>& out) {
    auto text = ReadSmallFile(JoinPath(roots_.procfs, "meminfo"));
    if (!text) return;
    const auto fields = ParseMeminfo(*text);
    const auto total = fields.find("MemTotal");
    const auto available = fields.find("MemAvailable");
    if (total == fields.end()) return;
    AddReading(out, "host_memory_total_bytes", {}, static_cast<double>(total->second));
    if (available != fields.end() && available->second <= total->second) {
      AddReading(out, "host_memory_used_bytes", {},
                 static_cast<double>(total->second - available->second));
    }
  }

  /// The temperature inputs of every non-GPU hwmon chip, with their labels: found once and
  /// again every kRediscoverReads reads (labels and chips don't change while a host runs;
  /// re-reading 2 files per sensor each second would double the monitor's cost).
  void FindHwmonSensors() {
    sensors_.clear();
    const std::string base = JoinPath(roots_.sysfs, "class/hwmon");
    // Chips by name; a name that more than one chip has (coretemp on a two-socket host, two
    // NVMe drives) becomes name.0, name.1, ... in hwmon order, so no two series collide.
    std::vector<std::pair<std::string, std::string>> chips;  // (directory, name)
    std::map<std::string, int> uses;
    for (const std::string& entry : ListDirectory(base)) {
      const std::string dir = JoinPath(base, entry);
      auto name = ReadTrimmed(JoinPath(dir, "name"));
      if (!name || IsGpuHwmon(*name)) continue;
      chips.emplace_back(dir, *name);
      ++uses[*name];
    }
    std::sort(chips.begin(), chips.end(), [](const auto& a, const auto& b) {
      return HwmonNumber(a.first) < HwmonNumber(b.first);
    });
    std::map<std::string, int> seen;
    for (const auto& [dir, name] : chips) {
      const std::string chip = uses[name] > 1 ? name + "." + std::to_string(seen[name]++) : name;
      // tempN_input for every N the directory has: coretemp numbers them by core id + 2, with
      // gaps, past 64 on large CPUs.
      std::vector<std::pair<uint64_t, std::string>> indices;
      for (const std::string& file : ListDirectory(dir)) {
        if (!file.starts_with("temp") || !file.ends_with("_input")) continue;
        const std::string index = file.substr(4, file.size() - 4 - 6);
        auto number = ParseUnsigned(index);
        if (!number || index.starts_with("0x")) continue;
        indices.emplace_back(*number, index);
      }
      std::sort(indices.begin(), indices.end());
      for (const auto& [number, index] : indices) {
        const std::string prefix = JoinPath(dir, "temp" + index);
        std::string sensor = ReadTrimmed(prefix + "_label").value_or("temp" + index);
        sensors_.push_back({prefix + "_input", {{"chip", chip}, {"sensor", std::move(sensor)}}});
      }
    }
  }

  void ReadHwmon(std::vector<Reading>& out) {
    if (reads_ % kRediscoverReads == 0) FindHwmonSensors();
    ++reads_;
    for (const HwmonSensor& sensor : sensors_) {
      auto milli = ReadSigned(sensor.input);
      if (!milli) continue;
      AddReading(out, "host_temperature_celsius", sensor.labels,
                 static_cast<double>(*milli) / 1000.0);
    }
  }

  void FindRaplZones() {
    const std::string base = JoinPath(roots_.sysfs, "class/powercap");
    std::map<std::string, std::string> names;  // zone id ("intel-rapl:0") -> name
    for (const std::string& entry : ListDirectory(base)) {
      if (entry.find(':') == std::string::npos) continue;  // the control type itself
      if (auto name = ReadTrimmed(JoinPath(JoinPath(base, entry), "name"))) names[entry] = *name;
    }
    for (const auto& [id, name] : names) {
      const std::string dir = JoinPath(base, id);
      if (!ReadUnsigned(JoinPath(dir, "energy_uj"))) continue;
      RaplZone zone;
      zone.dir = dir;
      zone.domain = name;
      const std::size_t last = id.rfind(':');
      if (last != std::string::npos && id.find(':') != last) {
        const auto parent = names.find(id.substr(0, last));
        if (parent != names.end()) zone.domain = parent->second + "/" + name;
      }
      zone.max_range_uj = ReadUnsigned(JoinPath(dir, "max_energy_range_uj"));
      rapl_.push_back(std::move(zone));
    }
  }

  void ReadRapl(std::vector<Reading>& out, double now) {
    for (RaplZone& zone : rapl_) {
      auto energy = ReadUnsigned(JoinPath(zone.dir, "energy_uj"));
      if (!energy) continue;
      if (zone.last_uj && now > zone.last_time) {
        std::optional<uint64_t> delta;
        if (*energy >= *zone.last_uj) {
          delta = *energy - *zone.last_uj;
        } else if (zone.max_range_uj && *zone.last_uj <= *zone.max_range_uj) {
          delta = *zone.max_range_uj - *zone.last_uj + *energy;  // the counter wrapped
        }
        if (delta) {
          AddReading(out, "host_power_watts", {{"domain", zone.domain}},
                     static_cast<double>(*delta) * 1e-6 / (now - zone.last_time));
        }
      }
      zone.last_uj = energy;
      zone.last_time = now;
    }
  }

  void ReadEdac(std::vector<Reading>& out) {
    const std::string base = JoinPath(roots_.sysfs, "devices/system/edac/mc");
    for (const std::string& mc : ListDirectory(base)) {
      if (!mc.starts_with("mc")) continue;
      const std::string dir = JoinPath(base, mc);
      if (auto ce = ReadUnsigned(JoinPath(dir, "ce_count"))) {
        AddReading(out, "host_ecc_errors_total", {{"severity", "correctable"}, {"controller", mc}},
                   static_cast<double>(*ce));
      }
      if (auto ue = ReadUnsigned(JoinPath(dir, "ue_count"))) {
        AddReading(out, "host_ecc_errors_total",
                   {{"severity", "uncorrectable"}, {"controller", mc}}, static_cast<double>(*ue));
      }
    }
  }

  struct HwmonSensor {
    std::string input;  ///< …/tempN_input
    Labels labels;      ///< chip, sensor
  };
  static constexpr uint64_t kRediscoverReads = 60;

  Roots roots_;
  std::vector<DeviceInfo> devices_;
  std::vector<HwmonSensor> sensors_;
  uint64_t reads_ = 0;
  std::optional<CpuTimes> last_cpu_;
  std::vector<RaplZone> rapl_;
};

}  // namespace

std::unique_ptr<TelemetrySource> MakeHostSource(const Roots& roots) {
  return std::make_unique<HostSource>(roots);
}

}  // namespace parity::monitor
