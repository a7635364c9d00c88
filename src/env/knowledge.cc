// SPDX-License-Identifier: Apache-2.0
#include "env/knowledge.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

#include "core/file_util.h"
#include "core/yaml_util.h"

namespace parity::env {
namespace {

constexpr std::size_t kMaxFileBytes = 4 << 20;
constexpr std::size_t kMaxEntries = 5000;
constexpr std::size_t kMaxPattern = 200;
/// Values longer than this are never matched against a pattern (libstdc++'s regex recurses
/// per character).
constexpr std::size_t kMaxMatchedValue = 256;

std::string List(std::span<const std::string_view> items) {
  std::string out;
  for (std::string_view s : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", s);
  return out;
}

bool OneOf(std::string_view s, std::span<const std::string_view> items) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

/// An https:// URL, or owner/name:path as the reference files cite repositories.
bool IsSource(const std::string& s) {
  if (s.rfind("https://", 0) == 0) return s.size() > 12 && s.find(' ') == std::string::npos;
  const std::size_t slash = s.find('/');
  const std::size_t colon = s.find(':');
  if (slash == std::string::npos || colon == std::string::npos || slash == 0 || colon < slash + 2 ||
      colon + 1 >= s.size()) {
    return false;
  }
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          (c == '/' && i == slash))) {
      return false;
    }
  }
  return true;
}

bool IsKebab(const std::string& s) {
  if (s.empty() || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

constexpr std::size_t kMaxQuote = 300;

/// A source: {ref: "https://... or owner/name:path", quote: "the words it relies on"}.
Result<Source> ParseSource(const YAML::Node& node) {
  if (!node.IsMap()) {
    return YamlAt(node,
                  "a source must be {ref: URL or owner/name:path, quote: \"the exact words "
                  "or code it relies on\"}");
  }
  Source source;
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "sources", {"ref", "quote"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        PARITY_ASSIGN_OR_RETURN((key == "ref" ? source.ref : source.quote), YamlText(v, key));
        return Status::Ok();
      }));
  if (source.ref.empty()) return YamlAt(node, "a source needs 'ref'");
  if (!IsSource(source.ref)) {
    return YamlAt(node, fmt::format("source '{}' is neither an https:// URL nor owner/name:path",
                                    source.ref));
  }
  if (source.quote.empty()) {
    return YamlAt(node, fmt::format("source '{}' needs 'quote': the exact words or code of the "
                                    "source that the entry relies on",
                                    source.ref));
  }
  if (source.quote.size() > kMaxQuote || source.quote.find('\n') != std::string::npos) {
    return YamlAt(node, fmt::format("the quote of '{}' must be one line of at most {} characters",
                                    source.ref, kMaxQuote));
  }
  return source;
}

Result<std::vector<Source>> ParseSources(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0 || node.size() > 100) {
    return YamlAt(node, "'sources' must be a list of 1 to 100 sources");
  }
  std::vector<Source> out;
  for (const YAML::Node& item : node) {
    PARITY_ASSIGN_OR_RETURN(Source source, ParseSource(item));
    out.push_back(std::move(source));
  }
  return out;
}

/// {component: torch, since: "2.0", until: "2.5"}: since inclusive, until exclusive, at least
/// one of them; versions numeric ("2.0"), since before until.
Result<VersionRange> ParseVersions(const YAML::Node& node) {
  VersionRange range;
  if (!node.IsMap()) {
    return YamlAt(node, "'versions' must be {component: torch, since: \"2.0\", until: \"2.5\"}");
  }
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "versions", {"component", "since", "until"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "component") {
          PARITY_ASSIGN_OR_RETURN(range.component, YamlText(v, key));
          if (!OneOf(range.component, kComponents)) {
            return YamlAt(v, fmt::format("'component' is '{}'; it must be one of {}",
                                         range.component, List(kComponents)));
          }
          return Status::Ok();
        }
        std::string& version = key == "since" ? range.since : range.until;
        PARITY_ASSIGN_OR_RETURN(version, YamlText(v, key));
        if (!ParseVersion(version, /*strict=*/true)) {
          return YamlAt(v, fmt::format("'{}' is '{}'; a version is numbers separated by dots "
                                       "(\"2.0\", \"1.13.1\")",
                                       key, version));
        }
        return Status::Ok();
      }));
  if (range.component.empty()) return YamlAt(node, "'versions' needs 'component'");
  if (range.since.empty() && range.until.empty()) {
    return YamlAt(node, "'versions' needs 'since', 'until' or both");
  }
  if (!range.since.empty() && !range.until.empty() &&
      CompareVersions(*ParseVersion(range.since), *ParseVersion(range.until)) >= 0) {
    return YamlAt(
        node, fmt::format("'since' ({}) must be before 'until' ({})", range.since, range.until));
  }
  return range;
}

