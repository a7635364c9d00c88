// SPDX-License-Identifier: Apache-2.0
// The stress matrix: ParseMatrix/LoadMatrix on good and malformed files, parameters built by
// hand, and MatrixSampler's determinism, epochs, boundaries and distributions.
#include "stress/matrix.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace parity::stress {
namespace {

// The example of matrix.h, with the schedule given both ways.
constexpr char kExample[] = R"(
seed: 7                      # optional, default 1
parameters:
  batch_size:
    choice: [32, 64, 128, 256, 512, 1024, 2048]
    every_steps: 100
  lr:
    range: [1.0e-6, 1.0e-2]
    scale: log
    every_seconds: 60
  devices:
    range: [1, 8]
    scale: int
    schedule: {every_steps: 500}
  warmup:
    range: [0.0, 1.0]
    schedule:
      every_seconds: 2.5
  dtype: float32
)";

Matrix Parse(const std::string& yaml) {
  Result<Matrix> matrix = ParseMatrix(yaml, "m.yaml");
  EXPECT_TRUE(matrix.ok()) << matrix.status().message();
  return matrix.ok() ? std::move(matrix).value() : Matrix{};
}

// ParseMatrix must fail with kInvalidInput and a message "m.yaml: ..." holding every part.
void ExpectInvalid(const std::string& yaml, const std::vector<std::string>& parts) {
  Result<Matrix> result = ParseMatrix(yaml, "m.yaml");
  ASSERT_FALSE(result.ok()) << yaml;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  const std::string& message = result.status().message();
  EXPECT_EQ(message.rfind("m.yaml: ", 0), 0u) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

// A file with one parameter `x` whose spec is `spec` (indented under it).
std::string One(const std::string& spec) { return "parameters:\n  x:\n" + spec; }

// --- parsing --------------------------------------------------------------------------------

TEST(MatrixParse, ReadsTheDocumentedExample) {
  const Matrix matrix = Parse(kExample);
  EXPECT_EQ(matrix.seed, 7u);
  ASSERT_EQ(matrix.params.size(), 5u);

  const ParamSpec& batch = matrix.params[0];
  EXPECT_EQ(batch.name, "batch_size");
  EXPECT_EQ(batch.kind, ParamKind::kChoice);
  ASSERT_EQ(batch.choices.size(), 7u);
  EXPECT_TRUE(batch.choices[0].is_number_integer());
  EXPECT_EQ(batch.choices[6].get<std::int64_t>(), 2048);
  EXPECT_EQ(batch.every_steps, 100);
  EXPECT_EQ(batch.every_seconds, 0.0);

  const ParamSpec& lr = matrix.params[1];
  EXPECT_EQ(lr.kind, ParamKind::kRange);
  EXPECT_EQ(lr.scale, Scale::kLog);
  EXPECT_EQ(lr.lo, 1e-6);
  EXPECT_EQ(lr.hi, 1e-2);
  EXPECT_EQ(lr.every_steps, 0);
  EXPECT_EQ(lr.every_seconds, 60.0);

  const ParamSpec& devices = matrix.params[2];
  EXPECT_EQ(devices.scale, Scale::kInt);
  EXPECT_EQ(devices.lo, 1.0);
  EXPECT_EQ(devices.hi, 8.0);
  EXPECT_EQ(devices.every_steps, 500);  // from schedule: {every_steps: 500}

  const ParamSpec& warmup = matrix.params[3];
  EXPECT_EQ(warmup.scale, Scale::kUniform);  // the default
  EXPECT_EQ(warmup.every_seconds, 2.5);      // from the block-style schedule

  const ParamSpec& dtype = matrix.params[4];
  EXPECT_EQ(dtype.kind, ParamKind::kConstant);
  EXPECT_EQ(dtype.value, Json("float32"));
  EXPECT_EQ(matrix.Find("dtype"), &dtype);
  EXPECT_EQ(matrix.Find("nope"), nullptr);
}

TEST(MatrixParse, BothScheduleSpellingsAreEqual) {
  const Matrix flat = Parse(One("    choice: [1, 2]\n    every_steps: 3\n"));
  const Matrix nested = Parse(One("    choice: [1, 2]\n    schedule: {every_steps: 3}\n"));
  EXPECT_EQ(flat, nested);
  const Matrix flat_s = Parse(One("    range: [0, 1]\n    every_seconds: 0.5\n"));
  const Matrix nested_s = Parse(One("    range: [0, 1]\n    schedule: {every_seconds: 0.5}\n"));
  EXPECT_EQ(flat_s, nested_s);
  EXPECT_EQ(flat_s.params[0].every_seconds, 0.5);
}

TEST(MatrixParse, ValuesKeepTheirType) {
  const Matrix matrix = Parse(R"(
parameters:
  a: 32
  b: 2.5
  c: "32"
  d: !!str 64
  e: true
  f: ""
  g: -7
  h: +3
  i: 1e3
  k: {choice: [x, "2", 3, 4.0, 日本]}
)");
  ASSERT_EQ(matrix.params.size(), 10u);
  const auto value = [&matrix](const char* name) { return matrix.Find(name)->value; };
  EXPECT_TRUE(value("a").is_number_integer());
  EXPECT_EQ(value("a").get<std::int64_t>(), 32);
  EXPECT_TRUE(value("b").is_number_float());
  EXPECT_EQ(value("b").get<double>(), 2.5);
  EXPECT_EQ(value("c"), Json("32"));  // quoted: a string
  EXPECT_EQ(value("d"), Json("64"));  // !!str: a string
  EXPECT_EQ(value("e"), Json("true"));
  EXPECT_EQ(value("f"), Json(""));
  EXPECT_EQ(value("g").get<std::int64_t>(), -7);
  EXPECT_EQ(value("h").get<std::int64_t>(), 3);
  EXPECT_TRUE(value("i").is_number_float());
  EXPECT_EQ(value("i").get<double>(), 1000.0);
  const std::vector<Json>& k = matrix.Find("k")->choices;
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k[0], Json("x"));
  EXPECT_EQ(k[1], Json("2"));
  EXPECT_TRUE(k[2].is_number_integer());
  EXPECT_TRUE(k[3].is_number_float());
  EXPECT_EQ(k[4], Json("日本"));
}

