// SPDX-License-Identifier: Apache-2.0
// The built-in stress workloads on the CPU backend: the registry; gemm-burn and stream-burn
// clean, with a planted bit flip (reported exactly there), and on a backend that computes
// wrongly or nondeterministically; parameters and states rejected with their names; resumes
// that continue where the run stopped; train's losses against numpy (tests/gen/gen_stress.py,
// tests/data/stress/train_expected.json) and bitwise across a resume.
#include "stress/workload.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/backend_cpu.h"
#include "core/float_format.h"
#include "stress/workload_builtin.h"
#include "testdata.h"

namespace parity::stress {
namespace {

using bench::Backend;
using bench::GemmMath;
using bench::MemoryKind;
using bench::Queuing;
using bench::StreamOp;

// The CPU backend, with faults planted after its GEMMs and stream kernels on request.
class FaultyBackend final : public Backend {
 public:
  FaultyBackend() : cpu_(bench::NewCpuBackend()) { EXPECT_TRUE(cpu_->Open(0).ok()); }

  /// Called after every GEMM with its number (from 1) and its product (m×n, of `dtype`).
  std::function<void(int call, DType dtype, int64_t m, int64_t n, void* c)> after_gemm;
  /// Called after every stream kernel.
  std::function<void(StreamOp op, DType dtype, void* a, std::size_t n)> after_stream;

  std::string_view name() const override { return "faulty"; }
  Result<std::vector<bench::DeviceInfo>> Devices() override { return cpu_->Devices(); }
  Status Open(int index) override { return cpu_->Open(index); }
  Result<void*> Allocate(std::size_t bytes, MemoryKind kind) override {
    PARITY_ASSIGN_OR_RETURN(void* ptr, cpu_->Allocate(bytes, kind));
    ++live_allocations;
    return ptr;
  }
  void Free(void* ptr, MemoryKind kind) override {
    --live_allocations;
    cpu_->Free(ptr, kind);
  }
  Status Copy(void* dst, MemoryKind dk, const void* src, MemoryKind sk,
              std::size_t bytes) override {
    return cpu_->Copy(dst, dk, src, sk, bytes);
  }
  Status Fill(void* dst, DType dtype, std::size_t n, double value) override {
    return cpu_->Fill(dst, dtype, n, value);
  }
  Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                double scalar) override {
    PARITY_RETURN_IF_ERROR(cpu_->Stream(op, dtype, a, b, c, n, scalar));
    if (after_stream) after_stream(op, dtype, a, n);
    return Status::Ok();
  }
  Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) override {
    return cpu_->Dot(dtype, a, b, n);
  }
  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    PARITY_RETURN_IF_ERROR(cpu_->Gemm(dtype, math, m, n, k, a, b, c));
    ++gemm_calls;
    if (after_gemm) after_gemm(gemm_calls, dtype, m, n, c);
    return Status::Ok();
  }
  std::string GemmImplementation(DType dtype, GemmMath math) override {
    return cpu_->GemmImplementation(dtype, math);
  }
  Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) override {
    return cpu_->PhiloxUniform(out, n, seed, offset);
  }
  Status EmptyKernel() override { return cpu_->EmptyKernel(); }
  Status Synchronize() override { return cpu_->Synchronize(); }
  Result<double> Time(const std::function<Status()>& work, Queuing queuing) override {
    return cpu_->Time(work, queuing);
  }

  int gemm_calls = 0;
  int live_allocations = 0;

 private:
  std::unique_ptr<Backend> cpu_;
};

std::unique_ptr<StressWorkload> Make(std::string_view name) {
  Result<const WorkloadInfo*> info = FindWorkload(name);
  EXPECT_TRUE(info.ok()) << info.status().message();
  return (*info)->create();
}

// Step `step` of `w`, which must succeed.
StepResult MustStep(StressWorkload& w, int64_t step) {
  Result<StepResult> r = w.Step(step);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : StepResult{};
}

std::string Describe(const std::vector<SdcEvent>& events) {
  std::string out;
  for (const SdcEvent& e : events) out += SdcEventToJson(e).dump() + "\n";
  return out;
}

// ---------------------------------------------------------------------------------- registry