/// Why `pattern` could make matching slow, or "": more than six repetitions, a repetition
/// (other than "?") of a group that holds a repetition or an alternation ("(a*)*", "(a|a)*"),
/// or a count above 100. With values cut at kMaxMatchedValue, what is left matches in polynomial
/// time.
std::string SlowPattern(const std::string& pattern) {
  int quantifiers = 0;
  std::vector<bool> group_risky;  // per open group: holds a repetition or '|'
  bool last_group_risky = false;  // the group that just closed
  bool after_group = false;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
      after_group = false;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      continue;
    }
    const bool quantifier = c == '*' || c == '+' || c == '?' || c == '{';
    if (quantifier) {
      if (c == '?' && i > 0 && pattern[i - 1] == '(') continue;  // (?: (?= (?!
      if (++quantifiers > 6) return "a pattern has at most 6 repetitions (*, +, ?, {n})";
      if (after_group && last_group_risky && c != '?') {
        return "a pattern may not repeat a group that holds a repetition or an alternation";
      }
      if (!group_risky.empty()) group_risky.back() = true;
      if (c == '{') {
        long value = 0;
        for (std::size_t j = i + 1; j < pattern.size() && pattern[j] != '}'; ++j) {
          if (std::isdigit(static_cast<unsigned char>(pattern[j]))) {
            value = std::min<long>(value * 10 + (pattern[j] - '0'), 100000);
            if (value > 100) return "a pattern's counted repetition is at most {100}";
          } else {
            value = 0;
          }
        }
      }
      after_group = false;
      continue;
    }
    after_group = false;
    if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      group_risky.push_back(false);
    } else if (c == ')') {
      if (group_risky.empty()) continue;  // the regex compiler reports it
      last_group_risky = group_risky.back();
      group_risky.pop_back();
      if (!group_risky.empty() && last_group_risky) group_risky.back() = true;
      after_group = true;
    } else if (c == '|' && !group_risky.empty()) {
      group_risky.back() = true;
    }
  }
  return "";
}

/// The regex `pattern` must match a whole value; bounded (SlowPattern) so that a hostile file
/// can't make matching blow up.
Result<std::shared_ptr<const std::regex>> CompilePattern(const YAML::Node& node,
                                                         const std::string& pattern) {
  if (pattern.size() > kMaxPattern) {
    return YamlAt(node, fmt::format("a pattern is at most {} characters", kMaxPattern));
  }
  if (std::string why = SlowPattern(pattern); !why.empty()) {
    return YamlAt(node, fmt::format("'{}': {}", pattern, why));
  }
  try {
    return std::make_shared<const std::regex>(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return YamlAt(node,
                  fmt::format("'{}' is not a valid regular expression: {}", pattern, e.what()));
  }
}

Result<std::vector<std::string>> Strings(const YAML::Node& node, std::string_view key) {
  if (node.IsScalar()) return YamlAt(node, fmt::format("'{}' must be a list", key));
  return YamlTextList(node, key, kMaxEntries);
}

/// The scalar `node`, which may be any string (also "" or a number), as text.
Result<std::string> AnyScalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return YamlAt(node, fmt::format("'{}' must be a string", key));
  return node.Scalar();
}

Result<std::vector<std::string>> ScalarList(const YAML::Node& node, std::string_view key) {
  if (!node.IsSequence() || node.size() == 0) {
    return YamlAt(node, fmt::format("'{}' must be a non-empty list of values", key));
  }
  std::vector<std::string> out;
  for (const YAML::Node& item : node) {
    PARITY_ASSIGN_OR_RETURN(std::string v, AnyScalar(item, key));
    out.push_back(std::move(v));
  }
  return out;
}