TEST(MatrixParse, SeedDefaultsAndBounds) {
  EXPECT_EQ(Parse("parameters: {a: 1}").seed, 1u);
  EXPECT_EQ(Parse("seed: 0\nparameters: {a: 1}").seed, 0u);
  EXPECT_EQ(Parse("seed: 18446744073709551615\nparameters: {a: 1}").seed, 18446744073709551615ULL);
  EXPECT_TRUE(Parse("parameters: {}").params.empty());
}

TEST(MatrixParse, RejectsBadFiles) {
  ExpectInvalid("", {"empty"});
  ExpectInvalid("[1, 2]", {"not a map"});
  ExpectInvalid("seed: 3\n", {"no 'parameters:'"});
  ExpectInvalid("parameters:\n", {"'parameters' is empty", "parameters: {}"});
  ExpectInvalid("parameters: [a, b]\n", {"'parameters' is a list"});
  ExpectInvalid("parameter: {a: 1}\n", {"unknown key 'parameter'", "did you mean 'parameters'"});
  ExpectInvalid("sed: 1\nparameters: {a: 1}\n", {"unknown key 'sed'", "did you mean 'seed'"});
  ExpectInvalid("seed: -1\nparameters: {a: 1}\n", {"'seed' is '-1'", "2^64 - 1"});
  ExpectInvalid("seed: 1.5\nparameters: {a: 1}\n", {"'seed'"});
  ExpectInvalid("seed: 18446744073709551616\nparameters: {a: 1}\n", {"'seed'"});
  ExpectInvalid("seed: \"3\"\nparameters: {a: 1}\n", {"'seed'"});
  ExpectInvalid("parameters: {a: [1\n", {"not valid YAML"});
  ExpectInvalid(std::string("parameters: {a: 1}\n\0", 20), {"NUL byte"});
  ExpectInvalid("parameters: {a: 1}\nparameters: {b: 1}\n", {"'parameters' is given twice"});
}

