// SPDX-License-Identifier: Apache-2.0
#include "workload/tune_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/file_util.h"
#include "core/yaml_util.h"
#include "workload/model_run.h"

namespace parity::workload {
namespace {

constexpr std::size_t kMaxValues = 64;  // candidate values per knob or variable
constexpr std::size_t kMaxSpaceBytes = 1 << 20;

bool IsDefault(const YAML::Node& item) {
  return item.IsScalar() && !YamlQuoted(item) && item.Scalar() == "default";
}

std::string SourceText(const env::Setting& s) {
  if (s.sources.empty()) return "";
  return fmt::format(" (source: {})", s.sources.front().ref);
}

Result<Json> KnobValue(const Knob& knob, const YAML::Node& item) {
  const std::string what = fmt::format("a value of '{}'", knob.name);
  Json value;
  switch (knob.type) {
    case Knob::Type::kInt: {
      PARITY_ASSIGN_OR_RETURN(const std::int64_t v, YamlInteger(item, what));
      value = v;
      break;
    }
    case Knob::Type::kBool: {
      PARITY_ASSIGN_OR_RETURN(const bool v, YamlFlag(item, knob.name));
      value = v;
      break;
    }
    case Knob::Type::kString: {
      PARITY_ASSIGN_OR_RETURN(std::string v, YamlString(item, what));
      value = v;
      break;
    }
  }
  if (std::string problem = CheckKnobValue(knob, value); !problem.empty()) {
    return YamlAt(item, problem);
  }
  return value;
}

Status ReadKnobs(const YAML::Node& node, TuneSpace* space) {
  if (!node.IsMap()) return YamlAt(node, "'knobs' must be a map of knob names to value lists");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string name = it->first.as<std::string>("");
    const Knob* knob = FindKnob(name);
    if (knob == nullptr) {
      std::string names;
      for (const Knob& k : Knobs()) names += fmt::format("{}{}", names.empty() ? "" : ", ", k.name);
      return YamlAt(it->first, fmt::format("unknown knob '{}' (the knobs: {})", name, names));
    }
    if (std::any_of(space->knobs.begin(), space->knobs.end(),
                    [&](const auto& k) { return k.first == name; })) {
      return YamlAt(it->first, fmt::format("knob '{}' is given twice", name));
    }
    PARITY_ASSIGN_OR_RETURN(const YAML::Node list,
                            YamlList(it->second, fmt::format("knob '{}'", name), kMaxValues));
    std::vector<Json> values;
    for (const YAML::Node& item : list) {
      Json value;  // null: the default
      if (!IsDefault(item)) {
        Result<Json> parsed = KnobValue(*knob, item);
        if (!parsed.ok()) {
          return YamlInContext(parsed.status(), fmt::format("knob '{}'", name));
        }
        value = *parsed;
      }
      if (std::find(values.begin(), values.end(), value) != values.end()) {
        return YamlAt(
            item, fmt::format("knob '{}' lists {} twice", name,
                              value.is_null()
                                  ? "default"
                                  : value.dump(-1, ' ', false, Json::error_handler_t::replace)));
      }
      values.push_back(value);
    }
    space->knobs.emplace_back(name, std::move(values));
  }
  return Status::Ok();
}

Status ReadEnv(const YAML::Node& node, const env::Knowledge& knowledge, TuneSpace* space) {
  if (!node.IsMap()) return YamlAt(node, "'env' must be a map of variable names to value lists");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string name = it->first.as<std::string>("");
    const env::Setting* s = knowledge.Find(name);
    if (s == nullptr || s->kind != "env") {
      return YamlAt(it->first,
                    fmt::format("environment variable '{}' is not in parity's knowledge base "
                                "(data/knowledge/settings.yaml): parity tries only settings a "
                                "primary source describes",
                                name));
    }
    if (s->status == "does-not-exist" || s->status == "other-vendor") {
      return YamlAt(it->first, fmt::format("environment variable '{}' is refused: the knowledge "
                                           "base marks it {}: {}{}",
                                           name, s->status, s->claim, SourceText(*s)));
    }
    if (s->values.empty() && s->pattern.empty()) {
      return YamlAt(it->first, fmt::format("environment variable '{}' is refused: the knowledge "
                                           "base gives it no allowed values or pattern, so no "
                                           "value of it can be checked",
                                           name));
    }
    if (std::any_of(space->env.begin(), space->env.end(),
                    [&](const auto& e) { return e.first == name; })) {
      return YamlAt(it->first, fmt::format("environment variable '{}' is given twice", name));
    }
    PARITY_ASSIGN_OR_RETURN(
        const YAML::Node list,
        YamlList(it->second, fmt::format("environment variable '{}'", name), kMaxValues));
    std::vector<std::optional<std::string>> values;
    for (const YAML::Node& item : list) {
      std::optional<std::string> value;
      if (!IsDefault(item)) {
        if (!item.IsScalar()) {
          return YamlAt(
              item, fmt::format("a value of '{}' is {}, not a string", name, YamlDescribe(item)));
        }
        value = item.Scalar();
        if (!s->Valid(*value)) {
          const std::string why = !s->claim.empty() ? s->claim : s->summary;
          return YamlAt(item, fmt::format("{}={} is refused: not a value the knowledge base "
                                          "allows ({}): {}{}",
                                          name, *value,
                                          s->status == "wrong-value-format" ? "wrong-value-format"
                                                                            : "invalid value",
                                          why, SourceText(*s)));
        }
      }
      if (std::find(values.begin(), values.end(), value) != values.end()) {
        return YamlAt(item, fmt::format("environment variable '{}' lists {} twice", name,
                                        value ? *value : "default"));
      }
      values.push_back(value);
    }
    space->env.emplace_back(name, std::move(values));
  }
  return Status::Ok();
}

}  // namespace

