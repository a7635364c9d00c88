// SPDX-License-Identifier: Apache-2.0
#include "collect/plan.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "collect/stage.h"
#include "core/file_util.h"
#include "core/spellcheck.h"
#include "core/text.h"
#include "core/yaml_util.h"

namespace parity::collect {
namespace {

constexpr std::string_view kCommonKeys[] = {"name",    "kind",     "level",      "by_level",
                                            "timeout", "estimate", "description"};
constexpr std::string_view kTopKeys[] = {"plan",    "description", "version",
                                         "backend", "vars",        "stages"};

std::string LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? "" : fmt::format("line {}: ", mark.line + 1);
}

/// A problem at `node`: "line N: problem".
Status At(const YAML::Node& node, std::string_view problem) {
  return {StatusCode::kInvalidInput, LineOf(node) + std::string(problem)};
}

std::string UnknownKey(std::string_view key, std::vector<std::string> candidates,
                       std::string_view what) {
  std::string message = fmt::format("unknown {} '{}'", what, key);
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  if (auto best = Suggest(key, views)) message += fmt::format(" (did you mean '{}'?)", *best);
  return message;
}

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

std::optional<std::int64_t> AsInt(const YAML::Node& node) {
  if (!node.IsScalar() || !IsPlain(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  std::int64_t value = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> AsNumber(const YAML::Node& node) {
  if (!node.IsScalar() || !IsPlain(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  double value = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

Result<std::string> AsText(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return At(node, fmt::format("'{}' must be a single value", key));
  if (node.Scalar().find('\0') != std::string::npos) {
    return At(node, fmt::format("'{}' holds a NUL byte", key));
  }
  return node.Scalar();
}

/// A number or a string: plain numbers stay numbers, anything else is text.
Result<Json> AsScalarJson(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return At(node, fmt::format("'{}' must be a number or a string", key));
  if (auto i = AsInt(node)) return Json(*i);
  if (auto d = AsNumber(node)) return Json(*d);
  PARITY_ASSIGN_OR_RETURN(std::string text, AsText(node, key));
  return Json(text);
}

Result<Json> ConvertMetrics(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0) {
    return At(node, "'metrics' must be a list of {name, json|regex, ...}");
  }
  static const std::vector<std::string> kKeys = {"name", "json", "key", "regex", "unit", "better"};
  Json list = Json::array();
  for (const YAML::Node& item : node) {
    if (!item.IsMap()) return At(item, "a metric must be a map {name, json|regex, ...}");
    Json metric = Json::object();
    for (const auto& entry : item) {
      const std::string key = entry.first.as<std::string>();
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
        return At(entry.first, UnknownKey(key, kKeys, "metric key"));
      }
      if (metric.contains(key)) return At(entry.first, fmt::format("'{}' given twice", key));
      PARITY_ASSIGN_OR_RETURN(std::string value, AsText(entry.second, key));
      metric[key] = value;
    }
    if (!metric.contains("name")) return At(item, "a metric needs a 'name'");
    metric["line"] = item.Mark().is_null() ? 0 : item.Mark().line + 1;
    list.push_back(std::move(metric));
  }
  return list;
}

Result<Json> Convert(const YAML::Node& node, const KeySpec& spec) {
  const std::string key(spec.key);
  switch (spec.type) {
    case ValueType::kString: {
      PARITY_ASSIGN_OR_RETURN(std::string text, AsText(node, key));
      return Json(text);
    }
    case ValueType::kInt: {
      auto value = AsInt(node);
      if (!value || *value < 0)
        return At(node, fmt::format("'{}' must be a whole number >= 0", key));
      return Json(*value);
    }
    case ValueType::kNumber: {
      auto value = AsNumber(node);
      if (!value || *value <= 0) return At(node, fmt::format("'{}' must be a number > 0", key));
      return Json(*value);
    }
    case ValueType::kBool: {
      if (node.IsScalar() && IsPlain(node) &&
          (node.Scalar() == "true" || node.Scalar() == "false")) {
        return Json(node.Scalar() == "true");
      }
      return At(node, fmt::format("'{}' must be true or false", key));
    }
    case ValueType::kStringList:
    case ValueType::kCommand: {
      Json list = Json::array();
      if (node.IsScalar()) {
        PARITY_ASSIGN_OR_RETURN(std::string text, AsText(node, key));
        if (spec.type == ValueType::kCommand) {
          auto words = SplitCommand(text);
          if (!words.ok()) return At(node, fmt::format("'{}': {}", key, words.status().message()));
          for (std::string& w : *words) list.push_back(std::move(w));
        } else {
          list.push_back(text);
        }
        return list;
      }
      if (!node.IsSequence() || node.size() == 0) {
        return At(node, fmt::format("'{}' must be a value or a non-empty list", key));
      }
      for (const YAML::Node& item : node) {
        PARITY_ASSIGN_OR_RETURN(std::string text, AsText(item, key));
        list.push_back(text);
      }
      return list;
    }
    case ValueType::kStringMap:
    case ValueType::kParamMap: {
      if (!node.IsMap()) return At(node, fmt::format("'{}' must be a map of names to values", key));
      Json map = Json::object();
      for (const auto& entry : node) {
        PARITY_ASSIGN_OR_RETURN(std::string name, AsText(entry.first, key));
        if (name.empty() || name.find('=') != std::string::npos) {
          return At(entry.first, fmt::format("'{}': '{}' is not a usable name", key, name));
        }
        if (map.contains(name)) return At(entry.first, fmt::format("'{}' given twice", name));
        if (spec.type == ValueType::kStringMap) {
          PARITY_ASSIGN_OR_RETURN(std::string value, AsText(entry.second, name));
          map[name] = value;
        } else {
          PARITY_ASSIGN_OR_RETURN(Json value, AsScalarJson(entry.second, name));
          map[name] = value;
        }
      }
      return map;
    }
    case ValueType::kMetrics:
      return ConvertMetrics(node);
  }
  return At(node, "unsupported value");
}

/// The kind's keys of `node` (a stage, or one of its by_level entries), converted.
Result<Json> KindKeys(const YAML::Node& node, const StageKind& kind, bool common_allowed) {
  std::vector<std::string> candidates;
  for (const KeySpec& spec : kind.keys()) candidates.emplace_back(spec.key);
  if (common_allowed) {
    for (std::string_view k : kCommonKeys) candidates.emplace_back(k);
  }
  Json params = Json::object();
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return At(entry.first, "a key must be a name");
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) return At(entry.first, fmt::format("'{}' given twice", key));
    const bool common =
        std::find(std::begin(kCommonKeys), std::end(kCommonKeys), key) != std::end(kCommonKeys);
    if (common && common_allowed) continue;
    const KeySpec* spec = nullptr;
    for (const KeySpec& s : kind.keys()) {
      if (s.key == key) spec = &s;
    }
    if (spec == nullptr) {
      if (common) {
        return At(entry.first, fmt::format("'{}' can't change by level", key));
      }
      return At(entry.first,
                UnknownKey(key, candidates, fmt::format("key for a {} stage", kind.name())));
    }
    PARITY_ASSIGN_OR_RETURN(Json value, Convert(entry.second, *spec));
    params[key] = std::move(value);
  }
  return params;
}

bool ValidStageName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

bool ValidPlanName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

bool ValidVarName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
                    (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (!ok) return false;
  }
  return true;
}

/// `text` with each {var.NAME} replaced by the var's value; kInvalidInput naming an unknown var.
Result<std::string> SubstituteVars(const std::string& text,
                                   const std::map<std::string, std::string>& vars) {
  constexpr std::string_view kOpen = "{var.";
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = text.find(kOpen, pos);
    if (at == std::string::npos) break;
    const std::size_t end = text.find('}', at);
    if (end == std::string::npos) break;
    const std::string name = text.substr(at + kOpen.size(), end - at - kOpen.size());
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : vars) names.push_back(k);
      return Status::Invalid(
          "", UnknownKey(name, names, "var") + (names.empty() ? "; the plan has no 'vars'" : ""));
    }
    out += text.substr(pos, at - pos);
    out += it->second;
    pos = end + 1;
  }
  out += text.substr(pos);
  return out;
}