TEST(MatrixParse, RejectsBadParameters) {
  // Keys.
  ExpectInvalid(One("    chioce: [1, 2]\n"),
                {"parameter 'x'", "unknown key 'chioce'", "did you mean 'choice'", "line 3"});
  ExpectInvalid(One("    range: [1, 2]\n    every_step: 4\n"),
                {"parameter 'x'", "did you mean 'every_steps'"});
  ExpectInvalid(One("    range: [1, 2]\n    schedule: {every_sec: 4}\n"),
                {"parameter 'x'", "unknown key 'every_sec'", "did you mean 'every_seconds'"});
  ExpectInvalid(One("    choice: [1]\n    choice: [2]\n"), {"parameter 'x'", "given twice"});
  ExpectInvalid("parameters:\n  x: 1\n  x: 2\n", {"parameter 'x'", "given twice"});
  // What a parameter is.
  ExpectInvalid(One(""), {"parameter 'x'", "has no value"});
  ExpectInvalid(One("    - 1\n    - 2\n"), {"parameter 'x'", "is a list", "choice: [...]"});
  ExpectInvalid(One("    every_steps: 3\n"), {"parameter 'x'", "neither 'choice' nor 'range'"});
  ExpectInvalid(One("    choice: [1]\n    range: [1, 2]\n"), {"parameter 'x'", "not both"});
  // Choices.
  ExpectInvalid(One("    choice: []\n"), {"parameter 'x'", "'choice' is an empty list"});
  ExpectInvalid(One("    choice: 5\n"), {"parameter 'x'", "'choice' is '5', not a list"});
  ExpectInvalid(One("    choice: [1, [2]]\n"), {"parameter 'x'", "choice #2 is a list"});
  ExpectInvalid(One("    choice: [1, ~]\n"), {"parameter 'x'", "choice #2 is empty"});
  ExpectInvalid(One("    choice: [1, .nan]\n"), {"parameter 'x'", "choice #2", "not a finite"});
  ExpectInvalid(One("    choice: [1, inf]\n"), {"parameter 'x'", "not a finite", "quote it"});
  ExpectInvalid(One("    choice: [1, 1e400]\n"), {"parameter 'x'", "out of the range"});
  ExpectInvalid(One("    choice: [1]\n    scale: log\n"),
                {"parameter 'x'", "'scale' applies to 'range'"});
  ExpectInvalid(One("    choice: [\"a\\0b\"]\n"), {"parameter 'x'", "NUL byte"});
  // Ranges.
  ExpectInvalid(One("    range: [2, 1]\n"), {"parameter 'x'", "lo > hi"});
  ExpectInvalid(One("    range: [1]\n"), {"parameter 'x'", "not two numbers"});
  ExpectInvalid(One("    range: [1, 2, 3]\n"), {"parameter 'x'", "not two numbers"});
  ExpectInvalid(One("    range: 5\n"), {"parameter 'x'", "not two numbers"});
  ExpectInvalid(One("    range: {lo: 1, hi: 2}\n"), {"parameter 'x'", "not two numbers"});
  ExpectInvalid(One("    range: [a, 2]\n"),
                {"parameter 'x'", "lo of 'range' is 'a', not a number"});
  ExpectInvalid(One("    range: [1, \"2\"]\n"), {"parameter 'x'", "hi of 'range'"});
  ExpectInvalid(One("    range: [0, .inf]\n"), {"parameter 'x'", "not finite"});
  ExpectInvalid(One("    range: [-.inf, 0]\n"), {"parameter 'x'", "not finite"});
  ExpectInvalid(One("    range: [nan, 1]\n"), {"parameter 'x'", "not finite"});
  ExpectInvalid(One("    range: [0, 1e-2]\n    scale: log\n"), {"parameter 'x'", "lo > 0"});
  ExpectInvalid(One("    range: [-1, 1]\n    scale: log\n"), {"parameter 'x'", "lo > 0"});
  ExpectInvalid(One("    range: [1, 8.5]\n    scale: int\n"),
                {"parameter 'x'", "whole-number bounds", "8.5"});
  ExpectInvalid(One("    range: [1, 1e17]\n    scale: int\n"), {"parameter 'x'", "2^53"});
  ExpectInvalid(One("    range: [1, 2]\n    scale: logg\n"),
                {"parameter 'x'", "'scale' is 'logg'", "did you mean 'log'"});
  ExpectInvalid(One("    range: [1, 2]\n    scale: [log]\n"), {"parameter 'x'", "'scale'"});
  // Schedules.
  ExpectInvalid(One("    range: [1, 2]\n    every_steps: 3\n    every_seconds: 4\n"),
                {"parameter 'x'", "'every_steps' or 'every_seconds', not both"});
  ExpectInvalid(One("    range: [1, 2]\n    schedule: {every_steps: 3, every_seconds: 4}\n"),
                {"parameter 'x'", "not both"});
  ExpectInvalid(One("    range: [1, 2]\n    every_steps: 3\n    schedule: {every_steps: 3}\n"),
                {"parameter 'x'", "'schedule' or a flat"});
  ExpectInvalid(One("    range: [1, 2]\n    schedule: 3\n"),
                {"parameter 'x'", "'schedule' is '3'"});
  ExpectInvalid(One("    range: [1, 2]\n    schedule: {}\n"),
                {"parameter 'x'", "'schedule' is empty"});
  for (const char* bad : {"0", "-5", "1.5", "\"3\"", "[3]", "1e2"}) {
    ExpectInvalid(One(std::string("    range: [1, 2]\n    every_steps: ") + bad + "\n"),
                  {"parameter 'x'", "'every_steps'", "1 or more"});
  }
  for (const char* bad : {"0", "-1", "-0.5"}) {
    ExpectInvalid(One(std::string("    range: [1, 2]\n    every_seconds: ") + bad + "\n"),
                  {"parameter 'x'", "'every_seconds'", "not above 0"});
  }
  ExpectInvalid(One("    range: [1, 2]\n    every_seconds: .inf\n"),
                {"parameter 'x'", "'every_seconds'", "not finite"});
  ExpectInvalid(One("    range: [1, 2]\n    every_seconds: soon\n"),
                {"parameter 'x'", "'every_seconds'", "not a number"});
  // Constants.
  ExpectInvalid("parameters: {x: .nan}\n", {"parameter 'x'", "not a finite number"});
  ExpectInvalid("parameters: {x: -.inf}\n", {"parameter 'x'", "not a finite number"});
}

TEST(MatrixParse, RejectsBadNames) {
  for (const char* name : {"Batch", "1a", "a-b", "\"a b\"", "lr.max", "é"}) {
    ExpectInvalid(std::string("parameters:\n  ") + name + ": 1\n",
                  {"parameter '", "[a-z_][a-z0-9_]*"});
  }
  ExpectInvalid("parameters:\n  \"\": 1\n", {"parameter '': the name is empty"});
  ExpectInvalid("parameters:\n  " + std::string(65, 'a') + ": 1\n", {"at most 64"});
  ExpectInvalid("parameters:\n  [a]: 1\n", {"parameter #1: the name is not a string"});
  ExpectInvalid("parameters:\n  \"a\\x01\": 1\n", {"parameter 'a\\x01'"});  // escaped
  // Accepted: lower case, digits after the first, underscores anywhere.
  EXPECT_EQ(Parse("parameters: {_a1: 1, b_2_: 2, " + std::string(64, 'z') + ": 3}").params.size(),
            3u);
}

