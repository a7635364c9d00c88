// SPDX-License-Identifier: Apache-2.0
// The knowledge base of settings that change numerics, determinism or speed (and of those that
// circulate but are invented or belong to another vendor), and of symptoms with the checks that
// find their cause: data/knowledge/settings.yaml and symptoms.yaml, compiled into the binary,
// every entry with a primary source.
#ifndef PARITY_ENV_KNOWLEDGE_H_
#define PARITY_ENV_KNOWLEDGE_H_

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::env {

/// How a finding weighs: error (will break or silently change results), warning, info.
enum class Severity { kInfo, kWarning, kError };
std::string_view SeverityName(Severity severity);

/// Whether `regex` matches the whole of `value`. A value longer than 256 characters never
/// matches: the knowledge base's patterns (bounded when loaded) then run in bounded time.
bool MatchesPattern(const std::regex& regex, std::string_view value);

/// Where an entry's statement comes from: `ref`, an https:// URL or owner/name:path, and
/// `quote`, the exact words or code of that source the statement relies on (short), so that a
/// reviewer can check the entry without searching.
struct Source {
  std::string ref, quote;
};

/// The components whose versions a range can name: torch (PyTorch), and the CUDA and HIP
/// versions PyTorch was built with (torch.version.cuda, torch.version.hip), as a fingerprint
/// records them (host.python.torch).
inline constexpr std::string_view kComponents[] = {"torch", "cuda", "hip"};

/// The numeric parts of `version`: "2.1.0" -> {2, 1, 0}. Parts are split at '.'; a part's
/// leading digits count and the rest of the version from the first part that is not all digits
/// is ignored ("1.13.0a0+gitunknown" -> {1, 13, 0}, "6.2.41133-dd7f95766" -> {6, 2, 41133}).
/// nullopt when the version does not start with a digit. `strict`: every part must be all
/// digits (as a knowledge file writes them), else nullopt.
std::optional<std::vector<long>> ParseVersion(std::string_view version, bool strict = false);

/// <0, 0 or >0 as `a` is older than, the same as or newer than `b`, missing parts counting as 0
/// ("2.0" == "2.0.0").
int CompareVersions(const std::vector<long>& a, const std::vector<long>& b);

/// The versions of a component a statement holds for: since (inclusive) up to until
/// (exclusive); either may be "" (open). An empty `component` means every version.
struct VersionRange {
  std::string component, since, until;

  bool empty() const { return component.empty(); }
  /// True when `version` (as a fingerprint records it) is in the range; true for every version
  /// when the range is empty; false when `version` can't be read as a version.
  bool Contains(std::string_view version) const;
  /// "torch >= 2.0", "torch < 2.0", "torch >= 2.0, < 2.5"; "" when empty.
  std::string Label() const;
};

/// [{"ref","quote"}].
Json SourcesJson(const std::vector<Source>& sources);

/// One clause of a rule's `when`: all of a rule's clauses must hold.
struct Clause {
  enum class Kind { kEquals, kNotEquals, kSet, kUnset, kMatches, kPlatform };
  Kind kind = Kind::kSet;
  std::string setting;              ///< the entry the clause reads; the vendor for kPlatform
  std::vector<std::string> values;  ///< kEquals, kNotEquals
  std::string pattern;              ///< kMatches, as written
  std::shared_ptr<const std::regex> regex;
};

/// An extra finding of an entry beyond the generic ones (Diagnose in doctor/doctor.h).
struct Rule {
  std::string id;
  Severity severity = Severity::kWarning;
  std::vector<Clause> when;
  std::string message;
  VersionRange versions;  ///< the versions the rule holds for; empty: all
};

struct ValidValue {
  std::string value;
  std::vector<std::string> aliases;
  std::string meaning;
};

/// One setting: an environment variable (kind "env") or a framework API (kind "api").
struct Setting {
  std::string name, kind, stack, status, summary, claim, default_text, advice;
  std::vector<ValidValue> values;  ///< empty: any value (or `pattern`)
  std::string pattern;             ///< "" when none
  std::shared_ptr<const std::regex> regex;
  std::map<std::string, std::string> effect;  ///< determinism, precision, performance
  std::vector<std::string> instead;
  std::vector<Source> sources;
  std::vector<Rule> rules;
  VersionRange versions;  ///< the versions that read the setting; empty: all

  bool real() const { return status == "real"; }
  /// True when `value` is one of `values` or an alias, or matches `pattern`; true when the
  /// entry names neither.
  bool Valid(std::string_view value) const;
  /// The meaning `values` gives `value`; "" when none.
  std::string MeaningOf(std::string_view value) const;
};

struct Check {
  std::string run;  ///< a parity command line
  std::string why;
};

struct Symptom {
  std::string id, title, explanation;
  std::vector<std::string> keywords;
  std::vector<Check> checks;
  std::vector<std::string> settings;  ///< entries to compare between the platforms
  std::vector<Source> sources;
};

struct Knowledge {
  std::vector<Setting> settings;
  std::vector<Symptom> symptoms;
  std::string settings_path, symptoms_path;  ///< where they were read ("builtin:..." if built in)

  /// The entry named `name` (exactly), or nullptr.
  const Setting* Find(std::string_view name) const;
};

inline constexpr std::string_view kStatuses[] = {"real", "wrong-value-format", "other-vendor",
                                                 "does-not-exist"};
inline constexpr std::string_view kStacks[] = {
    "CUDA",    "cuBLAS",    "cuDNN",   "ROCm",      "HIP",    "HSA",     "MIOpen",
    "rocBLAS", "hipBLASLt", "PyTorch", "NCCL/RCCL", "OpenMP", "OpenBLAS"};

/// The settings file (format parity-knowledge-settings v1). Every key is checked: an unknown
/// key, a missing one, a status or stack outside the lists, a source whose `ref` is neither an
/// https:// URL nor owner/name:path or that has no `quote`, a version range with an unknown
/// component, a version that is not numeric or `since` not before `until`, a pattern that does
/// not compile, a duplicate name or rule id is kInvalidInput "path: settings[i] (NAME): line N:
/// problem".
Result<std::vector<Setting>> ParseSettings(std::string_view text, const std::string& path);

/// The symptoms file (format parity-knowledge-symptoms v1), checked the same way (sources with
/// `ref` and `quote` too); every check must start with "parity ".
Result<std::vector<Symptom>> ParseSymptoms(std::string_view text, const std::string& path);

/// The two together, once every name a rule, an `instead` or a symptom refers to is checked to
/// be an entry.
Result<Knowledge> MakeKnowledge(std::vector<Setting> settings, std::vector<Symptom> symptoms,
                                std::string settings_path, std::string symptoms_path);

/// DIR/settings.yaml and DIR/symptoms.yaml.
Result<Knowledge> LoadKnowledge(const std::string& dir);

/// The files of data/knowledge compiled in, parsed on first use. An error only if they are
/// broken, which the tests rule out.
Result<const Knowledge*> BuiltinKnowledge();

/// {"format":"parity-doctor-rules","version":1,"settings_file","symptoms_file","rules":[{"name",
/// "kind","stack","status","summary",...,"versions","sources":[{"ref","quote"}],"rules":[{"id",
/// "severity","message","versions"}]}],"symptoms":[...]}; "versions" (a label, "torch >= 2.0")
/// only where a range is given.
Json RulesJson(const Knowledge& knowledge);

/// The names of the "env" entries, sorted: what a fingerprint records from the environment.
std::vector<std::string> EnvironmentNames(const Knowledge& knowledge);

namespace internal {
/// The built-in files' text (generated from data/knowledge by the build).
extern const std::string_view kSettingsYaml;
extern const std::string_view kSymptomsYaml;
}  // namespace internal

}  // namespace parity::env

#endif  // PARITY_ENV_KNOWLEDGE_H_