/// Replaces {var.NAME} in every scalar under `node`, in place. A scalar that is one placeholder
/// and nothing else takes the value's type, as if the value had been written there unquoted.
Status SubstituteVarsIn(YAML::Node node, const std::map<std::string, std::string>& vars,
                        int depth = 0) {
  if (depth > 64) return At(node, "nested too deeply");
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    if (text.find("{var.") == std::string::npos) return Status::Ok();
    auto replaced = SubstituteVars(text, vars);
    if (!replaced.ok()) return At(node, replaced.status().message());
    const bool whole = text.rfind("{var.", 0) == 0 && text.find('}') == text.size() - 1;
    node = *replaced;
    if (whole) node.SetTag("?");
    return Status::Ok();
  }
  if (node.IsSequence()) {
    for (YAML::Node child : node) PARITY_RETURN_IF_ERROR(SubstituteVarsIn(child, vars, depth + 1));
  } else if (node.IsMap()) {
    for (auto entry : node) {
      PARITY_RETURN_IF_ERROR(SubstituteVarsIn(entry.second, vars, depth + 1));
    }
  }
  return Status::Ok();
}

/// The plan's vars with `overrides` applied; kInvalidInput for a malformed 'vars' map or an
/// override of a var the plan does not declare.
Result<std::map<std::string, std::string>> PlanVars(
    const YAML::Node& node, const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> vars;
  if (node) {
    if (!node.IsMap()) return At(node, "'vars' must map names to values");
    for (const auto& entry : node) {
      const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
      if (!ValidVarName(name)) {
        return At(entry.first, fmt::format("var name '{}' must be letters, digits and '_'", name));
      }
      if (!entry.second.IsScalar()) {
        return At(entry.second, fmt::format("var '{}' must be a single value", name));
      }
      if (!vars.emplace(name, entry.second.Scalar()).second) {
        return At(entry.first, fmt::format("var '{}' given twice", name));
      }
    }
  }
  for (const auto& [name, value] : overrides) {
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : vars) names.push_back(k);
      return Status::Invalid(
          "--var", UnknownKey(name, names, "var") +
                       (names.empty() ? "; the plan declares no 'vars'" : " in the plan's 'vars'"));
    }
    it->second = value;
  }
  return vars;
}

