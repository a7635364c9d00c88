// SPDX-License-Identifier: Apache-2.0
// parity accept on bundles made here: every part's criteria (a stage missing, failing,
// skipped, a corrupt file), the verdict and --strict, report.json's contract, junit.xml, the
// environment diff, the criteria file, the telemetry record, and a signed report checked.
#include "accept/accept.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "accept/criteria.h"
#include "accept/env_diff.h"
#include "accept/junit.h"
#include "accept/signing.h"
#include "accept/telemetry_record.h"
#include "env/knowledge.h"
#include "testdata.h"

namespace parity::accept {
namespace {

namespace fs = std::filesystem;
using parity::testing::TempDir;
using parity::testing::TestDataPath;

void WriteText(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A bundle written the way parity collect writes one, stage by stage.
class Bundle {
 public:
  explicit Bundle(std::string dir) : dir_(std::move(dir)) {
    manifest_ = {{"format", "parity-bundle"},
                 {"version", 1},
                 {"uid", "u-" + dir_},
                 {"status", "passed"},
                 {"level", 1},
                 {"backend", "cpu"},
                 {"plan", {{"name", "t"}}},
                 {"fingerprint", {{"hostname", "h"}}},
                 {"stages", Json::array()}};
  }
  const std::string& dir() const { return dir_; }
  Json& manifest() { return manifest_; }
  Bundle& Stage(const std::string& name, const std::string& kind, const std::string& status,
                const std::string& result = "", const std::string& reason = "") {
    Json s = {{"name", name}, {"kind", kind}, {"level", 1}, {"status", status}};
    s["result"] = result.empty() ? Json() : Json(result);
    s["reason"] = reason.empty() ? Json() : Json(reason);
    manifest_["stages"].push_back(s);
    return *this;
  }
  Bundle& File(const std::string& rel, const std::string& text) {
    WriteText(dir_ + "/" + rel, text);
    return *this;
  }
  /// A stage whose result is a document.
  Bundle& Result(const std::string& name, const std::string& kind, const std::string& file,
                 const Json& doc, const std::string& status = "passed") {
    const std::string rel = "stages/" + name + "/" + file;
    File(rel, doc.dump());
    return Stage(name, kind, status, rel);
  }
  /// A dump stage holding a copy of the dump directory `from`.
  Bundle& Dump(const std::string& name, const std::string& from) {
    fs::create_directories(dir_ + "/stages");
    fs::copy(from, dir_ + "/stages/" + name, fs::copy_options::recursive);
    return Stage(name, "dump", "passed", "stages/" + name);
  }
  void Write() { File("manifest.json", manifest_.dump(1)); }

 private:
  std::string dir_;
  Json manifest_;
};

Json BenchResult(const std::string& benchmark, double median, bool valid = true) {
  Json samples = Json::array();
  for (double f : {0.98, 0.99, 1.0, 1.01, 1.02}) samples.push_back(median * f);
  return {{"benchmark", benchmark}, {"dtype", "float64"},   {"params", {{"n", 1000}}},
          {"unit", "GB/s"},         {"better", "higher"},   {"median", median},
          {"min", median * 0.98},   {"max", median * 1.02}, {"cv", 0.014},
          {"samples", samples},     {"valid", valid},       {"status", valid ? "ok" : "invalid"},
          {"peak", nullptr},        {"efficiency", nullptr}};
}

Json BenchDoc(double scale, bool valid = true) {
  return {{"format", "parity-bench"},
          {"version", 1},
          {"backend", "cpu"},
          {"device", "cpu0"},
          {"platform", Json::object()},
          {"repeat", 1},
          {"results",
           {BenchResult("stream.copy", 10 * scale), BenchResult("stream.triad", 12 * scale, valid),
            BenchResult("gemm", 100 * scale)}}};
}

Json StressDoc(int64_t sdc, int64_t injected, int64_t recovered) {
  return {{"format", "parity-stress"},
          {"version", 1},
          {"workload", "gemm-burn"},
          {"backend", "cpu"},
          {"steps", 100},
          {"duration_s", 4.0},
          {"sdc_event_count", sdc},
          {"faults_injected", injected},
          {"faults_recovered", recovered},
          {"lost_steps", 0},
          {"sdc_events", Json::array()}};
}

/// telemetry.jsonl: `n` samples a second apart of one NVIDIA GPU at `temp` °C, with its
/// uncorrectable ECC counter rising by `ecc` over the record, and `xid` events of XID 79.
std::string Telemetry(int n, double temp, int ecc, int xid, bool fatal_alert = false) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    Json metrics = {
        {{"name", "gpu_temperature_celsius"},
         {"labels", {{"sensor", "junction"}}},
         {"value", temp - (i == n / 2 ? 0 : 5)}},
        {{"name", "gpu_power_watts"}, {"labels", Json::object()}, {"value", 300.0 + i}},
        {{"name", "gpu_ecc_errors_total"},
         {"labels", {{"severity", "uncorrectable"}, {"block", "dram"}, {"scope", "volatile"}}},
         {"value", i == n - 1 ? ecc : 0}},
        {{"name", "gpu_ecc_errors_total"},
         {"labels", {{"severity", "uncorrectable"}, {"block", "dram"}, {"scope", "aggregate"}}},
         {"value", 7 + (i == n - 1 ? ecc : 0)}}};
    if (xid > 0 && i >= n / 2) {
      metrics.push_back(
          {{"name", "gpu_xid_events_total"}, {"labels", {{"xid", "79"}}}, {"value", xid}});
    }
    Json sample = {{"format", "parity-monitor"},
                   {"version", 1},
                   {"kind", "sample"},
                   {"time", 1000.0 + i},
                   {"stage", i < n / 2 ? "bench" : "burn"},
                   {"devices",
                    {{{"device", 0},
                      {"source", "nvml"},
                      {"vendor", "NVIDIA"},
                      {"model", "H200"},
                      {"metrics", metrics}}}},
                   {"host", {{"metrics", Json::array()}}}};
    text += sample.dump() + "\n";
  }
  if (fatal_alert) {
    text += Json({{"kind", "alert"},
                  {"rule", "hot"},
                  {"severity", "fatal"},
                  {"time", 1000.0 + n / 2},
                  {"resolved", false},
                  {"message", "too hot"}})
                .dump() +
            "\n";
  }
  return text;
}

/// Two healthy bundles: bench (the candidate 1.2x faster), stress with drills, telemetry.
void Healthy(Bundle& a, Bundle& b) {
  for (Bundle* x : {&a, &b}) {
    const bool cand = x == &b;
    x->Stage("monitor", "monitor", "passed", "stages/monitor/monitor.json");
    x->File("telemetry.jsonl", Telemetry(20, 70.0, 0, 0));
    x->Result("bench", "bench", "bench.json", BenchDoc(cand ? 1.2 : 1.0));
    x->Result("burn", "stress", "stress.json", StressDoc(0, 3, 3));
  }
}

const CriterionResult* Find(const AcceptResult& r, const std::string& id) {
  for (const CriterionResult& c : r.criteria) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

class AcceptTest : public ::testing::Test {
 protected:
  TempDir tmp_;  // first: the members below use it
  std::string tmp_path(const std::string& name) const { return tmp_.File(name); }
  Bundle a_{tmp_.path() + "/a"};
  Bundle b_{tmp_.path() + "/b"};
  std::string out_ = tmp_.path() + "/out";
  AcceptOptions Options() {
    AcceptOptions o;
    o.baseline = a_.dir();
    o.candidate = b_.dir();
    o.out = out_;
    return o;
  }
  AcceptResult Run(AcceptOptions o) {
    a_.Write();
    b_.Write();
    auto r = RunAccept(o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : AcceptResult{};
  }
  AcceptResult Run() { return Run(Options()); }
};

TEST_F(AcceptTest, HealthyBundlesPassAndEveryFileIsWritten) {
  Healthy(a_, b_);
  const AcceptResult r = Run();
  EXPECT_TRUE(r.pass);
  ASSERT_NE(Find(r, "throughput.bench.stream"), nullptr);
  EXPECT_EQ(Find(r, "throughput.bench.stream")->status, Verdict::kPass);
  EXPECT_NEAR(Find(r, "throughput.bench.stream")->evidence["geomean"].get<double>(), 1.2, 1e-9);
  EXPECT_EQ(Find(r, "throughput.bench.gemm")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "stability.burn.sdc")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "stability.burn.faults")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "stability.temperature")->status, Verdict::kPass);
  EXPECT_DOUBLE_EQ(Find(r, "stability.temperature")->evidence["max"].get<double>(), 70.0);
  EXPECT_EQ(Find(r, "stability.ecc")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "stability.xid")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "stability.alerts")->status, Verdict::kPass);
  // No dump or quality stage: skipped with the reason, not passed.
  EXPECT_EQ(Find(r, "numerics")->status, Verdict::kSkip);
  EXPECT_EQ(Find(r, "numerics")->reason, "neither bundle has a dump stage");
  EXPECT_EQ(Find(r, "quality")->status, Verdict::kSkip);

  const Json doc = Json::parse(ReadText(out_ + "/report.json"));
  EXPECT_EQ(doc["format"], "parity-report");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["verdict"], "pass");
  EXPECT_EQ(doc["summary"]["skip"], 2);
  EXPECT_EQ(doc["baseline"]["uid"], "u-" + a_.dir());
  EXPECT_EQ(doc["candidate"]["fingerprint"]["hostname"], "h");
  ASSERT_TRUE(doc["criteria"].is_array());
  for (const Json& c : doc["criteria"]) {
    for (const char* key : {"id", "stage", "status", "reason", "evidence"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
  }
  EXPECT_TRUE(doc["environment_diff"].is_array());
  const Json& t = doc["telemetry"]["candidate"];
  EXPECT_EQ(t["samples"], 20);
  EXPECT_EQ(t["bucket_s"], 1.0);
  EXPECT_EQ(t["stages"].size(), 2u);
  const std::string html = ReadText(out_ + "/report.html");
  EXPECT_NE(html.find("id=\"parity-report-data\""), std::string::npos);
  EXPECT_EQ(html.find("<!--PARITY:"), std::string::npos);
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);
  const std::string junit = ReadText(out_ + "/junit.xml");
  EXPECT_NE(junit.find("<testsuites name=\"parity accept\""), std::string::npos);
  EXPECT_NE(junit.find("<skipped message=\"neither bundle has a dump stage\"/>"),
            std::string::npos);
}