double TuneSpace::Size() const {
  double n = 1.0;
  for (const auto& [name, values] : knobs) n *= static_cast<double>(values.size());
  for (const auto& [name, values] : env) n *= static_cast<double>(values.size());
  return n;
}

std::string TuneConfig::Label() const {
  if (is_default()) return "default";
  std::string out;
  for (const auto& [key, value] : knobs.items()) {
    out +=
        fmt::format("{}{}={}", out.empty() ? "" : " ", key,
                    value.is_string() ? value.get<std::string>()
                                      : value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  for (const auto& [key, value] : env)
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", key, value);
  return out;
}

Json TuneConfig::ToJson() const {
  Json e = Json::object();
  for (const auto& [key, value] : env) e[key] = value;
  return {{"knobs", knobs}, {"env", e}};
}

Result<TuneSpace> LoadTuneSpace(const std::string& path, const env::Knowledge& knowledge) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          ReadSmallFile(path, kMaxSpaceBytes, "space file"));
  return ParseTuneSpace(text, path, knowledge);
}

Result<TuneSpace> ParseTuneSpace(std::string_view text, const std::string& path,
                                 const env::Knowledge& knowledge) {
  PARITY_ASSIGN_OR_RETURN(const YAML::Node root, LoadYaml(text, path));
  TuneSpace space;
  space.path = path;
  constexpr std::array<std::string_view, 2> kSections = {"knobs", "env"};
  Result<YamlFields> fields = YamlFields::Read(root, "the space file", kSections, "section");
  if (!fields.ok()) return fields.status().WithContext(path);
  if (const YAML::Node* knobs = fields->Find("knobs"); knobs != nullptr && !knobs->IsNull()) {
    if (Status s = ReadKnobs(*knobs, &space); !s.ok()) return s.WithContext(path);
  }
  if (const YAML::Node* env = fields->Find("env"); env != nullptr && !env->IsNull()) {
    if (Status s = ReadEnv(*env, knowledge, &space); !s.ok()) return s.WithContext(path);
  }
  if (space.knobs.empty() && space.env.empty()) {
    return Status::Invalid(path, "the space has no knob and no environment variable to try");
  }
  if (space.Size() > 10000) {
    return Status::Invalid(path, fmt::format("the space holds {:.3g} configurations; at most "
                                             "10000 (tune a few settings at a time)",
                                             space.Size()));
  }
  return space;
}

std::vector<TuneConfig> Configurations(const TuneSpace& space) {
  std::vector<TuneConfig> out(1);  // the default first
  auto add = [&](auto apply) {
    std::vector<TuneConfig> next;
    for (const TuneConfig& c : out) apply(c, &next);
    out = std::move(next);
  };
  for (const auto& knob : space.knobs) {
    add([&knob](const TuneConfig& c, std::vector<TuneConfig>* next) {
      for (const Json& v : knob.second) {
        TuneConfig d = c;
        if (!v.is_null()) d.knobs[knob.first] = v;
        next->push_back(std::move(d));
      }
    });
  }
  for (const auto& variable : space.env) {
    add([&variable](const TuneConfig& c, std::vector<TuneConfig>* next) {
      for (const auto& v : variable.second) {
        TuneConfig d = c;
        if (v) d.env[variable.first] = *v;
        next->push_back(std::move(d));
      }
    });
  }
  // The default (every knob and variable at the workload's own setting) first, each
  // configuration once.
  std::vector<TuneConfig> unique;
  unique.emplace_back();
  std::set<std::string> seen = {
      unique.front().ToJson().dump(-1, ' ', false, Json::error_handler_t::replace)};
  for (TuneConfig& c : out) {
    if (seen.insert(c.ToJson().dump(-1, ' ', false, Json::error_handler_t::replace)).second)
      unique.push_back(std::move(c));
  }
  return unique;
}

Result<double> ParseDuration(std::string_view text, std::string_view what) {
  std::string s(text);
  double scale = 1.0;
  if (!s.empty() && (s.back() == 's' || s.back() == 'm' || s.back() == 'h')) {
    scale = s.back() == 'h' ? 3600.0 : s.back() == 'm' ? 60.0 : 1.0;
    s.pop_back();
  }
  char* end = nullptr;
  const double value = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(value) || value <= 0.0 ||
      value * scale > 30.0 * 86400.0) {
    return Status::Invalid("", fmt::format("{} '{}' is not a duration: a positive number of "
                                           "seconds, or with a unit (90, 120s, 10m, 2h; at most "
                                           "30 days)",
                                           what, text));
  }
  return value * scale;
}

Status CheckSpaceKnobs(const TuneSpace& space, const WorkloadKnobs& knobs,
                       std::string_view workload) {
  for (const auto& [name, values] : space.knobs) {
    if (std::find(knobs.has.begin(), knobs.has.end(), name) != knobs.has.end()) continue;
    std::string has;
    for (const std::string& k : knobs.has) has += fmt::format("{}{}", has.empty() ? "" : ", ", k);
    const auto why = knobs.lacks.find(name);
    return Status::Invalid(
        space.path,
        fmt::format(
            "workload '{}' has no knob '{}'{} (its knobs: {})", workload, name,
            why == knobs.lacks.end() || why->second.empty() ? std::string() : ": " + why->second,
            has));
  }
  return Status::Ok();
}

}  // namespace parity::workload
