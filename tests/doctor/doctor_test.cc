// SPDX-License-Identifier: Apache-2.0
// Doctor's rules, each with a platform that triggers it and one that doesn't: the generic
// ones and every clause kind on tests/data/doctor/kb, then every rule of the built-in knowledge
// base from an environment built out of its own clauses.
#include "doctor/doctor.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "env/knowledge.h"
#include "testdata.h"

namespace parity::doctor {
namespace {

using env::Knowledge;
using env::Severity;

const Knowledge& TestKb() {
  static const Knowledge* kb = [] {
    auto k = env::LoadKnowledge(parity::testing::SourcePath("tests/data/doctor/kb"));
    if (!k.ok()) {
      ADD_FAILURE() << k.status().message();
      return new Knowledge();
    }
    return new Knowledge(std::move(k).value());
  }();
  return *kb;
}

Observed With(std::map<std::string, std::string> values, std::set<std::string> platforms = {}) {
  return {"test", std::move(values), std::move(platforms), {}};
}

/// The findings of rule `rule`.
std::vector<Finding> Of(const std::vector<Finding>& findings, const std::string& rule) {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (f.rule == rule) out.push_back(f);
  }
  return out;
}

bool Fires(const Knowledge& kb, const Observed& o, const std::string& rule) {
  return !Of(Diagnose(kb, o), rule).empty();
}

TEST(Doctor, DoesNotExistIsAnErrorWhenSet) {
  const auto f =
      Of(Diagnose(TestKb(), With({{"HIP_ENABLE_DETERMINISTIC", "1"}})), "kb.does-not-exist");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_EQ(f[0].setting, "HIP_ENABLE_DETERMINISTIC");
  EXPECT_EQ(f[0].value, "1");
  EXPECT_NE(f[0].message.find("torch.use_deterministic_algorithms"), std::string::npos);
  EXPECT_EQ(f[0].sources.size(), 1u);
  EXPECT_FALSE(Fires(TestKb(), With({}), "kb.does-not-exist"));
}

TEST(Doctor, OtherVendorIsAnErrorWhenSet) {
  EXPECT_TRUE(Fires(TestKb(), With({{"HCCL_OVER_OFI", "1"}}), "kb.other-vendor"));
  EXPECT_FALSE(Fires(TestKb(), With({{"NCCL_ALGO", "Ring"}}), "kb.other-vendor"));
}

TEST(Doctor, WrongValueFormatIsAnErrorWhateverTheValue) {
  EXPECT_TRUE(
      Fires(TestKb(), With({{"HSA_OVERRIDE_GFX_VERSION", "gfx90a"}}), "kb.wrong-value-format"));
  EXPECT_TRUE(
      Fires(TestKb(), With({{"HSA_OVERRIDE_GFX_VERSION", "9.0.10"}}), "kb.wrong-value-format"));
  EXPECT_FALSE(Fires(TestKb(), With({}), "kb.wrong-value-format"));
}

TEST(Doctor, InvalidValueOfARealSetting) {
  // values with aliases
  EXPECT_TRUE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "4"}}), "kb.invalid-value"));
  EXPECT_FALSE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "3"}}), "kb.invalid-value"));
  EXPECT_FALSE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "HYBRID"}}), "kb.invalid-value"));
  // pattern: the whole value must match
  EXPECT_TRUE(Fires(TestKb(), With({{"CUBLAS_WORKSPACE_CONFIG", ":4096:8x"}}), "kb.invalid-value"));
  EXPECT_TRUE(Fires(TestKb(), With({{"CUBLAS_WORKSPACE_CONFIG", ""}}), "kb.invalid-value"));
  EXPECT_FALSE(Fires(TestKb(), With({{"CUBLAS_WORKSPACE_CONFIG", ":16:8"}}), "kb.invalid-value"));
  const auto f = Of(Diagnose(TestKb(), With({{"MIOPEN_FIND_MODE", "4"}})), "kb.invalid-value");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_NE(f[0].message.find("5 (DYNAMIC_HYBRID)"), std::string::npos) << f[0].message;
}

