// SPDX-License-Identifier: Apache-2.0
// Tensors a dump holds but parity does not compare: entries "not stored" (sparse, nested,
// quantized tensors, a conversion that raised) and complex dtypes, read, inspected, compared,
// replayed and explained, never judged by what is absent; and a record's `source` read and
// shown beside an origin.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "core/exit_code.h"
#include "dump_writer.h"
#include "explain/explain.h"
#include "inspect/inspect.h"
#include "io/dump.h"
#include "oracle/replay.h"
#include "testdata.h"

namespace parity {
namespace {

using ::parity::testing::TempDir;

// A version 2 dump directory written by the test.
class Dump : public ::parity::testing::DumpWriter {
 public:
  explicit Dump(std::string dir) : DumpWriter(std::move(dir)) {
    Manifest(::parity::testing::Manifest2());
  }
  // A complex64 .npy of n elements (as numpy writes it: descr '<c8'), which parity can't read.
  void ComplexNpy(const std::string& rel, int n) const {
    std::string header =
        fmt::format("{{'descr': '<c8', 'fortran_order': False, 'shape': ({},), }}", n);
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string file = "\x93NUMPY";
    file += '\x01';
    file += '\x00';
    file += static_cast<char>(header.size() & 0xff);
    file += static_cast<char>(header.size() >> 8);
    file += header;
    file += std::string(static_cast<std::size_t>(n) * 8, '\0');
    Write(rel, file);
  }
};

Json NotStored(const std::string& reason = "sparse_coo layout") {
  return {{"dtype", "float32"}, {"shape", {4}}, {"layout", "sparse_coo"}, {"not stored", reason}};
}

Json Stats(Json stats) { return {{"dtype", "float32"}, {"shape", {4}}, {"stats", stats}}; }

Json File(const std::string& file) {
  return {{"dtype", "float32"}, {"shape", {4}}, {"file", file}};
}

// inputs and outputs are vectors, not Json: a braced list of one Json would be that Json itself
// under clang (list-initialisation from one element of the same type) and an array under gcc.
Json Record(int64_t seq, const std::string& op, const std::vector<Json>& inputs,
            const std::vector<Json>& outputs, Json extra = Json::object()) {
  Json r = {{"seq", seq},
            {"name", fmt::format("{}{}", op, seq)},
            {"op", op},
            {"pass", "forward"},
            {"call", 0},
            {"inputs", Json(inputs)},
            {"outputs", Json(outputs)}};
  for (auto it = extra.begin(); it != extra.end(); ++it) r[it.key()] = it.value();
  return r;
}

DumpDir Open(const std::string& dir) {
  auto dump = DumpDir::Open(dir);
  EXPECT_TRUE(dump.ok()) << dump.status().message();
  return std::move(dump).value();
}

TEST(Unstorable, NotStoredEntriesAreReadWithTheirReason) {
  TempDir tmp;
  Dump d(tmp.File("d"));
  Json ragged = {{"dtype", "float32"}, {"layout", "jagged"}, {"not stored", "nested tensor"}};
  Json quantized = {{"dtype", "quint8"},
                    {"shape", {2, 2}},
                    {"layout", "strided"},
                    {"not stored", "quantized tensor (per_tensor_affine)"}};
  d.Records({Record(0, "add_", {File("tensors/a.npy"), NotStored()}, {ragged, quantized},
                    {{"pass", "optimizer"}})});
  d.Npy("tensors/a.npy", {1, 2, 3, 4});
  const DumpDir dump = Open(d.dir());
  ASSERT_EQ(dump.records().size(), 1u);
  const DumpRecord& r = dump.records()[0];
  EXPECT_TRUE(r.inputs[0].comparable());
  EXPECT_TRUE(r.inputs[0].has_data());
  const DumpTensorRef& sparse = r.inputs[1];
  EXPECT_FALSE(sparse.comparable());
  EXPECT_FALSE(sparse.has_data());
  EXPECT_EQ(sparse.not_stored, "sparse_coo layout");
  EXPECT_EQ(sparse.not_comparable, "not stored: sparse_coo layout");
  EXPECT_EQ(sparse.layout, "sparse_coo");
  EXPECT_EQ(sparse.DTypeName(), "float32");
  EXPECT_TRUE(sparse.shape_known);
  EXPECT_EQ(sparse.shape, (std::vector<int64_t>{4}));
  EXPECT_FALSE(sparse.stats.has_value());
  EXPECT_FALSE(r.outputs[0].shape_known);  // a ragged dimension: no shape, not a 0-d one
  EXPECT_EQ(r.outputs[1].DTypeName(), "quint8");
  EXPECT_EQ(r.outputs[1].not_comparable, "not stored: quantized tensor (per_tensor_affine)");
  // Loading one is an error naming the reason, never data.
  auto loaded = dump.Load(r, sparse);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("not stored: sparse_coo layout"), std::string::npos);
}

TEST(Unstorable, ComplexEntriesAreReadAsNotComparable) {
  TempDir tmp;
  Dump d(tmp.File("d"));
  d.ComplexNpy("tensors/z.npy", 4);
  Json z = {{"dtype", "complex64"}, {"shape", {4}}, {"file", "tensors/z.npy"}};
  Json w = {{"dtype", "complex128"},
            {"shape", {4}},
            {"stats", {{"min", -1.0}, {"max", 1.0}, {"hash", "ab"}}}};
  d.Records({Record(0, "mul", {z}, {w})});
  const DumpDir dump = Open(d.dir());
  const DumpRecord& r = dump.records()[0];
  EXPECT_EQ(r.inputs[0].DTypeName(), "complex64");
  EXPECT_EQ(r.inputs[0].file, "tensors/z.npy");
  EXPECT_FALSE(r.inputs[0].has_data());
  EXPECT_EQ(r.inputs[0].not_comparable,
            "complex64: parity compares real dtypes only (the .npy holds it for numpy)");
  EXPECT_TRUE(r.inputs[0].not_stored.empty());
  EXPECT_EQ(r.outputs[0].DTypeName(), "complex128");
  EXPECT_TRUE(r.outputs[0].stats.has_value());
  EXPECT_NE(r.outputs[0].not_comparable.find("complex128: parity compares real dtypes only"),
            std::string::npos);
  // Replay names the tensor, whatever the op.
  EXPECT_EQ(NotReplayableReason(r),
            "input 0 is complex64: parity compares real dtypes only (the .npy holds it for "
            "numpy)");
  // Inspect lists both and does not read the complex .npy as a file.
  InspectOptions options;
  options.paths = {d.dir()};
  auto doc = RunInspect(options);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  for (const Json& f : (*doc)["files"]) {
    EXPECT_EQ(f["path"].get<std::string>().find("z.npy"), std::string::npos);
  }
  const Json& listed = (*doc)["dumps"][0]["not_comparable"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["tensor"], "input.0");
  EXPECT_EQ(listed[0]["dtype"], "complex64");
  EXPECT_EQ(listed[0]["file"], "tensors/z.npy");
  EXPECT_EQ((*doc)["coverage"]["not_comparable"], 2);
}

TEST(Unstorable, MalformedEntriesAreExit2NamingTheEntry) {
  struct Case {
    Json entry;
    std::string error;
  };
  Json with_file = NotStored();
  with_file["file"] = "tensors/a.npy";
  Json with_stats = NotStored();
  with_stats["stats"] = {{"mean", 0.0}};
  Json bad_shape = NotStored();
  bad_shape["shape"] = "4";
  Json bad_layout = NotStored();
  bad_layout["layout"] = 3;
  const std::vector<Case> cases = {
      {NotStored(""), "outputs[0]: 'not stored' is empty"},
      {{{"dtype", "float32"}, {"shape", {4}}, {"not stored", 5}},
       "outputs[0]: 'not stored' is not a string"},
      {with_file, "outputs[0] has both 'not stored' and 'file'"},
      {with_stats, "outputs[0] has both 'not stored' and 'stats'"},
      {bad_shape, "outputs[0]: 'shape' is missing or not an array"},
      {bad_layout, "outputs[0]: 'layout' is not a string"},
      {{{"dtype", "quint8"}, {"shape", {4}}, {"stats", {{"mean", 0.0}}}},
       "outputs[0]: unknown dtype 'quint8'"},
      {{{"dtype", "float32"}, {"shape", {4}}}, "outputs[0] has neither 'file', 'stats' nor"},
      {{{"shape", {4}}, {"not stored", "nested tensor"}},
       "outputs[0]: 'dtype' is missing or not a string"},
  };
  TempDir tmp;
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    Dump d(tmp.File(fmt::format("d{}", i++)));
    d.Npy("tensors/a.npy", {1, 2, 3, 4});
    d.Records({Record(0, "add", {}, {c.entry})});
    auto dump = DumpDir::Open(d.dir());
    ASSERT_FALSE(dump.ok());
    EXPECT_EQ(ExitCodeFor(dump.status()), 2);
    EXPECT_NE(dump.status().message().find("records.jsonl:1"), std::string::npos)
        << dump.status().message();
    EXPECT_NE(dump.status().message().find(c.error), std::string::npos) << dump.status().message();
  }
}