TEST(MatrixParse, CapsSizes) {
  std::string many = "parameters:\n";
  for (int i = 0; i < 64; ++i) many += fmt::format("  p{}: 1\n", i);
  EXPECT_EQ(Parse(many).params.size(), 64u);
  ExpectInvalid(many + "  p64: 1\n", {"65 parameters", "at most 64"});

  std::string choices = "[0";
  for (int i = 1; i < 4096; ++i) choices += fmt::format(",{}", i);
  EXPECT_EQ(Parse(One("    choice: " + choices + "]\n")).params[0].choices.size(), 4096u);
  ExpectInvalid(One("    choice: " + choices + ",4096]\n"),
                {"parameter 'x'", "4097 values", "at most 4096"});

  std::string big = "parameters: {a: 1}\n";
  big.resize(kMaxMatrixFileBytes + 1, '#');
  ExpectInvalid(big, {"larger than a matrix file may be (1 MiB)"});
}

TEST(MatrixParse, LoadMatrixReadsFilesAndCapsTheirSize) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "parity_matrix_test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.yaml").string();
  std::ofstream(good) << kExample;
  Result<Matrix> matrix = LoadMatrix(good);
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  EXPECT_EQ(matrix->params.size(), 5u);

  const std::string bad = (dir / "bad.yaml").string();
  std::ofstream(bad) << "parameters:\n  lr: {range: [1, 0]}\n";
  matrix = LoadMatrix(bad);
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(matrix.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(matrix.status().message().rfind(bad + ": line 2: parameter 'lr': ", 0), 0u)
      << matrix.status().message();

  const std::string big = (dir / "big.yaml").string();
  std::ofstream(big) << std::string(kMaxMatrixFileBytes + 10, '#');
  matrix = LoadMatrix(big);
  ASSERT_FALSE(matrix.ok());
  EXPECT_NE(matrix.status().message().find("1 MiB"), std::string::npos);

  matrix = LoadMatrix((dir / "missing.yaml").string());
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(matrix.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(matrix.status().message().find("cannot read the file"), std::string::npos);

  matrix = LoadMatrix(dir.string());
  ASSERT_FALSE(matrix.ok());
  EXPECT_NE(matrix.status().message().find("is a directory"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// --- built by hand --------------------------------------------------------------------------

TEST(MatrixByHand, ParseParamReadsOneSpec) {
  Result<ParamSpec> constant = ParseParam("batch_size", "64", "--param");
  ASSERT_TRUE(constant.ok()) << constant.status().message();
  EXPECT_EQ(constant->kind, ParamKind::kConstant);
  EXPECT_TRUE(constant->value.is_number_integer());

  Result<ParamSpec> range =
      ParseParam("lr", "{range: [1e-6, 1e-2], scale: log, every_steps: 10}", "--param");
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_EQ(range->name, "lr");
  EXPECT_EQ(range->scale, Scale::kLog);
  EXPECT_EQ(range->every_steps, 10);

  Result<ParamSpec> bad = ParseParam("lr", "{range: [1, 0]}", "--param");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(bad.status().message().rfind("--param: parameter 'lr': ", 0), 0u)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("lo > hi"), std::string::npos);

  bad = ParseParam("Bad-Name", "1", "--param");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[a-z_][a-z0-9_]*"), std::string::npos);
  bad = ParseParam("x", "{range: [1", "--param");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not valid YAML"), std::string::npos);
  bad = ParseParam("x", "", "--param");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("has no value"), std::string::npos);
}

TEST(MatrixByHand, ScalarValueReadsLikeAPlainScalar) {
  EXPECT_TRUE(ScalarValue("64").is_number_integer());
  EXPECT_EQ(ScalarValue("-3").get<std::int64_t>(), -3);
  EXPECT_TRUE(ScalarValue("1e-3").is_number_float());
  EXPECT_EQ(ScalarValue("1e-3").get<double>(), 1e-3);
  EXPECT_EQ(ScalarValue("float32"), Json("float32"));
  EXPECT_EQ(ScalarValue("nan"), Json("nan"));
  EXPECT_EQ(ScalarValue("inf"), Json("inf"));
  EXPECT_EQ(ScalarValue(""), Json(""));
  EXPECT_EQ(ScalarValue("12abc"), Json("12abc"));
}

TEST(MatrixByHand, ValidateAndSetParam) {
  Matrix matrix;
  matrix.seed = 3;
  SetParam(&matrix, ConstantParam("batch_size", 64));
  ParamSpec lr;
  lr.name = "lr";
  lr.kind = ParamKind::kRange;
  lr.lo = 1e-6;
  lr.hi = 1e-2;
  lr.scale = Scale::kLog;
  lr.every_steps = 5;
  SetParam(&matrix, lr);
  EXPECT_TRUE(ValidateMatrix(matrix, "--param").ok());
  SetParam(&matrix, ConstantParam("batch_size", 128));  // replaces, keeps the position
  ASSERT_EQ(matrix.params.size(), 2u);
  EXPECT_EQ(matrix.params[0].value, Json(128));

  const auto expect_invalid = [](const Matrix& m, const std::string& part) {
    const Status status = ValidateMatrix(m, "--param");
    ASSERT_FALSE(status.ok()) << part;
    EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
    EXPECT_EQ(status.message().rfind("--param: parameter '", 0), 0u) << status.message();
    EXPECT_NE(status.message().find(part), std::string::npos) << status.message();
  };
  Matrix bad = matrix;
  bad.params[1].lo = 1.0;  // lo > hi
  expect_invalid(bad, "lo > hi");
  bad = matrix;
  bad.params[1].lo = 0.0;
  expect_invalid(bad, "lo > 0");
  bad = matrix;
  bad.params[1].every_seconds = 1.0;  // with every_steps
  expect_invalid(bad, "not both");
  bad = matrix;
  bad.params.push_back(ConstantParam("lr", 1));
  expect_invalid(bad, "given twice");
  bad = matrix;
  bad.params[0].value = std::nan("");
  expect_invalid(bad, "not finite");
  bad = matrix;
  bad.params[0].value = Json::array({1});
  expect_invalid(bad, "not a number or string");
  bad = matrix;
  bad.params[0].name = "Batch";
  expect_invalid(bad, "[a-z_][a-z0-9_]*");
  bad = matrix;
  bad.params[1].kind = ParamKind::kChoice;  // without choices
  expect_invalid(bad, "empty list");
  bad = matrix;
  bad.params[0].every_steps = 3;  // a constant with a schedule
  expect_invalid(bad, "a constant has no schedule");
}

TEST(MatrixByHand, ToJsonIsAMatrixFileThatReadsBackEqual) {
  const Matrix matrix = Parse(std::string(kExample) + "  note: \"32\"\n  half: 0.5\n");
  const Json json = MatrixToJson(matrix);
  EXPECT_EQ(json["seed"], 7);
  EXPECT_EQ(json["parameters"]["batch_size"]["choice"][2], 128);
  EXPECT_EQ(json["parameters"]["batch_size"]["every_steps"], 100);
  EXPECT_EQ(json["parameters"]["lr"]["scale"], "log");
  EXPECT_EQ(json["parameters"]["lr"]["every_seconds"], 60.0);
  EXPECT_TRUE(json["parameters"]["devices"]["range"][0].is_number_integer());
  EXPECT_EQ(json["parameters"]["devices"]["every_steps"], 500);
  EXPECT_EQ(json["parameters"]["dtype"], "float32");
  EXPECT_EQ(json["parameters"]["note"], "32");
  const std::string text = Dump(json);
  EXPECT_NE(text.find("\"devices\": {\n      \"range\": [\n        1,"), std::string::npos) << text;
  Result<Matrix> again = ParseMatrix(text, "result.json");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  EXPECT_EQ(*again, matrix);
  EXPECT_TRUE(again->Find("note")->value.is_string());
  EXPECT_TRUE(again->Find("half")->value.is_number_float());
}

// --- sampling -------------------------------------------------------------------------------

TEST(MatrixSampler, ConstantsAndOnceDrawnValuesStay) {
  const Matrix matrix = Parse(R"(
parameters:
  dtype: float32
  size: 4096
  once: {range: [0, 1]}
  pick: {choice: [a, b, c]}
)");
  const MatrixSampler sampler(matrix, 1);
  const Json first = sampler.ValuesAt(0, 0, 0.0);
  EXPECT_EQ(first["dtype"], "float32");
  EXPECT_TRUE(first["size"].is_number_integer());
  EXPECT_EQ(first["size"], 4096);
  for (std::int64_t step : {1, 100, 1000000}) {
    EXPECT_EQ(sampler.ValuesAt(0, step, static_cast<double>(step) * 7.5), first);
  }
  EXPECT_FALSE(sampler.CrossesEpoch(0, 0.0, 1000000, 1e9));
  EXPECT_FALSE(sampler.Changes(0, 0, 0.0, 1000000, 1e9));
  EXPECT_FALSE(sampler.NextTimeBoundary(0.0));
  EXPECT_FALSE(sampler.NextStepBoundary(0));
}

TEST(MatrixSampler, HoldsWithinAnEpochAndChangesAcross) {
  const Matrix matrix = Parse(R"(
parameters:
  x: {range: [0, 1], every_steps: 100}
  t: {range: [0, 1], every_seconds: 60}
)");
  const MatrixSampler sampler(matrix, 5);
  const Json at0 = sampler.ValuesAt(0, 0, 0.0);
  for (std::int64_t step = 0; step < 100; ++step) {
    EXPECT_EQ(sampler.ValuesAt(0, step, 0.0)["x"], at0["x"]) << step;
  }
  for (double s : {0.0, 1.0, 30.0, 59.999}) {
    EXPECT_EQ(sampler.ValuesAt(0, 0, s)["t"], at0["t"]) << s;
  }
  EXPECT_NE(sampler.ValuesAt(0, 100, 0.0)["x"], at0["x"]);
  EXPECT_EQ(sampler.ValuesAt(0, 100, 0.0)["t"], at0["t"]);  // the step does not move t
  EXPECT_NE(sampler.ValuesAt(0, 0, 60.0)["t"], at0["t"]);
  EXPECT_EQ(sampler.ValuesAt(0, 0, 60.0)["x"], at0["x"]);
  // Negative and NaN positions are the start.
  EXPECT_EQ(sampler.ValuesAt(0, -5, -3.0), at0);
  EXPECT_EQ(sampler.ValuesAt(0, 0, std::nan("")), at0);

  EXPECT_EQ(sampler.EpochsAt(250, 121.0), (std::vector<std::int64_t>{2, 2}));
  EXPECT_FALSE(sampler.CrossesEpoch(0, 0.0, 99, 59.9));
  EXPECT_TRUE(sampler.CrossesEpoch(99, 0.0, 100, 0.0));
  EXPECT_TRUE(sampler.CrossesEpoch(0, 59.9, 0, 60.0));
  EXPECT_FALSE(sampler.Changes(0, 0, 0.0, 99, 59.9));
  EXPECT_TRUE(sampler.Changes(0, 99, 0.0, 100, 0.0));  // a double never draws the same twice
  EXPECT_TRUE(sampler.Changes(0, 0, 59.9, 0, 60.0));
}

TEST(MatrixSampler, ChangesIgnoresADrawOfTheSameValue) {
  // A one-value choice crosses epochs without ever changing.
  const Matrix matrix = Parse("parameters:\n  x: {choice: [7], every_steps: 1}\n");
  const MatrixSampler sampler(matrix, 1);
  EXPECT_TRUE(sampler.CrossesEpoch(0, 0.0, 1, 0.0));
  EXPECT_FALSE(sampler.Changes(0, 0, 0.0, 1, 0.0));
  EXPECT_EQ(sampler.NextStepBoundary(0), 1);
}

// The sequence of values of `worker` over `epochs` consecutive epochs of every parameter.
std::vector<Json> Sequence(const MatrixSampler& sampler, int worker, int epochs) {
  std::vector<Json> out;
  for (int e = 0; e < epochs; ++e) {
    out.push_back(sampler.ValuesAt(worker, std::int64_t{e} * 500, e * 60.0));
  }
  return out;
}

TEST(MatrixSampler, IsReproducible) {
  const Matrix matrix = Parse(kExample);
  const MatrixSampler a(matrix, 7);
  const std::vector<Json> reference = Sequence(a, 0, 2000);
  // Same seed, another object (a restarted supervisor or worker): the same values.
  const MatrixSampler b(matrix, 7);
  EXPECT_EQ(Sequence(b, 0, 2000), reference);
  // A matrix that went through the result file: the same values.
  Result<Matrix> again = ParseMatrix(Dump(MatrixToJson(matrix)), "result.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Sequence(MatrixSampler(*again, 7), 0, 2000), reference);
  // Asked out of order (a worker restarted mid-run): the same values for the same epoch.
  for (int e = 1999; e >= 0; e -= 7) {
    EXPECT_EQ(b.ValuesAt(0, std::int64_t{e} * 500, e * 60.0), reference[e]) << e;
  }
  // Another seed or another worker: different values (lr is a double; equal by chance ~never).
  const std::vector<Json> other_seed = Sequence(MatrixSampler(matrix, 8), 0, 2000);
  const std::vector<Json> other_worker = Sequence(a, 1, 2000);
  int same_seed_lr = 0;
  int same_worker_lr = 0;
  int same_batch = 0;
  for (int e = 0; e < 2000; ++e) {
    same_seed_lr += other_seed[e]["lr"] == reference[e]["lr"];
    same_worker_lr += other_worker[e]["lr"] == reference[e]["lr"];
    same_batch += other_seed[e]["batch_size"] == reference[e]["batch_size"];
  }
  EXPECT_EQ(same_seed_lr, 0);
  EXPECT_EQ(same_worker_lr, 0);
  // batch_size agrees by chance 1 in 7: about 286 of 2000, sd 16.
  EXPECT_GT(same_batch, 186);
  EXPECT_LT(same_batch, 386);
  // Parameters draw independently of each other, even with the same spec.
  const Matrix twins = Parse("parameters:\n  a: {range: [0, 1]}\n  b: {range: [0, 1]}\n");
  const Json values = MatrixSampler(twins, 1).ValuesAt(0, 0, 0.0);
  EXPECT_NE(values["a"], values["b"]);
  // And the seed of the file is only the default: the sampler's seed is what counts.
  EXPECT_EQ(MatrixSampler(matrix, 7).seed(), 7u);
}

// The one-sample Kolmogorov-Smirnov statistic of `sample` against uniform on [0, 1].
double KsUniform(std::vector<double> sample) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double d = 0.0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    d = std::max(
        {d, (static_cast<double>(i) + 1) / n - sample[i], sample[i] - static_cast<double>(i) / n});
  }
  return d;
}

// The 1% critical value of D_n for large n: K_{0.99} / sqrt(n), with K_{0.99} = 1.6276 the
// 0.99 quantile of the Kolmogorov distribution (scipy.stats.kstwobign.isf(0.01) =
// 1.62762361; scipy.stats.kstwo.isf(0.01, 20000) * sqrt(20000) = 1.62643, so the asymptotic
// value is within 0.1% at n = 20000).
double KsCritical1Percent(std::size_t n) { return 1.6276236 / std::sqrt(static_cast<double>(n)); }

constexpr int kDraws = 20000;

TEST(MatrixSampler, LogScaleIsLogUniform) {
  const Matrix matrix =
      Parse("parameters:\n  lr: {range: [1.0e-6, 1.0e-2], scale: log, every_steps: 1}\n");
  const MatrixSampler sampler(matrix, 11);
  std::vector<double> u;
  std::vector<double> raw;
  for (int e = 0; e < kDraws; ++e) {
    const Json value = sampler.ValuesAt(0, e, 0.0)["lr"];
    ASSERT_TRUE(value.is_number_float());
    const double lr = value.get<double>();
    ASSERT_GE(lr, 1e-6);
    ASSERT_LE(lr, 1e-2);
    u.push_back((std::log10(lr) + 6.0) / 4.0);  // log10 in [-6, -2] mapped to [0, 1]
    raw.push_back((lr - 1e-6) / (1e-2 - 1e-6));
  }
  EXPECT_LT(KsUniform(u), KsCritical1Percent(u.size()));
  // The test has power: the values themselves are far from uniform on [lo, hi].
  EXPECT_GT(KsUniform(raw), 10 * KsCritical1Percent(raw.size()));
  // Every decade gets about a quarter.
  int per_decade[4] = {0, 0, 0, 0};
  for (double x : u) ++per_decade[std::min(3, static_cast<int>(x * 4))];
  for (int count : per_decade) EXPECT_NEAR(count, kDraws / 4, 5 * std::sqrt(kDraws * 0.1875));
}

TEST(MatrixSampler, UniformScaleIsUniformAndIndependent) {
  const Matrix matrix = Parse("parameters:\n  w: {range: [-2.0, 6.0], every_seconds: 0.5}\n");
  const MatrixSampler sampler(matrix, 3);
  std::vector<double> u;
  for (int e = 0; e < kDraws; ++e) {
    const double w = sampler.ValuesAt(2, 0, e * 0.5 + 0.25)["w"].get<double>();
    ASSERT_GE(w, -2.0);
    ASSERT_LE(w, 6.0);
    u.push_back((w + 2.0) / 8.0);
  }
  EXPECT_LT(KsUniform(u), KsCritical1Percent(u.size()));
  // Consecutive epochs are uncorrelated: lag-1 correlation within 5 standard errors (1/sqrt n).
  double mean = 0.0;
  for (double x : u) mean += x;
  mean /= kDraws;
  double cov = 0.0;
  double var = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    var += (u[i] - mean) * (u[i] - mean);
    if (i > 0) cov += (u[i] - mean) * (u[i - 1] - mean);
  }
  EXPECT_LT(std::fabs(cov / var), 5.0 / std::sqrt(kDraws));
}

