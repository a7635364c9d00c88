// SPDX-License-Identifier: Apache-2.0
#include "core/yaml_util.h"

#include <fmt/format.h>

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

}  // namespace parity
