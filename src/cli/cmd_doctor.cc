// SPDX-License-Identifier: Apache-2.0
// parity doctor: this machine's settings (or a recorded fingerprint's) checked against the
// sourced knowledge base; --rules lists it; --symptom prints a symptom's checklist.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "doctor/doctor.h"
#include "env/fingerprint.h"
#include "env/knowledge.h"

namespace parity::cli {
namespace {

std::string RulesText(const env::Knowledge& kb) {
  std::string out;
  for (const env::Setting& s : kb.settings) {
    out += fmt::format("{:<52} {:<10} {}\n", s.name, s.stack, s.status);
    out += fmt::format("    {}\n", s.summary);
    if (!s.claim.empty()) out += fmt::format("    claim: {}\n", s.claim);
    out += fmt::format("    advice: {}\n", s.advice);
    if (!s.versions.empty()) out += fmt::format("    read by: {}\n", s.versions.Label());
    for (const env::Rule& r : s.rules) {
      if (!r.versions.empty()) out += fmt::format("    [{}] {}\n", r.versions.Label(), r.message);
    }
    for (const env::Source& src : s.sources) {
      out += fmt::format("    source: {}\n      \"{}\"\n", src.ref, src.quote);
    }
  }
  out += fmt::format("{} settings ({}), {} symptoms ({}); parity doctor --symptom TEXT\n",
                     kb.settings.size(), kb.settings_path, kb.symptoms.size(), kb.symptoms_path);
  return out;
}

}  // namespace

int RunDoctor(int argc, char** argv) {
  CommonOptions common;
  std::string env_file, bundle, knowledge_dir, symptom;
  env::FingerprintOptions options;
  bool rules = false;
  auto app =
      MakeApp("doctor",
              "Checks the settings that change numerics, determinism and speed against parity's "
              "knowledge base (data/knowledge, every entry with a primary source): this machine's "
              "environment (and PyTorch's settings with --python PY), or a recorded fingerprint "
              "(--env FILE: parity env --json, a bench result or a dump) or bundle (--bundle DIR). "
              "A set variable that doesn't exist, belongs to another vendor or has a wrong value "
              "format is an error; so is a value outside a setting's valid ones. Exit 1 when any "
              "finding is an error. --rules lists the knowledge base; --symptom TEXT prints the "
              "checklist of the symptoms TEXT describes (\"auc lower\").",
              &common);
  auto* env_opt = app->add_option("--env", env_file, "a recorded fingerprint to check");
  auto* bundle_opt = app->add_option("--bundle", bundle, "a bundle to check");
  env_opt->excludes(bundle_opt);
  app->add_option("--python", options.python,
                  "Python interpreter to ask for torch's settings (this machine only)")
      ->excludes(env_opt)
      ->excludes(bundle_opt);
  app->add_flag("--rules", rules, "list the knowledge base");
  app->add_option("--symptom", symptom, "describe what you see: \"loss oscillates late\"");
  app->add_option("--knowledge", knowledge_dir,
                  "read settings.yaml and symptoms.yaml from DIR instead of the built-in ones");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  env::Knowledge loaded;
  const env::Knowledge* kb = nullptr;
  if (!knowledge_dir.empty()) {
    auto k = env::LoadKnowledge(knowledge_dir);
    if (!k.ok()) return Fail(k.status());
    loaded = std::move(k).value();
    kb = &loaded;
  } else {
    auto k = env::BuiltinKnowledge();
    if (!k.ok()) return Fail(k.status());
    kb = *k;
  }
  if (rules) {
    if (common.human()) std::fputs(RulesText(*kb).c_str(), stdout);
    if (Status s = WriteJsonOutput(common, env::RulesJson(*kb)); !s.ok()) return Fail(s);
    return kExitOk;
  }

  doctor::Observed observed;
  if (!env_file.empty() || !bundle.empty()) {
    const std::string& path = env_file.empty() ? bundle : env_file;
    if (!bundle.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_directory(bundle, ec)) {
        return Fail(Status::Invalid(bundle, "not a directory (--bundle takes a bundle)"));
      }
    }
    auto doc = env::ReadFingerprint(path);
    if (!doc.ok()) return Fail(doc.status());
    observed = doctor::ObserveFingerprint(*doc, path);
  } else {
    const Json doc = env::EnvDocument(options, Json());
    observed = doctor::ObserveFingerprint(doc, "this machine");
  }

  if (!symptom.empty()) {
    const std::vector<const env::Symptom*> matches = doctor::MatchSymptoms(*kb, symptom);
    if (matches.empty()) {
      std::string ids;
      for (const env::Symptom& s : kb->symptoms) ids += fmt::format("\n  {}: {}", s.id, s.title);
      return Fail(Status::Invalid(
          "", fmt::format("--symptom '{}' matches no symptom of {}; the symptoms:{}", symptom,
                          kb->symptoms_path, ids)));
    }
    Json doc = Document("parity-doctor-symptoms", 1);
    doc["query"] = symptom;
    doc["symptoms"] = Json::array();
    std::string text;
    for (const env::Symptom* s : matches) {
      doc["symptoms"].push_back(doctor::SymptomJson(*s, *kb, observed));
      text += doctor::SymptomText(*s, *kb, observed) + "\n";
    }
    if (common.human()) std::fputs(text.c_str(), stdout);
    if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
    return kExitOk;
  }

  const std::vector<doctor::Finding> findings = doctor::Diagnose(*kb, observed);
  if (common.human()) std::fputs(doctor::DoctorText(findings, observed).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doctor::DoctorJson(findings, observed, *kb)); !s.ok()) {
    return Fail(s);
  }
  for (const doctor::Finding& f : findings) {
    if (f.severity == env::Severity::kError) return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace parity::cli