TEST(Doctor, ASetRealSettingIsInfoWithItsMeaning) {
  const auto f = Of(Diagnose(TestKb(), With({{"MIOPEN_FIND_MODE", "NORMAL"}})), "kb.set");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].message.find("full benchmark"), std::string::npos);
  EXPECT_FALSE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "4"}}), "kb.set"));
}

TEST(Doctor, EqualsClause) {
  EXPECT_TRUE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "HYBRID"}}), "find-mode-hybrid"));
  EXPECT_FALSE(Fires(TestKb(), With({{"MIOPEN_FIND_MODE", "1"}}), "find-mode-hybrid"));
  EXPECT_FALSE(Fires(TestKb(), With({}), "find-mode-hybrid"));
}

TEST(Doctor, NotEqualsClauseNeedsTheSettingSet) {
  const char* rule = "tunableop-tuning";
  EXPECT_TRUE(Fires(TestKb(),
                    With({{"PYTORCH_TUNABLEOP_ENABLED", "1"}, {"PYTORCH_TUNABLEOP_TUNING", "1"}}),
                    rule));
  EXPECT_FALSE(Fires(TestKb(),
                     With({{"PYTORCH_TUNABLEOP_ENABLED", "1"}, {"PYTORCH_TUNABLEOP_TUNING", "0"}}),
                     rule));
  EXPECT_FALSE(Fires(TestKb(), With({{"PYTORCH_TUNABLEOP_ENABLED", "1"}}), rule));
  EXPECT_FALSE(Fires(TestKb(),
                     With({{"PYTORCH_TUNABLEOP_ENABLED", "0"}, {"PYTORCH_TUNABLEOP_TUNING", "1"}}),
                     rule));
}

TEST(Doctor, UnsetAndPlatformClauses) {
  const char* rule = "workspace-unset-deterministic";
  const std::map<std::string, std::string> det = {{"torch.use_deterministic_algorithms", "true"}};
  EXPECT_TRUE(Fires(TestKb(), With(det, {"nvidia"}), rule));
  EXPECT_FALSE(Fires(TestKb(), With(det, {"amd"}), rule));
  auto with_config = det;
  with_config["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8";
  EXPECT_FALSE(Fires(TestKb(), With(with_config, {"nvidia"}), rule));
  EXPECT_FALSE(
      Fires(TestKb(), With({{"torch.use_deterministic_algorithms", "false"}}, {"nvidia"}), rule));
}

TEST(Doctor, MatchesClause) {
  EXPECT_TRUE(
      Fires(TestKb(), With({{"HSA_OVERRIDE_GFX_VERSION", "gfx90a"}}), "override-looks-like-name"));
  EXPECT_FALSE(
      Fires(TestKb(), With({{"HSA_OVERRIDE_GFX_VERSION", "9.0.10"}}), "override-looks-like-name"));
}

TEST(Doctor, ErrorsComeFirstAndTheJsonHasTheContractsKeys) {
  const Observed o = With({{"MIOPEN_FIND_MODE", "3"}, {"HCCL_OVER_OFI", "1"}});
  const auto findings = Diagnose(TestKb(), o);
  ASSERT_GE(findings.size(), 3u);
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_TRUE(std::is_sorted(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  }));
  const Json doc = DoctorJson(findings, o, TestKb());
  EXPECT_EQ(doc["format"], "parity-doctor");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["summary"]["error"], 1);
  EXPECT_EQ(doc["summary"]["warning"], 1);
  for (const Json& f : doc["findings"]) {
    for (const char* key : {"rule", "setting", "value", "severity", "message", "sources"}) {
      EXPECT_TRUE(f.contains(key)) << key;
    }
    EXPECT_FALSE(f["sources"].empty());
  }
}