Result<Severity> ParseSeverity(const YAML::Node& node) {
  PARITY_ASSIGN_OR_RETURN(std::string s, YamlText(node, "severity"));
  if (s == "error") return Severity::kError;
  if (s == "warning") return Severity::kWarning;
  if (s == "info") return Severity::kInfo;
  return YamlAt(node, fmt::format("'severity' is '{}'; it must be error, warning or info", s));
}

Result<Clause> ParseClause(const YAML::Node& node) {
  Clause clause;
  bool has_setting = false;
  int tests = 0;
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "when", {"setting", "equals", "not_equals", "set", "matches", "platform"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "setting") {
          PARITY_ASSIGN_OR_RETURN(clause.setting, YamlText(v, key));
          has_setting = true;
          return Status::Ok();
        }
        ++tests;
        if (key == "equals" || key == "not_equals") {
          clause.kind = key == "equals" ? Clause::Kind::kEquals : Clause::Kind::kNotEquals;
          PARITY_ASSIGN_OR_RETURN(clause.values, ScalarList(v, key));
        } else if (key == "set") {
          PARITY_ASSIGN_OR_RETURN(bool set, YamlFlag(v, key));
          clause.kind = set ? Clause::Kind::kSet : Clause::Kind::kUnset;
        } else if (key == "matches") {
          clause.kind = Clause::Kind::kMatches;
          PARITY_ASSIGN_OR_RETURN(clause.pattern, YamlText(v, key));
          PARITY_ASSIGN_OR_RETURN(clause.regex, CompilePattern(v, clause.pattern));
        } else {
          clause.kind = Clause::Kind::kPlatform;
          PARITY_ASSIGN_OR_RETURN(std::string vendor, YamlText(v, key));
          if (vendor != "nvidia" && vendor != "amd") {
            return YamlAt(v, fmt::format("'platform' is '{}'; it must be nvidia or amd", vendor));
          }
          if (has_setting) return YamlAt(v, "a platform clause names no setting");
          clause.setting = vendor;
        }
        return Status::Ok();
      }));
  if (tests != 1) {
    return YamlAt(node, "a clause has exactly one of equals, not_equals, set, matches, platform");
  }
  if ((clause.kind == Clause::Kind::kPlatform) == has_setting) {
    return YamlAt(node, clause.kind == Clause::Kind::kPlatform
                            ? "a platform clause names no setting"
                            : "a clause needs 'setting'");
  }
  return clause;
}

Result<Rule> ParseRule(const YAML::Node& node) {
  Rule rule;
  bool has_id = false, has_severity = false, has_when = false, has_message = false;
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "rules", {"id", "severity", "when", "message", "versions"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "id") {
          PARITY_ASSIGN_OR_RETURN(rule.id, YamlText(v, key));
          if (!IsKebab(rule.id)) {
            return YamlAt(v, fmt::format("rule id '{}' must be lowercase kebab-case", rule.id));
          }
          has_id = true;
        } else if (key == "severity") {
          PARITY_ASSIGN_OR_RETURN(rule.severity, ParseSeverity(v));
          has_severity = true;
        } else if (key == "when") {
          if (!v.IsSequence() || v.size() == 0 || v.size() > 16) {
            return YamlAt(v, "'when' must be a list of 1 to 16 clauses");
          }
          for (const YAML::Node& c : v) {
            PARITY_ASSIGN_OR_RETURN(Clause clause, ParseClause(c));
            rule.when.push_back(std::move(clause));
          }
          has_when = true;
        } else if (key == "versions") {
          PARITY_ASSIGN_OR_RETURN(rule.versions, ParseVersions(v));
        } else {
          PARITY_ASSIGN_OR_RETURN(rule.message, YamlText(v, key));
          has_message = true;
        }
        return Status::Ok();
      }));
  for (auto [has, key] : {std::pair{has_id, "id"}, std::pair{has_severity, "severity"},
                          std::pair{has_when, "when"}, std::pair{has_message, "message"}}) {
    if (!has) return YamlAt(node, fmt::format("a rule needs '{}'", key));
  }
  return rule;
}