TEST(Workloads, TableInHelpOrder) {
  std::vector<std::string> names;
  for (const WorkloadInfo& info : Workloads()) names.emplace_back(info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gemm-burn", "stream-burn", "train", "exec"}));
  const std::vector<std::string> units = {"GFLOP", "GB", "samples"};
  for (std::size_t i = 0; i < 3; ++i) {
    const WorkloadInfo& info = Workloads()[i];
    SCOPED_TRACE(info.name);
    ASSERT_NE(info.create, nullptr);
    auto w = info.create();
    EXPECT_EQ(w->name(), info.name);
    EXPECT_EQ(w->work_unit(), units[i]);
    EXPECT_FALSE(info.summary.empty());
    EXPECT_FALSE(info.params.empty());
  }
  const WorkloadInfo& exec = Workloads()[3];
  EXPECT_EQ(exec.create, nullptr);
  EXPECT_EQ(exec.params, "");
  EXPECT_EQ(exec.summary, "an external command template (--cmd), one JSON line per step on stdout");
  EXPECT_EQ(Workloads()[0].params, "n=1024 (GPUs 4096), dtype=float32, math=native, seed=1");
}

TEST(Workloads, FindSuggestsOrLists) {
  Result<const WorkloadInfo*> train = FindWorkload("train");
  ASSERT_TRUE(train.ok());
  EXPECT_EQ((*train)->name, "train");
  Result<const WorkloadInfo*> typo = FindWorkload("gemm-brun");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(typo.status().message(), "unknown workload 'gemm-brun' (did you mean 'gemm-burn'?)");
  Result<const WorkloadInfo*> other = FindWorkload("linpack");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(other.status().message().find("'linpack'"), std::string::npos);
  EXPECT_NE(other.status().message().find("gemm-burn, stream-burn, train, exec"), std::string::npos)
      << other.status().message();
}

TEST(Workloads, SdcEventJson) {
  SdcEvent e{3, 17, "repeat", "C", {4, 5}, NAN, 2.5, 1e-3};
  const Json j = SdcEventToJson(e);
  EXPECT_EQ(j.dump(), R"({"device":3,"step":17,"check":"repeat","array":"C","position":[4,5],)"
                      R"("expected":null,"expected_nonfinite":"nan","got":2.5,"bound":0.001})");
}

// --------------------------------------------------------------------------------- gemm-burn

TEST(GemmBurn, CleanStepsReportNothing) {
  FaultyBackend backend;
  {
    auto w = Make("gemm-burn");
    ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 64}}, "").ok());
    EXPECT_EQ(w->bytes_in_use(), 3u * 64 * 64 * 4);
    for (int64_t step = 1; step <= 5; ++step) {
      const StepResult r = MustStep(*w, step);
      EXPECT_TRUE(r.sdc.empty()) << Describe(r.sdc);
      EXPECT_EQ(r.nondeterministic, 0);
      EXPECT_TRUE(r.planted.is_null());
      EXPECT_FALSE(r.loss.has_value());
      EXPECT_DOUBLE_EQ(r.work, 2.0 * 64 * 64 * 64 / 1e9);
    }
  }
  EXPECT_EQ(backend.live_allocations, 0);  // freed in the destructor
}

