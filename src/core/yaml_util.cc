// SPDX-License-Identifier: Apache-2.0
#include "core/yaml_util.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/spellcheck.h"

namespace parity {

Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path) {
  if (text.find('\0') != std::string_view::npos) return Status::Invalid(path, "holds a NUL byte");
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string message = "not valid YAML: " + e.msg;
    if (!e.mark.is_null()) message = fmt::format("line {}: {}", e.mark.line + 1, message);
    return Status::Invalid(path, message);
  }
}

namespace {

std::string LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? "" : fmt::format("line {}: ", mark.line + 1);
}

}  // namespace

Status YamlAt(const YAML::Node& node, std::string_view problem) {
  return {StatusCode::kInvalidInput, LineOf(node) + std::string(problem)};
}

Result<std::string> YamlText(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return YamlAt(node, fmt::format("'{}' must be a string", key));
  }
  return node.Scalar();
}

Result<bool> YamlFlag(const YAML::Node& node, std::string_view key) {
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  if (s == "true") return true;
  if (s == "false") return false;
  return YamlAt(node, fmt::format("'{}' must be true or false", key));
}

Result<std::vector<std::string>> YamlTextList(const YAML::Node& node, std::string_view key,
                                              std::size_t limit) {
  std::vector<std::string> out;
  if (node.IsScalar() && !node.Scalar().empty()) {
    out.push_back(node.Scalar());
    return out;
  }
  if (!node.IsSequence()) return YamlAt(node, fmt::format("'{}' must be a list of strings", key));
  if (node.size() > limit) {
    return YamlAt(node, fmt::format("'{}' has {} items; at most {}", key, node.size(), limit));
  }
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return YamlAt(item, fmt::format("'{}' must be a list of strings", key));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

Status ForEachKey(const YAML::Node& node, std::string_view what,
                  const std::vector<std::string_view>& keys,
                  const std::function<Status(const std::string&, const YAML::Node&)>& handle) {
  if (!node.IsMap()) return YamlAt(node, fmt::format("'{}' must be a map of keys", what));
  std::vector<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string message = what.empty() ? fmt::format("unknown section '{}'", key)
                                         : fmt::format("unknown key '{}' in '{}'", key, what);
      if (auto best = Suggest(key, keys)) message += fmt::format(" (did you mean '{}'?)", *best);
      std::string list;
      for (std::string_view k : keys) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
      return YamlAt(entry.first, fmt::format("{}; the keys: {}", message, list));
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return YamlAt(entry.first, fmt::format("'{}' given twice", key));
    }
    seen.push_back(key);
    PARITY_RETURN_IF_ERROR(handle(key, entry.second));
  }
  return Status::Ok();
}

}  // namespace parity