TEST_F(AcceptTest, StrictFailsOnASkip) {
  Healthy(a_, b_);
  AcceptOptions o = Options();
  o.strict = true;
  const AcceptResult r = Run(o);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(Json::parse(ReadText(out_ + "/report.json"))["verdict"], "fail");
  EXPECT_NE(ReadText(out_ + "/junit.xml").find("--strict fails on a skip"), std::string::npos);
}

TEST_F(AcceptTest, EverySkippedIsNoPass) {
  a_.Stage("bench", "bench", "skipped", "", "runs from level 2");
  b_.Stage("bench", "bench", "skipped", "", "runs from level 2");
  const AcceptResult r = Run();
  EXPECT_EQ(r.passed, 0);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(Find(r, "throughput.bench")->status, Verdict::kSkip);
  EXPECT_NE(Find(r, "throughput.bench")->reason.find("runs from level 2"), std::string::npos);
}

TEST_F(AcceptTest, AStageMissingFromTheCandidateIsAnError) {
  Healthy(a_, b_);
  a_.Result("bench-full", "bench", "bench.json", BenchDoc(1.0));
  const AcceptResult r = Run();
  EXPECT_FALSE(r.pass);
  const CriterionResult* c = Find(r, "throughput.bench-full");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Verdict::kError);
  EXPECT_EQ(c->reason, "the candidate bundle has no stage 'bench-full' (the plans differ)");
}