TEST(GemmBurn, PlantedFlipIsReportedThereAndNowhereElse) {
  for (const char* dtype : {"float32", "float64", "bfloat16"}) {
    SCOPED_TRACE(dtype);
    FaultyBackend backend;
    auto w = Make("gemm-burn");
    const Status started = w->Start(backend, 1, Json{{"n", 40}, {"dtype", dtype}}, "");
    if (started.code() == StatusCode::kUnavailable) continue;  // no bfloat16 GEMM here
    ASSERT_TRUE(started.ok()) << started.message();
    const DType type = *DTypeFromName(dtype);
    int64_t step = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      SCOPED_TRACE(seed);
      ASSERT_TRUE(w->PlantBitFlip(seed).ok());
      const StepResult r = MustStep(*w, ++step);
      ASSERT_TRUE(r.planted.is_object());
      EXPECT_EQ(r.planted["array"], "C");
      ASSERT_EQ(r.sdc.size(), 1u) << Describe(r.sdc);
      const SdcEvent& e = r.sdc[0];
      EXPECT_EQ(e.check, "repeat");
      EXPECT_EQ(e.array, "C");
      EXPECT_EQ(e.device, 1);
      EXPECT_EQ(e.step, step);
      EXPECT_EQ(Json(e.position), r.planted["position"]);
      // An exponent or leading fraction bit.
      const int bit = r.planted["bit"].get<int>();
      const DTypeInfo& info = Info(type);
      EXPECT_GE(bit, info.mantissa_bits - 3);
      EXPECT_LT(bit, info.mantissa_bits + info.exponent_bits);
      // The CPU's GEMM is deterministic, so the first product is this one without the flip.
      if (type == DType::kFloat32) {
        EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(e.got)) ^ (uint32_t{1} << bit),
                  std::bit_cast<uint32_t>(static_cast<float>(e.expected)));
      }
      if (type == DType::kFloat64) {
        EXPECT_EQ(std::bit_cast<uint64_t>(e.got) ^ (uint64_t{1} << bit),
                  std::bit_cast<uint64_t>(e.expected));
      }
      // The next step is clean: the flip was in the copy, never in the reference.
      const StepResult next = MustStep(*w, ++step);
      EXPECT_TRUE(next.sdc.empty()) << Describe(next.sdc);
      EXPECT_TRUE(next.planted.is_null());
    }
  }
}

TEST(GemmBurn, NoFloat16OrTf32GemmOnCpu) {
  FaultyBackend backend;
  auto w = Make("gemm-burn");
  EXPECT_EQ(w->Start(backend, 0, Json{{"n", 32}, {"dtype", "float16"}}, "").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(w->Start(backend, 0, Json{{"n", 32}, {"math", "tf32"}}, "").code(),
            StatusCode::kUnavailable);
  // A start that fails holds nothing, and the workload can't step.
  EXPECT_EQ(w->bytes_in_use(), 0u);
  EXPECT_EQ(backend.live_allocations, 0);
  EXPECT_EQ(w->Step(1).status().code(), StatusCode::kInternal);
}

TEST(GemmBurn, ConsistentlyWrongEntryIsCaughtByTheFloat64Check) {
  FaultyBackend backend;
  // C[0][0] (always sampled) wrong in every product, the first included: repeats agree.
  backend.after_gemm = [](int, DType, int64_t, int64_t, void* c) {
    static_cast<float*>(c)[0] += 1.0f;
  };
  auto w = Make("gemm-burn");
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 48}}, "").ok());
  const StepResult r = MustStep(*w, 1);
  ASSERT_EQ(r.sdc.size(), 1u) << Describe(r.sdc);
  EXPECT_EQ(r.sdc[0].check, "float64");
  EXPECT_EQ(r.sdc[0].position, (std::vector<int64_t>{0, 0}));
  EXPECT_NEAR(r.sdc[0].got - r.sdc[0].expected, 1.0, 1e-3);
  EXPECT_GT(r.sdc[0].bound, 0.0);
  EXPECT_LT(r.sdc[0].bound, 0.01);
}

TEST(GemmBurn, LastBitNoiseIsNondeterminismNotCorruption) {
  FaultyBackend backend;
  // Every second product has the last fraction bit of C[2][5] flipped.
  backend.after_gemm = [](int call, DType, int64_t, int64_t n, void* c) {
    if (call % 2 == 0) {
      std::byte* e = static_cast<std::byte*>(c) + (2 * n + 5) * 4;
      internal::FlipBit(e, 4, 0);
    }
  };
  auto w = Make("gemm-burn");
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 32}}, "").ok());  // call 1: the reference
  for (int64_t step = 1; step <= 4; ++step) {
    const StepResult r = MustStep(*w, step);
    EXPECT_TRUE(r.sdc.empty()) << Describe(r.sdc);
    EXPECT_EQ(r.nondeterministic, step % 2 == 1 ? 1 : 0) << step;
  }
}

