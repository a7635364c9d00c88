// SPDX-License-Identifier: Apache-2.0
// Dump directories of format version 2 (and version 1 unchanged): every new field, rank<N>/
// directories, records matched by step, duplicates and the bad input each is exit 2 for; the
// coverage and the per-step evidence read from them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compare/entries.h"
#include "dump_writer.h"
#include "explain/evidence.h"
#include "io/dump.h"
#include "oracle/coverage.h"
#include "testdata.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using ::parity::testing::DumpWriter;
using ::parity::testing::Manifest2;
using ::parity::testing::TempDir;

// A statistics-only tensor entry (no file needed).
Json StatsTensor(double mean = 0.0) {
  return {{"dtype", "float32"}, {"shape", {4}}, {"stats", {{"mean", mean}}}};
}

// A record of `name` with one statistics-only output.
Json Record(int64_t seq, const std::string& name, const std::string& pass, int64_t call,
            int64_t step = 0, Json extra = Json::object()) {
  Json r = {{"seq", seq},
            {"step", step},
            {"name", name},
            {"op", "addmm"},
            {"pass", pass},
            {"call", call},
            {"inputs", Json::array()},
            {"outputs", {StatsTensor()}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) r[it.key()] = it.value();
  return r;
}

// The message of a dump that must fail to open (the test fails when it opens).
std::string OpenError(const std::string& dir) {
  auto dump = DumpDir::Open(dir);
  EXPECT_FALSE(dump.ok()) << dir << " opened";
  return dump.ok() ? std::string() : dump.status().message();
}

TEST(DumpV2, ParsesEveryNewField) {
  TempDir tmp;
  DumpWriter w(tmp.File("d"));
  w.Npy("tensors/000017_in0.npy", {1, 2, 3, 4});
  w.Manifest(
      Manifest2({{"level", "aten"},
                 {"rank", 0},
                 {"world_size", 1},
                 {"mode", "tensors"},
                 {"omitted", {{"view", 120}, {"t", 14}}},
                 {"truncated_at_seq", 500},
                 {"steps",
                  {{{"step", 0},
                    {"generators", {{"cpu", "ab12"}, {"cuda:0", "cd34"}}},
                    {"scaler", {{"scale", 65536.0}, {"skipped", false}}},
                    {"records", 2}},
                   {{"step", 1}, {"generators", {{"cpu", "ef56"}}}, {"scaler", nullptr}}}}}));
  Json in0 = {
      {"arg", "self"}, {"file", "tensors/000017_in0.npy"}, {"dtype", "float32"}, {"shape", {4}}};
  Json in1 = {{"arg", "tensors"},
              {"index", 2},
              {"dtype", "float32"},
              {"shape", {4}},
              {"stats", {{"min", -1.0}, {"zero", 3}, {"hash", "deadbeef"}}}};
  w.Records({Record(17, "enc.addmm", "forward", 0, 0,
                    {{"overload", "default"}, {"module", "enc"}, {"inputs", {in0, in1}}}),
             Record(18, "opt.add", "optimizer", 0, 1)});
  auto dump = DumpDir::Open(w.dir());
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->version(), 2);
  EXPECT_EQ(dump->level(), "aten");
  EXPECT_EQ(dump->mode(), "tensors");
  EXPECT_FALSE(dump->distributed());
  const DumpPart& part = dump->parts().at(0);
  EXPECT_EQ(part.world_size, 1);
  EXPECT_EQ(part.truncated_at_seq, 500);
  EXPECT_EQ(dump->Omitted(), (std::map<std::string, int64_t>{{"t", 14}, {"view", 120}}));
  const auto steps = dump->StepsByRank();
  ASSERT_EQ(steps.size(), 1u);
  const std::vector<DumpStep>& s = steps.at(0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].generators.at("cuda:0"), "cd34");
  EXPECT_EQ(s[0].scale, 65536.0);
  EXPECT_EQ(s[0].skipped, false);
  EXPECT_EQ(s[0].records, 2);
  EXPECT_EQ(s[1].step, 1);
  EXPECT_FALSE(s[1].scale.has_value());  // "scaler": null is no scaler
  EXPECT_EQ(dump->Steps(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(dump->Ranks(), (std::vector<int64_t>{0}));

  ASSERT_EQ(dump->records().size(), 2u);
  const DumpRecord& r = dump->records()[0];
  EXPECT_EQ(r.overload, "default");
  EXPECT_EQ(r.module, "enc");
  EXPECT_EQ(r.step, 0);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].arg, "self");
  EXPECT_FALSE(r.inputs[0].index.has_value());
  EXPECT_EQ(r.inputs[1].arg, "tensors");
  EXPECT_EQ(r.inputs[1].index, 2);
  ASSERT_TRUE(r.inputs[1].stats.has_value());
  EXPECT_EQ(r.inputs[1].stats->zero, 3);
  EXPECT_EQ(r.inputs[1].stats->hash, "deadbeef");
  EXPECT_EQ(r.inputs[1].stats->min, -1.0);
  auto loaded = dump->Load(r, r.inputs[0]);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->meta().shape, std::vector<int64_t>{4});
  EXPECT_EQ(dump->records()[1].pass, "optimizer");
  EXPECT_EQ(dump->records()[1].step, 1);
}

