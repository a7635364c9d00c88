// SPDX-License-Identifier: Apache-2.0
#include "doctor/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

namespace parity::doctor {
namespace {

using env::Clause;
using env::Knowledge;
using env::Rule;
using env::Setting;
using env::Severity;

std::string StatusPhrase(const std::string& status) {
  if (status == "does-not-exist") return "no such setting exists";
  if (status == "other-vendor") return "it belongs to another vendor's stack";
  return "the value format in circulation is wrong";
}

std::string Shown(const std::string& name, const std::optional<std::string>& value) {
  return value ? fmt::format("{}={}", name, *value) : name;
}

std::string ValidList(const Setting& s) {
  if (!s.pattern.empty()) return fmt::format("a value matching {}", s.pattern);
  std::string out;
  for (const env::ValidValue& v : s.values) {
    std::string shown = v.value.empty() ? "\"\"" : v.value;
    if (!v.aliases.empty()) {
      std::string aliases;
      for (const std::string& a : v.aliases) aliases += (aliases.empty() ? "" : ", ") + a;
      shown += fmt::format(" ({})", aliases);
    }
    out += (out.empty() ? "" : "; ") + shown;
  }
  return out;
}

bool Holds(const Clause& c, const Observed& o) {
  if (c.kind == Clause::Kind::kPlatform) return o.platforms.count(c.setting) > 0;
  const auto it = o.values.find(c.setting);
  const bool set = it != o.values.end();
  switch (c.kind) {
    case Clause::Kind::kSet:
      return set;
    case Clause::Kind::kUnset:
      return !set;
    case Clause::Kind::kEquals:
      return set && std::find(c.values.begin(), c.values.end(), it->second) != c.values.end();
    case Clause::Kind::kNotEquals:
      return set && std::find(c.values.begin(), c.values.end(), it->second) == c.values.end();
    case Clause::Kind::kMatches:
      return set && c.regex && env::MatchesPattern(*c.regex, it->second);
    case Clause::Kind::kPlatform:
      break;
  }
  return false;
}

/// Lowercase words of letters and digits.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (std::size_t i = 0; i <= text.size() && out.size() < 256; ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (word.size() < 64) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  return out;
}

/// Same word, or one is the other's stem (at least 4 letters, differing only in an ending of
/// up to 3): "oscillates" ~ "oscillate", "slower" ~ "slow".
bool Akin(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  return shorter.size() >= 4 && longer.size() - shorter.size() <= 3 &&
         longer.compare(0, shorter.size(), shorter) == 0;
}

}  // namespace

Observed ObserveFingerprint(const Json& env_doc, std::string origin) {
  Observed o;
  o.origin = std::move(origin);
  if (!env_doc.is_object() || !env_doc.contains("host") || !env_doc["host"].is_object()) return o;
  const Json& host = env_doc["host"];
  if (host.contains("environment") && host["environment"].is_object()) {
    for (auto it = host["environment"].begin(); it != host["environment"].end(); ++it) {
      if (it->is_string()) o.values[it.key()] = it->get<std::string>();
    }
  }
  if (host.contains("gpus") && host["gpus"].is_array()) {
    for (const Json& gpu : host["gpus"]) {
      const std::string vendor = StringField(gpu, "vendor");
      if (vendor == "NVIDIA") o.platforms.insert("nvidia");
      if (vendor == "AMD") o.platforms.insert("amd");
    }
  }
  if (host.contains("python") && host["python"].is_object()) {
    const Json& py = host["python"];
    if (py.contains("settings") && py["settings"].is_object()) {
      for (auto it = py["settings"].begin(); it != py["settings"].end(); ++it) {
        if (it->is_string()) o.values[it.key()] = it->get<std::string>();
      }
    }
    if (py.contains("torch") && py["torch"].is_object()) {
      for (auto [key, component] :
           {std::pair{"version", "torch"}, std::pair{"cuda", "cuda"}, std::pair{"hip", "hip"}}) {
        if (std::string v = StringField(py["torch"], key); !v.empty()) o.versions[component] = v;
      }
      if (!StringField(py["torch"], "hip").empty()) {
        o.platforms.insert("amd");
      } else if (!StringField(py["torch"], "cuda").empty()) {
        o.platforms.insert("nvidia");
      }
    }
  }
  return o;
}