TEST(GemmBurn, EventsPerStepAreCapped) {
  FaultyBackend backend;
  backend.after_gemm = [](int call, DType, int64_t m, int64_t n, void* c) {
    if (call == 1) return;
    for (int64_t i = 0; i < m * n; ++i) static_cast<float*>(c)[i] *= 2.0f;
  };
  auto w = Make("gemm-burn");
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 32}}, "").ok());
  const StepResult r = MustStep(*w, 1);
  EXPECT_EQ(r.sdc.size(), internal::kMaxSdcEventsPerStep);
  for (const SdcEvent& e : r.sdc) EXPECT_EQ(e.check, "repeat");
  EXPECT_EQ(r.sdc[0].position, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r.sdc[1].position, (std::vector<int64_t>{0, 1}));
  // The rest are counted, each entry once (32 x 32 entries).
  EXPECT_GT(r.sdc_unlisted, 0);
  EXPECT_LE(static_cast<int64_t>(r.sdc.size()) + r.sdc_unlisted, 32 * 32);
}

TEST(GemmBurn, ResumeContinuesCleanly) {
  const Json params = {{"n", 48}, {"seed", 7}};
  std::string state;
  {
    FaultyBackend backend;
    auto w = Make("gemm-burn");
    ASSERT_TRUE(w->Start(backend, 0, params, "").ok());
    for (int64_t step = 1; step <= 3; ++step) EXPECT_TRUE(MustStep(*w, step).sdc.empty());
    Result<std::string> saved = w->Save();
    ASSERT_TRUE(saved.ok()) << saved.status().message();
    state = *saved;
  }
  Result<internal::DecodedState> decoded = internal::DecodeState(state, "gemm-burn");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->step, 3);
  EXPECT_EQ(decoded->header["params"]["n"], 48);

  FaultyBackend backend;  // another backend and workload, as in a restarted worker
  auto w = Make("gemm-burn");
  ASSERT_TRUE(w->Start(backend, 0, params, state).ok());
  Result<std::string> again = w->Save();  // nothing run yet: still step 3
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, state);
  for (int64_t step = 4; step <= 6; ++step) {
    const StepResult r = MustStep(*w, step);
    EXPECT_TRUE(r.sdc.empty()) << Describe(r.sdc);
    EXPECT_EQ(r.nondeterministic, 0);
  }
  Result<internal::DecodedState> later = internal::DecodeState(*w->Save(), "gemm-burn");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->step, 6);
}

TEST(GemmBurn, ResumeOntoAnotherFirstProductCountsAsNondeterminism) {
  const Json params = {{"n", 32}};
  std::string state;
  {
    FaultyBackend backend;
    auto w = Make("gemm-burn");
    ASSERT_TRUE(w->Start(backend, 0, params, "").ok());
    MustStep(*w, 1);
    state = *w->Save();
  }
  FaultyBackend backend;
  // Every product of this "process" differs in one last bit from the saved run's.
  backend.after_gemm = [](int, DType, int64_t, int64_t, void* c) {
    internal::FlipBit(static_cast<std::byte*>(c) + 4 * 7, 4, 0);
  };
  auto w = Make("gemm-burn");
  ASSERT_TRUE(w->Start(backend, 0, params, state).ok());
  StepResult r = MustStep(*w, 2);
  EXPECT_TRUE(r.sdc.empty()) << Describe(r.sdc);
  EXPECT_EQ(r.nondeterministic, 1);
  r = MustStep(*w, 3);
  EXPECT_EQ(r.nondeterministic, 0);
  // With other parameters the hashes are of different products: nothing to compare.
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 33}}, state).ok());
  EXPECT_EQ(MustStep(*w, 2).nondeterministic, 0);
}

// ------------------------------------------------------------------------------- stream-burn

TEST(StreamBurn, CleanAcrossRefills) {
  for (const char* dtype : {"float64", "float32"}) {
    SCOPED_TRACE(dtype);
    FaultyBackend backend;
    auto w = Make("stream-burn");
    ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 1024}, {"dtype", dtype}}, "").ok());
    const double item = std::string(dtype) == "float64" ? 8 : 4;
    EXPECT_EQ(w->bytes_in_use(), static_cast<std::size_t>(3 * 1024 * item));
    for (int64_t step = 1; step <= 140; ++step) {
      const StepResult r = MustStep(*w, step);
      ASSERT_TRUE(r.sdc.empty()) << step << "\n" << Describe(r.sdc);
      EXPECT_DOUBLE_EQ(r.work, 10 * 1024 * item / 1e9);  // copy 2, mul 2, add 3, triad 3
    }
  }
}

