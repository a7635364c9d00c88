// SPDX-License-Identifier: Apache-2.0
// Statistics-only tensors judged by their digests (mode "hashes", and "stats" under a bitwise or
// integer exact tolerance): equal digests pass, different ones fail only where different bytes
// are different values, and are otherwise not compared when no statistic tells by how much.
#include <gtest/gtest.h>

#include <string>

#include "compare/compare.h"
#include "dump_writer.h"
#include "testdata.h"

namespace parity {
namespace {

using ::parity::testing::DumpWriter;
using ::parity::testing::Manifest2;
using ::parity::testing::TempDir;

Json Entry(const std::string& dtype, const std::string& hash) {
  return {{"dtype", dtype}, {"shape", {4}}, {"stats", {{"hash", hash}}}};
}

// A hashes-mode dump of one record whose outputs are a float32 and an int64 tensor.
std::string HashesDump(const TempDir& tmp, const std::string& name, const std::string& float_hash,
                       const std::string& int_hash, const std::string& algorithm = "xxh3_128") {
  DumpWriter w(tmp.File(name));
  w.Manifest(Manifest2({{"mode", "hashes"}, {"hash", algorithm}}));
  w.Records({{{"seq", 0},
              {"step", 0},
              {"name", "fc.topk"},
              {"op", "topk"},
              {"pass", "forward"},
              {"call", 0},
              {"inputs", Json::array()},
              {"outputs", {Entry("float32", float_hash), Entry("int64", int_hash)}}}});
  return w.dir();
}

// The report's results for the float32 and the int64 output, in that order.
std::pair<TensorResult, TensorResult> Compare(const std::string& a, const std::string& b,
                                              const std::string& policy = "auto") {
  CompareOptions options;
  options.a = a;
  options.b = b;
  options.tolerance.policy = policy;
  auto report = RunCompare(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  if (!report.ok() || report->tensors.size() != 2) {
    ADD_FAILURE() << "expected two tensors";
    return {};
  }
  const bool float_first = report->tensors[0].dtype == "float32";
  return {report->tensors[float_first ? 0 : 1], report->tensors[float_first ? 1 : 0]};
}

TEST(CompareDigests, EqualDigestsPass) {
  TempDir tmp;
  const auto [f, i] = Compare(HashesDump(tmp, "a", "aa", "bb"), HashesDump(tmp, "b", "aa", "bb"));
  for (const TensorResult& r : {f, i}) {
    EXPECT_TRUE(r.pass) << r.reason;
    EXPECT_FALSE(r.not_compared);
    EXPECT_EQ(r.reason, "statistics only: equal digests (bitwise identical)");
    EXPECT_TRUE(r.stats_comparison["digest"]["equal"].get<bool>());
    EXPECT_EQ(r.stats_comparison["digest"]["algorithm"], "xxh3_128");
  }
}

TEST(CompareDigests, DifferentDigestsFailIntegersAndSkipFloats) {
  TempDir tmp;
  const std::string a = HashesDump(tmp, "a", "aa", "bb");
  const std::string b = HashesDump(tmp, "b", "a0", "b0");
  for (const std::string policy : {"auto", "exact", "torch"}) {
    SCOPED_TRACE(policy);
    const auto [f, i] = Compare(a, b, policy);
    // An integer's bytes are its value: different digests are different values.
    EXPECT_FALSE(i.pass);
    EXPECT_FALSE(i.not_compared);
    EXPECT_EQ(i.reason, "statistics only: the digests differ (the data is not identical)");
    // A float's may differ in a zero's sign alone, and a digest tells no size: never a pass.
    EXPECT_FALSE(f.pass);
    EXPECT_TRUE(f.not_compared) << f.reason;
    EXPECT_NE(f.reason.find("the digests differ"), std::string::npos) << f.reason;
    EXPECT_FALSE(f.stats_comparison["digest"]["equal"].get<bool>());
  }
}

TEST(CompareDigests, DigestsByOtherAlgorithmsOrFailedOnesTellNothing) {
  TempDir tmp;
  for (const auto& [a, b] :
       {std::pair{HashesDump(tmp, "a", "aa", "bb", "xxh3_128"),
                  HashesDump(tmp, "b", "aa", "bb", "sha256")},
        std::pair{HashesDump(tmp, "c", "error: MemoryError", "error: MemoryError"),
                  HashesDump(tmp, "d", "error: MemoryError", "error: MemoryError")}}) {
    const auto [f, i] = Compare(a, b);
    for (const TensorResult& r : {f, i}) {
      EXPECT_FALSE(r.pass) << a;
      EXPECT_TRUE(r.not_compared) << r.reason;
      EXPECT_EQ(r.reason, "not compared: statistics only, and no statistic recorded on both sides");
    }
  }
}

}  // namespace
}  // namespace parity