TEST_F(AcceptTest, FailingStagesFailTheirCriteria) {
  Healthy(a_, b_);
  b_.manifest()["stages"] = Json::array();
  b_.Stage("monitor", "monitor", "passed", "stages/monitor/monitor.json");
  b_.File("telemetry.jsonl", Telemetry(20, 91.5, 2, 1, /*fatal_alert=*/true));
  b_.Result("bench", "bench", "bench.json", BenchDoc(0.8, /*valid=*/false), "failed");
  b_.Result("burn", "stress", "stress.json", StressDoc(1, 3, 2), "failed");
  const AcceptResult r = Run();
  EXPECT_FALSE(r.pass);
  const CriterionResult* stream = Find(r, "throughput.bench.stream");
  EXPECT_EQ(stream->status, Verdict::kFail);
  EXPECT_NE(stream->reason.find("1 invalid result"), std::string::npos) << stream->reason;
  const CriterionResult* gemm = Find(r, "throughput.bench.gemm");
  EXPECT_EQ(gemm->status, Verdict::kFail);
  EXPECT_EQ(gemm->reason, "geometric-mean ratio 0.800 is below 1");
  EXPECT_EQ(Find(r, "stability.burn.sdc")->status, Verdict::kFail);
  EXPECT_EQ(Find(r, "stability.burn.faults")->status, Verdict::kFail);
  EXPECT_EQ(Find(r, "stability.burn.faults")->reason,
            "1 of 3 faults not recovered from, 0 steps lost");
  const CriterionResult* temp = Find(r, "stability.temperature");
  EXPECT_EQ(temp->status, Verdict::kFail);
  EXPECT_DOUBLE_EQ(temp->evidence["max"].get<double>(), 91.5);
  // The volatile counter rose by 2; the aggregate one repeats it and is not counted twice.
  EXPECT_EQ(Find(r, "stability.ecc")->status, Verdict::kFail);
  EXPECT_DOUBLE_EQ(Find(r, "stability.ecc")->evidence["errors"].get<double>(), 2.0);
  EXPECT_EQ(Find(r, "stability.xid")->status, Verdict::kFail);
  EXPECT_EQ(Find(r, "stability.xid")->evidence["by_xid"]["79"], 1.0);
  EXPECT_EQ(Find(r, "stability.alerts")->status, Verdict::kFail);
}

