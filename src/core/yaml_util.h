// SPDX-License-Identifier: Apache-2.0
// Loading a YAML document with the problem named the way every parity file error is.
#ifndef PARITY_CORE_YAML_UTIL_H_
#define PARITY_CORE_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <functional>
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

}  // namespace parity

#endif  // PARITY_CORE_YAML_UTIL_H_