Result<ValidValue> ParseValue(const YAML::Node& node) {
  ValidValue out;
  bool has_value = false;
  PARITY_RETURN_IF_ERROR(ForEachKey(node, "values", {"value", "aliases", "meaning"},
                                    [&](const std::string& key, const YAML::Node& v) -> Status {
                                      if (key == "value") {
                                        PARITY_ASSIGN_OR_RETURN(out.value, AnyScalar(v, key));
                                        has_value = true;
                                      } else if (key == "aliases") {
                                        PARITY_ASSIGN_OR_RETURN(out.aliases, Strings(v, key));
                                      } else {
                                        PARITY_ASSIGN_OR_RETURN(out.meaning, YamlText(v, key));
                                      }
                                      return Status::Ok();
                                    }));
  if (!has_value) return YamlAt(node, "a value needs 'value'");
  if (out.meaning.empty()) return YamlAt(node, "a value needs 'meaning'");
  return out;
}

Status ParseSetting(const YAML::Node& node, Setting& s) {
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "settings",
      {"name", "kind", "stack", "status", "summary", "claim", "values", "pattern", "default",
       "effect", "advice", "instead", "sources", "rules", "versions"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "name") {
          PARITY_ASSIGN_OR_RETURN(s.name, YamlText(v, key));
        } else if (key == "kind") {
          PARITY_ASSIGN_OR_RETURN(s.kind, YamlText(v, key));
          if (s.kind != "env" && s.kind != "api") {
            return YamlAt(v, fmt::format("'kind' is '{}'; it must be env or api", s.kind));
          }
        } else if (key == "stack") {
          PARITY_ASSIGN_OR_RETURN(s.stack, YamlText(v, key));
          if (!OneOf(s.stack, kStacks)) {
            return YamlAt(
                v, fmt::format("'stack' is '{}'; it must be one of {}", s.stack, List(kStacks)));
          }
        } else if (key == "status") {
          PARITY_ASSIGN_OR_RETURN(s.status, YamlText(v, key));
          if (!OneOf(s.status, kStatuses)) {
            return YamlAt(v, fmt::format("'status' is '{}'; it must be one of {}", s.status,
                                         List(kStatuses)));
          }
        } else if (key == "summary") {
          PARITY_ASSIGN_OR_RETURN(s.summary, YamlText(v, key));
        } else if (key == "claim") {
          PARITY_ASSIGN_OR_RETURN(s.claim, YamlText(v, key));
        } else if (key == "default") {
          PARITY_ASSIGN_OR_RETURN(s.default_text, YamlText(v, key));
        } else if (key == "advice") {
          PARITY_ASSIGN_OR_RETURN(s.advice, YamlText(v, key));
        } else if (key == "values") {
          if (!v.IsSequence() || v.size() == 0 || v.size() > 1000) {
            return YamlAt(v, "'values' must be a list of 1 to 1000 values");
          }
          for (const YAML::Node& item : v) {
            PARITY_ASSIGN_OR_RETURN(ValidValue value, ParseValue(item));
            s.values.push_back(std::move(value));
          }
        } else if (key == "pattern") {
          PARITY_ASSIGN_OR_RETURN(s.pattern, YamlText(v, key));
          PARITY_ASSIGN_OR_RETURN(s.regex, CompilePattern(v, s.pattern));
        } else if (key == "effect") {
          return ForEachKey(v, "effect", {"determinism", "precision", "performance"},
                            [&](const std::string& k, const YAML::Node& e) -> Status {
                              PARITY_ASSIGN_OR_RETURN(s.effect[k], YamlText(e, k));
                              return Status::Ok();
                            });
        } else if (key == "instead") {
          PARITY_ASSIGN_OR_RETURN(s.instead, Strings(v, key));
        } else if (key == "sources") {
          PARITY_ASSIGN_OR_RETURN(s.sources, ParseSources(v));
        } else if (key == "versions") {
          PARITY_ASSIGN_OR_RETURN(s.versions, ParseVersions(v));
        } else {
          if (!v.IsSequence() || v.size() > 100) {
            return YamlAt(v, "'rules' must be a list of at most 100 rules");
          }
          for (const YAML::Node& r : v) {
            PARITY_ASSIGN_OR_RETURN(Rule rule, ParseRule(r));
            s.rules.push_back(std::move(rule));
          }
        }
        return Status::Ok();
      }));
  for (auto [value, key] : {std::pair{&s.name, "name"}, std::pair{&s.kind, "kind"},
                            std::pair{&s.stack, "stack"}, std::pair{&s.status, "status"},
                            std::pair{&s.summary, "summary"}, std::pair{&s.advice, "advice"}}) {
    if (value->empty()) return YamlAt(node, fmt::format("an entry needs '{}'", key));
  }
  if (s.sources.empty()) return YamlAt(node, "an entry needs 'sources'");
  if (!s.real() && s.claim.empty()) {
    return YamlAt(node, fmt::format("an entry whose status is {} needs 'claim'", s.status));
  }
  if (s.real() && s.effect.empty()) {
    return YamlAt(node, "a real setting needs 'effect' (determinism, precision or performance)");
  }
  if (!s.values.empty() && !s.pattern.empty()) {
    return YamlAt(node, "an entry has 'values' or 'pattern', not both");
  }
  return Status::Ok();
}

