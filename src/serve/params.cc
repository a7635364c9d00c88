// SPDX-License-Identifier: Apache-2.0
#include "serve/params.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>
#include <vector>

#include "core/spellcheck.h"

namespace parity::serve {

Status Params::Check(std::initializer_list<std::string_view> known) const {
  const std::vector<std::string_view> names(known);
  for (const auto& [name, value] : values_) {
    bool found = false;
    for (std::string_view k : names) found = found || k == name;
    if (!found) {
      std::string problem = "unknown parameter";
      if (auto guess = Suggest(name, names))
        problem += fmt::format(" (did you mean '{}'?)", *guess);
      if (names.size() > 0) {
        std::string list;
        for (std::string_view k : names) list += (list.empty() ? "" : ", ") + std::string(k);
        problem += "; known: " + list;
      }
      return Status::Invalid(name.size() > 64 ? name.substr(0, 64) + "..." : name, problem);
    }
    if (value.size() > kMaxParamBytes) {
      return Status::Invalid(name, fmt::format("longer than {} bytes", kMaxParamBytes));
    }
  }
  return Status::Ok();
}

std::string Params::Text(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::string() : it->second;
}

Result<std::optional<std::int64_t>> Params::Int(std::string_view name, std::int64_t min,
                                                std::int64_t max) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::optional<std::int64_t>();
  const std::string& text = it->second;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::Invalid(std::string(name), "not a whole number");
  }
  if (value < min || value > max) {
    return Status::Invalid(std::string(name), fmt::format("must be in [{}, {}]", min, max));
  }
  return std::optional<std::int64_t>(value);
}

Result<std::optional<double>> Params::Number(std::string_view name, double min, double max) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::optional<double>();
  const std::string& text = it->second;
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return Status::Invalid(std::string(name), "not a finite number");
  }
  if (value < min || value > max) {
    return Status::Invalid(std::string(name), fmt::format("must be in [{:g}, {:g}]", min, max));
  }
  return std::optional<double>(value);
}

Result<Page> ReadPage(const Params& params, std::size_t default_limit, std::size_t max_limit) {
  PARITY_ASSIGN_OR_RETURN(auto offset, params.Int("offset", 0, std::int64_t{1} << 40));
  PARITY_ASSIGN_OR_RETURN(auto limit, params.Int("limit", 1, static_cast<std::int64_t>(max_limit)));
  Page page;
  page.offset = offset ? static_cast<std::size_t>(*offset) : 0;
  page.limit = limit ? static_cast<std::size_t>(*limit) : default_limit;
  return page;
}

}  // namespace parity::serve
