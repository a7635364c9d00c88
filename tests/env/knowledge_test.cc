// SPDX-License-Identifier: Apache-2.0
// The knowledge base: the built-in files pass the schema and cover the settings listed below
// with their statuses (docs/ENV.md); malformed files are errors naming file and key.
#include "env/knowledge.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "cli/command.h"
#include "testdata.h"

namespace parity::env {
namespace {

const Knowledge& Builtin() {
  auto kb = BuiltinKnowledge();
  if (!kb.ok()) {
    ADD_FAILURE() << kb.status().message();
    static const Knowledge empty;
    return empty;
  }
  return **kb;
}

TEST(BuiltinKnowledge, CoversEverySettingOfTheFactCheck) {
  // Settings in circulation for CUDA and ROCm, real or not, each with its status by its sources.
  const std::pair<const char*, const char*> expected[] = {
      {"MIOPEN_FIND_MODE", "real"},
      {"ROCBLAS_GEMM_DEFAULT_ALG", "does-not-exist"},
      {"HIP_ENABLE_DETERMINISTIC", "does-not-exist"},
      {"MIOPEN_DEBUG_DISABLE_FIND_DB", "real"},
      {"HIP_DEBUG_NON_SAFE_MATH", "does-not-exist"},
      {"HSA_OVERRIDE_GFX_VERSION", "wrong-value-format"},
      {"HSA_ENABLE_SDMA", "real"},
      {"HSA_CACHED_MEMORY", "does-not-exist"},
      {"HSA_OVERSUBSCRIBE", "does-not-exist"},
      {"HCCL_OVER_OFI", "other-vendor"},
      {"torch.distributed.init_process_group(backend=\"hccl\")", "other-vendor"},
      {"torch.backends.rocmatmul.enabled", "does-not-exist"},
      {"torch.optim.Optimizer.step(every_n_steps)", "does-not-exist"},
      {"ROCBLAS_LAYER", "real"},
      {"ROCBLAS_DEFAULT_ATOMICS_MODE", "real"},
      {"ROCBLAS_USE_HIPBLASLT", "real"},
      {"ROCBLAS_DEVICE_MEMORY_SIZE", "real"},
      {"MIOPEN_USER_DB_PATH", "real"},
      {"MIOPEN_SYSTEM_DB_PATH", "real"},
      {"MIOPEN_FIND_ENFORCE", "real"},
      {"HSA_XNACK", "real"},
      {"PYTORCH_HIP_ALLOC_CONF", "real"},
      {"CUBLAS_WORKSPACE_CONFIG", "real"},
      {"NVIDIA_TF32_OVERRIDE", "real"},
      {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "real"},
      {"torch.backends.cuda.matmul.allow_tf32", "real"},
      {"torch.set_float32_matmul_precision", "real"},
      {"torch.backends.cudnn.allow_tf32", "real"},
      {"torch.backends.cudnn.deterministic", "real"},
      {"torch.backends.cudnn.benchmark", "real"},
      {"torch.use_deterministic_algorithms", "real"},
      {"torch.backends.cuda.preferred_blas_library", "real"},
      {"MIOPEN_DEBUG_CONVOLUTION_DETERMINISTIC", "real"},
      {"MIOPEN_DEBUG_CONV_FFT", "real"},
      {"MIOPEN_DEBUG_CONV_DIRECT", "real"},
      {"MIOPEN_DEBUG_CONV_GEMM", "real"},
      {"MIOPEN_DEBUG_CONV_WINOGRAD", "real"},
      {"MIOPEN_DEBUG_CONV_IMPLICIT_GEMM", "real"},
      {"MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL", "real"},
      {"TORCH_BLAS_PREFER_HIPBLASLT", "real"},
      {"HIPBLASLT_ALLOW_TF32", "real"},
      {"HIPBLASLT_LOG_LEVEL", "real"},
      {"HIPBLASLT_TUNING_FILE", "real"},
      {"PYTORCH_TUNABLEOP_ENABLED", "real"},
      {"PYTORCH_TUNABLEOP_TUNING", "real"},
      {"PYTORCH_TUNABLEOP_FILENAME", "real"},
      {"NCCL_ALGO", "real"},
      {"NCCL_PROTO", "real"},
      {"NCCL_DEBUG", "real"},
      {"NCCL_SOCKET_IFNAME", "real"},
      {"NCCL_IB_HCA", "real"},
  };
  for (const auto& [name, status] : expected) {
    const Setting* s = Builtin().Find(name);
    ASSERT_NE(s, nullptr) << name << " is missing from data/knowledge/settings.yaml";
    EXPECT_EQ(s->status, status) << name;
  }
}

TEST(BuiltinKnowledge, EveryEntryIsSourcedAndEveryStatusUsed) {
  const Knowledge& kb = Builtin();
  EXPECT_GE(kb.settings.size(), 60u);
  EXPECT_GE(kb.symptoms.size(), 8u);
  std::set<std::string> statuses, names;
  for (const Setting& s : kb.settings) {
    EXPECT_FALSE(s.sources.empty()) << s.name;
    for (const Source& src : s.sources)
      EXPECT_FALSE(src.quote.empty()) << s.name << ": " << src.ref;
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    statuses.insert(s.status);
    // The entries' corrections are what doctor prints: say what to do instead.
    if (!s.real()) {
      EXPECT_FALSE(s.claim.empty()) << s.name;
    }
    for (const ValidValue& v : s.values) EXPECT_FALSE(v.meaning.empty()) << s.name;
  }
  EXPECT_EQ(statuses.size(), std::size(kStatuses));
}

// parity tune sets only values it can check: every environment variable it may name (neither
// does-not-exist nor other-vendor) lists its allowed values or gives a pattern, and a value the
// entry's summary rules out fails it.
TEST(BuiltinKnowledge, EveryUsableEnvironmentVariableCanCheckItsValues) {
  int checked = 0;
  for (const Setting& s : Builtin().settings) {
    if (s.kind != "env" || s.status == "does-not-exist" || s.status == "other-vendor") continue;
    EXPECT_TRUE(!s.values.empty() || !s.pattern.empty()) << s.name;
    ++checked;
  }
  EXPECT_GT(checked, 30);
  const Setting* omp = Builtin().Find("OMP_NUM_THREADS");
  ASSERT_NE(omp, nullptr);
  EXPECT_TRUE(omp->Valid("4"));
  EXPECT_TRUE(omp->Valid("4,2"));  // a nested region's count after the outer one's
  EXPECT_FALSE(omp->Valid("lots"));
  EXPECT_FALSE(omp->Valid("0"));
  const Setting* gdr = Builtin().Find("NCCL_NET_GDR_LEVEL");
  ASSERT_NE(gdr, nullptr);
  EXPECT_TRUE(gdr->Valid("PHB"));
  EXPECT_FALSE(gdr->Valid("near"));
}

TEST(BuiltinKnowledge, SymptomsRunCommandsThatExist) {
  std::set<std::string_view> commands;
  for (const cli::Command& c : cli::Commands()) commands.insert(c.name);
  for (const Symptom& s : Builtin().symptoms) {
    EXPECT_FALSE(s.sources.empty()) << s.id;
    for (const Source& src : s.sources) EXPECT_FALSE(src.quote.empty()) << s.id << ": " << src.ref;
    for (const Check& c : s.checks) {
      const std::string rest = c.run.substr(7);
      const std::string name = rest.substr(0, rest.find(' '));
      EXPECT_TRUE(commands.count(name)) << s.id << ": " << c.run;
    }
    for (const std::string& name : s.settings) EXPECT_NE(Builtin().Find(name), nullptr) << name;
  }
}

TEST(BuiltinKnowledge, RulesJsonListsEveryEntry) {
  const Json doc = RulesJson(Builtin());
  EXPECT_EQ(doc["format"], "parity-doctor-rules");
  EXPECT_EQ(doc["version"], 1);
  ASSERT_EQ(doc["rules"].size(), Builtin().settings.size());
  for (const Json& r : doc["rules"]) {
    for (const char* key : {"name", "stack", "status", "sources", "advice"}) {
      EXPECT_TRUE(r.contains(key)) << key;
    }
  }
}

constexpr const char* kHead = "format: parity-knowledge-settings\nversion: 1\nsettings:\n";
constexpr const char* kEntry =
    "  - name: A_VAR\n    kind: env\n    stack: ROCm\n    status: real\n"
    "    summary: s\n    effect: {performance: p}\n    advice: a\n"
    "    sources: [{ref: \"https://example.org/x\", quote: \"q\"}]\n";

TEST(ParseSettings, TheTestEntryIsValid) {
  auto r = ParseSettings(std::string(kHead) + kEntry, "k.yaml");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 1u);
}

TEST(ParseSettings, MalformedFilesNameTheFileAndTheKey) {
  const std::string entry = kEntry;
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string e = entry;
    e.replace(e.find(from), from.size(), to);
    return std::string(kHead) + e;
  };
  const std::pair<std::string, std::string> bad[] = {
      {replace("status: real", "status: maybe"), "'status' is 'maybe'"},
      {replace("stack: ROCm", "stack: Gaudi"), "'stack' is 'Gaudi'"},
      {replace("kind: env", "kind: sysctl"), "'kind'"},
      {replace("sources: [{ref: \"https://example.org/x\", quote: \"q\"}]", "sources: []"),
       "sources"},
      {replace("ref: \"https://example.org/x\"", "ref: \"a blog\""), "a blog"},
      // Every source says what it relies on: a quote, one line, short.
      {replace(", quote: \"q\"", ""), "needs 'quote'"},
      {replace("sources: [{ref: \"https://example.org/x\", quote: \"q\"}]",
               "sources: [\"https://example.org/x\"]"),
       "a source must be {ref"},
      {replace("quote: \"q\"", "quote: \"" + std::string(301, 'q') + "\""), "at most 300"},
      {replace("quote: \"q\"", "quote: \"\""), "'quote' must be a string"},
      // Version ranges: a known component, numeric versions, since before until.
      {replace("advice: a", "advice: a\n    versions: {component: torch, since: \"2.x\"}"),
       "'since' is '2.x'"},
      {replace("advice: a", "advice: a\n    versions: {component: jax, since: \"2.0\"}"),
       "'component' is 'jax'"},
      {replace("advice: a",
               "advice: a\n    versions: {component: torch, since: \"2.5\", until: \"2.0\"}"),
       "must be before 'until'"},
      {replace("advice: a",
               "advice: a\n    versions: {component: torch, since: \"2.0\", until: \"2.0.0\"}"),
       "must be before 'until'"},
      {replace("advice: a", "advice: a\n    versions: {component: torch}"),
       "needs 'since', 'until'"},
      {replace("advice: a", "advice: a\n    versions: {since: \"2.0\"}"), "needs 'component'"},
      {replace(
           "advice: a",
           "advice: a\n    rules: [{id: r, severity: info, when: [{setting: A_VAR, set: true}], "
           "message: m, versions: {component: torch, until: \"1.x3\"}}]"),
       "'until' is '1.x3'"},
      {replace("    advice: a\n", ""), "'advice'"},
      {replace("    effect: {performance: p}\n", ""), "'effect'"},
      {replace("summary: s", "summry: s"), "did you mean 'summary'"},
      {replace("status: real", "status: does-not-exist"), "needs 'claim'"},
      {std::string(kHead) + kEntry + kEntry, "listed twice"},
      {replace("advice: a", "advice: a\n    pattern: '(['"), "not a valid regular expression"},
      {replace("advice: a", "advice: a\n    pattern: 'a{1000}'"), "repetition"},
      {replace(
           "advice: a",
           "advice: a\n    rules: [{id: r, severity: fatal, when: [{setting: A_VAR, set: true}],"
           " message: m}]"),
       "'severity'"},
      {replace("advice: a",
               "advice: a\n    rules: [{id: r, severity: info, when: [{setting: A_VAR}], "
               "message: m}]"),
       "exactly one of"},
      {replace("advice: a",
               "advice: a\n    rules: [{id: r, severity: info, when: [{setting: A_VAR, set: true,"
               " equals: [x]}], message: m}]"),
       "exactly one of"},
      {replace("advice: a", "advice: a\n    values: [{value: \"1\"}]"), "'meaning'"},
      {"format: parity-knowledge-symptoms\nversion: 1\nsettings: []\n", "'format'"},
      {"format: parity-knowledge-settings\nversion: 2\nsettings: []\n", "'version'"},
      {"format: parity-knowledge-settings\nversion: 1\nsettings: [\n", "not valid YAML"},
      {"- just a list\n", "map"},
  };
  for (const auto& [text, needle] : bad) {
    auto r = ParseSettings(text, "k.yaml");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(r.status().message().rfind("k.yaml: ", 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find(needle), std::string::npos)
        << r.status().message() << "\nwanted: " << needle;
  }
  // The entry's index and name, and the line, locate the problem.
  auto r = ParseSettings(replace("status: real", "status: maybe"), "k.yaml");
  EXPECT_NE(r.status().message().find("settings[0] (A_VAR)"), std::string::npos);
  r = ParseSettings(replace(", quote: \"q\"", ""), "k.yaml");
  EXPECT_NE(r.status().message().find("k.yaml: settings[0] (A_VAR): line 11"), std::string::npos)
      << r.status().message();
}

TEST(ParseSymptoms, EverySourceNeedsAQuote) {
  auto r = ParseSymptoms(
      "format: parity-knowledge-symptoms\nversion: 1\nsymptoms:\n"
      "  - {id: x, title: t, keywords: [k], explanation: e,\n"
      "     checks: [{run: \"parity env\", why: w}], sources: [{ref: \"https://example.org\"}]}\n",
      "s.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s.yaml: symptoms[0] (x): line 5"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("needs 'quote'"), std::string::npos);
}

TEST(Versions, CompareNumericallyIgnoringLocalSuffixes) {
  auto v = [](std::string_view s) { return ParseVersion(s).value_or(std::vector<long>{-1}); };
  EXPECT_EQ(v("1.13.0a0+gitunknown"), (std::vector<long>{1, 13, 0}));  // Debian's torch
  EXPECT_EQ(v("2.6.0+rocm6.2"), (std::vector<long>{2, 6, 0}));
  EXPECT_EQ(v("6.2.41133-dd7f95766"), (std::vector<long>{6, 2, 41133}));
  EXPECT_EQ(v("12.1"), (std::vector<long>{12, 1}));
  EXPECT_FALSE(ParseVersion("rocm"));
  EXPECT_FALSE(ParseVersion(""));
  EXPECT_FALSE(ParseVersion("2.0a", /*strict=*/true));
  EXPECT_FALSE(ParseVersion("2.", /*strict=*/true));
  EXPECT_TRUE(ParseVersion("2.0.1", /*strict=*/true));
  EXPECT_LT(CompareVersions(v("1.13.0a0"), v("2.0")), 0);
  EXPECT_LT(CompareVersions(v("1.9"), v("1.13")), 0);  // numerically, not as text
  EXPECT_EQ(CompareVersions(v("2.0"), v("2.0.0")), 0);
  EXPECT_GT(CompareVersions(v("2.10.1"), v("2.9")), 0);

  const VersionRange until{"torch", "", "2.0"}, since{"torch", "2.0", ""},
      both{"torch", "1.12", "2.0"};
  EXPECT_TRUE(until.Contains("1.13.0a0+gitunknown"));
  EXPECT_FALSE(since.Contains("1.13.0a0+gitunknown"));
  EXPECT_TRUE(since.Contains("2.0.0"));
  EXPECT_FALSE(until.Contains("2.0.0"));
  EXPECT_TRUE(both.Contains("1.12.1"));
  EXPECT_FALSE(both.Contains("1.11"));
  EXPECT_FALSE(since.Contains("unknown"));
  EXPECT_TRUE(VersionRange{}.Contains("anything"));
  EXPECT_EQ(until.Label(), "torch < 2.0");
  EXPECT_EQ(since.Label(), "torch >= 2.0");
  EXPECT_EQ(both.Label(), "torch >= 1.12, < 2.0");
}

TEST(BuiltinKnowledge, TheTf32OverrideSaysWhatEachTorchVersionDoes) {
  const Setting* s = Builtin().Find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  ASSERT_NE(s, nullptr);
  std::map<std::string, std::string> labels;
  for (const Rule& r : s->rules) labels[r.id] = r.versions.Label();
  EXPECT_EQ(labels["tf32-cublas-override"], "torch < 2.0");
  EXPECT_EQ(labels["tf32-cublas-override-initial"], "torch >= 2.0");
}

TEST(MakeKnowledge, ReferencesMustBeEntries) {
  auto settings = ParseSettings(
      std::string(kHead) + kEntry +
          "    rules: [{id: r, severity: info, when: [{setting: B_VAR, set: true}], message: m}]\n",
      "k.yaml");
  ASSERT_TRUE(settings.ok()) << settings.status().message();
  auto kb = MakeKnowledge(std::move(settings).value(), {}, "k.yaml", "s.yaml");
  ASSERT_FALSE(kb.ok());
  EXPECT_NE(kb.status().message().find("B_VAR"), std::string::npos);

  auto symptoms = ParseSymptoms(
      "format: parity-knowledge-symptoms\nversion: 1\nsymptoms:\n"
      "  - {id: x, title: t, keywords: [k], explanation: e, settings: [NOPE],\n"
      "     checks: [{run: \"parity env\", why: w}],\n"
      "     sources: [{ref: \"https://example.org\", quote: q}]}\n",
      "s.yaml");
  ASSERT_TRUE(symptoms.ok()) << symptoms.status().message();
  auto s2 = ParseSettings(std::string(kHead) + kEntry, "k.yaml");
  kb = MakeKnowledge(std::move(s2).value(), std::move(symptoms).value(), "k.yaml", "s.yaml");
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().message().rfind("s.yaml: ", 0), 0u);
  EXPECT_NE(kb.status().message().find("NOPE"), std::string::npos);
}

TEST(ParseSymptoms, ChecksMustBeParityCommands) {
  auto r = ParseSymptoms(
      "format: parity-knowledge-symptoms\nversion: 1\nsymptoms:\n"
      "  - {id: x, title: t, keywords: [k], explanation: e,\n"
      "     checks: [{run: \"rocm-smi\", why: w}],\n"
      "     sources: [{ref: \"https://example.org\", quote: q}]}\n",
      "s.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("symptoms[0] (x)"), std::string::npos);
  EXPECT_NE(r.status().message().find("parity command"), std::string::npos);
}

TEST(LoadKnowledge, AMissingFileIsNamed) {
  parity::testing::TempDir dir;
  auto r = LoadKnowledge(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(dir.File("settings.yaml")), std::string::npos);
}

}  // namespace
}  // namespace parity::env