/// "settings[3] (NAME)" for messages.
std::string EntryName(std::string_view list, std::size_t i, const std::string& name) {
  return name.empty() ? fmt::format("{}[{}]", list, i) : fmt::format("{}[{}] ({})", list, i, name);
}

/// Checks the top level {format, version, LIST: [...]} and returns LIST's node.
Result<YAML::Node> Top(const YAML::Node& root, std::string_view format, std::string_view list) {
  YAML::Node items;
  std::string got_format;
  bool has_version = false;
  PARITY_RETURN_IF_ERROR(ForEachKey(
      root, "", {"format", "version", list},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "format") {
          PARITY_ASSIGN_OR_RETURN(got_format, YamlText(v, key));
          if (got_format != format) {
            return YamlAt(v, fmt::format("'format' is '{}', not {}", got_format, format));
          }
        } else if (key == "version") {
          if (!v.IsScalar() || v.Scalar() != "1") {
            return YamlAt(v, "'version' must be 1, the version this parity reads");
          }
          has_version = true;
        } else {
          if (!v.IsSequence() || v.size() > kMaxEntries) {
            return YamlAt(
                v, fmt::format("'{}' must be a list of at most {} entries", list, kMaxEntries));
          }
          items = v;
        }
        return Status::Ok();
      }));
  if (got_format.empty()) return YamlAt(root, fmt::format("'format' must be {}", format));
  if (!has_version) return YamlAt(root, "'version' must be 1");
  if (!items) return YamlAt(root, fmt::format("the file needs '{}'", list));
  return items;
}

Result<Check> ParseCheck(const YAML::Node& node) {
  Check check;
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "checks", {"run", "why"}, [&](const std::string& key, const YAML::Node& v) -> Status {
        PARITY_ASSIGN_OR_RETURN((key == "run" ? check.run : check.why), YamlText(v, key));
        return Status::Ok();
      }));
  if (check.run.rfind("parity ", 0) != 0) {
    return YamlAt(node, "a check's 'run' must be a parity command line (\"parity ...\")");
  }
  if (check.why.empty()) return YamlAt(node, "a check needs 'why'");
  return check;
}