TEST(Unstorable, SourceIsReadAndAMalformedOneIsDroppedWithAWarning) {
  TempDir tmp;
  Dump d(tmp.File("d"));
  const Json source = {
      {"file", "model.py"}, {"line", 42}, {"function", "forward"}, {"code", "h = self.fc(x)"}};
  d.Records({Record(0, "addmm", {}, {Stats({{"mean", 0.0}})}, {{"source", source}}),
             Record(1, "addmm", {}, {Stats({{"mean", 0.0}})},
                    {{"source", {{"file", "model.py"}, {"line", "42"}}}}),
             Record(2, "addmm", {}, {Stats({{"mean", 0.0}})}, {{"source", "model.py:42"}}),
             Record(3, "addmm", {}, {Stats({{"mean", 0.0}})}, {{"source", nullptr}})});
  const DumpDir dump = Open(d.dir());
  ASSERT_EQ(dump.records().size(), 4u);
  ASSERT_TRUE(dump.records()[0].source.has_value());
  const RecordSource& s = *dump.records()[0].source;
  EXPECT_EQ(s.file, "model.py");
  EXPECT_EQ(s.line, 42);
  EXPECT_EQ(s.function, "forward");
  EXPECT_EQ(s.code, "h = self.fc(x)");
  for (std::size_t i = 1; i < 4; ++i) EXPECT_FALSE(dump.records()[i].source.has_value()) << i;
  ASSERT_EQ(dump.warnings().size(), 1u);
  EXPECT_NE(dump.warnings()[0].find("records.jsonl:2: 'source.line'"), std::string::npos)
      << dump.warnings()[0];
  EXPECT_NE(dump.warnings()[0].find("(and 1 more records like it)"), std::string::npos);
}

