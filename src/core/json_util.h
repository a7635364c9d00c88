// SPDX-License-Identifier: Apache-2.0
// JSON helpers: numbers that may be NaN or Inf, and the document header every output carries.
#ifndef PARITY_CORE_JSON_UTIL_H_
#define PARITY_CORE_JSON_UTIL_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace parity {

/// The ordered JSON type parity writes (keys keep insertion order).
using Json = nlohmann::ordered_json;

/// Sets obj[key] to `value`. JSON has no NaN or Inf: a non-finite value is written as null
/// and obj[key + "_nonfinite"] says which ("nan", "inf" or "-inf").
void SetNumber(Json& obj, std::string_view key, double value);

/// {"format": format, "version": version}, the start of every machine-readable output.
Json Document(std::string_view format, int version);

/// obj[key] when `obj` is an object holding a string there; "" otherwise (absent, null, another
/// type), where nlohmann's value() would throw.
std::string StringField(const Json& obj, std::string_view key);

/// Serialises with two-space indentation; invalid UTF-8 in strings is replaced, not thrown.
std::string Dump(const Json& json);

}  // namespace parity

#endif  // PARITY_CORE_JSON_UTIL_H_