// Counts of each value over kDraws epochs must be within 5 sigma of the binomial mean.
void ExpectEvenCounts(const std::map<std::string, int>& counts, std::size_t values) {
  ASSERT_EQ(counts.size(), values);
  const double p = 1.0 / static_cast<double>(values);
  const double sigma = std::sqrt(kDraws * p * (1 - p));
  for (const auto& [value, count] : counts) {
    EXPECT_NEAR(count, kDraws * p, 5 * sigma) << value;
  }
}

TEST(MatrixSampler, IntScaleCoversEveryIntegerEvenly) {
  const Matrix matrix = Parse(R"(
parameters:
  devices: {range: [1, 8], scale: int, every_steps: 500}
  offset: {range: [-3, 3], scale: int, every_steps: 500}
)");
  const MatrixSampler sampler(matrix, 1);
  std::map<std::string, int> devices;
  std::map<std::string, int> offsets;
  for (int e = 0; e < kDraws; ++e) {
    const Json values = sampler.ValuesAt(0, std::int64_t{e} * 500 + 499, 0.0);
    ASSERT_TRUE(values["devices"].is_number_integer());  // 3, not 3.0
    const std::int64_t d = values["devices"].get<std::int64_t>();
    ASSERT_GE(d, 1);
    ASSERT_LE(d, 8);
    ++devices[std::to_string(d)];
    ++offsets[std::to_string(values["offset"].get<std::int64_t>())];
  }
  ExpectEvenCounts(devices, 8);
  ExpectEvenCounts(offsets, 7);
  EXPECT_EQ(sampler.ValuesAt(0, 0, 0.0).dump().find('.'), std::string::npos);
}

