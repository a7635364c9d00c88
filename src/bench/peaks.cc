// SPDX-License-Identifier: Apache-2.0
#include "bench/peaks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <regex>
#include <string>
#include <system_error>
#include <utility>

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

// "line N: " for a known position in the text, "" otherwise.
std::string LinePrefix(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return "line " + std::to_string(mark.line + 1) + ": ";
}

// The problem `what` at `at`, as "origin: line N: what".
Status Problem(std::string_view origin, const YAML::Node& at, const std::string& what) {
  return Status::Invalid(origin, LinePrefix(at.Mark()) + what);
}

std::string JoinQuoted(std::initializer_list<std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += "'";
    out += name;
    out += "'";
  }
  return out;
}

std::string KnownMetrics() {
  std::string out;
  for (std::string_view name : kPeakMetrics) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// The entries of map `node` (which must be a map) by key, after checking that every key is a
// string among `allowed` and none repeats. `where` names the map in messages ("device 3 (H100)").
Status ReadFields(std::string_view origin, const YAML::Node& node, std::string_view where,
                  std::initializer_list<std::string_view> allowed,
                  std::map<std::string, YAML::Node>* fields) {
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      return Problem(origin, key, std::string(where) + ": a key is not a string");
    }
    const std::string& name = key.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return Problem(origin, key,
                     std::string(where) + ": unknown key '" + name + "' (expected " +
                         JoinQuoted(allowed) + ")");
    }
    if (!fields->emplace(name, entry.second).second) {
      return Problem(origin, key, std::string(where) + ": key '" + name + "' is given twice");
    }
  }
  return Status::Ok();
}

// A required non-empty string field.
Status ReadString(std::string_view origin, const YAML::Node& map_node,
                  const std::map<std::string, YAML::Node>& fields, std::string_view where,
                  const std::string& key, std::string* out) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->second.IsNull()) {
    return Problem(origin, map_node, std::string(where) + ": has no " + key);
  }
  if (!it->second.IsScalar()) {
    return Problem(origin, it->second, std::string(where) + ": " + key + " is not a string");
  }
  if (it->second.Scalar().empty()) {
    return Problem(origin, it->second, std::string(where) + ": " + key + " is empty");
  }
  *out = it->second.Scalar();
  return Status::Ok();
}

// One peak: {value: N, source: "http...", note: "..."}.
Status ParsePeak(std::string_view origin, const YAML::Node& node, const std::string& where,
                 PeakValue* peak) {
  if (!node.IsMap()) return Problem(origin, node, where + " is not a map of value, source, note");
  std::map<std::string, YAML::Node> fields;
  PARITY_RETURN_IF_ERROR(ReadFields(origin, node, where, {"value", "source", "note"}, &fields));

  const auto value = fields.find("value");
  if (value == fields.end() || value->second.IsNull()) {
    return Problem(origin, node, where + " has no value");
  }
  const std::string text = value->second.IsScalar() ? value->second.Scalar() : "";
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!value->second.IsScalar() || text.empty() || error != std::errc() ||
      end != text.data() + text.size()) {
    return Problem(origin, value->second, where + " value '" + text + "' is not a number");
  }
  if (!std::isfinite(number) || number <= 0) {
    return Problem(origin, value->second,
                   where + " value " + text + " is not a positive finite number");
  }
  peak->value = number;

  const auto source = fields.find("source");
  if (source == fields.end() || source->second.IsNull() ||
      (source->second.IsScalar() && source->second.Scalar().empty())) {
    return Problem(origin, node, where + " has no source");
  }
  if (!source->second.IsScalar()) {
    return Problem(origin, source->second, where + " source is not a string");
  }
  const std::string& url = source->second.Scalar();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Problem(origin, source->second,
                   where + " source '" + url + "' is not a URL (http:// or https://)");
  }
  peak->source = url;

  if (const auto note = fields.find("note"); note != fields.end() && !note->second.IsNull()) {
    if (!note->second.IsScalar()) {
      return Problem(origin, note->second, where + " note is not a string");
    }
    peak->note = note->second.Scalar();
  }
  return Status::Ok();
}

