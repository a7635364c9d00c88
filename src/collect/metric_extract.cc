// SPDX-License-Identifier: Apache-2.0
#include "collect/metric_extract.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <regex>

#include "core/text.h"

namespace parity::collect {
namespace {

Result<double> ParseNumber(const std::string& text, std::string_view what) {
  double value = 0.0;
  std::size_t start = 0;
  if (!text.empty() && text[0] == '+') start = 1;
  const char* end = text.data() + text.size();
  auto r = std::from_chars(text.data() + start, end, value);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(value)) {
    return Status::Invalid("",
                           fmt::format("{} '{}' is not a finite number", what, Printable(text)));
  }
  return value;
}

}  // namespace

Status CheckMetricSpec(const Json& spec) {
  const std::string name = StringField(spec, "name");
  if (name.empty() || name.size() > 128)
    return Status::Invalid("", "a metric needs a short 'name'");
  const bool json = spec.contains("json"), regex = spec.contains("regex");
  if (json == regex) {
    return Status::Invalid("", fmt::format("metric '{}': give one of 'json' or 'regex'", name));
  }
  if (json && !spec.contains("key")) {
    return Status::Invalid("", fmt::format("metric '{}': 'json' needs a 'key'", name));
  }
  if (regex && spec.contains("key")) {
    return Status::Invalid("", fmt::format("metric '{}': 'key' goes with 'json'", name));
  }
  if (regex) {
    try {
      std::regex compiled(spec["regex"].get<std::string>(), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status::Invalid(
          "", fmt::format("metric '{}': regex does not compile: {}", name, e.what()));
    }
  }
  if (spec.contains("better") && spec["better"] != "higher" && spec["better"] != "lower") {
    return Status::Invalid("", fmt::format("metric '{}': 'better' is higher or lower", name));
  }
  return Status::Ok();
}

Result<double> ValueAtKey(const Json& doc, const std::string& key) {
  const Json* node = &doc;
  if (!key.empty() && key[0] == '/') {
    try {
      node = &doc.at(Json::json_pointer(key));
    } catch (const Json::exception&) {
      return Status::Invalid("", fmt::format("no value at '{}'", key));
    }
  } else {
    std::size_t start = 0;
    while (start <= key.size()) {
      const std::size_t dot = key.find('.', start);
      const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
      if (node->is_object() && node->contains(part)) {
        node = &(*node)[part];
      } else if (node->is_array()) {
        std::size_t index = 0;
        auto r = std::from_chars(part.data(), part.data() + part.size(), index);
        if (r.ec != std::errc() || r.ptr != part.data() + part.size() || index >= node->size()) {
          return Status::Invalid("", fmt::format("no value at '{}' ('{}' is not an index of a "
                                                 "list of {})",
                                                 key, part, node->size()));
        }
        node = &(*node)[index];
      } else {
        return Status::Invalid("", fmt::format("no value at '{}' ('{}' not found)", key, part));
      }
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  if (node->is_number()) return node->get<double>();
  if (node->is_string()) return ParseNumber(node->get<std::string>(), fmt::format("'{}':", key));
  return Status::Invalid("", fmt::format("the value at '{}' is not a number", key));
}

Result<double> ValueByRegex(const std::string& text, const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Invalid("", fmt::format("regex does not compile: {}", e.what()));
  }
  std::string found;
  bool any = false;
  // Line by line: std::regex recurses per character, so one search over a huge text could
  // exhaust the stack.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, std::min<std::size_t>(end - start, 4096));
    for (auto it = std::sregex_iterator(line.begin(), line.end(), re); it != std::sregex_iterator();
         ++it) {
      const std::smatch& m = *it;
      found = m.size() > 1 ? m[1].str() : m[0].str();
      any = true;
    }
    start = end + 1;
  }
  if (!any) return Status::Invalid("", fmt::format("no match for /{}/ in the output", pattern));
  return ParseNumber(found, "the match");
}

}  // namespace parity::collect