TEST(Doctor, ObservesAFingerprint) {
  const Json doc = Json::parse(R"({"format":"parity-env","version":1,"host":{
    "environment":{"MIOPEN_FIND_MODE":"3"},
    "gpus":[{"vendor":"AMD"}],
    "python":{"torch":{"version":"2.5","cuda":"12.4"},
              "settings":{"torch.backends.cudnn.allow_tf32":"true"}}}})");
  const Observed o = ObserveFingerprint(doc, "f.json");
  EXPECT_EQ(o.values.at("MIOPEN_FIND_MODE"), "3");
  EXPECT_EQ(o.values.at("torch.backends.cudnn.allow_tf32"), "true");
  EXPECT_EQ(o.platforms, (std::set<std::string>{"amd", "nvidia"}));
  EXPECT_EQ(o.versions, (std::map<std::string, std::string>{{"torch", "2.5"}, {"cuda", "12.4"}}));
}

/// An entry read only by torch >= 1.12, with one rule per torch range.
const Knowledge& VersionedKb() {
  static const Knowledge* kb = [] {
    auto settings = env::ParseSettings(R"(format: parity-knowledge-settings
version: 1
settings:
  - name: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE
    kind: env
    stack: PyTorch
    status: real
    summary: s
    effect: {precision: p}
    advice: a
    versions: {component: torch, since: "1.12"}
    sources: [{ref: "pytorch/pytorch:aten/src/ATen/Context.h", quote: q}]
    rules:
      - {id: forces, severity: warning, versions: {component: torch, until: "2.0"},
         when: [{setting: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, equals: ["1"]}], message: forced}
      - {id: initial, severity: warning, versions: {component: torch, since: "2.0"},
         when: [{setting: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, equals: ["1"]}], message: initial}
)",
                                       "v.yaml");
    if (!settings.ok()) ADD_FAILURE() << settings.status().message();
    auto k = env::MakeKnowledge(
        settings.ok() ? std::move(settings).value() : std::vector<env::Setting>{}, {}, "v.yaml",
        "s.yaml");
    return new Knowledge(k.ok() ? std::move(k).value() : Knowledge{});
  }();
  return *kb;
}

TEST(Doctor, VersionRangesPickTheStatementForTheRecordedTorch) {
  Observed o = With({{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}});
  // Unknown version: every range, each labelled.
  auto f = Of(Diagnose(VersionedKb(), o), "forces");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].message, "[torch < 2.0] forced");
  EXPECT_EQ(f[0].versions, "torch < 2.0");
  EXPECT_TRUE(Fires(VersionedKb(), o, "initial"));
  EXPECT_NE(Of(Diagnose(VersionedKb(), o), "kb.set")[0].message.find("[torch >= 1.12]"),
            std::string::npos);
  // Debian's torch: 1.13.0a0 is 1.13.0.
  o.versions["torch"] = "1.13.0a0+gitunknown";
  EXPECT_TRUE(Fires(VersionedKb(), o, "forces"));
  EXPECT_FALSE(Fires(VersionedKb(), o, "initial"));
  o.versions["torch"] = "2.1.0+cu121";
  EXPECT_FALSE(Fires(VersionedKb(), o, "forces"));
  EXPECT_TRUE(Fires(VersionedKb(), o, "initial"));
  // Outside the entry's range: only that it is not read.
  o.versions["torch"] = "1.11.0";
  const auto all = Diagnose(VersionedKb(), o);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].rule, "kb.not-read");
  EXPECT_NE(all[0].message.find("torch 1.11.0 does not read it"), std::string::npos);
  const Json doc = DoctorJson(all, o, VersionedKb());
  EXPECT_EQ(doc["versions"]["torch"], "1.11.0");
  EXPECT_EQ(doc["findings"][0]["versions"], "torch >= 1.12");
  EXPECT_EQ(doc["findings"][0]["sources"][0]["quote"], "q");
}

TEST(Symptoms, MatchByKeywordAndStem) {
  auto m = MatchSymptoms(TestKb(), "AUC lower on MI250");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]->id, "auc-lower");
  m = MatchSymptoms(TestKb(), "the loss oscillated late");
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m[0]->id, "loss-oscillates");
  EXPECT_TRUE(MatchSymptoms(TestKb(), "xyzzy").empty());
  EXPECT_TRUE(MatchSymptoms(TestKb(), "").empty());
}