// Two dumps: a not-stored output on both sides (no statistics: empty against empty would be
// "equal"), a pair with data on A and not stored on B, and a pair that compares.
TEST(Unstorable, CompareSkipsPairsItCannotCompareNeverPasses) {
  TempDir tmp;
  Dump a(tmp.File("a")), b(tmp.File("b"));
  for (const Dump* d : {&a, &b}) {
    d->Npy("tensors/x.npy", {1, 2, 3, 4});
    d->Records({Record(0, "add_", {File("tensors/x.npy")},
                       {NotStored(), d == &a ? File("tensors/x.npy") : NotStored(),
                        Stats({{"mean", 1.0}, {"l2", 2.0}})})});
  }
  CompareOptions options;
  options.a = a.dir();
  options.b = b.dir();
  auto report = RunCompare(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->tensors.size(), 4u);
  EXPECT_EQ(report->passed, 2);
  EXPECT_EQ(report->failed, 0);
  EXPECT_EQ(report->not_compared, 2);
  const TensorResult& both = report->tensors[1];
  EXPECT_EQ(both.name, "add_0.forward.0.output.0");
  EXPECT_TRUE(both.not_compared);
  EXPECT_FALSE(both.pass);
  EXPECT_FALSE(both.structural);
  EXPECT_EQ(both.reason, "not compared: A and B: not stored: sparse_coo layout");
  EXPECT_EQ(report->tensors[2].reason, "not compared: B: not stored: sparse_coo layout");
  EXPECT_FALSE(report->first_divergence.has_value());
  const Json doc = CompareReportJson(*report);
  EXPECT_EQ(doc["summary"]["not_compared"], 2);
  EXPECT_EQ(doc["summary"]["failed"], 0);
  EXPECT_EQ(doc["tensors"][1]["verdict"], "skip");
  EXPECT_EQ(doc["tensors"][1]["not_compared"], true);
  const std::string text = CompareReportText(*report);
  EXPECT_NE(text.find("SKIP"), std::string::npos) << text;
  EXPECT_NE(text.find("2 not compared"), std::string::npos) << text;
  EXPECT_NE(CompareReportCsv(*report).find(",skip,"), std::string::npos);
}

TEST(Unstorable, StatisticsWithNothingInCommonAreNotCompared) {
  TempDir tmp;
  Dump a(tmp.File("a")), b(tmp.File("b"));
  a.Records({Record(0, "add", {}, {Stats({{"mean", 1.0}})})});
  b.Records({Record(0, "add", {}, {Stats({{"l2", 1.0}})})});
  CompareOptions options;
  options.a = a.dir();
  options.b = b.dir();
  auto report = RunCompare(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->tensors.size(), 1u);
  EXPECT_TRUE(report->tensors[0].not_compared);
  EXPECT_EQ(report->passed + report->failed, 0);
}