TEST(MatrixSampler, ChoiceIsUniform) {
  const Matrix matrix = Parse(R"(
parameters:
  batch_size: {choice: [32, 64, 128, 256, 512, 1024, 2048], every_steps: 100}
  dtype: {choice: [float32, bfloat16, "16"], every_steps: 100}
)");
  const MatrixSampler sampler(matrix, 9);
  std::map<std::string, int> batch;
  std::map<std::string, int> dtype;
  for (int e = 0; e < kDraws; ++e) {
    const Json values = sampler.ValuesAt(4, std::int64_t{e} * 100, 0.0);
    ASSERT_TRUE(values["batch_size"].is_number_integer());
    ASSERT_TRUE(values["dtype"].is_string());
    ++batch[values["batch_size"].dump()];
    ++dtype[values["dtype"].get<std::string>()];
  }
  ExpectEvenCounts(batch, 7);
  ExpectEvenCounts(dtype, 3);
  EXPECT_EQ(dtype.count("16"), 1u);  // the quoted choice stays a string
}

TEST(MatrixSampler, DegenerateAndExtremeRanges) {
  const Matrix matrix = Parse(R"(
parameters:
  same: {range: [0.3, 0.3], every_steps: 1}
  same_log: {range: [0.001, 0.001], scale: log, every_steps: 1}
  same_int: {range: [5, 5], scale: int, every_steps: 1}
  wide: {range: [-1.0e308, 1.0e308], every_steps: 1}
  big_int: {range: [-9007199254740992, 9007199254740992], scale: int, every_steps: 1}
  tiny_log: {range: [1.0e-300, 1.0e300], scale: log, every_steps: 1}
)");
  const MatrixSampler sampler(matrix, 2);
  for (int e = 0; e < 1000; ++e) {
    const Json v = sampler.ValuesAt(0, e, 0.0);
    EXPECT_EQ(v["same"].get<double>(), 0.3);
    EXPECT_EQ(v["same_log"].get<double>(), 0.001);
    EXPECT_EQ(v["same_int"].get<std::int64_t>(), 5);
    const double wide = v["wide"].get<double>();
    EXPECT_TRUE(std::isfinite(wide));
    EXPECT_LE(std::fabs(wide), 1e308);
    EXPECT_LE(std::llabs(v["big_int"].get<std::int64_t>()), 9007199254740992LL);
    EXPECT_GE(v["tiny_log"].get<double>(), 1e-300);
    EXPECT_LE(v["tiny_log"].get<double>(), 1e300);
  }
}

