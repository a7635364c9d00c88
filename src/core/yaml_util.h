// SPDX-License-Identifier: Apache-2.0
// Loading a YAML document with the problem named the way every parity file error is.
#ifndef PARITY_CORE_YAML_UTIL_H_
#define PARITY_CORE_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

/// The YAML document in `text`. kInvalidInput "path: holds a NUL byte" or "path: line N: not
/// valid YAML: problem".
Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path);

}  // namespace parity

#endif  // PARITY_CORE_YAML_UTIL_H_