// Device `number` (from 1) of the table.
Status ParseDevice(std::string_view origin, const YAML::Node& node, int number,
                   DevicePeaks* device) {
  std::string where = "device " + std::to_string(number);
  if (!node.IsMap()) {
    return Problem(origin, node, where + " is not a map of name, vendor, match, peaks");
  }
  std::map<std::string, YAML::Node> fields;
  PARITY_RETURN_IF_ERROR(
      ReadFields(origin, node, where, {"name", "vendor", "match", "peaks"}, &fields));
  PARITY_RETURN_IF_ERROR(ReadString(origin, node, fields, where, "name", &device->name));
  where += " (" + device->name + ")";
  PARITY_RETURN_IF_ERROR(ReadString(origin, node, fields, where, "vendor", &device->vendor));

  const auto match = fields.find("match");
  if (match == fields.end() || match->second.IsNull()) {
    return Problem(origin, node, where + ": has no match list");
  }
  if (!match->second.IsSequence()) {
    return Problem(origin, match->second, where + ": match is not a list of patterns");
  }
  if (match->second.size() == 0) {
    return Problem(origin, match->second, where + ": match list is empty");
  }
  for (const YAML::Node& pattern : match->second) {
    if (!pattern.IsScalar() || pattern.Scalar().empty()) {
      return Problem(origin, pattern, where + ": a match pattern is empty or not a string");
    }
    try {
      const std::regex compiled(pattern.Scalar(), kPatternSyntax);
    } catch (const std::regex_error& e) {
      return Problem(origin, pattern,
                     where + ": match pattern '" + pattern.Scalar() +
                         "' is not a valid regular expression (" + e.what() + ")");
    }
    device->match.push_back(pattern.Scalar());
  }

  const auto peaks = fields.find("peaks");
  if (peaks == fields.end() || peaks->second.IsNull()) {
    return Problem(origin, node, where + ": has no peaks");
  }
  if (!peaks->second.IsMap()) {
    return Problem(origin, peaks->second, where + ": peaks is not a map of metric to peak");
  }
  if (peaks->second.size() == 0) return Problem(origin, peaks->second, where + ": peaks is empty");
  for (const auto& entry : peaks->second) {
    if (!entry.first.IsScalar()) {
      return Problem(origin, entry.first, where + ": a metric name is not a string");
    }
    const std::string& metric = entry.first.Scalar();
    if (std::find(kPeakMetrics.begin(), kPeakMetrics.end(), metric) == kPeakMetrics.end()) {
      return Problem(origin, entry.first,
                     where + ": unknown metric '" + metric + "' (known: " + KnownMetrics() + ")");
    }
    if (device->peaks.count(metric) != 0) {
      return Problem(origin, entry.first, where + ": peak '" + metric + "' is given twice");
    }
    PeakValue peak;
    PARITY_RETURN_IF_ERROR(
        ParsePeak(origin, entry.second, where + ": peak '" + metric + "'", &peak));
    device->peaks.emplace(metric, std::move(peak));
  }
  return Status::Ok();
}

Result<std::vector<DevicePeaks>> ParseTable(std::string_view yaml_text, std::string_view origin) {
  YAML::Node root;
  try {
    root.reset(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(origin, LinePrefix(e.mark) + "not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    return Status::Invalid(origin, "empty; expected a map with a 'devices' list");
  }
  if (!root.IsMap()) {
    return Problem(origin, root, "the top level is not a map (expected 'devices:' and a list)");
  }
  std::map<std::string, YAML::Node> fields;
  PARITY_RETURN_IF_ERROR(ReadFields(origin, root, "the top level", {"devices"}, &fields));
  const auto devices = fields.find("devices");
  if (devices == fields.end() || devices->second.IsNull()) {
    return Problem(origin, root, "there is no 'devices' list");
  }
  if (!devices->second.IsSequence()) {
    return Problem(origin, devices->second, "'devices' is not a list");
  }
  if (devices->second.size() == 0) return Problem(origin, devices->second, "'devices' is empty");

  std::vector<DevicePeaks> table;
  std::map<std::string, int> name_owner;     // lower-case name -> device number
  std::map<std::string, int> pattern_owner;  // lower-case pattern -> device number
  int number = 0;
  for (const YAML::Node& node : devices->second) {
    ++number;
    DevicePeaks device;
    PARITY_RETURN_IF_ERROR(ParseDevice(origin, node, number, &device));
    const std::string where = "device " + std::to_string(number) + " (" + device.name + ")";
    const auto [named, name_is_new] = name_owner.emplace(Lower(device.name), number);
    if (!name_is_new) {
      return Problem(
          origin, node,
          where + ": the name is already used by device " + std::to_string(named->second));
    }
    for (const std::string& pattern : device.match) {
      const auto [owner, pattern_is_new] = pattern_owner.emplace(Lower(pattern), number);
      if (!pattern_is_new) {
        return Problem(origin, node,
                       where + ": match pattern '" + pattern + "' is already a pattern of device " +
                           std::to_string(owner->second));
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
    return Status::Invalid(origin, LinePrefix(e.mark) + e.msg);
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