TEST(StreamBurn, PlantedFlipIsReportedThereAndNowhereElse) {
  for (const char* dtype : {"float64", "float32"}) {
    SCOPED_TRACE(dtype);
    FaultyBackend backend;
    auto w = Make("stream-burn");
    ASSERT_TRUE(w->Start(backend, 2, Json{{"n", 3000}, {"dtype", dtype}}, "").ok());
    int64_t step = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      SCOPED_TRACE(seed);
      ASSERT_TRUE(w->PlantBitFlip(seed).ok());
      const StepResult r = MustStep(*w, ++step);
      ASSERT_TRUE(r.planted.is_object());
      ASSERT_EQ(r.sdc.size(), 1u) << Describe(r.sdc);
      const SdcEvent& e = r.sdc[0];
      EXPECT_EQ(e.check, "analytic");
      EXPECT_EQ(e.device, 2);
      EXPECT_EQ(e.step, step);
      EXPECT_EQ(e.array, r.planted["array"].get<std::string>());
      EXPECT_EQ(Json(e.position), r.planted["position"]);
      const StepResult next = MustStep(*w, ++step);
      EXPECT_TRUE(next.sdc.empty()) << Describe(next.sdc);
    }
  }
}

TEST(StreamBurn, WrongTriadIsReportedInAAndCapped) {
  FaultyBackend backend;
  backend.after_stream = [](StreamOp op, DType, void* a, std::size_t n) {
    if (op != StreamOp::kTriad) return;
    for (std::size_t i = 0; i < n; ++i) static_cast<double*>(a)[i] *= 1.001;
  };
  auto w = Make("stream-burn");
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 2048}}, "").ok());
  const StepResult r = MustStep(*w, 1);
  ASSERT_EQ(r.sdc.size(), internal::kMaxSdcEventsPerStep);
  for (std::size_t i = 0; i < r.sdc.size(); ++i) {
    EXPECT_EQ(r.sdc[i].array, "a");
    EXPECT_EQ(r.sdc[i].position, (std::vector<int64_t>{static_cast<int64_t>(i)}));
    EXPECT_NEAR(r.sdc[i].got / r.sdc[i].expected, 1.001, 1e-12);
  }
  // Every element of a is wrong: the ones not listed are counted.
  EXPECT_EQ(static_cast<int64_t>(r.sdc.size()) + r.sdc_unlisted, 2048);
}

TEST(StreamBurn, ResumeContinuesCleanly) {
  std::string state;
  {
    FaultyBackend backend;
    auto w = Make("stream-burn");
    ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 1024}}, "").ok());
    for (int64_t step = 1; step <= 70; ++step) ASSERT_TRUE(MustStep(*w, step).sdc.empty());
    state = *w->Save();
  }
  Result<internal::DecodedState> decoded = internal::DecodeState(state, "stream-burn");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->step, 70);
  FaultyBackend backend;
  auto w = Make("stream-burn");
  // Resumed with a larger n (the matrix may change it).
  ASSERT_TRUE(w->Start(backend, 0, Json{{"n", 4096}}, state).ok());
  for (int64_t step = 71; step <= 75; ++step) {
    const StepResult r = MustStep(*w, step);
    EXPECT_TRUE(r.sdc.empty()) << step << "\n" << Describe(r.sdc);
  }
}

// -------------------------------------------------------------------------------- parameters

struct BadParams {
  const char* workload;
  Json params;
  const char* named;  // what the message must contain
};

TEST(WorkloadParams, UnknownNamesListTheKnownOnes) {
  FaultyBackend backend;
  const std::vector<std::pair<BadParams, std::string>> cases = {
      {{"gemm-burn", Json{{"n", 32}, {"lr", 0.1}}, ""},
       "workload gemm-burn takes n, dtype, math, seed; not 'lr'"},
      {{"stream-burn", Json{{"math", "tf32"}}, ""},
       "workload stream-burn takes n, dtype, seed; not 'math'"},
      {{"train", Json{{"n", 5}}, ""},
       "workload train takes batch_size, lr, inputs, hidden, outputs, seed; not 'n'"},
  };
  for (const auto& [c, message] : cases) {
    auto w = Make(c.workload);
    const Status s = w->Start(backend, 0, c.params, "");
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    EXPECT_EQ(s.message(), message);
  }
}

