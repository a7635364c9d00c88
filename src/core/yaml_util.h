// SPDX-License-Identifier: Apache-2.0
// Loading a YAML document with the problem named the way every parity file error is.
#ifndef PARITY_CORE_YAML_UTIL_H_
#define PARITY_CORE_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity {

/// The YAML document in `text`. kInvalidInput "path: holds a NUL byte" or "path: line N: not
/// valid YAML: problem".
Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path);

/// kInvalidInput "line N: problem" at `node` (no line when the node has no mark); the caller
/// prepends the file.
Status YamlAt(const YAML::Node& node, std::string_view problem);

/// The same at `mark` (a parse error's): "line N: problem", no line when the mark is null.
Status YamlAt(const YAML::Mark& mark, std::string_view problem);

/// The non-empty scalar `node`; else "'key' must be a string".
Result<std::string> YamlText(const YAML::Node& node, std::string_view key);

/// The scalar `node` as true or false; else "'key' must be true or false".
Result<bool> YamlFlag(const YAML::Node& node, std::string_view key);

/// A scalar or a sequence of non-empty scalars, as a list; else "'key' must be a list of
/// strings". At most `limit` items.
Result<std::vector<std::string>> YamlTextList(const YAML::Node& node, std::string_view key,
                                              std::size_t limit = 10000);

/// Calls `handle(key, value)` for each entry of the map `node` in order, refusing a key not in
/// `keys` (with a suggestion and the list) and a key given twice. `what` names the map in
/// messages ("" for the top level, whose keys are called sections).
Status ForEachKey(const YAML::Node& node, std::string_view what,
                  const std::vector<std::string_view>& keys,
                  const std::function<Status(const std::string&, const YAML::Node&)>& handle);

/// What `node` is, for "'key' is WHAT, not ..." messages: its text quoted (non-printable bytes
/// escaped), "a list", "a map" or "empty".
std::string YamlDescribe(const YAML::Node& node);

/// Whether the scalar `node` was quoted or tagged !!str: a string, whatever its text looks like.
bool YamlQuoted(const YAML::Node& node);

/// `status` ("line N: problem", from YamlAt) with `context` after the line: "line N: context:
/// problem"; "context: problem" when it has no line.
Status YamlInContext(const Status& status, std::string_view context);

/// The problem of `status` without its "line N: " prefix, for a document that is not a file
/// (a command-line value).
std::string YamlProblem(const Status& status);

/// The non-empty scalar `node`; else "WHAT is D, not a string" or "WHAT is empty". `what` names
/// the value as messages show it ("'name'", "lo of 'range'"); D is YamlDescribe's.
Result<std::string> YamlString(const YAML::Node& node, std::string_view what);

/// The scalar `node` as a finite number: decimal with an optional sign, fraction and exponent
/// ("85", "+1.5e-3"). Else "WHAT is D, not a number", "WHAT is D, not finite" (.inf, .nan) or
/// "WHAT is D, out of the range of a double".
Result<double> YamlNumber(const YAML::Node& node, std::string_view what);

/// The scalar `node` as a whole number that fits 64 bits ("12", "+3", "-4"); else "WHAT is D,
/// not a whole number".
Result<std::int64_t> YamlInteger(const YAML::Node& node, std::string_view what);

/// The sequence `node` with 1 to `limit` items; else "WHAT is D, not a list", "WHAT is an empty
/// list" or "WHAT has N items; at most LIMIT".
Result<YAML::Node> YamlList(const YAML::Node& node, std::string_view what,
                            std::size_t limit = 10000);

/// The entries of one YAML map by key, checked once so that a loader asks for its fields by name.
class YamlFields {
 public:
  /// The entries of the map `node`. Refuses, at the offending key, a key that is not a string
  /// ("a key is not a string"), one not in `keys` ("unknown key 'K' (did you mean 'S'?); the
  /// keys: A, B", with `noun` for "key") and one given twice ("'K' is given twice"); a node that
  /// is not a map as "WHAT is D, not a map".
  static Result<YamlFields> Read(const YAML::Node& node, std::string_view what,
                                 std::span<const std::string_view> keys,
                                 std::string_view noun = "key");

  /// The value of `key`, or nullptr when the map lacks it (an empty value `key:` is a null node).
  const YAML::Node* Find(std::string_view key) const;

  /// The value of `key` when it is given and not empty; else "has no 'key'" at the map.
  Result<YAML::Node> Require(std::string_view key) const;

  /// The map the entries came from.
  const YAML::Node& node() const { return node_; }

  /// How many entries the map has.
  std::size_t size() const { return entries_.size(); }

 private:
  YAML::Node node_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
};

}  // namespace parity

#endif  // PARITY_CORE_YAML_UTIL_H_