// Explains A against B, expecting success.
ExplainReport Explain(const Dump& a, const Dump& b) {
  ExplainOptions options;
  options.a = a.dir();
  options.b = b.dir();
  auto report = RunExplain(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return std::move(report).value();
}

TEST(Unstorable, ExplainNeverCallsWhatItCannotSeeIdentical) {
  TempDir tmp;
  Dump a(tmp.File("a")), b(tmp.File("b"));
  for (const Dump* d : {&a, &b}) {
    const bool on_b = d == &b;
    d->Npy("tensors/x.npy", {1, 2, 3, 4});
    d->Npy("tensors/y.npy", {1, 2, 3, on_b ? 5.0f : 4.0f});
    d->Records({
        // Outputs not stored on either side (and no statistics): not judged.
        Record(0, "_sparse_coo_tensor_with_dims_and_tensors", {File("tensors/x.npy")},
               {NotStored()}),
        // A not-stored input, outputs held and bitwise equal: identical (by its outputs).
        Record(1, "add_", {File("tensors/x.npy"), NotStored()}, {File("tensors/x.npy")}),
        // A not-stored input, outputs that differ: not judged (origin or inherited?).
        Record(2, "add_", {File("tensors/x.npy"), NotStored()}, {File("tensors/y.npy")}),
        // Statistics only, but none recorded: empty against empty is not "equal".
        Record(3, "relu", {}, {Stats(Json::object())}),
        // Statistics that differ without the l2 norms that would tell rounding: not judged.
        Record(4, "relu", {}, {Stats({{"min", on_b ? 0.5 : 0.25}})}),
    });
  }
  const ExplainReport report = Explain(a, b);
  ASSERT_EQ(report.ops.size(), 5u);
  const Cause expected[] = {Cause::kNotJudged, Cause::kIdentical, Cause::kNotJudged,
                            Cause::kNotJudged, Cause::kNotJudged};
  for (std::size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(report.ops[i].reason);
    EXPECT_EQ(report.ops[i].cause, expected[i]) << i;
  }
  EXPECT_NE(report.ops[0].reason.find("output 0 in A and B not stored: sparse_coo layout"),
            std::string::npos);
  EXPECT_NE(report.ops[1].reason.find("bitwise-equal outputs"), std::string::npos);
  ASSERT_TRUE(report.ops[2].output_diff.has_value());
  EXPECT_GT(*report.ops[2].output_diff, 0.0);
  EXPECT_FALSE(IsOrigin(Cause::kNotJudged));
  EXPECT_TRUE(report.origins().empty());
  EXPECT_EQ(report.not_judged().size(), 4u);
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_FALSE(report.input_difference);
  const Json doc = ExplainReportJson(report);
  EXPECT_EQ(doc["summary"]["not-judged"], 4);
  EXPECT_EQ(doc["ops"][0]["cause"], "not-judged");
  const std::string text = ExplainReportText(report);
  EXPECT_NE(text.find("Not judged (4)"), std::string::npos) << text;
  EXPECT_NE(text.find("4 not judged (below)"), std::string::npos) << text;

  // Replay of such a record: not replayed, naming the tensor.
  ReplayOptions replay;
  replay.dump = a.dir();
  auto replayed = RunReplay(replay);
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(replayed->ops[1].reason, "input 1 not stored: sparse_coo layout");
  EXPECT_FALSE(replayed->ops[1].replayable);
  const DumpDir dump = *DumpDir::Open(a.dir());
  auto loaded = LoadRecord(dump, dump.records()[1]);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "not replayable: input 1 not stored: sparse_coo layout");
}

TEST(Unstorable, ExplainShowsTheSourceBesideAnOrigin) {
  TempDir tmp;
  Dump a(tmp.File("a")), b(tmp.File("b"));
  const Json source = {
      {"file", "model.py"}, {"line", 42}, {"function", "forward"}, {"code", "h = self.fc(x)"}};
  a.Records({Record(0, "relu", {}, {Stats({{"l2", 1.0}, {"nan", 0}})}, {{"source", source}})});
  b.Records({Record(0, "relu", {}, {Stats({{"l2", 2.0}, {"nan", 0}})}, {{"source", source}})});
  const ExplainReport report = Explain(a, b);
  ASSERT_EQ(report.origins().size(), 1u);
  EXPECT_EQ(report.ops[0].cause, Cause::kAlgorithmic);
  ASSERT_TRUE(report.ops[0].source.has_value());
  const std::string text = ExplainReportText(report);
  EXPECT_NE(text.find("      at model.py:42 in forward: h = self.fc(x)\n"), std::string::npos)
      << text;
  const Json doc = ExplainReportJson(report);
  EXPECT_EQ(doc["ops"][0]["source"], source);
  EXPECT_EQ(doc["origins"][0]["source"], source);
  // Without a source, no key: absent, not null.
  Dump c(tmp.File("c"));
  c.Records({Record(0, "relu", {}, {Stats({{"l2", 2.0}, {"nan", 0}})})});
  EXPECT_FALSE(ExplainReportJson(Explain(c, c))["ops"][0].contains("source"));
}

}  // namespace
}  // namespace parity
