// SPDX-License-Identifier: Apache-2.0
#include "core/json_util.h"

#include <cmath>
#include <string>

namespace parity {

void SetNumber(Json& obj, std::string_view key, double value) {
  const std::string name(key);
  if (std::isfinite(value)) {
    obj[name] = value;
    return;
  }
  obj[name] = nullptr;
  obj[name + "_nonfinite"] = std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
}

Json Document(std::string_view format, int version) {
  Json doc = Json::object();
  doc["format"] = format;
  doc["version"] = version;
  return doc;
}

std::string Dump(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string StringField(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace parity
