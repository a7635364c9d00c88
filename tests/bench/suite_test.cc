// SPDX-License-Identifier: Apache-2.0
// The suites on the CPU backend: every result valid; byte and FLOP accounting under a clock
// that reads a fixed time; validation failing on planted wrong results.
#include "bench/suite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "bench/backend_cpu.h"
#include "bench/runner.h"

namespace parity::bench {
namespace {

// The CPU backend with faults planted on request and, optionally, a clock that reads
// `fixed_seconds` for any work.
class PlantedBackend final : public Backend {
 public:
  PlantedBackend() : cpu_(NewCpuBackend()) { EXPECT_TRUE(cpu_->Open(0).ok()); }

  bool wrong_triad = false, wrong_dot = false, tf32_gemm = false, wrong_rng = false,
       wrong_copy = false;
  double fixed_seconds = 0.0;

  std::string_view name() const override { return "planted"; }
  Result<std::vector<DeviceInfo>> Devices() override { return cpu_->Devices(); }
  Status Open(int index) override { return cpu_->Open(index); }
  Result<void*> Allocate(std::size_t bytes, MemoryKind kind) override {
    return cpu_->Allocate(bytes, kind);
  }
  void Free(void* ptr, MemoryKind kind) override { cpu_->Free(ptr, kind); }
  Status Copy(void* dst, MemoryKind dk, const void* src, MemoryKind sk,
              std::size_t bytes) override {
    // Only the timed copies of the transfer suite are whole buffers of more than a page.
    if (wrong_copy && bytes > 4096) bytes -= 1;
    return cpu_->Copy(dst, dk, src, sk, bytes);
  }
  Status Fill(void* dst, DType dtype, std::size_t n, double value) override {
    return cpu_->Fill(dst, dtype, n, value);
  }
  Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                double scalar) override {
    PARITY_RETURN_IF_ERROR(cpu_->Stream(op, dtype, a, b, c, n, scalar));
    if (wrong_triad && op == StreamOp::kTriad) {
      if (dtype == DType::kFloat64) static_cast<double*>(a)[n / 3] *= 1.001;
      if (dtype == DType::kFloat32) static_cast<float*>(a)[n / 3] *= 1.001f;
    }
    return Status::Ok();
  }
  Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) override {
    PARITY_ASSIGN_OR_RETURN(double sum, cpu_->Dot(dtype, a, b, n));
    // A sign error: BabelStream's float32 dot tolerance (1e7 eps, about 1.19 relative) lets
    // any positive factor through.
    return wrong_dot ? -sum : sum;
  }
  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    const bool planted = tf32_gemm && dtype == DType::kFloat32 && math == GemmMath::kNative;
    if (!planted) return cpu_->Gemm(dtype, math, m, n, k, a, b, c);
    // TF32 tensor cores: 10 fraction bits of each input.
    std::vector<float> ta(static_cast<const float*>(a), static_cast<const float*>(a) + m * k);
    std::vector<float> tb(static_cast<const float*>(b), static_cast<const float*>(b) + k * n);
    for (auto* v : {&ta, &tb}) {
      for (float& x : *v) {
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        bits &= ~uint32_t{0x1FFF};
        std::memcpy(&x, &bits, 4);
      }
    }
    return cpu_->Gemm(dtype, math, m, n, k, ta.data(), tb.data(), c);
  }
  std::string GemmImplementation(DType dtype, GemmMath math) override {
    return cpu_->GemmImplementation(dtype, math);
  }
  Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) override {
    return cpu_->PhiloxUniform(out, n, seed, wrong_rng ? offset + 4 : offset);
  }
  Status EmptyKernel() override { return cpu_->EmptyKernel(); }
  Status Synchronize() override { return cpu_->Synchronize(); }
  Result<double> Time(const std::function<Status()>& work, Queuing queuing) override {
    PARITY_ASSIGN_OR_RETURN(double t, cpu_->Time(work, queuing));
    return fixed_seconds > 0.0 ? fixed_seconds : t;
  }

 private:
  std::unique_ptr<Backend> cpu_;
};