TEST_F(AcceptTest, ThresholdsComeFromTheCriteria) {
  Healthy(a_, b_);
  AcceptOptions o = Options();
  auto criteria = ParseCriteria(
      "throughput:\n  min_ratio: 1.1\n  suites: {gemm: 1.5}\nstability:\n"
      "  max_junction_celsius: 65\n",
      tmp_path("c.yaml"));
  ASSERT_TRUE(criteria.ok()) << criteria.status().message();
  o.criteria = *criteria;
  const AcceptResult r = Run(o);
  EXPECT_EQ(Find(r, "throughput.bench.stream")->status, Verdict::kPass);
  EXPECT_EQ(Find(r, "throughput.bench.gemm")->status, Verdict::kFail);
  EXPECT_EQ(Find(r, "stability.temperature")->status, Verdict::kFail);
}

TEST_F(AcceptTest, CorruptAndMissingFilesAreErrorsAndTheReportIsStillWritten) {
  Healthy(a_, b_);
  b_.File("stages/bench/bench.json", "{\"format\": \"parity-bench\", tru");
  b_.File("stages/burn/stress.json", "[]");
  fs::remove(b_.dir() + "/telemetry.jsonl");
  const AcceptResult r = Run();
  EXPECT_FALSE(r.pass);
  const CriterionResult* bench = Find(r, "throughput.bench");
  ASSERT_NE(bench, nullptr);
  EXPECT_EQ(bench->status, Verdict::kError);
  EXPECT_NE(bench->reason.find(b_.dir() + "/stages/bench/bench.json"), std::string::npos)
      << bench->reason;
  EXPECT_EQ(Find(r, "stability.burn.sdc")->status, Verdict::kError);
  EXPECT_NE(Find(r, "stability.burn.sdc")->reason.find("not a parity-stress document"),
            std::string::npos);
  EXPECT_EQ(Find(r, "stability.temperature")->status, Verdict::kError);
  EXPECT_NE(Find(r, "stability.temperature")->reason.find("telemetry.jsonl"), std::string::npos);
  EXPECT_TRUE(fs::exists(out_ + "/report.json"));
  EXPECT_TRUE(fs::exists(out_ + "/report.html"));
}

TEST_F(AcceptTest, ABundleWithoutAManifestMakesEveryCriterionAnError) {
  Healthy(a_, b_);
  a_.Write();
  fs::create_directories(b_.dir());
  auto r = RunAccept(Options());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(r->passed, 0);
  for (const CriterionResult& c : r->criteria) {
    EXPECT_EQ(c.status, Verdict::kError) << c.id;
    EXPECT_NE(c.reason.find(b_.dir() + "/manifest.json"), std::string::npos) << c.reason;
  }
  EXPECT_TRUE(r->report["candidate"].contains("problem"));
}

TEST_F(AcceptTest, RefusesWhatIsNotABundleOrAReportDirectory) {
  Healthy(a_, b_);
  AcceptOptions o = Options();
  o.candidate = tmp_path("nowhere");
  a_.Write();
  auto missing = RunAccept(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), tmp_path("nowhere") + ": no such directory");
  WriteText(out_ + "/notes.txt", "mine");
  b_.Write();
  auto occupied = RunAccept(Options());
  ASSERT_FALSE(occupied.ok());
  EXPECT_NE(occupied.status().message().find("holds 'notes.txt'"), std::string::npos);
  EXPECT_TRUE(fs::exists(out_ + "/notes.txt"));
}