TEST(WorkloadParams, BadValuesNameTheParameter) {
  FaultyBackend backend;
  const std::vector<BadParams> cases = {
      {"gemm-burn", Json{{"n", 8}}, "n = 8"},
      {"gemm-burn", Json{{"n", 40000}}, "n = 40000"},
      {"gemm-burn", Json{{"n", "abc"}}, "n must be an integer"},
      {"gemm-burn", Json{{"n", 12.5}}, "n must be an integer"},
      {"gemm-burn", Json{{"n", true}}, "n must be an integer"},
      {"gemm-burn", Json{{"n", "32 "}}, "n must be an integer"},
      {"gemm-burn", Json{{"n", 1e300}}, "n = 1e+300"},
      {"gemm-burn", Json{{"dtype", "int8"}}, "dtype must be one of"},
      {"gemm-burn", Json{{"dtype", 32}}, "dtype must be one of"},
      {"gemm-burn", Json{{"math", "fast"}}, "math must be one of"},
      {"gemm-burn", Json{{"math", "tf32"}, {"dtype", "float64"}}, "math tf32"},
      {"gemm-burn", Json{{"seed", -1}}, "seed = -1"},
      {"gemm-burn", Json::array({1, 2}), "must be a JSON object"},
      {"stream-burn", Json{{"n", 100}}, "n = 100"},
      {"stream-burn", Json{{"dtype", "float16"}}, "dtype must be one of"},
      {"train", Json{{"batch_size", 0}}, "batch_size = 0"},
      {"train", Json{{"batch_size", 70000}}, "batch_size = 70000"},
      {"train", Json{{"lr", 0}}, "lr = 0"},
      {"train", Json{{"lr", -1.5}}, "lr = -1.5"},
      {"train", Json{{"lr", 11}}, "lr = 11"},
      {"train", Json{{"lr", "fast"}}, "lr must be a finite number"},
      {"train", Json{{"lr", "inf"}}, "lr must be a finite number"},
      {"train", Json{{"inputs", 0}}, "inputs = 0"},
      {"train", Json{{"hidden", "x"}}, "hidden must be an integer"},
      {"train", Json{{"outputs", 2.5}}, "outputs must be an integer"},
  };
  for (const BadParams& c : cases) {
    SCOPED_TRACE(std::string(c.workload) + " " + c.params.dump());
    auto w = Make(c.workload);
    const Status s = w->Start(backend, 0, c.params, "");
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    EXPECT_NE(s.message().find(std::string("workload ") + c.workload), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(c.named), std::string::npos) << s.message();
  }
  EXPECT_EQ(backend.live_allocations, 0);
}

TEST(WorkloadParams, NumbersMayBeStringsOrIntegralFloats) {
  FaultyBackend backend;
  const std::vector<std::pair<const char*, Json>> cases = {
      {"gemm-burn", Json{{"n", 32.0}, {"seed", "7"}}},
      {"gemm-burn", Json{{"n", "32"}, {"dtype", "float64"}, {"math", "native"}}},
      {"gemm-burn", Json{{"n", "3.2e1"}}},
      {"gemm-burn", Json{{"n", 32}, {"seed", nullptr}}},  // null: the default
      {"stream-burn", Json{{"n", "1024"}, {"dtype", "float32"}, {"seed", 3}}},
      {"train", Json{{"batch_size", 16.0}, {"lr", "0.5"}, {"hidden", "16"}}},
      {"train", Json::object()},
      {"train", Json()},
  };
  for (const auto& [workload, params] : cases) {
    SCOPED_TRACE(std::string(workload) + " " + params.dump());
    auto w = Make(workload);
    const Status s = w->Start(backend, 0, params, "");
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_GT(w->bytes_in_use(), 0u);
    EXPECT_TRUE(w->Step(1).ok());
  }
}