Status ParseSymptom(const YAML::Node& node, Symptom& s) {
  PARITY_RETURN_IF_ERROR(ForEachKey(
      node, "symptoms", {"id", "title", "keywords", "explanation", "checks", "settings", "sources"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "id") {
          PARITY_ASSIGN_OR_RETURN(s.id, YamlText(v, key));
          if (!IsKebab(s.id)) {
            return YamlAt(v, fmt::format("symptom id '{}' must be lowercase kebab-case", s.id));
          }
        } else if (key == "title") {
          PARITY_ASSIGN_OR_RETURN(s.title, YamlText(v, key));
        } else if (key == "explanation") {
          PARITY_ASSIGN_OR_RETURN(s.explanation, YamlText(v, key));
        } else if (key == "keywords") {
          PARITY_ASSIGN_OR_RETURN(s.keywords, Strings(v, key));
          for (std::string& k : s.keywords) {
            for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          }
        } else if (key == "settings") {
          PARITY_ASSIGN_OR_RETURN(s.settings, Strings(v, key));
        } else if (key == "sources") {
          PARITY_ASSIGN_OR_RETURN(s.sources, ParseSources(v));
        } else {
          if (!v.IsSequence() || v.size() == 0 || v.size() > 100) {
            return YamlAt(v, "'checks' must be a list of 1 to 100 checks");
          }
          for (const YAML::Node& c : v) {
            PARITY_ASSIGN_OR_RETURN(Check check, ParseCheck(c));
            s.checks.push_back(std::move(check));
          }
        }
        return Status::Ok();
      }));
  for (auto [value, key] : {std::pair{&s.id, "id"}, std::pair{&s.title, "title"},
                            std::pair{&s.explanation, "explanation"}}) {
    if (value->empty()) return YamlAt(node, fmt::format("a symptom needs '{}'", key));
  }
  if (s.keywords.empty()) return YamlAt(node, "a symptom needs 'keywords'");
  if (s.checks.empty()) return YamlAt(node, "a symptom needs 'checks'");
  if (s.sources.empty()) return YamlAt(node, "a symptom needs 'sources'");
  return Status::Ok();
}

Status Wrapped(const std::string& path, const std::string& where, const Status& status) {
  return Status::Invalid(path, fmt::format("{}: {}", where, status.message()));
}

}  // namespace

std::optional<std::vector<long>> ParseVersion(std::string_view version, bool strict) {
  if (strict && (version.empty() || version.back() == '.')) return std::nullopt;
  std::vector<long> parts;
  std::size_t i = 0;
  while (i < version.size() && parts.size() < 16) {
    if (!std::isdigit(static_cast<unsigned char>(version[i]))) break;
    long part = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
      part = std::min<long>(part * 10 + (version[i] - '0'), 1000000000L);
      ++i;
    }
    parts.push_back(part);
    if (i == version.size()) return parts;
    if (version[i] != '.') break;  // "0a0+git...": the rest is a local suffix
    ++i;
  }
  if (parts.empty() || (strict && i != version.size())) return std::nullopt;
  return parts;
}

int CompareVersions(const std::vector<long>& a, const std::vector<long>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const long x = i < a.size() ? a[i] : 0;
    const long y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool VersionRange::Contains(std::string_view version) const {
  if (empty()) return true;
  const auto v = ParseVersion(version);
  if (!v) return false;
  if (!since.empty() && CompareVersions(*v, *ParseVersion(since)) < 0) return false;
  if (!until.empty() && CompareVersions(*v, *ParseVersion(until)) >= 0) return false;
  return true;
}

std::string VersionRange::Label() const {
  if (empty()) return "";
  if (until.empty()) return fmt::format("{} >= {}", component, since);
  if (since.empty()) return fmt::format("{} < {}", component, until);
  return fmt::format("{} >= {}, < {}", component, since, until);
}

Json SourcesJson(const std::vector<Source>& sources) {
  Json out = Json::array();
  for (const Source& s : sources) out.push_back({{"ref", s.ref}, {"quote", s.quote}});
  return out;
}

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      break;
  }
  return "info";
}

bool MatchesPattern(const std::regex& regex, std::string_view value) {
  if (value.size() > kMaxMatchedValue) return false;
  try {
    return std::regex_match(value.begin(), value.end(), regex);
  } catch (const std::regex_error&) {
    return false;
  }
}

bool Setting::Valid(std::string_view value) const {
  if (regex) return MatchesPattern(*regex, value);
  if (values.empty()) return true;
  for (const ValidValue& v : values) {
    if (v.value == value) return true;
    for (const std::string& a : v.aliases) {
      if (a == value) return true;
    }
  }
  return false;
}

std::string Setting::MeaningOf(std::string_view value) const {
  for (const ValidValue& v : values) {
    if (v.value == value) return v.meaning;
    for (const std::string& a : v.aliases) {
      if (a == value) return v.meaning;
    }
  }
  return "";
}

