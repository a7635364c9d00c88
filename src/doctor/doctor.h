// SPDX-License-Identifier: Apache-2.0
// `parity doctor`: the settings of a platform (this process's environment and PyTorch, or a
// recorded fingerprint) checked against the knowledge base; and the checklist of a symptom.
#ifndef PARITY_DOCTOR_DOCTOR_H_
#define PARITY_DOCTOR_DOCTOR_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "env/knowledge.h"

namespace parity::doctor {

/// What a platform has set: knowledge-base names (environment variables and torch settings) to
/// values, the GPU vendors it has ("nvidia", "amd"), and the versions of the components a
/// knowledge base's ranges name (env::kComponents) that it records.
struct Observed {
  std::string origin;  ///< "this machine" or the file read
  std::map<std::string, std::string> values;
  std::set<std::string> platforms;
  std::map<std::string, std::string> versions;  ///< "torch" -> "2.1.0", "hip" -> "6.2.41133-..."
};

/// From a parity-env document (env::Fingerprint() under "host"): host.environment, the torch
/// settings of host.python.settings, the vendors of host.gpus and of the PyTorch build
/// (host.python.torch.cuda / .hip), and the versions of host.python.torch (version, cuda, hip).
Observed ObserveFingerprint(const Json& env_doc, std::string origin);

struct Finding {
  std::string rule;     ///< "kb.does-not-exist", "kb.invalid-value", "kb.set", or a rule's id
  std::string setting;  ///< the entry
  std::optional<std::string> value;  ///< its value; absent when unset
  env::Severity severity = env::Severity::kInfo;
  std::string message;
  std::vector<env::Source> sources;
  std::string versions;  ///< the range the statement holds for ("torch >= 2.0"); "" for all
};

/// Whether a statement for `range` applies to `observed`: true when the range is empty or the
/// component's version is not recorded (then every range is shown, labelled), else whether the
/// recorded version is in the range.
bool Applies(const env::VersionRange& range, const Observed& observed);

/// Every finding, errors first, then warnings, then infos, each in the knowledge base's order:
///   kb.<status> (error): a setting whose status is not "real" is set;
///   kb.not-read (info): a setting is set, but the recorded version of the component its
///     `versions` names is outside that range (nothing else is said of the entry then);
///   kb.invalid-value (error): a real setting holds a value outside its values or pattern;
///   kb.set (info): a real setting is set to a valid value: what it does;
///   each rule of the entries whose clauses all hold and whose `versions` apply (Applies), with
///   the rule's severity.
/// A finding from a statement with a version range starts with the range ("[torch >= 2.0] ")
/// and carries it in `versions`.
std::vector<Finding> Diagnose(const env::Knowledge& knowledge, const Observed& observed);

/// {"format":"parity-doctor","version":1,"origin","knowledge":{"settings_file",..},
/// "platforms":[..],"versions":{"torch":..},"summary":{"error","warning","info"},"findings":[{
/// "rule","setting","value","severity","message","versions" (when a range applies),"sources":[{
/// "ref","quote"}]}]}.
Json DoctorJson(const std::vector<Finding>& findings, const Observed& observed,
                const env::Knowledge& knowledge);

/// One paragraph per finding: "error   MIOPEN_FIND_MODE=3  message", then its sources with
/// their quotes.
std::string DoctorText(const std::vector<Finding>& findings, const Observed& observed);

/// The symptoms that `query` describes, best first: each word of the query (lowercased, split
/// at anything but letters and digits, words under 3 letters and stop words dropped) scores 2
/// when it is a keyword (or a keyword is its stem: "oscillates" for "oscillat"), 1 when it
/// appears in the title. Symptoms scoring under half the best are left out; none when nothing
/// scores.
std::vector<const env::Symptom*> MatchSymptoms(const env::Knowledge& knowledge,
                                               std::string_view query);

/// A symptom's checklist: explanation, the parity commands to run, the settings to compare
/// with their value here (from `observed`), the sources.
std::string SymptomText(const env::Symptom& symptom, const env::Knowledge& knowledge,
                        const Observed& observed);
Json SymptomJson(const env::Symptom& symptom, const env::Knowledge& knowledge,
                 const Observed& observed);

}  // namespace parity::doctor

#endif  // PARITY_DOCTOR_DOCTOR_H_
