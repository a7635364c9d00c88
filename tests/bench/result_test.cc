// SPDX-License-Identifier: Apache-2.0
// The parity-bench v1 document: written and read back, and malformed ones refused with the
// file and the problem named.
#include "bench/result.h"

#include <gtest/gtest.h>

#include <string>

namespace parity::bench {
namespace {

BenchResult Example() {
  BenchResult r;
  r.benchmark = "gemm";
  r.dtype = "float32";
  r.params = {{"size", 2048}, {"reps", 5}};
  r.unit = "GFLOP/s";
  r.samples = {10, 12, 11};
  r.best = 12;
  r.peak = 24;
  r.peak_source = "https://example.com/datasheet";
  return r;
}

std::string Doc(const Json& results) {
  Json doc = {{"format", "parity-bench"},
              {"version", 1},
              {"backend", "cpu"},
              {"device", "X"},
              {"results", results}};
  return doc.dump();
}

TEST(BenchResult, JsonHasDesignFieldsAndReadsBack) {
  const Json j = ToJson(Example());
  EXPECT_EQ(j["median"], 11);
  EXPECT_EQ(j["min"], 10);
  EXPECT_EQ(j["max"], 12);
  EXPECT_NEAR(j["cv"].get<double>(), 1.0 / 11, 1e-15);
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["efficiency"], 0.5);
  auto doc = ParseBenchDocument(Doc(Json::array({j})), "x.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const BenchResult& r = doc->results.at(0);
  EXPECT_EQ(r.Key(), Example().Key());
  EXPECT_EQ(r.Label(), "gemm float32 size=2048");
  EXPECT_EQ(r.samples, Example().samples);
  EXPECT_EQ(r.outcome, Outcome::kOk);
}

TEST(BenchResult, SkippedAndInvalidAreNeverValid) {
  BenchResult r = Example();
  r.outcome = Outcome::kSkipped;
  r.samples.clear();
  r.best.reset();
  EXPECT_TRUE(ToJson(r)["valid"].is_null());
  EXPECT_TRUE(ToJson(r)["efficiency"].is_null());
  r.outcome = Outcome::kInvalid;
  EXPECT_EQ(ToJson(r)["valid"], false);
  // A document that says valid: false with status ok is read as invalid.
  Json j = ToJson(Example());
  j["valid"] = false;
  auto doc = ParseBenchDocument(Doc(Json::array({j})), "x.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->results[0].outcome, Outcome::kInvalid);
}

TEST(BenchResult, MalformedDocumentsNameFileAndProblem) {
  const Json good = ToJson(Example());
  auto with = [&](const char* key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    return Doc(Json::array({j}));
  };
  const std::pair<std::string, std::string> cases[] = {
      {"{\"format\": \"parity-bench\", ", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"format":"parity-dump","version":1,"results":[]})", "not a parity-bench document"},
      {R"({"format":"parity-bench","version":2,"results":[]})", "version 2"},
      {R"({"format":"parity-bench","version":1,"results":{}})", "no 'results' list"},
      {with("samples", Json::array({1, -2})), "result 1 (gemm): 'samples' holds -2"},
      {with("samples", Json::array({"fast"})), "not a positive number"},
      {with("samples", Json::array()), "no samples"},
      {with("status", "great"), "'status' is 'great'"},
      {with("better", "sideways"), "'better' is 'sideways'"},
      {with("params", Json::array()), "'params' is not an object"},
      {with("benchmark", 3), "'benchmark' is not a string"},
  };
  for (const auto& [text, problem] : cases) {
    auto doc = ParseBenchDocument(text, "dir/b.json");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_EQ(doc.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(doc.status().message().rfind("dir/b.json: ", 0), 0u) << doc.status().message();
    EXPECT_NE(doc.status().message().find(problem), std::string::npos)
        << doc.status().message() << " lacks " << problem;
  }
}

}  // namespace
}  // namespace parity::bench