const Setting* Knowledge::Find(std::string_view name) const {
  for (const Setting& s : settings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Result<std::vector<Setting>> ParseSettings(std::string_view text, const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, path));
  std::vector<Setting> out;
  try {
    auto items = Top(root, "parity-knowledge-settings", "settings");
    if (!items.ok()) return Status::Invalid(path, items.status().message());
    std::set<std::string> names, ids;
    std::size_t i = 0;
    for (const YAML::Node& node : *items) {
      Setting s;
      const std::string name =
          node.IsMap() && node["name"] && node["name"].IsScalar() ? node["name"].Scalar() : "";
      const std::string where = EntryName("settings", i++, name);
      if (Status st = ParseSetting(node, s); !st.ok()) return Wrapped(path, where, st);
      if (!names.insert(s.name).second) {
        return Wrapped(path, where, YamlAt(node, fmt::format("'{}' is listed twice", s.name)));
      }
      for (const Rule& r : s.rules) {
        if (!ids.insert(r.id).second) {
          return Wrapped(path, where,
                         YamlAt(node, fmt::format("rule id '{}' is used twice", r.id)));
        }
      }
      out.push_back(std::move(s));
    }
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path, e.what());
  }
  return out;
}

Result<std::vector<Symptom>> ParseSymptoms(std::string_view text, const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, path));
  std::vector<Symptom> out;
  try {
    auto items = Top(root, "parity-knowledge-symptoms", "symptoms");
    if (!items.ok()) return Status::Invalid(path, items.status().message());
    std::set<std::string> ids;
    std::size_t i = 0;
    for (const YAML::Node& node : *items) {
      Symptom s;
      const std::string id =
          node.IsMap() && node["id"] && node["id"].IsScalar() ? node["id"].Scalar() : "";
      const std::string where = EntryName("symptoms", i++, id);
      if (Status st = ParseSymptom(node, s); !st.ok()) return Wrapped(path, where, st);
      if (!ids.insert(s.id).second) {
        return Wrapped(path, where, YamlAt(node, fmt::format("'{}' is listed twice", s.id)));
      }
      out.push_back(std::move(s));
    }
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path, e.what());
  }
  return out;
}

Result<Knowledge> MakeKnowledge(std::vector<Setting> settings, std::vector<Symptom> symptoms,
                                std::string settings_path, std::string symptoms_path) {
  Knowledge k{std::move(settings), std::move(symptoms), std::move(settings_path),
              std::move(symptoms_path)};
  for (std::size_t i = 0; i < k.settings.size(); ++i) {
    const Setting& s = k.settings[i];
    const std::string where = EntryName("settings", i, s.name);
    for (const std::string& other : s.instead) {
      if (other == s.name || k.Find(other) == nullptr) {
        return Status::Invalid(k.settings_path,
                               fmt::format("{}.instead: '{}' is not another entry", where, other));
      }
    }
    for (const Rule& r : s.rules) {
      for (const Clause& c : r.when) {
        if (c.kind != Clause::Kind::kPlatform && k.Find(c.setting) == nullptr) {
          return Status::Invalid(k.settings_path,
                                 fmt::format("{}.rules ({}).when: setting '{}' is not an entry",
                                             where, r.id, c.setting));
        }
      }
    }
  }
  for (std::size_t i = 0; i < k.symptoms.size(); ++i) {
    for (const std::string& name : k.symptoms[i].settings) {
      if (k.Find(name) == nullptr) {
        return Status::Invalid(
            k.symptoms_path,
            fmt::format("{}.settings: '{}' is not an entry of {}",
                        EntryName("symptoms", i, k.symptoms[i].id), name, k.settings_path));
      }
    }
  }
  return k;
}