Result<PlanStage> ParseStage(const YAML::Node& node) {
  if (!node.IsMap()) return At(node, "a stage must be a map with at least 'kind'");
  PlanStage stage;
  stage.line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
  const YAML::Node kind_node = node["kind"];
  if (!kind_node) return At(node, "a stage needs a 'kind'");
  PARITY_ASSIGN_OR_RETURN(stage.kind, AsText(kind_node, "kind"));
  const StageKind* kind = FindStageKind(stage.kind);
  if (kind == nullptr) {
    std::vector<std::string> names;
    for (const StageKind* k : StageKinds()) names.emplace_back(k->name());
    std::string list;
    for (const std::string& n : names) list += fmt::format("{}{}", list.empty() ? "" : ", ", n);
    return At(kind_node,
              UnknownKey(stage.kind, names, "stage kind") + fmt::format("; the kinds: {}", list));
  }
  stage.name = stage.kind;
  if (const YAML::Node n = node["name"]) {
    PARITY_ASSIGN_OR_RETURN(stage.name, AsText(n, "name"));
    if (!ValidStageName(stage.name)) {
      return At(n, fmt::format("stage name '{}' must be [a-z0-9][a-z0-9_-]*, at most 64 characters",
                               stage.name));
    }
  }
  if (const YAML::Node n = node["level"]) {
    auto level = AsInt(n);
    if (!level || *level < 1 || *level > kMaxLevel) {
      return At(n, fmt::format("'level' must be 1 to {}", kMaxLevel));
    }
    stage.level = static_cast<int>(*level);
  }
  for (const char* key : {"timeout", "estimate"}) {
    if (const YAML::Node n = node[key]) {
      auto value = AsNumber(n);
      if (!value || *value <= 0) return At(n, fmt::format("'{}' must be seconds > 0", key));
      (std::string_view(key) == "timeout" ? stage.timeout : stage.estimate) = *value;
    }
  }
  if (const YAML::Node n = node["description"]) {
    PARITY_ASSIGN_OR_RETURN(stage.description, AsText(n, "description"));
  }
  auto params = KindKeys(node, *kind, true);
  if (!params.ok()) return YamlInContext(params.status(), fmt::format("stage '{}'", stage.name));
  stage.params = std::move(params).value();
  if (const YAML::Node by = node["by_level"]) {
    if (!by.IsMap())
      return At(by, fmt::format("stage '{}': 'by_level' must map levels to keys", stage.name));
    for (const auto& entry : by) {
      auto level = AsInt(entry.first);
      if (!level || *level < 1 || *level > kMaxLevel) {
        return At(entry.first,
                  fmt::format("stage '{}': by_level: a level is 1 to {}", stage.name, kMaxLevel));
      }
      if (stage.by_level.count(static_cast<int>(*level))) {
        return At(entry.first,
                  fmt::format("stage '{}': by_level: level {} given twice", stage.name, *level));
      }
      if (!entry.second.IsMap()) {
        return At(entry.second, fmt::format("stage '{}': by_level {}: must be a map of keys",
                                            stage.name, *level));
      }
      auto keys = KindKeys(entry.second, *kind, false);
      if (!keys.ok()) {
        return YamlInContext(keys.status(),
                             fmt::format("stage '{}': by_level {}", stage.name, *level));
      }
      stage.by_level[static_cast<int>(*level)] = std::move(keys).value();
    }
  }
  return stage;
}