TEST(Symptoms, TheChecklistShowsTheValueHere) {
  const env::Symptom* s = MatchSymptoms(TestKb(), "auc")[0];
  const std::string text = SymptomText(*s, TestKb(), With({{"MIOPEN_FIND_MODE", "3"}}));
  EXPECT_NE(text.find("parity quality auc"), std::string::npos);
  EXPECT_NE(text.find("MIOPEN_FIND_MODE = 3"), std::string::npos);
  EXPECT_NE(text.find("CUBLAS_WORKSPACE_CONFIG = (unset)"), std::string::npos);
}

// --- Every rule of the built-in knowledge base --------------------------------------------

/// A value that satisfies clause `c` of entry `s` ("" sentinel: leave unset).
std::optional<std::string> Satisfying(const env::Clause& c, const Knowledge& kb) {
  using K = env::Clause::Kind;
  switch (c.kind) {
    case K::kEquals:
      return c.values.front();
    case K::kNotEquals:
      return "parity-test-other-value";
    case K::kSet: {
      const env::Setting* s = kb.Find(c.setting);
      if (s != nullptr && !s->values.empty()) return s->values.front().value;
      return "1";
    }
    case K::kMatches: {
      std::vector<std::string> candidates;
      if (const env::Setting* s = kb.Find(c.setting)) {
        for (const auto& v : s->values) candidates.push_back(v.value);
      }
      for (const char* v : {"1", "0", "true", "false", "gfx90a", "9.0.10", ":4096:8", "Ring"}) {
        candidates.emplace_back(v);
      }
      for (const std::string& v : candidates) {
        if (std::regex_match(v, *c.regex)) return v;
      }
      ADD_FAILURE() << c.setting << ": no test value matches " << c.pattern;
      return "1";
    }
    default:
      return std::nullopt;
  }
}

Observed Triggering(const env::Rule& rule, const Knowledge& kb, std::size_t skip) {
  Observed o = With({});
  for (std::size_t i = 0; i < rule.when.size(); ++i) {
    const env::Clause& c = rule.when[i];
    if (i == skip) continue;
    if (c.kind == env::Clause::Kind::kPlatform) {
      o.platforms.insert(c.setting);
    } else if (auto v = Satisfying(c, kb)) {
      o.values[c.setting] = *v;
    }
  }
  return o;
}

/// The same platform with clause `i` made false.
Observed Falsified(const env::Rule& rule, const Knowledge& kb, std::size_t i) {
  Observed o = Triggering(rule, kb, i);
  const env::Clause& c = rule.when[i];
  using K = env::Clause::Kind;
  switch (c.kind) {
    case K::kUnset:
      o.values.insert_or_assign(c.setting, std::string(1, '1'));
      break;
    case K::kNotEquals:
      o.values[c.setting] = c.values.front();
      break;
    case K::kPlatform:
      break;  // Triggering() left the vendor out
    default:
      o.values.erase(c.setting);  // equals, set, matches need the setting set
      break;
  }
  return o;
}

TEST(BuiltinRules, EachFiresOnItsClausesAndNotWithoutOne) {
  auto kb = env::BuiltinKnowledge();
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  int rules = 0;
  for (const env::Setting& s : (*kb)->settings) {
    for (const env::Rule& rule : s.rules) {
      ++rules;
      EXPECT_TRUE(Fires(**kb, Triggering(rule, **kb, rule.when.size()), rule.id)) << rule.id;
      for (std::size_t i = 0; i < rule.when.size(); ++i) {
        EXPECT_FALSE(Fires(**kb, Falsified(rule, **kb, i), rule.id))
            << rule.id << " with clause " << i << " false";
      }
    }
  }
  EXPECT_GE(rules, 1);
}