TEST_F(AcceptTest, QualityIsJudgedOnTheSameLabels) {
  std::string labels, scores_a, scores_b, scores_c;
  for (int i = 0; i < 400; ++i) {
    const int y = (i * 7919) % 5 < 2 ? 1 : 0;
    const double s = 0.3 * y + 0.7 * ((i * 104729) % 1000) / 1000.0;
    labels += std::to_string(y) + "\n";
    scores_a += fmt::format("{:.17g}\n", s);
    scores_b += fmt::format("{:.17g}\n", s + 1e-9 * (i % 3));
    scores_c += fmt::format("{:.17g}\n", y == 1 ? s - 0.25 : s);  // much worse
  }
  const Json inputs = {{"format", "parity-quality-inputs"},
                       {"version", 1},
                       {"labels", "labels.txt"},
                       {"n", 400},
                       {"scores", {{{"file", "scores.txt"}}}}};
  a_.File("stages/q/labels.txt", labels).File("stages/q/scores.txt", scores_a);
  a_.Result("q", "quality", "quality.json", inputs);
  b_.File("stages/q/labels.txt", labels).File("stages/q/scores.txt", scores_b);
  b_.Result("q", "quality", "quality.json", inputs);
  AcceptResult r = Run();
  const CriterionResult* q = Find(r, "quality.q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->status, Verdict::kPass) << q->reason;
  EXPECT_EQ(q->evidence["metric"], "auc");
  EXPECT_NEAR(q->evidence["relative_margin"].get<double>(), 0.0015, 0);

  b_.File("stages/q/scores.txt", scores_c);
  r = Run();
  EXPECT_EQ(Find(r, "quality.q")->status, Verdict::kFail);
  EXPECT_LT(Find(r, "quality.q")->evidence["delta"].get<double>(), 0);

  b_.File("stages/q/labels.txt", "0\n" + labels.substr(2));  // the first label was 1
  r = Run();
  EXPECT_EQ(Find(r, "quality.q")->status, Verdict::kError);
  EXPECT_NE(Find(r, "quality.q")->reason.find("the labels differ"), std::string::npos);
}

TEST_F(AcceptTest, NumericsNamesTheOriginOfATf32Divergence) {
  // Dumps written by numpy (tests/gen/gen_explain.py): B's fc1 ran in TF32, its operands
  // truncated toward zero, as no cast to fp16 rounds: tf32 by the data, although the corpus's
  // manifests name a CPU (rounded to nearest even it would be fp16 there, docs/EXPLAIN.md).
  a_.Dump("dump", TestDataPath("explain/tf32-trunc/a"));
  b_.Dump("dump", TestDataPath("explain/tf32-trunc/b"));
  const AcceptResult r = Run();
  const CriterionResult* n = Find(r, "numerics.dump");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->status, Verdict::kFail);
  ASSERT_EQ(n->evidence["origins"].size(), 1u);
  EXPECT_EQ(n->evidence["origins"][0]["name"], "fc1");
  EXPECT_EQ(n->evidence["origins"][0]["cause"], "reduced-precision");
  EXPECT_EQ(n->evidence["origins"][0]["precision"], "tf32");
  EXPECT_TRUE(n->evidence["origins"][0]["order"].is_number());
  EXPECT_NE(n->reason.find("origin fc1 (reduced-precision, tf32)"), std::string::npos) << n->reason;
  EXPECT_GT(n->evidence["failed"].get<int>(), 0);
  EXPECT_EQ(n->evidence["tensors"].size(), n->evidence["tensors_total"].get<std::size_t>());
  int64_t elements = 0;
  for (const Json& count : n->evidence["ratio_histogram"]) elements += count.get<int64_t>();
  EXPECT_GT(elements, 0);
}

TEST_F(AcceptTest, NumericsPassesDifferencesInheritedFromRounding) {
  // B summed fc1 in another order: within rounding there, inherited downstream.
  a_.Dump("dump", TestDataPath("explain/summation-order/a"));
  b_.Dump("dump", TestDataPath("explain/summation-order/b"));
  AcceptResult r = Run();
  const CriterionResult* n = Find(r, "numerics.dump");
  EXPECT_EQ(n->status, Verdict::kPass) << n->reason;
  EXPECT_TRUE(n->evidence["origins"].empty());

  AcceptOptions o = Options();
  o.criteria.numerics.allow_inherited = false;
  r = Run(o);
  if (Find(r, "numerics.dump")->evidence["failed"].get<int>() > 0) {
    EXPECT_EQ(Find(r, "numerics.dump")->status, Verdict::kFail);
  }
}