Status CheckStages(const Plan& plan, const YAML::Node& stages) {
  std::set<std::string> names;
  int background = 0;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const PlanStage& stage = plan.stages[i];
    const YAML::Node node = stages[i];
    if (!names.insert(stage.name).second) {
      return At(node, fmt::format("stage name '{}' used twice; give one a 'name'", stage.name));
    }
    const StageKind* kind = FindStageKind(stage.kind);
    if (kind->background() && ++background > 1) {
      return At(node, fmt::format("a second {} stage; a plan has at most one", stage.kind));
    }
    const CheckContext context{plan.dir};
    for (int level = stage.level; level <= kMaxLevel; ++level) {
      // Levels without a change of their own are checked once, at the stage's first level.
      if (level > stage.level && !stage.by_level.count(level)) continue;
      const Status status = kind->Check(EffectiveParams(stage, level), context);
      if (!status.ok()) {
        const std::string where = stage.by_level.empty()
                                      ? fmt::format("stage '{}'", stage.name)
                                      : fmt::format("stage '{}' at level {}", stage.name, level);
        return At(node, fmt::format("{}: {}", where, status.message()));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Json EffectiveParams(const PlanStage& stage, int level) {
  Json params = stage.params;
  for (const auto& [from, keys] : stage.by_level) {
    if (from > level) break;
    for (const auto& [key, value] : keys.items()) params[key] = value;
  }
  return params;
}

Result<Plan> ParsePlan(std::string_view text, const std::string& path,
                       const std::map<std::string, std::string>& vars) {
  Plan plan;
  plan.path = path;
  plan.text = std::string(text);
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  plan.dir = ec ? std::string(".") : absolute.parent_path().string();
  if (text.size() > kMaxPlanBytes) {
    return Status::Invalid(path, "larger than a plan may be (1 MiB)");
  }
  PARITY_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, path));
  auto body = [&]() -> Status {
    if (!root.IsMap()) return At(root, "a plan is a map with 'plan' and 'stages'");
    std::vector<std::string> top(std::begin(kTopKeys), std::end(kTopKeys));
    std::set<std::string> seen;
    for (const auto& entry : root) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
      if (std::find(top.begin(), top.end(), key) == top.end()) {
        return At(entry.first, UnknownKey(key, top, "key"));
      }
      if (!seen.insert(key).second) return At(entry.first, fmt::format("'{}' given twice", key));
    }
    const YAML::Node name = root["plan"];
    if (!name) return At(root, "'plan' (the plan's name) is missing");
    PARITY_ASSIGN_OR_RETURN(plan.name, AsText(name, "plan"));
    if (!ValidPlanName(plan.name)) {
      return At(name,
                fmt::format("plan name '{}' must be letters, digits, '.', '_' or '-'", plan.name));
    }
    if (const YAML::Node n = root["version"]) {
      if (AsInt(n) != 1) return At(n, "'version' must be 1, the only plan format there is");
    }
    if (const YAML::Node n = root["description"]) {
      PARITY_ASSIGN_OR_RETURN(plan.description, AsText(n, "description"));
    }
    if (const YAML::Node n = root["backend"]) {
      PARITY_ASSIGN_OR_RETURN(plan.backend, AsText(n, "backend"));
      if (plan.backend.empty()) return At(n, "'backend' is empty");
    }
    PARITY_ASSIGN_OR_RETURN(plan.vars, PlanVars(root["vars"], vars));
    const YAML::Node stages = root["stages"];
    if (!stages) return At(root, "'stages' is missing");
    PARITY_RETURN_IF_ERROR(SubstituteVarsIn(stages, plan.vars));
    if (!stages.IsSequence() || stages.size() == 0) {
      return At(stages, "'stages' must be a non-empty list of stages");
    }
    if (stages.size() > kMaxStages) {
      return At(stages, fmt::format("{} stages; a plan has at most {}", stages.size(), kMaxStages));
    }
    for (const YAML::Node& node : stages) {
      PARITY_ASSIGN_OR_RETURN(PlanStage stage, ParseStage(node));
      plan.stages.push_back(std::move(stage));
    }
    return CheckStages(plan, stages);
  };
  Status status;
  try {
    status = body();
  } catch (const YAML::Exception& e) {
    status = Status::Invalid("", e.what());
  }
  if (!status.ok()) return Status::Invalid(path, status.message());
  return plan;
}

Result<Plan> LoadPlan(const std::string& path, const std::map<std::string, std::string>& vars) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxPlanBytes, "plan"));
  return ParsePlan(text, path, vars);
}

Json PlanToJson(const Plan& plan) {
  Json stages = Json::array();
  for (const PlanStage& s : plan.stages) {
    Json stage = {{"name", s.name}, {"kind", s.kind}, {"level", s.level}};
    stage["timeout"] = s.timeout ? Json(*s.timeout) : Json();
    stage["estimate"] = s.estimate ? Json(*s.estimate) : Json();
    if (!s.description.empty()) stage["description"] = s.description;
    stage["params"] = s.params;
    Json by = Json::object();
    for (const auto& [level, keys] : s.by_level) by[std::to_string(level)] = keys;
    stage["by_level"] = by;
    stages.push_back(std::move(stage));
  }
  Json doc = {{"name", plan.name}, {"backend", plan.backend}, {"path", plan.path}};
  if (!plan.description.empty()) doc["description"] = plan.description;
  if (!plan.vars.empty()) doc["vars"] = plan.vars;
  doc["stages"] = stages;
  return doc;
}

}  // namespace parity::collect