TEST(BuiltinRules, HipblasltAllowTf32IsReadFrom27To29Only) {
  auto kb = env::BuiltinKnowledge();
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  Observed o = With({{"HIPBLASLT_ALLOW_TF32", "1"}}, {"amd"});
  o.versions["torch"] = "2.6.0+rocm6.2";
  EXPECT_TRUE(Fires(**kb, o, "hipblaslt-tf32-before-2.7"));
  EXPECT_FALSE(Fires(**kb, o, "hipblaslt-tf32"));
  for (const char* v : {"2.7.0+rocm6.3", "2.9.1+rocm6.4"}) {
    o.versions["torch"] = v;
    EXPECT_TRUE(Fires(**kb, o, "hipblaslt-tf32")) << v;
    EXPECT_FALSE(Fires(**kb, o, "hipblaslt-tf32-not-read")) << v;
  }
  o.versions["torch"] = "2.10.0+rocm7.0";
  EXPECT_TRUE(Fires(**kb, o, "hipblaslt-tf32-not-read"));
  EXPECT_FALSE(Fires(**kb, o, "hipblaslt-tf32"));
  // allow_tf32 without the variable: without effect on 2.7 to 2.9 only.
  Observed unset = With({{"torch.backends.cuda.matmul.allow_tf32", "true"}}, {"amd"});
  unset.versions["torch"] = "2.8.0+rocm6.4";
  EXPECT_TRUE(Fires(**kb, unset, "hipblaslt-tf32-missing"));
  unset.versions["torch"] = "2.10.0+rocm7.0";
  EXPECT_FALSE(Fires(**kb, unset, "hipblaslt-tf32-missing"));
}

TEST(BuiltinRules, Fp32PrecisionRulesFollowTheTorchThatHasTheSetting) {
  auto kb = env::BuiltinKnowledge();
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  // torch 2.14's defaults on a CUDA build: cuDNN's conv and rnn are tf32, matmuls none.
  Observed o = With({{"torch.backends.fp32_precision", "none"},
                     {"torch.backends.cuda.matmul.fp32_precision", "none"},
                     {"torch.backends.cudnn.conv.fp32_precision", "tf32"},
                     {"torch.backends.cudnn.rnn.fp32_precision", "tf32"},
                     {"torch.backends.mkldnn.matmul.fp32_precision", "none"}},
                    {"nvidia"});
  o.versions["torch"] = "2.14.1+cu130";
  EXPECT_TRUE(Fires(**kb, o, "fp32-precision-conv-tf32-on-nvidia"));
  EXPECT_TRUE(Fires(**kb, o, "fp32-precision-rnn-tf32-on-nvidia"));
  EXPECT_FALSE(Fires(**kb, o, "fp32-precision-generic-tf32"));
  EXPECT_FALSE(Fires(**kb, o, "fp32-precision-matmul-tf32-on-nvidia"));
  EXPECT_FALSE(Fires(**kb, o, "fp32-precision-mkldnn-matmul-reduced"));
  o.values["torch.backends.fp32_precision"] = "tf32";
  o.values["torch.backends.mkldnn.matmul.fp32_precision"] = "bf16";
  EXPECT_TRUE(Fires(**kb, o, "fp32-precision-generic-tf32"));
  EXPECT_TRUE(Fires(**kb, o, "fp32-precision-mkldnn-matmul-reduced"));
  // The same names recorded from a torch before 2.9 are not torch's: only "not read".
  o.versions["torch"] = "2.8.0+cu128";
  EXPECT_FALSE(Fires(**kb, o, "fp32-precision-conv-tf32-on-nvidia"));
  EXPECT_TRUE(Fires(**kb, o, "kb.not-read"));
}

TEST(BuiltinRules, EachStatusOtherThanRealIsAnErrorWhenSet) {
  auto kb = env::BuiltinKnowledge();
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  for (const env::Setting& s : (*kb)->settings) {
    if (s.real()) continue;
    const auto findings = Of(Diagnose(**kb, With({{s.name, "1"}})), fmt::format("kb.{}", s.status));
    ASSERT_EQ(findings.size(), 1u) << s.name;
    EXPECT_EQ(findings[0].severity, Severity::kError) << s.name;
    EXPECT_TRUE(Of(Diagnose(**kb, With({})), fmt::format("kb.{}", s.status)).empty()) << s.name;
  }
}

}  // namespace
}  // namespace parity::doctor