TEST(MatrixSampler, NextTimeBoundaryIsTheNearestOne) {
  const Matrix matrix = Parse(R"(
parameters:
  a: {range: [0, 1], every_seconds: 60}
  b: {range: [0, 1], every_seconds: 25}
  c: {range: [0, 1], every_steps: 7}
)");
  const MatrixSampler sampler(matrix, 1);
  ASSERT_TRUE(sampler.NextTimeBoundary(0.0));
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(0.0), 25.0);
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(24.5), 0.5);
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(25.0), 25.0);  // at a boundary: the next one
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(55.0), 5.0);   // a's at 60 before b's at 75
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(-10.0), 35.0);
  EXPECT_DOUBLE_EQ(*sampler.NextTimeBoundary(std::nan("")), 25.0);
  EXPECT_FALSE(sampler.NextTimeBoundary(HUGE_VAL));

  EXPECT_EQ(sampler.NextStepBoundary(0), 7);
  EXPECT_EQ(sampler.NextStepBoundary(6), 7);
  EXPECT_EQ(sampler.NextStepBoundary(7), 14);
  EXPECT_EQ(sampler.NextStepBoundary(-3), 7);
  EXPECT_FALSE(sampler.NextStepBoundary(std::numeric_limits<std::int64_t>::max()));  // no overflow
}