TEST(EnvDiff, MarksWhatChangesNumerics) {
  std::map<std::string, Json> a = {{"dump.d.framework.settings.allow_tf32_matmul", false},
                                   {"host.cpu.model", "X"},
                                   {"host.os.kernel", "6.1"}};
  std::map<std::string, Json> b = {{"dump.d.framework.settings.allow_tf32_matmul", true},
                                   {"host.cpu.model", "X"},
                                   {"host.gpu", "H200"}};
  const auto diff = DiffSettings(a, b);
  ASSERT_EQ(diff.size(), 3u);
  EXPECT_EQ(diff[0].key, "dump.d.framework.settings.allow_tf32_matmul");
  EXPECT_TRUE(diff[0].relevant);
  // Explained by the knowledge base's entry for the setting, with its first source.
  auto kb = env::BuiltinKnowledge();
  ASSERT_TRUE(kb.ok());
  const env::Setting* entry = (*kb)->Find("torch.backends.cuda.matmul.allow_tf32");
  EXPECT_NE(
      diff[0].note.find(entry != nullptr ? entry->sources.front().ref : "https://pytorch.org/"),
      std::string::npos)
      << diff[0].note;
  EXPECT_EQ(diff[1].key, "host.gpu");
  EXPECT_TRUE(diff[1].baseline.is_null());
  EXPECT_EQ(diff[2].key, "host.os.kernel");
  EXPECT_TRUE(diff[2].candidate.is_null());
  EXPECT_FALSE(diff[2].relevant);
}

TEST(EnvDiff, FlattensObjectsAndLists) {
  const auto flat =
      Flatten(Json::parse(R"({"a":{"b":1},"l":[{"x":2}],"f":["p","q"],"created":5})"), "h");
  EXPECT_EQ(flat.at("h.a.b"), 1);
  EXPECT_EQ(flat.at("h.l.0.x"), 2);
  EXPECT_EQ(flat.at("h.f"), "p,q");
  EXPECT_EQ(flat.count("h.created"), 0u);
}

TEST(Criteria, DefaultsAreTheSeeds) {
  const Criteria c;
  EXPECT_EQ(c.numerics.tolerance.policy, "auto");
  EXPECT_EQ(c.numerics.ratio, 2.0);
  EXPECT_EQ(c.quality.margin, 0.0015);
  EXPECT_TRUE(c.quality.relative);
  EXPECT_EQ(c.throughput.min_ratio, 1.0);
  EXPECT_EQ(c.stability.max_junction_celsius, 85.0);
}

TEST(Criteria, BadFilesNameTheLineAndTheKey) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"quality:\n  margn: 0.01\n",
       "c.yaml: line 2: unknown key 'margn' in 'quality' (did you mean 'margin'?)"},
      {"numerics:\n  tolerance: atuo\n",
       "c.yaml: line 2: unknown tolerance policy 'atuo' (did you mean 'auto'?)"},
      {"throughput:\n  min_ratio: fast\n", "c.yaml: line 2: 'min_ratio' must be a number"},
      {"stability:\n  max_sdc_events: -1\n", "c.yaml: line 2: 'max_sdc_events' must be a count"},
      {"qualty: {}\n", "c.yaml: line 1: unknown section 'qualty' (did you mean 'quality'?)"},
      {"strict: maybe\n", "c.yaml: line 1: 'strict' must be true or false"},
      {"quality:\n  metric: f1\n", "c.yaml: line 2: unknown metric 'f1'"},
      {"a: [\n", "c.yaml: line 2: not valid YAML"},
  };
  for (const Case& c : cases) {
    auto r = ParseCriteria(c.text, "c.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message().rfind(c.message, 0), 0u) << r.status().message();
  }
  auto golden = ParseCriteria("numerics: {golden: g, rtol: 1e-3}\n", "/x/c.yaml");
  ASSERT_TRUE(golden.ok()) << golden.status().message();
  EXPECT_EQ(*golden->numerics.golden, "/x/g");
  EXPECT_EQ(golden->numerics.tolerance.policy, "explicit");
  EXPECT_EQ(*golden->numerics.tolerance.atol, 0.0);
}

