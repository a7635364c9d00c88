// SPDX-License-Identifier: Apache-2.0
#include "core/yaml_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "core/spellcheck.h"
#include "core/text.h"

namespace parity {

Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path) {
  if (text.find('\0') != std::string_view::npos) return Status::Invalid(path, "holds a NUL byte");
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path, YamlAt(e.mark, "not valid YAML: " + e.msg).message());
  }
}

namespace {

std::string LineOf(const YAML::Mark& mark) {
  return mark.is_null() ? "" : fmt::format("line {}: ", mark.line + 1);
}

}  // namespace

Status YamlAt(const YAML::Node& node, std::string_view problem) {
  return YamlAt(node.Mark(), problem);
}

Status YamlAt(const YAML::Mark& mark, std::string_view problem) {
  return {StatusCode::kInvalidInput, LineOf(mark) + std::string(problem)};
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

std::string YamlDescribe(const YAML::Node& node) {
  if (node.IsScalar()) return fmt::format("'{}'", Printable(node.Scalar()));
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "empty";
}

bool YamlQuoted(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  return node.IsScalar() && (tag == "!" || tag == "tag:yaml.org,2002:str");
}

Status YamlInContext(const Status& status, std::string_view context) {
  const std::string& m = status.message();
  const std::size_t colon = m.rfind("line ", 0) == 0 ? m.find(": ") : std::string::npos;
  if (colon == std::string::npos) return status.WithContext(context);
  return {status.code(),
          fmt::format("{}: {}: {}", m.substr(0, colon), context, m.substr(colon + 2))};
}

std::string YamlProblem(const Status& status) {
  const std::string& m = status.message();
  const std::size_t colon = m.rfind("line ", 0) == 0 ? m.find(": ") : std::string::npos;
  return colon == std::string::npos ? m : m.substr(colon + 2);
}

Result<std::string> YamlString(const YAML::Node& node, std::string_view what) {
  if (!node.IsScalar()) {
    return YamlAt(node, fmt::format("{} is {}, not a string", what, YamlDescribe(node)));
  }
  if (node.Scalar().empty()) return YamlAt(node, fmt::format("{} is empty", what));
  return node.Scalar();
}

namespace {

// `text` without a leading '+' that starts a number ("+1", "+.5"), else unchanged.
std::string_view WithoutPlus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '+' && text[1] != '-') text.remove_prefix(1);
  return text;
}

}  // namespace

Result<double> YamlNumber(const YAML::Node& node, std::string_view what) {
  const auto fail = [&](std::string_view why) {
    return YamlAt(node, fmt::format("{} is {}, {}", what, YamlDescribe(node), why));
  };
  if (!node.IsScalar()) return fail("not a number");
  const std::string_view text = WithoutPlus(node.Scalar());
  std::string_view bare = text.starts_with('-') ? text.substr(1) : text;
  if (bare == ".inf" || bare == ".Inf" || bare == ".INF" || text == ".nan" || text == ".NaN" ||
      text == ".NAN") {
    return fail("not finite");
  }
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return fail("not a number");
  if (error == std::errc::result_out_of_range) return fail("out of the range of a double");
  if (error != std::errc()) return fail("not a number");
  if (!std::isfinite(value)) return fail("not finite");
  return value;
}

Result<std::int64_t> YamlInteger(const YAML::Node& node, std::string_view what) {
  std::int64_t value = 0;
  const std::string_view text = node.IsScalar() ? WithoutPlus(node.Scalar()) : "";
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return YamlAt(node, fmt::format("{} is {}, not a whole number", what, YamlDescribe(node)));
  }
  return value;
}

Result<YAML::Node> YamlList(const YAML::Node& node, std::string_view what, std::size_t limit) {
  if (!node.IsSequence()) {
    return YamlAt(node, fmt::format("{} is {}, not a list", what, YamlDescribe(node)));
  }
  if (node.size() == 0) return YamlAt(node, fmt::format("{} is an empty list", what));
  if (node.size() > limit) {
    return YamlAt(node, fmt::format("{} has {} items; at most {}", what, node.size(), limit));
  }
  return node;
}

Result<YamlFields> YamlFields::Read(const YAML::Node& node, std::string_view what,
                                    std::span<const std::string_view> keys, std::string_view noun) {
  if (!node.IsMap()) {
    return YamlAt(node, fmt::format("{} is {}, not a map", what, YamlDescribe(node)));
  }
  YamlFields fields;
  fields.node_ = node;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      return YamlAt(entry.first, fmt::format("a {} is not a string", noun));
    }
    const std::string& key = entry.first.Scalar();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string message = fmt::format("unknown {} '{}'", noun, Printable(key));
      if (auto best = Suggest(key, keys)) message += fmt::format(" (did you mean '{}'?)", *best);
      message += fmt::format("; the {}s: ", noun);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        message += fmt::format("{}{}", i == 0 ? "" : ", ", keys[i]);
      }
      return YamlAt(entry.first, message);
    }
    if (fields.Find(key) != nullptr) {
      return YamlAt(entry.first, fmt::format("'{}' is given twice", key));
    }
    fields.entries_.emplace_back(key, entry.second);
  }
  return fields;
}

const YAML::Node* YamlFields::Find(std::string_view key) const {
  for (const auto& [name, value] : entries_) {
    if (name == key) return &value;
  }
  return nullptr;
}

Result<YAML::Node> YamlFields::Require(std::string_view key) const {
  const YAML::Node* value = Find(key);
  if (value == nullptr || value->IsNull()) return YamlAt(node_, fmt::format("has no '{}'", key));
  return *value;
}

}  // namespace parity