bool Applies(const env::VersionRange& range, const Observed& observed) {
  if (range.empty()) return true;
  const auto it = observed.versions.find(range.component);
  return it == observed.versions.end() || range.Contains(it->second);
}

std::vector<Finding> Diagnose(const Knowledge& knowledge, const Observed& observed) {
  std::vector<Finding> out;
  for (const Setting& s : knowledge.settings) {
    const auto it = observed.values.find(s.name);
    std::optional<std::string> value;
    if (it != observed.values.end()) value = it->second;
    const std::string range = s.versions.Label();
    // Statements with a range say so: "[torch >= 2.0] ...".
    auto labelled = [](const std::string& label, const std::string& message) {
      return label.empty() ? message : fmt::format("[{}] {}", label, message);
    };
    if (!Applies(s.versions, observed)) {
      if (value) {
        out.push_back({"kb.not-read", s.name, value, Severity::kInfo,
                       fmt::format("{} is set, but {} {} does not read it (it is read by {}).",
                                   Shown(s.name, value), s.versions.component,
                                   observed.versions.at(s.versions.component), range),
                       s.sources, range});
      }
      continue;
    }
    if (value && !s.real()) {
      std::string message = fmt::format("{} is set, but {}: {} {}", Shown(s.name, value),
                                        StatusPhrase(s.status), s.claim, s.advice);
      if (!s.instead.empty()) {
        std::string names;
        for (const std::string& n : s.instead) names += (names.empty() ? "" : ", ") + n;
        message += fmt::format(" Instead: {}.", names);
      }
      out.push_back({"kb." + s.status, s.name, value, Severity::kError, labelled(range, message),
                     s.sources, range});
    } else if (value && !s.Valid(*value)) {
      out.push_back({"kb.invalid-value", s.name, value, Severity::kError,
                     labelled(range, fmt::format("{} is not a valid value of {}; valid: {}. {}",
                                                 value->empty() ? "\"\"" : *value, s.name,
                                                 ValidList(s), s.advice)),
                     s.sources, range});
    } else if (value) {
      std::string meaning = s.MeaningOf(*value);
      std::string message =
          fmt::format("{}{} {}", Shown(s.name, value),
                      meaning.empty() ? ":" : fmt::format(" ({}):", meaning), s.summary);
      for (const char* aspect : {"precision", "determinism", "performance"}) {
        if (auto e = s.effect.find(aspect); e != s.effect.end()) {
          message += fmt::format(" {}: {}", aspect, e->second);
        }
      }
      out.push_back(
          {"kb.set", s.name, value, Severity::kInfo, labelled(range, message), s.sources, range});
    }
    for (const Rule& rule : s.rules) {
      if (!Applies(rule.versions, observed) ||
          !std::all_of(rule.when.begin(), rule.when.end(),
                       [&](const Clause& c) { return Holds(c, observed); })) {
        continue;
      }
      const std::string rule_range = rule.versions.empty() ? range : rule.versions.Label();
      out.push_back({rule.id, s.name, value, rule.severity, labelled(rule_range, rule.message),
                     s.sources, rule_range});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return out;
}

Json DoctorJson(const std::vector<Finding>& findings, const Observed& observed,
                const Knowledge& knowledge) {
  Json doc = Document("parity-doctor", 1);
  doc["origin"] = observed.origin;
  doc["knowledge"] = {{"settings_file", knowledge.settings_path},
                      {"symptoms_file", knowledge.symptoms_path},
                      {"settings", knowledge.settings.size()},
                      {"symptoms", knowledge.symptoms.size()}};
  doc["platforms"] = Json::array();
  for (const std::string& p : observed.platforms) doc["platforms"].push_back(p);
  doc["versions"] = Json::object();
  for (const auto& [component, version] : observed.versions) doc["versions"][component] = version;
  int counts[3] = {0, 0, 0};
  Json list = Json::array();
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.severity)];
    Json j = {{"rule", f.rule}, {"setting", f.setting}};
    j["value"] = f.value ? Json(*f.value) : Json();
    j["severity"] = std::string(env::SeverityName(f.severity));
    j["message"] = f.message;
    if (!f.versions.empty()) j["versions"] = f.versions;
    j["sources"] = env::SourcesJson(f.sources);
    list.push_back(std::move(j));
  }
  doc["summary"] = {{"error", counts[2]}, {"warning", counts[1]}, {"info", counts[0]}};
  doc["findings"] = std::move(list);
  return doc;
}