// ------------------------------------------------------------------------------------ states

TEST(WorkloadStates, ForeignTruncatedAndDamagedAreRejected) {
  FaultyBackend backend;
  const std::vector<std::pair<const char*, Json>> runs = {
      {"gemm-burn", Json{{"n", 16}}},
      {"stream-burn", Json{{"n", 1024}}},
      {"train", Json{{"batch_size", 4}, {"hidden", 8}}},
  };
  std::vector<std::string> states;
  for (const auto& [workload, params] : runs) {
    auto w = Make(workload);
    ASSERT_TRUE(w->Start(backend, 0, params, "").ok());
    MustStep(*w, 1);
    states.push_back(*w->Save());
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& [workload, params] = runs[i];
    SCOPED_TRACE(workload);
    const std::string& state = states[i];
    std::vector<std::string> bad = {"garbage", std::string(64, '\0'),
                                    states[(i + 1) % states.size()], state + "x"};
    for (std::size_t len = 1; len < state.size(); len += std::max<std::size_t>(1, len / 4)) {
      bad.push_back(state.substr(0, len));
    }
    bad.push_back(state.substr(0, state.size() - 1));
    for (std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{13}, std::size_t{20},
                           state.size() / 2, state.size() - 9, state.size() - 1}) {
      std::string damaged = state;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
      bad.push_back(damaged);
    }
    auto w = Make(workload);
    for (const std::string& b : bad) {
      const Status s = w->Start(backend, 0, params, b);
      EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << b.size() << " bytes";
      EXPECT_NE(s.message().find("state"), std::string::npos) << s.message();
    }
    EXPECT_TRUE(w->Start(backend, 0, params, state).ok());
  }
  // Another workload's state says whose it is.
  auto w = Make("gemm-burn");
  const Status s = w->Start(backend, 0, Json{{"n", 16}}, states[2]);
  EXPECT_EQ(s.message(), "workload gemm-burn: state is of workload 'train'");
}

// ------------------------------------------------------------------------------------- train

std::vector<double> TrainLosses(Backend& backend, const Json& params, int64_t first, int64_t last,
                                const std::string& state = "", std::string* saved = nullptr) {
  std::vector<double> losses;
  auto w = Make("train");
  const Status s = w->Start(backend, 0, params, state);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return losses;
  for (int64_t step = first; step <= last; ++step) {
    const StepResult r = MustStep(*w, step);
    EXPECT_TRUE(r.loss.has_value());
    EXPECT_TRUE(r.sdc.empty());
    EXPECT_EQ(r.work, params.value("batch_size", 64));
    losses.push_back(r.loss.value_or(NAN));
  }
  if (saved != nullptr) *saved = *w->Save();
  return losses;
}

const nlohmann::json& TrainExpected() {
  static const nlohmann::json* data = [] {
    const std::string path = testing::SourcePath("tests/data/stress/train_expected.json");
    std::ifstream in(path);
    if (!in) {
      ADD_FAILURE() << "cannot open " << path << " (tests/gen/gen_stress.py writes it)";
      return new nlohmann::json(nlohmann::json::object({{"cases", nlohmann::json::array()}}));
    }
    return new nlohmann::json(nlohmann::json::parse(in));
  }();
  return *data;
}