TEST(Junit, EscapesAndCounts) {
  CriterionResult fail;
  fail.id = "throughput.b.<x>";
  fail.part = "throughput";
  fail.status = Verdict::kFail;
  fail.reason = "ratio \"0.8\" & worse\x01";
  CriterionResult skip;
  skip.id = "stability.xid";
  skip.part = "stability";
  skip.status = Verdict::kSkip;
  skip.reason = "no GPU";
  const std::string xml = JunitXml({fail, skip}, false, "2026-12-03T00:00:00Z", 1.5);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"throughput.b.&lt;x&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("message=\"ratio &quot;0.8&quot; &amp; worse\xEF\xBF\xBD\""),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"no GPU\"/>"), std::string::npos);
  const std::string strict = JunitXml({fail, skip}, true, "t", 0);
  EXPECT_NE(strict.find("failures=\"2\" errors=\"0\" skipped=\"0\""), std::string::npos);
}

TEST(TelemetryRecord, DecimatesToRoundBucketsWithMinMaxAndMean) {
  TempDir tmp;
  std::string text;
  for (int i = 0; i < 7200; ++i) {
    text += Json({{"kind", "sample"},
                  {"time", 5000.0 + i},
                  {"devices", Json::array()},
                  {"host",
                   {{"metrics",
                     {{{"name", "host_cpu_utilization_ratio"},
                       {"labels", Json::object()},
                       {"value", (i % 10) / 10.0}}}}}}})
                .dump() +
            "\n";
  }
  text += "{\"kind\": \"sample\", \"ti";  // a crash-cut last line
  WriteText(tmp.path() + "/t.jsonl", text);
  auto record = ReadTelemetry(tmp.path() + "/t.jsonl");
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_EQ(record->samples, 7200);
  EXPECT_EQ(record->bad_lines, 0);
  const Json t = TelemetryJson(*record, 1000);
  EXPECT_EQ(t["bucket_s"], 10.0);  // 7199 s over at most 1000 buckets: the next round width
  const Json& s = t["series"][0];
  EXPECT_EQ(s["t"].size(), 720u);
  EXPECT_EQ(s["min"][0], 0.0);
  EXPECT_EQ(s["max"][0], 0.9);
  EXPECT_NEAR(s["mean"][0].get<double>(), 0.45, 1e-12);
  EXPECT_EQ(s["unit"], "ratio");
}

TEST(TelemetryRecord, RefusesAFileWithNoSample) {
  TempDir tmp;
  WriteText(tmp.path() + "/t.jsonl", "garbage\nmore garbage\n");
  auto record = ReadTelemetry(tmp.path() + "/t.jsonl");
  ASSERT_FALSE(record.ok());
  EXPECT_EQ(record.status().message(),
            tmp.path() + "/t.jsonl: no sample can be read (line 1: not valid JSON)");
}

TEST_F(AcceptTest, ASignedReportFailsVerificationAfterAnyChange) {
  Healthy(a_, b_);
  const std::string key = tmp_path("key");
  ASSERT_TRUE(GenerateKeyPair(key).ok());
  AcceptOptions o = Options();
  o.sign_key = key;
  Run(o);
  auto v = VerifyDirectory(out_, key + ".pub");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->ok());
  for (const char* file : {"report.json", "report.html", "junit.xml"}) {
    const std::string path = out_ + "/" + file;
    const std::string original = ReadText(path);
    std::string changed = original;
    changed[changed.size() / 2] ^= 1;
    WriteText(path, changed);
    auto after = VerifyDirectory(out_, key + ".pub");
    ASSERT_TRUE(after.ok());
    EXPECT_FALSE(after->ok()) << file;
    EXPECT_EQ(after->changed, std::vector<std::string>{file});
    WriteText(path, original);
  }
  WriteText(out_ + "/extra.txt", "x");
  EXPECT_EQ(VerifyDirectory(out_, key + ".pub")->added, std::vector<std::string>{"extra.txt"});
  fs::remove(out_ + "/extra.txt");
  fs::remove(out_ + "/junit.xml");
  EXPECT_EQ(VerifyDirectory(out_, key + ".pub")->missing, std::vector<std::string>{"junit.xml"});
}

}  // namespace
}  // namespace parity::accept
