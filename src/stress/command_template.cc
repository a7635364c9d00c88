// SPDX-License-Identifier: Apache-2.0
#include "stress/command_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "core/spellcheck.h"
#include "core/text.h"

namespace parity::stress {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

bool IsName(std::string_view text) {
  return !text.empty() && IsNameStart(text[0]) &&
         std::all_of(text.begin() + 1, text.end(), IsNameChar);
}

std::string Where(std::size_t index, std::string_view word) {
  return fmt::format("word {} ('{}')", index + 1, Printable(word));
}

// Walks `word`: literal text goes to *out (when not null), and on_name(name) is called for each
// placeholder and returns "" or a problem. Returns "" or the problem.
template <typename OnName>
std::string Scan(std::string_view word, std::string* out, OnName&& on_name) {
  std::size_t i = 0;
  while (i < word.size()) {
    const char c = word[i];
    if (c == '{') {
      if (i + 1 < word.size() && word[i + 1] == '{') {
        if (out != nullptr) *out += '{';
        i += 2;
        continue;
      }
      const std::size_t close = word.find('}', i + 1);
      if (close == std::string_view::npos) {
        return fmt::format("the '{{' at byte {} has no '}}' (write {{{{ for a literal brace)",
                           i + 1);
      }
      const std::string_view name = word.substr(i + 1, close - i - 1);
      if (!IsName(name)) {
        return fmt::format(
            "'{{{}}}' is not a placeholder: a name is [a-z_][a-z0-9_]* (write {{{{ and }}}} for "
            "literal braces)",
            Printable(name));
      }
      if (std::string problem = on_name(name); !problem.empty()) return problem;
      i = close + 1;
      continue;
    }
    if (c == '}') {
      if (i + 1 < word.size() && word[i + 1] == '}') {
        if (out != nullptr) *out += '}';
        i += 2;
        continue;
      }
      return fmt::format("the '}}' at byte {} has no '{{' (write }}}} for a literal brace)", i + 1);
    }
    if (out != nullptr) *out += c;
    ++i;
  }
  return "";
}

std::string UnknownName(std::string_view name, const std::vector<std::string_view>& known) {
  std::string message = fmt::format("unknown placeholder {{{}}}", name);
  if (const std::optional<std::string> best = Suggest(name, known)) {
    message += " (did you mean {" + *best + "}?)";
  }
  if (known.empty()) {
    message += "; there are no values to substitute";
  } else {
    message += "; known:";
    for (std::size_t i = 0; i < known.size(); ++i) {
      message += (i == 0 ? " " : ", ");
      message += known[i];
    }
  }
  return message;
}

}  // namespace

Result<std::string> FormatValue(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string:
      return value.get<std::string>();
    case Json::value_t::number_integer:
      return fmt::format("{}", value.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return fmt::format("{}", value.get<std::uint64_t>());
    case Json::value_t::number_float:
      return fmt::format("{}", value.get<double>());
    case Json::value_t::boolean:
      return std::string(value.get<bool>() ? "true" : "false");
    default:
      break;
  }
  return Status::Invalid("", fmt::format("the value is {}, not a number or string",
                                         value.is_null() ? "null" : value.type_name()));
}

Result<std::vector<std::string>> ExpandCommand(const std::vector<std::string>& words,
                                               const Json& values) {
  std::vector<std::string_view> known;
  if (values.is_object()) {
    for (const auto& item : values.items()) known.push_back(item.key());
  }
  std::vector<std::string> out;
  out.reserve(words.size());
  for (std::size_t index = 0; index < words.size(); ++index) {
    std::string expanded;
    const std::string problem =
        Scan(words[index], &expanded, [&](std::string_view name) -> std::string {
          const auto it = values.is_object() ? values.find(name) : values.end();
          if (it == values.end()) return UnknownName(name, known);
          Result<std::string> text = FormatValue(*it);
          if (!text.ok()) return fmt::format("{{{}}}: {}", name, text.status().message());
          expanded += *text;
          return "";
        });
    if (!problem.empty()) return Status::Invalid("", Where(index, words[index]) + ": " + problem);
    out.push_back(std::move(expanded));
  }
  return out;
}

std::vector<std::string> PlaceholderNames(const std::vector<std::string>& words) {
  std::vector<std::string> names;
  for (const std::string& word : words) {
    // A malformed piece stops the scan of its word; names before it still count.
    (void)Scan(word, nullptr, [&names](std::string_view name) -> std::string {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.emplace_back(name);
      }
      return "";
    });
  }
  return names;
}

Status CheckCommand(const std::vector<std::string>& words, std::span<const std::string> known) {
  const std::vector<std::string_view> candidates(known.begin(), known.end());
  for (std::size_t index = 0; index < words.size(); ++index) {
    const std::string problem =
        Scan(words[index], nullptr, [&candidates](std::string_view name) -> std::string {
          if (std::find(candidates.begin(), candidates.end(), name) != candidates.end()) {
            return "";
          }
          return UnknownName(name, candidates);
        });
    if (!problem.empty()) return Status::Invalid("", Where(index, words[index]) + ": " + problem);
  }
  return Status::Ok();
}

}  // namespace parity::stress