TEST(Train, LossesAndInitialWeightsMatchNumpy) {
  const nlohmann::json& expected = TrainExpected();
  const double rtol = expected.value("loss_rtol", 1e-4);
  ASSERT_GE(expected["cases"].size(), 3u);
  for (const nlohmann::json& c : expected["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    FaultyBackend backend;
    std::vector<double> losses;
    std::string state;
    for (const nlohmann::json& phase : c["phases"]) {
      const Json params = {{"batch_size", phase["batch_size"]},
                           {"lr", phase["lr"]},
                           {"inputs", c["inputs"]},
                           {"hidden", c["hidden"]},
                           {"outputs", c["outputs"]},
                           {"seed", c["seed"]}};
      if (state.empty()) {
        // The initial weights, from the state of a run that has taken no step.
        auto w = Make("train");
        ASSERT_TRUE(w->Start(backend, 0, params, "").ok());
        Result<internal::DecodedState> s = internal::DecodeState(*w->Save(), "train");
        ASSERT_TRUE(s.ok());
        const auto at = [&](std::size_t i) {
          uint32_t bits;
          std::memcpy(&bits, s->payload.data() + 4 * i, 4);  // little-endian hosts
          return static_cast<double>(std::bit_cast<float>(bits));
        };
        const std::size_t w2_at = c["inputs"].get<std::size_t>() * c["hidden"].get<std::size_t>() +
                                  c["hidden"].get<std::size_t>();
        for (std::size_t i = 0; i < 4; ++i) {
          EXPECT_EQ(at(i), c["w1_first"][i].get<double>()) << i;
          EXPECT_EQ(at(w2_at + i), c["w2_first"][i].get<double>()) << i;
        }
      }
      const std::vector<double> more =
          TrainLosses(backend, params, phase["first_step"].get<int64_t>(),
                      phase["last_step"].get<int64_t>(), state, &state);
      losses.insert(losses.end(), more.begin(), more.end());
    }
    const std::vector<double> want = c["losses"].get<std::vector<double>>();
    ASSERT_EQ(losses.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(losses[i], want[i], rtol * std::abs(want[i])) << "step " << i + 1;
    }
  }
}

TEST(Train, ResumedLossesAreBitwiseThoseOfAnUninterruptedRun) {
  const Json params = {{"batch_size", 32}, {"lr", 0.1}};
  FaultyBackend first;
  const std::vector<double> whole = TrainLosses(first, params, 1, 10);
  std::string state;
  const std::vector<double> head = TrainLosses(first, params, 1, 5, "", &state);
  ASSERT_EQ(head.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(head[i], whole[i]) << "step " << i + 1;
  // Another backend and workload object, as a restarted worker has.
  FaultyBackend second;
  const std::vector<double> tail = TrainLosses(second, params, 6, 10, state);
  ASSERT_EQ(tail.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(tail[i]), std::bit_cast<uint64_t>(whole[5 + i]))
        << "step " << i + 6 << ": " << tail[i] << " vs " << whole[5 + i];
  }
  // The same object started again from the state.
  auto w = Make("train");
  ASSERT_TRUE(w->Start(first, 0, params, "").ok());
  for (int64_t step = 1; step <= 7; ++step) MustStep(*w, step);
  ASSERT_TRUE(w->Start(first, 0, params, state).ok());
  EXPECT_EQ(MustStep(*w, 6).loss, whole[5]);
}

TEST(Train, ResumeTakesAnotherBatchSizeAndRateButNotAnotherShape) {
  FaultyBackend backend;
  std::string state;
  TrainLosses(backend, Json{{"batch_size", 8}}, 1, 2, "", &state);
  auto w = Make("train");
  EXPECT_TRUE(w->Start(backend, 0, Json{{"batch_size", 16}, {"lr", 0.3}}, state).ok());
  EXPECT_TRUE(w->Step(3).ok());
  const Status s = w->Start(backend, 0, Json{{"hidden", 64}}, state);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("shape"), std::string::npos) << s.message();
}

TEST(Train, LossDecreases) {
  FaultyBackend backend;
  const std::vector<double> losses =
      TrainLosses(backend, Json{{"batch_size", 64}, {"lr", 0.5}}, 1, 50);
  ASSERT_EQ(losses.size(), 50u);
  double early = 0.0, late = 0.0;
  for (std::size_t i = 0; i < 5; ++i) {
    early += losses[i];
    late += losses[45 + i];
  }
  for (double l : losses) EXPECT_TRUE(std::isfinite(l));
  EXPECT_LT(late, 0.7 * early) << early / 5 << " -> " << late / 5;
}

TEST(Train, HasNoBitFlipDrill) {
  FaultyBackend backend;
  auto w = Make("train");
  ASSERT_TRUE(w->Start(backend, 0, Json::object(), "").ok());
  const Status s = w->PlantBitFlip(1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "train has no result to corrupt in place; use gemm-burn or stream-burn");
  EXPECT_GT(w->bytes_in_use(), 0u);
}

}  // namespace
}  // namespace parity::stress