TEST(MatrixSampler, NextTimeBoundaryAgreesWithTheEpochs) {
  // Intervals that are not exact in binary: the boundary must land in the next epoch, and
  // nothing before it may.
  for (double every : {0.1, 0.3, 1.0 / 3.0, 7.77, 1e-3}) {
    Matrix matrix;
    ParamSpec t;
    t.name = "t";
    t.kind = ParamKind::kRange;
    t.hi = 1.0;
    t.every_seconds = every;
    matrix.params.push_back(t);
    ASSERT_TRUE(ValidateMatrix(matrix, "test").ok());
    const MatrixSampler sampler(matrix, 1);
    for (int k = 0; k < 3000; ++k) {
      for (double s : {k * every, k * every + every / 3, std::nextafter(k * every, -1.0)}) {
        const std::optional<double> delay = sampler.NextTimeBoundary(s);
        ASSERT_TRUE(delay) << every << " " << s;
        ASSERT_GT(*delay, 0.0);
        const std::int64_t now = sampler.EpochsAt(0, s)[0];
        EXPECT_EQ(sampler.EpochsAt(0, s + *delay)[0], now + 1) << every << " " << s;
        // No nearer boundary: the delay is at most one interval, and (where it is not a mere
        // rounding nudge) a little less of it is still in this epoch.
        EXPECT_LE(*delay, every * (1 + 1e-12)) << every << " " << s;
        if (*delay > 1e-9) {
          EXPECT_EQ(sampler.EpochsAt(0, s + *delay * 0.999)[0], now) << every << " " << s;
        }
      }
    }
  }
}

}  // namespace
}  // namespace parity::stress