std::map<std::string, BenchResult> ByLabel(const std::vector<BenchResult>& results) {
  std::map<std::string, BenchResult> out;
  for (const BenchResult& r : results) out[r.Label()] = r;
  return out;
}

SuiteOptions Small() {
  SuiteOptions o;
  o.n = 10007;  // not a multiple of 4 or of the thread count
  o.reps = 3;
  return o;
}

TEST(StreamSuite, AllValidOnCpuAndBytesCountedAsBabelStream) {
  PlantedBackend backend;
  backend.fixed_seconds = 0.5;
  SuiteOptions o = Small();
  auto results = RunStreamSuite(backend, o);
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 12u);
  const std::map<std::string, double> weight = {{"stream.copy", 2}, {"stream.mul", 2},
                                                {"stream.add", 3},  {"stream.triad", 3},
                                                {"stream.dot", 2},  {"stream.nstream", 4}};
  for (const BenchResult& r : *results) {
    SCOPED_TRACE(r.Label());
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    EXPECT_EQ(r.unit, "GB/s");
    EXPECT_EQ(r.samples.size(), 2u);  // 3 repetitions, the first dropped
    const double itemsize = r.dtype == "float64" ? 8 : 4;
    const double want = weight.at(r.benchmark) * itemsize * 10007 / 0.5 / 1e9;
    ASSERT_TRUE(r.best.has_value());
    EXPECT_DOUBLE_EQ(*r.best, want);
    EXPECT_DOUBLE_EQ(r.samples[0], want);
    EXPECT_EQ(r.params["n"], 10007);
    EXPECT_EQ(r.params["reps"], 3);
  }
}

TEST(StreamSuite, PlantedTriadErrorFailsTriad) {
  PlantedBackend backend;
  backend.wrong_triad = true;
  auto results = RunStreamSuite(backend, Small());
  ASSERT_TRUE(results.ok());
  for (const auto& [label, r] : ByLabel(*results)) {
    SCOPED_TRACE(label);
    // triad writes a, and a feeds the rest of the repetition: copy reads a into c, so c is
    // wrong too in the next repetition, which fails copy and add (they write c) and mul (b).
    if (r.benchmark == "stream.triad") {
      EXPECT_EQ(r.outcome, Outcome::kInvalid);
      EXPECT_NE(r.reason.find("a differs"), std::string::npos) << r.reason;
      EXPECT_GT(r.validation["a"]["failures"].get<int>(), 0);
    }
    if (r.benchmark == "stream.nstream") {
      EXPECT_EQ(r.outcome, Outcome::kOk);
    }
  }
}

TEST(StreamSuite, PlantedDotErrorFailsDotOnly) {
  PlantedBackend backend;
  backend.wrong_dot = true;
  auto results = RunStreamSuite(backend, Small());
  ASSERT_TRUE(results.ok());
  for (const BenchResult& r : *results) {
    EXPECT_EQ(r.outcome, r.benchmark == "stream.dot" ? Outcome::kInvalid : Outcome::kOk)
        << r.Label();
  }
}

TEST(StreamSuite, OneRepetitionIsSkippedWithReason) {
  PlantedBackend backend;
  SuiteOptions o = Small();
  o.reps = 1;
  auto results = RunStreamSuite(backend, o);
  ASSERT_TRUE(results.ok());
  for (const BenchResult& r : *results) {
    EXPECT_EQ(r.outcome, Outcome::kSkipped);
    EXPECT_NE(r.reason.find("at least 2"), std::string::npos);
  }
}

