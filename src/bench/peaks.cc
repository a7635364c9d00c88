// SPDX-License-Identifier: Apache-2.0
#include "bench/peaks.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <regex>
#include <string>
#include <utility>

#include "core/yaml_util.h"

namespace parity::bench {

/// The text of data/peaks.yaml, defined in the file CMake generates from peaks_data.cc.in.
extern const char kBuiltinPeaksYaml[];

namespace {

constexpr std::regex_constants::syntax_option_type kPatternSyntax =
    std::regex_constants::ECMAScript | std::regex_constants::icase;

constexpr std::string_view kBuiltinOrigin = "data/peaks.yaml (built in)";

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::string_view kTopKeys[] = {"devices"};
constexpr std::string_view kDeviceKeys[] = {"name", "vendor", "match", "peaks"};
constexpr std::string_view kPeakKeys[] = {"value", "source", "note"};

// One peak: {value: N, source: "http...", note: "..."}; messages name it by the caller.
Status ParsePeak(const YAML::Node& node, PeakValue* peak) {
  if (!node.IsMap()) {
    return YamlAt(node, fmt::format("is {}, not a map of value, source, note", YamlDescribe(node)));
  }
  PARITY_ASSIGN_OR_RETURN(const YamlFields fields, YamlFields::Read(node, "the peak", kPeakKeys));
  PARITY_ASSIGN_OR_RETURN(const YAML::Node value, fields.Require("value"));
  PARITY_ASSIGN_OR_RETURN(peak->value, YamlNumber(value, "'value'"));
  if (peak->value <= 0) {
    return YamlAt(value,
                  fmt::format("'value' is {}, not a positive finite number", YamlDescribe(value)));
  }
  PARITY_ASSIGN_OR_RETURN(const YAML::Node source, fields.Require("source"));
  PARITY_ASSIGN_OR_RETURN(peak->source, YamlString(source, "'source'"));
  if (!peak->source.starts_with("http://") && !peak->source.starts_with("https://")) {
    return YamlAt(source, fmt::format("'source' is {}, not a URL (http:// or https://)",
                                      YamlDescribe(source)));
  }
  if (const YAML::Node* note = fields.Find("note"); note != nullptr && !note->IsNull()) {
    if (!note->IsScalar()) {
      return YamlAt(*note, fmt::format("'note' is {}, not a string", YamlDescribe(*note)));
    }
    peak->note = note->Scalar();  // may be empty
  }
  return Status::Ok();
}

// The fields of a device after its name; messages name the device by the caller.
Status ParseDeviceFields(const YamlFields& fields, DevicePeaks* device) {
  PARITY_ASSIGN_OR_RETURN(const YAML::Node vendor, fields.Require("vendor"));
  PARITY_ASSIGN_OR_RETURN(device->vendor, YamlString(vendor, "'vendor'"));

  PARITY_ASSIGN_OR_RETURN(const YAML::Node match, fields.Require("match"));
  PARITY_RETURN_IF_ERROR(YamlList(match, "'match'").status());
  for (const YAML::Node& pattern : match) {
    PARITY_ASSIGN_OR_RETURN(std::string text, YamlString(pattern, "a match pattern"));
    try {
      const std::regex compiled(text, kPatternSyntax);
    } catch (const std::regex_error& e) {
      return YamlAt(
          pattern,
          fmt::format("match pattern '{}' is not a valid regular expression ({})", text, e.what()));
    }
    device->match.push_back(std::move(text));
  }

  PARITY_ASSIGN_OR_RETURN(const YAML::Node peaks, fields.Require("peaks"));
  if (!peaks.IsMap()) {
    return YamlAt(peaks,
                  fmt::format("'peaks' is {}, not a map of metric to peak", YamlDescribe(peaks)));
  }
  PARITY_ASSIGN_OR_RETURN(const YamlFields metrics,
                          YamlFields::Read(peaks, "'peaks'", kPeakMetrics, "metric"));
  if (metrics.size() == 0) return YamlAt(peaks, "'peaks' is empty");
  for (const auto& entry : peaks) {
    const std::string metric = entry.first.Scalar();
    PeakValue peak;
    if (Status status = ParsePeak(entry.second, &peak); !status.ok()) {
      return YamlInContext(status, fmt::format("peak '{}'", metric));
    }
    device->peaks.emplace(metric, std::move(peak));
  }
  return Status::Ok();
}

// Device `number` (from 1) of the table.
Status ParseDevice(const YAML::Node& node, int number, DevicePeaks* device) {
  std::string where = fmt::format("device {}", number);
  if (!node.IsMap()) {
    return YamlAt(node, fmt::format("{} is {}, not a map of name, vendor, match, peaks", where,
                                    YamlDescribe(node)));
  }
  Result<YamlFields> fields = YamlFields::Read(node, where, kDeviceKeys);
  if (!fields.ok()) return YamlInContext(fields.status(), where);
  const auto read_name = [&]() -> Result<std::string> {
    PARITY_ASSIGN_OR_RETURN(const YAML::Node name, fields->Require("name"));
    return YamlString(name, "'name'");
  };
  Result<std::string> name = read_name();
  if (!name.ok()) return YamlInContext(name.status(), where);
  device->name = *name;
  where += " (" + device->name + ")";
  if (Status status = ParseDeviceFields(*fields, device); !status.ok()) {
    return YamlInContext(status, where);
  }
  return Status::Ok();
}

Result<std::vector<DevicePeaks>> ParseTable(std::string_view yaml_text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const YAML::Node root, LoadYaml(yaml_text, std::string(origin)));
  if (!root.IsDefined() || root.IsNull()) {
    return Status::Invalid(origin, "empty; expected a map with a 'devices' list");
  }
  if (!root.IsMap()) {
    return Status::Invalid(
        origin,
        YamlAt(root, "the top level is not a map (expected 'devices:' and a list)").message());
  }
  Result<YAML::Node> devices = [&]() -> Result<YAML::Node> {
    PARITY_ASSIGN_OR_RETURN(const YamlFields fields,
                            YamlFields::Read(root, "the top level", kTopKeys));
    PARITY_ASSIGN_OR_RETURN(const YAML::Node list, fields.Require("devices"));
    return YamlList(list, "'devices'");
  }();
  if (!devices.ok()) {
    return Status::Invalid(origin, YamlInContext(devices.status(), "the top level").message());
  }