TEST(DumpV2, DefaultsOfAbsentKeys) {
  TempDir tmp;
  DumpWriter v2(tmp.File("v2"));
  v2.Manifest(Manifest2());
  v2.Records({Record(0, "x", "forward", 0)});
  auto dump = DumpDir::Open(v2.dir());
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->level(), "aten");  // version 2 without `level`
  EXPECT_EQ(dump->mode(), "tensors");
  EXPECT_TRUE(dump->Omitted().empty());
  EXPECT_TRUE(dump->StepsByRank().empty());
}

TEST(DumpV2, Version1IsReadAsBefore) {
  TempDir tmp;
  DumpWriter w(tmp.File("v1"));
  // Version 2 keys in a version 1 manifest mean nothing.
  w.Manifest({{"format", "parity-dump"}, {"version", 1}, {"level", "aten"}, {"steps", 5}});
  Json r = Record(0, "fc1", "forward", 0);
  r.erase("step");
  w.Records({r, Record(1, "fc1", "backward", 0)});
  auto dump = DumpDir::Open(w.dir());
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->version(), 1);
  EXPECT_EQ(dump->level(), "modules");
  EXPECT_TRUE(dump->StepsByRank().empty());
  EXPECT_EQ(dump->records()[0].step, 0);
  EXPECT_EQ(dump->records()[0].overload, "");
  EXPECT_EQ(dump->Where(dump->records()[1]), w.dir() + "/records.jsonl:2");
}