TEST(GemmSuite, FlopsCountedAsTwoNCubedAndPlantedTf32Fails) {
  PlantedBackend backend;
  backend.fixed_seconds = 0.5;
  SuiteOptions o;
  o.reps = 1;
  o.dtypes = {"float32", "float64"};
  auto results = RunGemmSuite(backend, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 6u);  // 256, 1024, 2048 × two dtypes
  for (const BenchResult& r : *results) {
    SCOPED_TRACE(r.Label());
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    const double n = r.params["size"].get<double>();
    EXPECT_DOUBLE_EQ(*r.best, 2 * n * n * n / 0.5 / 1e9);
    EXPECT_EQ(r.validation["checked"], 256);
    EXPECT_EQ(r.validation["failures"], 0);
  }
  backend.fixed_seconds = 0.0;
  backend.tf32_gemm = true;
  results = RunGemmSuite(backend, o);
  ASSERT_TRUE(results.ok());
  for (const BenchResult& r : *results) {
    EXPECT_EQ(r.outcome, r.dtype == "float32" ? Outcome::kInvalid : Outcome::kOk) << r.Label();
  }
}

TEST(GemmSuite, Bfloat16RunsOrIsSkippedWithReason) {
  PlantedBackend backend;
  SuiteOptions o;
  o.reps = 1;
  o.dtypes = {"bfloat16"};
  auto results = RunGemmSuite(backend, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 3u);
  for (const BenchResult& r : *results) {
    if (r.outcome == Outcome::kSkipped) {
      EXPECT_NE(r.reason.find("oneDNN"), std::string::npos) << r.reason;
    } else {
      EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    }
  }
}

TEST(TransferSuite, BytesCountedAndPinnedSkippedOnCpu) {
  PlantedBackend backend;
  backend.fixed_seconds = 0.5;
  SuiteOptions o;
  o.reps = 1;
  auto results = RunTransferSuite(backend, o);
  ASSERT_TRUE(results.ok());
  int ok = 0, skipped = 0;
  for (const BenchResult& r : *results) {
    SCOPED_TRACE(r.Label());
    if (r.benchmark.ends_with("_pinned")) {
      EXPECT_EQ(r.outcome, Outcome::kSkipped);
      EXPECT_FALSE(r.reason.empty());
      ++skipped;
      continue;
    }
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    const double size = r.params["size"].get<double>();
    const double batch = r.params["batch"].get<double>();
    EXPECT_EQ(batch, std::clamp(std::floor(64.0 * 1048576 / size), 1.0, 4096.0));
    EXPECT_DOUBLE_EQ(*r.best, size * batch / 0.5 / 1e9);
    EXPECT_EQ(r.validation["mismatches"], 0);
    ++ok;
  }
  EXPECT_EQ(ok, 10);  // 4 KiB .. 256 MiB by 16×, both directions
  EXPECT_EQ(skipped, 10);
}

TEST(TransferSuite, PlantedShortCopyFails) {
  PlantedBackend backend;
  backend.wrong_copy = true;
  SuiteOptions o;
  o.reps = 1;
  auto results = RunTransferSuite(backend, o);
  ASSERT_TRUE(results.ok());
  for (const BenchResult& r : *results) {
    if (r.outcome == Outcome::kSkipped) continue;
    const bool big = r.params["size"].get<double>() > 4096;
    EXPECT_EQ(r.outcome, big ? Outcome::kInvalid : Outcome::kOk) << r.Label();
  }
}

TEST(TransferSuite, CompareCopyCountsEveryDifferingByteAndTheFirst) {
  std::vector<std::byte> want(3 * 4096 + 5);
  FillCopyPattern(want, 7);
  std::vector<std::byte> got = want;
  CopyCheck same = CompareCopy(got, want);
  EXPECT_EQ(same.checked, want.size());
  EXPECT_EQ(same.mismatches, 0u);
  // Differences in the second block, on a block edge and in the short last block.
  for (std::size_t i : {4097u, 5000u, 8191u, 8192u, 3u * 4096 + 4}) got[i] ^= std::byte{1};
  CopyCheck check = CompareCopy(got, want);
  EXPECT_EQ(check.mismatches, 5u);
  EXPECT_EQ(check.first, 4097u);
  // Only the common length is compared.
  check = CompareCopy(std::span(got).first(4098), want);
  EXPECT_EQ(check.checked, 4098u);
  EXPECT_EQ((std::pair{check.mismatches, check.first}),
            (std::pair{std::size_t{1}, std::size_t{4097}}));
}