  std::vector<DevicePeaks> table;
  std::map<std::string, int> name_owner;     // lower-case name -> device number
  std::map<std::string, int> pattern_owner;  // lower-case pattern -> device number
  int number = 0;
  for (const YAML::Node& node : *devices) {
    ++number;
    DevicePeaks device;
    if (Status status = ParseDevice(node, number, &device); !status.ok()) {
      return Status::Invalid(origin, status.message());
    }
    const std::string where = fmt::format("device {} ({})", number, device.name);
    const auto [named, name_is_new] = name_owner.emplace(Lower(device.name), number);
    if (!name_is_new) {
      return Status::Invalid(
          origin, YamlAt(node, fmt::format("{}: the name is already used by device {}", where,
                                           named->second))
                      .message());
    }
    for (const std::string& pattern : device.match) {
      const auto [owner, pattern_is_new] = pattern_owner.emplace(Lower(pattern), number);
      if (!pattern_is_new) {
        return Status::Invalid(
            origin, YamlAt(node, fmt::format("{}: match pattern '{}' is already a pattern of "
                                             "device {}",
                                             where, pattern, owner->second))
                        .message());
      }
    }
    table.push_back(std::move(device));
  }
  return table;
}

}  // namespace

Result<std::vector<DevicePeaks>> ParsePeaks(std::string_view yaml_text, std::string_view origin) {
  try {
    return ParseTable(yaml_text, origin);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(origin, YamlAt(e.mark, e.msg).message());
  } catch (const std::exception& e) {
    return Status::Invalid(origin, std::string("cannot read the peaks table: ") + e.what());
  }
}

const std::vector<DevicePeaks>& BuiltinPeaks() {
  // Leaked on purpose: no destructor runs at exit (static objects must be trivially destructible).
  static const std::vector<DevicePeaks>* const table = [] {
    Result<std::vector<DevicePeaks>> parsed = ParsePeaks(kBuiltinPeaksYaml, kBuiltinOrigin);
    if (!parsed.ok()) {
      std::fprintf(stderr, "parity: internal error (a build bug): the built-in peaks table: %s\n",
                   parsed.status().message().c_str());
      std::abort();
    }
    return new std::vector<DevicePeaks>(std::move(parsed).value());
  }();
  return *table;
}

const DevicePeaks* FindPeaks(const std::vector<DevicePeaks>& table, std::string_view device_name) {
  const std::string name(device_name);
  const DevicePeaks* best = nullptr;
  size_t best_length = 0;
  for (const DevicePeaks& device : table) {
    for (const std::string& pattern : device.match) {
      // Only a strictly longer pattern can displace the current best (the earlier entry wins).
      if (best != nullptr && pattern.size() <= best_length) continue;
      try {
        if (std::regex_search(name, std::regex(pattern, kPatternSyntax))) {
          best = &device;
          best_length = pattern.size();
        }
      } catch (const std::exception&) {
        // Not a valid pattern (or too complex to search): it matches nothing.
      }
    }
  }
  return best;
}

}  // namespace parity::bench