TEST(DumpV2, RankDirectoriesAreOneDistributedDump) {
  TempDir tmp;
  const std::string root = tmp.File("dist");
  for (int rank : {0, 1}) {
    DumpWriter w(root + "/rank" + std::to_string(rank));
    w.Npy("tensors/x.npy", {static_cast<float>(rank), 1, 2, 3});
    w.Manifest(Manifest2(
        {{"rank", rank},
         {"world_size", 2},
         {"omitted", {{"view", 10 + rank}}},
         {"steps", {{{"step", 0}, {"generators", {{"cpu", rank == 0 ? "r0" : "r1"}}}}}}}));
    Json out = {{"file", "tensors/x.npy"}, {"dtype", "float32"}, {"shape", {4}}};
    // Rank 1's record leaves `rank` out: it is rank 1's by its directory.
    Json r = Record(0, "fc", "forward", 0, 0, {{"outputs", {out}}});
    if (rank == 0) r["rank"] = 0;
    w.Records({r});
  }
  EXPECT_TRUE(DumpDir::IsDump(root));
  auto dump = DumpDir::Open(root);
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_TRUE(dump->distributed());
  ASSERT_EQ(dump->parts().size(), 2u);
  ASSERT_EQ(dump->records().size(), 2u);
  const DumpRecord& r1 = dump->records()[1];
  EXPECT_EQ(r1.rank, 1);
  EXPECT_EQ(dump->Where(r1), root + "/rank1/records.jsonl:1");
  EXPECT_EQ(dump->ManifestFor(r1)["rank"], 1);
  auto t = dump->Load(r1, r1.outputs[0]);  // rank1/tensors/x.npy, not rank0's
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(testing::ToDoubles(*t)[0], 1.0);
  EXPECT_EQ(dump->Ranks(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(dump->Omitted().at("view"), 21);
  EXPECT_EQ(dump->StepsByRank().at(1)[0].generators.at("cpu"), "r1");
}

TEST(DumpV2, RankDirectoryRecordOfAnotherRankIsAnError) {
  TempDir tmp;
  const std::string root = tmp.File("dist");
  for (int rank : {0, 1}) {
    DumpWriter w(root + "/rank" + std::to_string(rank));
    w.Manifest(Manifest2({{"rank", rank}}));
    w.Records({Record(0, "fc", "forward", 0, 0, {{"rank", 0}})});
  }
  std::string error = OpenError(root);
  EXPECT_NE(error.find(root + "/rank1/records.jsonl:1: 'rank' is 0, but the record lies in rank1/"),
            std::string::npos)
      << error;
  // Ranks of one run agree on the format.
  DumpWriter(root + "/rank1").Manifest(Manifest2({{"rank", 1}, {"level", "modules"}}));
  error = OpenError(root);
  EXPECT_NE(error.find(root + "/rank1/manifest.json: version 2, level modules, mode tensors; but"),
            std::string::npos)
      << error;
}

TEST(DumpV2, SameNamePassCallInTwoStepsDoNotCollide) {
  TempDir tmp;
  DumpWriter a(tmp.File("a")), b(tmp.File("b"));
  for (const DumpWriter* w : {&a, &b}) w->Manifest(Manifest2());
  a.Records({Record(0, "fc", "forward", 0, 0), Record(1, "fc", "forward", 0, 1)});
  // B wrote step 1 first and its seqs differ: only the step tells the records apart.
  b.Records({Record(5, "fc", "forward", 0, 1), Record(9, "fc", "forward", 0, 0)});
  auto da = DumpDir::Open(a.dir());
  auto db = DumpDir::Open(b.dir());
  ASSERT_TRUE(da.ok()) << da.status().message();
  ASSERT_TRUE(db.ok()) << db.status().message();
  std::vector<std::string> warnings;
  const auto pairs = PairRecords(*da, *db, &warnings);
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto& [ra, rb] : pairs) {
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    EXPECT_EQ(ra->step, rb->step);
  }
  EXPECT_EQ(pairs[0].second->seq, 9);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(RecordTensorPrefix(0, 1, "fc", "forward", 0), "step1.fc.forward.0");
  EXPECT_EQ(RecordTensorPrefix(2, 0, "fc", "forward", 0), "rank2.fc.forward.0");
}

TEST(DumpV2, DuplicateRecordsAreErrorsNamingBothLines) {
  TempDir tmp;
  DumpWriter w(tmp.File("dup"));
  w.Manifest(Manifest2());
  // A second capture appended: seq and call restart at 0.
  w.Records({Record(0, "fc", "forward", 0), Record(1, "relu", "forward", 0),
             Record(0, "fc", "forward", 0)});
  std::string error = OpenError(w.dir());
  EXPECT_NE(error.find("records.jsonl:3: duplicate record (rank 0, step 0, name fc, pass "
                       "forward, call 0), first at line 1"),
            std::string::npos)
      << error;
  w.Records({Record(0, "fc", "forward", 0), Record(0, "fc", "forward", 1)});
  error = OpenError(w.dir());
  EXPECT_NE(error.find("records.jsonl:2: duplicate seq 0 (rank 0), first at line 1"),
            std::string::npos)
      << error;
}

TEST(DumpV2, BadManifestsAreErrorsNamingTheManifest) {
  struct Case {
    Json manifest;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{{"format", "parity-dump"}, {"version", 3}},
       "manifest.json: format version 3 is newer than this parity reads (1 and 2)"},
      {{{"format", "parity-dump"}, {"version", "2"}},
       "manifest.json: 'version' is \"2\", not an integer"},
      {{{"format", "parity-dump"}, {"version", 0}}, "manifest.json: 'version' is 0"},
      {{{"format", "parity-dump"}}, "manifest.json: 'version' is missing"},
      {Manifest2({{"level", "ops"}}), "manifest.json: 'level' is \"ops\""},
      {Manifest2({{"mode", "md5"}}),
       "manifest.json: 'mode' is \"md5\", expected \"tensors\", \"stats\" or \"hashes\""},
      {Manifest2({{"omitted", {{"view", -1}}}}),
       "manifest.json: omitted.view is not a non-negative integer"},
      {Manifest2({{"steps", {{{"step", -1}}}}}),
       "manifest.json: steps[0]: 'step' is missing or not a"},
      {Manifest2({{"steps", {{{"step", 0}}, {{"step", 0}}}}}),
       "manifest.json: steps[1]: step 0 is listed twice"},
      {Manifest2({{"steps", {{{"step", 0}, {"scaler", {{"skipped", "no"}}}}}}}),
       "manifest.json: steps[0]: scaler.skipped is not true or false"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    DumpWriter w(tmp.File("d"));
    w.Manifest(c.manifest);
    w.Records({Record(0, "fc", "forward", 0)});
    const std::string error = OpenError(w.dir());
    EXPECT_NE(error.find(w.dir() + "/" + c.error), std::string::npos)
        << c.manifest.dump() << ": " << error;
  }
}

TEST(DumpV2, BadRecordsAreErrorsNamingFileAndLine) {
  struct Case {
    int version;
    Json record;
    std::string error;
  };
  const std::vector<Case> cases = {
      {1, Record(0, "step", "optimizer", 0),
       "records.jsonl:2: 'pass' is 'optimizer', which needs format version 2"},
      {2, Record(0, "x", "sideways", 0),
       "records.jsonl:2: 'pass' is 'sideways', expected 'forward', 'backward' or 'optimizer'"},
      {2, Record(0, "x", "forward", 0, -1), "records.jsonl:2: 'step' is -1"},
      {2, Record(0, "x", "forward", 0, 0, {{"step", 1.5}}),
       "records.jsonl:2: 'step' is not an integer"},
      {2, Record(0, "x", "forward", 0, 0, {{"overload", 3}}),
       "records.jsonl:2: 'overload' is not a string"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    DumpWriter w(tmp.File("d"));
    w.Manifest({{"format", "parity-dump"}, {"version", c.version}});
    w.Records({Record(100, "ok", "forward", 0), c.record});
    const std::string error = OpenError(w.dir());
    EXPECT_NE(error.find(w.dir() + "/" + c.error), std::string::npos)
        << c.record.dump() << ": " << error;
  }
}

TEST(DumpV2, FilesAreReadOnlyInsideTheDump) {
  TempDir tmp;
  DumpWriter w(tmp.File("d"));
  DumpWriter outside(tmp.File("elsewhere"));
  outside.Npy("tensors/x.npy", {1, 2, 3, 4});
  w.Npy("tensors/in.npy", {1, 2, 3, 4});
  fs::create_symlink(tmp.File("elsewhere/tensors/x.npy"), w.dir() + "/tensors/out.npy");
  fs::create_symlink("in.npy", w.dir() + "/tensors/also-in.npy");  // stays inside: read
  w.Manifest(Manifest2());
  auto tensor = [](const char* file) {
    return Json{{"file", file}, {"dtype", "float32"}, {"shape", {4}}};
  };
  w.Records({Record(0, "a", "forward", 0, 0, {{"outputs", {tensor("tensors/also-in.npy")}}}),
             Record(1, "b", "forward", 0, 0, {{"outputs", {tensor("tensors/out.npy")}}})});
  auto dump = DumpDir::Open(w.dir());
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  const auto& records = dump->records();
  EXPECT_TRUE(dump->Load(records[0], records[0].outputs[0]).ok());
  auto out = dump->Load(records[1], records[1].outputs[0]);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find(kOutsideTheDump), std::string::npos);
  EXPECT_NE(out.status().message().find("records.jsonl:2"), std::string::npos);

  // The manifest and the records themselves too.
  outside.Manifest(Manifest2());
  fs::remove(w.dir() + "/manifest.json");
  fs::create_symlink(outside.dir() + "/manifest.json", w.dir() + "/manifest.json");
  const std::string error = OpenError(w.dir());
  EXPECT_NE(error.find(w.dir() + "/manifest.json: " + std::string(kOutsideTheDump)),
            std::string::npos)
      << error;
}

TEST(DumpV2, CoverageCountsOpsPassesAndReplayable) {
  TempDir tmp;
  DumpWriter w(tmp.File("d"));
  w.Npy("tensors/x.npy", {1, 2, 3, 4});
  w.Npy("tensors/y.npy", {1, 2, 3, 4});
  w.Manifest(Manifest2({{"omitted", {{"view", 7}}}}));
  Json x = {{"file", "tensors/x.npy"}, {"dtype", "float32"}, {"shape", {4}}};
  Json y = {{"file", "tensors/y.npy"}, {"dtype", "float32"}, {"shape", {4}}};
  w.Records({
      Record(0, "relu", "forward", 0, 0, {{"op", "relu"}, {"inputs", {x}}, {"outputs", {y}}}),
      // relu again, but saved as statistics: compared only.
      Record(1, "relu", "backward", 0, 0, {{"op", "relu"}}),
      Record(2, "mm", "forward", 0, 1),  // addmm: replayable, but saved without data
  });
  auto dump = DumpDir::Open(w.dir());
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  const DumpCoverage c = CoverageOf(*dump);
  EXPECT_EQ(c.records, 3);
  EXPECT_EQ(c.replayable, 1);
  EXPECT_EQ(c.compared_only, 2);
  ASSERT_EQ(c.ops.size(), 2u);
  EXPECT_TRUE(c.ops.at("relu").replayable);
  EXPECT_TRUE(c.ops.at("addmm").replayable);
  EXPECT_EQ(c.ops.at("relu").passes,
            (std::map<std::string, int64_t>{{"backward", 1}, {"forward", 1}}));
  EXPECT_EQ(c.omitted.at("view"), 7);
  EXPECT_EQ(c.steps, (std::vector<int64_t>{0, 1}));
  const Json j = CoverageJson(c);
  EXPECT_EQ(j["ops"]["relu"]["passes"]["forward"], 1);
  EXPECT_EQ(j["compared_only"], 2);
  EXPECT_NE(CoverageLine(c).find("3 records of 2 ops (1 replayable, 2 compared only), steps 0-1"),
            std::string::npos)
      << CoverageLine(c);
}

TEST(DumpV2, EvidenceFindsTheFirstDifferingGeneratorAndScaler) {
  TempDir tmp;
  DumpWriter a(tmp.File("a")), b(tmp.File("b"));
  auto steps = [](const std::string& cpu1, double scale2, bool skip2) {
    return Json{{{"step", 0},
                 {"generators", {{"cpu", "aa"}, {"cuda:0", "c0"}}},
                 {"scaler", {{"scale", 65536.0}, {"skipped", false}}}},
                {{"step", 1},
                 {"generators", {{"cpu", cpu1}, {"cuda:0", "c1"}}},
                 {"scaler", {{"scale", 65536.0}, {"skipped", false}}}},
                {{"step", 2},
                 {"generators", {{"cpu", "zz"}, {"cuda:0", "c2"}}},
                 {"scaler", {{"scale", scale2}, {"skipped", skip2}}}}};
  };
  a.Manifest(Manifest2({{"steps", steps("bb", 65536.0, false)}}));
  b.Manifest(Manifest2({{"steps", steps("XX", 32768.0, true)}}));
  for (const DumpWriter* w : {&a, &b}) w->Records({Record(0, "fc", "forward", 0)});
  auto da = DumpDir::Open(a.dir());
  auto db = DumpDir::Open(b.dir());
  ASSERT_TRUE(da.ok() && db.ok());
  const RunEvidence e = CompareEvidence(*da, *db);
  ASSERT_TRUE(e.generators_first_differ.has_value());
  EXPECT_EQ(e.generators_first_differ->step, 1);
  EXPECT_EQ(e.generators_first_differ->generators, std::vector<std::string>{"cpu"});
  EXPECT_EQ(e.generator_steps_compared, 3);
  ASSERT_TRUE(e.scaler.has_value());
  EXPECT_EQ(e.scaler->first_differ_step, 2);
  EXPECT_EQ(e.scaler->b, (std::vector<double>{65536.0, 65536.0, 32768.0}));
  EXPECT_EQ(e.scaler->skipped_b, std::vector<int64_t>{2});
  EXPECT_TRUE(e.scaler->skipped_a.empty());
  EXPECT_NE(EvidenceText(e, "").find("generators: first differ at step 1 (cpu)"),
            std::string::npos);

  // The same dump against itself: nothing differs.
  const RunEvidence same = CompareEvidence(*da, *da);
  EXPECT_FALSE(same.generators_first_differ.has_value());
  ASSERT_TRUE(same.scaler.has_value());
  EXPECT_FALSE(same.scaler->differ());
  EXPECT_NE(EvidenceText(same, "").find("generators: identical at every step"), std::string::npos);
}

}  // namespace
}  // namespace parity