TEST(RngSuite, ValidOnCpuAndBytesCounted) {
  PlantedBackend backend;
  backend.fixed_seconds = 0.5;
  SuiteOptions o = Small();
  auto results = RunRngSuite(backend, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  const BenchResult& r = results->front();
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  EXPECT_DOUBLE_EQ(*r.best, 4.0 * 10007 / 0.5 / 1e9);
  EXPECT_GT(r.validation["checked"].get<int>(), 1000);

  backend.wrong_rng = true;
  results = RunRngSuite(backend, o);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->front().outcome, Outcome::kInvalid);
  EXPECT_NE(results->front().reason.find("cuRAND's stream has"), std::string::npos);
}

TEST(LatencySuite, MicrosecondsPerLaunch) {
  PlantedBackend backend;
  backend.fixed_seconds = 0.5;
  SuiteOptions o;
  o.reps = 2;
  auto results = RunLatencySuite(backend, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 2u);
  for (const BenchResult& r : *results) {
    EXPECT_EQ(r.outcome, Outcome::kOk);
    EXPECT_FALSE(r.higher_is_better);
    EXPECT_EQ(r.unit, "us");
    EXPECT_DOUBLE_EQ(*r.best, 0.5 / 1000 * 1e6);
  }
}

TEST(Runner, RepeatMergesRunsAndKeepsRunMedians) {
  PlantedBackend backend;
  auto devices = backend.Devices();
  ASSERT_TRUE(devices.ok());
  BenchOptions options;
  options.suites = {"latency", "rng"};
  options.repeat = 3;
  options.suite = Small();
  auto run = RunBenchOn(backend, devices->front(), options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->ok, 3);
  for (const BenchResult& r : run->results) {
    EXPECT_EQ(r.run_medians.size(), 3u) << r.Label();
    EXPECT_EQ(r.samples.size(), 9u) << r.Label();  // 3 runs × 3 repetitions
  }
  const Json& doc = run->document;
  EXPECT_EQ(doc["format"], "parity-bench");
  EXPECT_EQ(doc["repeat"], 3);
  EXPECT_EQ(doc["results"][0]["runs"].size(), 3u);
  EXPECT_TRUE(doc["platform"].contains("cpu"));
  EXPECT_EQ(doc["platform"]["device"]["backend"], "planted");
}

TEST(Runner, UnknownSuiteSuggestsOne) {
  PlantedBackend backend;
  auto devices = backend.Devices();
  BenchOptions options;
  options.suites = {"strem"};
  auto run = RunBenchOn(backend, devices->front(), options);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(run.status().message().find("did you mean 'stream'"), std::string::npos);
}

TEST(Runner, MergeMarksInvalidWhenAnyRunWas) {
  BenchResult ok;
  ok.benchmark = "stream.copy";
  ok.unit = "GB/s";
  ok.samples = {1, 2, 3};
  ok.best = 3;
  BenchResult bad = ok;
  bad.outcome = Outcome::kInvalid;
  bad.reason = "a differs";
  bad.best = 9;
  auto merged = MergeRuns({{ok}, {bad}, {ok}});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->front().outcome, Outcome::kInvalid);
  EXPECT_EQ(merged->front().reason, "run 2: a differs");
  EXPECT_EQ(merged->front().run_medians, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(*merged->front().best, 9);
  BenchResult other = ok;
  other.benchmark = "stream.mul";
  EXPECT_FALSE(MergeRuns({{ok}, {other}}).ok());
}

}  // namespace
}  // namespace parity::bench