Result<Knowledge> LoadKnowledge(const std::string& dir) {
  const std::string settings_path = dir + "/settings.yaml";
  const std::string symptoms_path = dir + "/symptoms.yaml";
  PARITY_ASSIGN_OR_RETURN(std::string settings_text,
                          ReadSmallFile(settings_path, kMaxFileBytes, "knowledge file"));
  PARITY_ASSIGN_OR_RETURN(std::string symptoms_text,
                          ReadSmallFile(symptoms_path, kMaxFileBytes, "knowledge file"));
  PARITY_ASSIGN_OR_RETURN(std::vector<Setting> settings,
                          ParseSettings(settings_text, settings_path));
  PARITY_ASSIGN_OR_RETURN(std::vector<Symptom> symptoms,
                          ParseSymptoms(symptoms_text, symptoms_path));
  return MakeKnowledge(std::move(settings), std::move(symptoms), settings_path, symptoms_path);
}

Result<const Knowledge*> BuiltinKnowledge() {
  static std::once_flag once;
  static Result<Knowledge>* built = nullptr;
  std::call_once(once, [] {
    const std::string settings_path = "builtin:data/knowledge/settings.yaml";
    const std::string symptoms_path = "builtin:data/knowledge/symptoms.yaml";
    auto settings = ParseSettings(internal::kSettingsYaml, settings_path);
    auto symptoms = ParseSymptoms(internal::kSymptomsYaml, symptoms_path);
    if (!settings.ok()) {
      built = new Result<Knowledge>(settings.status());
    } else if (!symptoms.ok()) {
      built = new Result<Knowledge>(symptoms.status());
    } else {
      built = new Result<Knowledge>(MakeKnowledge(
          std::move(settings).value(), std::move(symptoms).value(), settings_path, symptoms_path));
    }
  });
  if (!built->ok()) return built->status();
  return &built->value();
}

Json RulesJson(const Knowledge& knowledge) {
  Json doc = Document("parity-doctor-rules", 1);
  doc["settings_file"] = knowledge.settings_path;
  doc["symptoms_file"] = knowledge.symptoms_path;
  Json rules = Json::array();
  for (const Setting& s : knowledge.settings) {
    Json r = {{"name", s.name},
              {"kind", s.kind},
              {"stack", s.stack},
              {"status", s.status},
              {"summary", s.summary}};
    if (!s.claim.empty()) r["claim"] = s.claim;
    if (!s.values.empty()) {
      Json values = Json::array();
      for (const ValidValue& v : s.values) {
        Json j = {{"value", v.value}, {"meaning", v.meaning}};
        if (!v.aliases.empty()) j["aliases"] = v.aliases;
        values.push_back(std::move(j));
      }
      r["values"] = std::move(values);
    }
    if (!s.pattern.empty()) r["pattern"] = s.pattern;
    if (!s.default_text.empty()) r["default"] = s.default_text;
    if (!s.effect.empty()) r["effect"] = s.effect;
    r["advice"] = s.advice;
    if (!s.instead.empty()) r["instead"] = s.instead;
    if (!s.versions.empty()) r["versions"] = s.versions.Label();
    r["sources"] = SourcesJson(s.sources);
    if (!s.rules.empty()) {
      Json extra = Json::array();
      for (const Rule& rule : s.rules) {
        Json j = {{"id", rule.id},
                  {"severity", std::string(SeverityName(rule.severity))},
                  {"message", rule.message}};
        if (!rule.versions.empty()) j["versions"] = rule.versions.Label();
        extra.push_back(std::move(j));
      }
      r["rules"] = std::move(extra);
    }
    rules.push_back(std::move(r));
  }
  doc["rules"] = std::move(rules);
  Json symptoms = Json::array();
  for (const Symptom& s : knowledge.symptoms) {
    Json checks = Json::array();
    for (const Check& c : s.checks) checks.push_back({{"run", c.run}, {"why", c.why}});
    symptoms.push_back({{"id", s.id},
                        {"title", s.title},
                        {"keywords", s.keywords},
                        {"explanation", s.explanation},
                        {"checks", std::move(checks)},
                        {"settings", s.settings},
                        {"sources", SourcesJson(s.sources)}});
  }
  doc["symptoms"] = std::move(symptoms);
  return doc;
}

std::vector<std::string> EnvironmentNames(const Knowledge& knowledge) {
  std::vector<std::string> out;
  for (const Setting& s : knowledge.settings) {
    if (s.kind == "env") out.push_back(s.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace parity::env