std::string DoctorText(const std::vector<Finding>& findings, const Observed& observed) {
  int counts[3] = {0, 0, 0};
  std::string out;
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.severity)];
    out += fmt::format("{:<8}{}  [{}]\n        {}\n", env::SeverityName(f.severity),
                       Shown(f.setting, f.value), f.rule, f.message);
    for (const env::Source& s : f.sources) {
      out += fmt::format("        source: {}\n          \"{}\"\n", s.ref, s.quote);
    }
  }
  std::string platforms;
  for (const std::string& p : observed.platforms) platforms += (platforms.empty() ? "" : ", ") + p;
  out += fmt::format("doctor: {} ({} GPU): {} error(s), {} warning(s), {} info\n", observed.origin,
                     platforms.empty() ? "no" : platforms, counts[2], counts[1], counts[0]);
  return out;
}

std::vector<const env::Symptom*> MatchSymptoms(const Knowledge& knowledge, std::string_view query) {
  static const std::set<std::string> kStop = {"the", "and", "for", "one", "than", "with", "from",
                                              "our", "its", "are", "was", "when", "on"};
  std::vector<std::string> words;
  for (std::string& w : Words(query)) {
    if (w.size() >= 3 && !kStop.count(w)) words.push_back(std::move(w));
  }
  std::vector<std::pair<int, const env::Symptom*>> scored;
  for (const env::Symptom& s : knowledge.symptoms) {
    const std::vector<std::string> title = Words(s.title);
    int score = 0;
    for (const std::string& w : words) {
      if (std::any_of(s.keywords.begin(), s.keywords.end(),
                      [&](const std::string& k) { return Akin(w, k); })) {
        score += 2;
      } else if (std::any_of(title.begin(), title.end(),
                             [&](const std::string& t) { return Akin(w, t); })) {
        score += 1;
      }
    }
    if (score > 0) scored.emplace_back(score, &s);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<const env::Symptom*> out;
  for (const auto& [score, s] : scored) {
    if (2 * score >= scored.front().first) out.push_back(s);
  }
  return out;
}

std::string SymptomText(const env::Symptom& symptom, const Knowledge& knowledge,
                        const Observed& observed) {
  std::string out =
      fmt::format("{}  [{}]\n  {}\n\n  Checks:\n", symptom.title, symptom.id, symptom.explanation);
  for (std::size_t i = 0; i < symptom.checks.size(); ++i) {
    out += fmt::format("  {}. {}\n     {}\n", i + 1, symptom.checks[i].run, symptom.checks[i].why);
  }
  if (!symptom.settings.empty()) {
    out +=
        fmt::format("\n  Settings to compare between the platforms (here: {}):\n", observed.origin);
    for (const std::string& name : symptom.settings) {
      const Setting* s = knowledge.Find(name);
      const auto it = observed.values.find(name);
      out += fmt::format("  - {} = {}\n      {}\n", name,
                         it == observed.values.end() ? "(unset)" : it->second,
                         s != nullptr ? s->summary : "");
    }
  }
  out += "\n  Sources:\n";
  for (const env::Source& s : symptom.sources) {
    out += fmt::format("  - {}\n      \"{}\"\n", s.ref, s.quote);
  }
  return out;
}

Json SymptomJson(const env::Symptom& symptom, const Knowledge& knowledge,
                 const Observed& observed) {
  Json checks = Json::array();
  for (const env::Check& c : symptom.checks) checks.push_back({{"run", c.run}, {"why", c.why}});
  Json settings = Json::array();
  for (const std::string& name : symptom.settings) {
    const auto it = observed.values.find(name);
    const Setting* s = knowledge.Find(name);
    settings.push_back({{"name", name},
                        {"value", it == observed.values.end() ? Json() : Json(it->second)},
                        {"summary", s != nullptr ? s->summary : ""}});
  }
  return {{"id", symptom.id},
          {"title", symptom.title},
          {"explanation", symptom.explanation},
          {"checks", std::move(checks)},
          {"settings", std::move(settings)},
          {"sources", env::SourcesJson(symptom.sources)}};
}

}  // namespace parity::doctor
