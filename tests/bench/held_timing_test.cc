// SPDX-License-Identifier: Apache-2.0
// How samples are timed (Backend::Time, bench/gpu/held_timing.h), on the fake plugin's
// simulated clock ($PARITY_FAKE_CLOCK=HOST_US,DEVICE_US: every call spends HOST_US on the host,
// then queues DEVICE_US of device work): a held sample counts the device's work and none of
// the host's gaps, whatever their size; a direct one counts them. Also the checks that must
// fail on the fake's wrong modes: a dot short of one block or returning 0, and a kernel without
// code for the device (a SKIP with the reason, not an error).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "bench/gpu/runtime_errors.h"
#include "bench/registry.h"
#include "bench/runner.h"
#include "bench/stream_model.h"
#include "bench/suite.h"

namespace parity::bench {
namespace {

class FakeClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("PARITY_BACKEND_PATH", PARITY_TEST_PLUGINS, 1);
    unsetenv("PARITY_FAKE_MODE");
  }
  void TearDown() override {
    unsetenv("PARITY_FAKE_CLOCK");
    unsetenv("PARITY_FAKE_MODE");
    unsetenv("PARITY_BACKEND_PATH");
  }
  std::unique_ptr<Backend> Open(int device = 0) {
    Result<std::unique_ptr<Backend>> fake = OpenBackend("fake");
    EXPECT_TRUE(fake.ok()) << fake.status().message();
    if (!fake.ok()) return nullptr;
    EXPECT_TRUE((*fake)->Open(device).ok());
    return std::move(fake).value();
  }
  /// The fake on its simulated clock: every call spends HOST_US on the host, then queues
  /// DEVICE_US of device work ("HOST_US,DEVICE_US").
  std::unique_ptr<Backend> OpenWithClock(const char* host_device_us) {
    setenv("PARITY_FAKE_CLOCK", host_device_us, 1);
    return Open();
  }
};

std::map<std::string, BenchResult> ByLabel(const std::vector<BenchResult>& results) {
  std::map<std::string, BenchResult> out;
  for (const BenchResult& r : results) out[r.Label()] = r;
  return out;
}

TEST_F(FakeClockTest, HeldSampleCountsTheDevicesWorkNotTheHostsGaps) {
  // 50 us of host work before each call's 20 us on the device: timed from an idle queue, a
  // GEMM sample would be 70 us per call (the n = 256 case, host gap > kernel).
  std::unique_ptr<Backend> fake = OpenWithClock("50,20");
  ASSERT_NE(fake, nullptr);
  SuiteOptions options;
  options.reps = 3;
  options.dtypes = {"float64"};
  Result<std::vector<BenchResult>> gemm = RunGemmSuite(*fake, options);
  ASSERT_TRUE(gemm.ok()) << gemm.status().message();
  auto results = ByLabel(*gemm);
  const BenchResult& r = results.at("gemm float64 size=256");
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.reason;
  const double flops = 2.0 * 256 * 256 * 256;
  ASSERT_EQ(r.samples.size(), 3u);
  for (double gflops : r.samples) EXPECT_NEAR(gflops, flops / 20e-6 / 1e9, 1e-6 * gflops);
  EXPECT_NEAR(*r.best, flops / 20e-6 / 1e9, 1e-6 * *r.best);
  // 2 ms of 20 us GEMMs per sample: 100 calls queued behind the held start.
  EXPECT_EQ(r.extra["calls_per_sample"], 100);

  // A direct sample counts the host's part: one call from an idle queue is 50 + 20 us.
  ASSERT_TRUE(fake->Synchronize().ok());
  Result<double> direct = fake->Time([&] { return fake->EmptyKernel(); }, Queuing::kDirect);
  ASSERT_TRUE(direct.ok());
  EXPECT_NEAR(*direct, 70e-6, 1e-12);
  Result<double> held = fake->Time(
      [&]() -> Status {
        for (int i = 0; i < 10; ++i) PARITY_RETURN_IF_ERROR(fake->EmptyKernel());
        return Status::Ok();
      },
      Queuing::kHeld);
  ASSERT_TRUE(held.ok());
  EXPECT_NEAR(*held, 10 * 20e-6, 1e-12);  // 500 us of host gaps, none counted
}

TEST_F(FakeClockTest, StreamKernelsAreHeldAndDotCountsItsReadBack) {
  std::unique_ptr<Backend> fake = OpenWithClock("30,10");
  ASSERT_NE(fake, nullptr);
  SuiteOptions options;
  options.n = 1024;
  options.reps = 3;
  options.dtypes = {"float64"};
  Result<std::vector<BenchResult>> stream = RunStreamSuite(*fake, options);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  auto results = ByLabel(*stream);
  const BenchResult& triad = results.at("stream.triad float64");
  ASSERT_EQ(triad.outcome, Outcome::kOk) << triad.reason;
  for (double gbs : triad.samples) EXPECT_NEAR(gbs, 3 * 8 * 1024 / 10e-6 / 1e9, 1e-9);
  // Dot reads its sum back to the host (BabelStream's dot): the host's 30 us are in it.
  const BenchResult& dot = results.at("stream.dot float64");
  ASSERT_EQ(dot.outcome, Outcome::kOk) << dot.reason;
  for (double gbs : dot.samples) EXPECT_NEAR(gbs, 2 * 8 * 1024 / 40e-6 / 1e9, 1e-9);
}

TEST_F(FakeClockTest, PinnedTransfersAndPeerCopiesAreHeld) {
  std::unique_ptr<Backend> fake = OpenWithClock("40,10");
  ASSERT_NE(fake, nullptr);
  SuiteOptions options;
  options.n = 1000;  // 4000-byte peer copies
  options.reps = 2;
  options.open_device = [&](int index) -> Result<std::unique_ptr<Backend>> {
    PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Backend> b, OpenBackend("fake"));
    PARITY_RETURN_IF_ERROR(b->Open(index));
    return b;
  };
  Result<std::vector<BenchResult>> peer = RunPeerSuite(*fake, options);
  ASSERT_TRUE(peer.ok()) << peer.status().message();
  bool seen = false;
  for (const BenchResult& r : *peer) {
    if (r.benchmark != "peer.bandwidth" || r.params["direction"] != "uni") continue;
    seen = true;
    const double batch = r.params["batch"].get<double>();
    // Peer access on: held, 10 us per copy. Off (staged): direct, the host's 40 us a copy
    // decide it.
    const double per_copy = r.params["peer_access"].get<bool>() ? 10e-6 : 40e-6;
    for (double gbs : r.samples) {
      EXPECT_NEAR(gbs, 4000 * batch / (batch * per_copy + (per_copy == 10e-6 ? 0 : 10e-6)) / 1e9,
                  1e-6 * gbs)
          << r.Label();
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(FakeClockTest, DotShortOfOneBlockOrZeroFailsValidation) {
  SuiteOptions options;
  options.n = std::size_t{1} << 16;
  options.reps = 2;
  options.dtypes = {"float32"};
  for (const char* mode : {"ok", "short-dot", "zero-dot"}) {
    setenv("PARITY_FAKE_MODE", mode, 1);
    std::unique_ptr<Backend> fake = Open();
    ASSERT_NE(fake, nullptr);
    Result<std::vector<BenchResult>> stream = RunStreamSuite(*fake, options);
    ASSERT_TRUE(stream.ok()) << stream.status().message();
    auto results = ByLabel(*stream);
    const BenchResult& dot = results.at("stream.dot float32");
    if (std::string(mode) == "ok") {
      EXPECT_EQ(dot.outcome, Outcome::kOk) << dot.reason;
    } else {
      EXPECT_EQ(dot.outcome, Outcome::kInvalid) << mode;
      EXPECT_NE(dot.reason.find("the sum"), std::string::npos) << dot.reason;
    }
    EXPECT_EQ(results.at("stream.triad float32").outcome, Outcome::kOk) << mode;
  }
}

TEST(StreamDotTolerance, DerivedFromTheReductionLength) {
  const double u32 = 0x1p-24;
  // λ·√n·u: 6·√(2^25)·2^-24 ≈ 2.07e-3 at BabelStream's default length in float32.
  EXPECT_NEAR(StreamDotTolerance(std::size_t{1} << 25, u32), 6 * std::sqrt(0x1p25) * u32, 1e-15);
  // Never so wide that 0, or a sum 1% short, passes (BabelStream's 1e7·FLT_EPSILON was 1.19).
  EXPECT_LE(StreamDotTolerance(std::size_t{1} << 40, u32), 1e-2);
  EXPECT_FALSE(StreamValueAgrees(0.0, 39.79, StreamDotTolerance(std::size_t{1} << 25, u32)));
  EXPECT_FALSE(StreamValueAgrees(39.79 * (1 - 1.0 / 256), 39.79,
                                 StreamDotTolerance(std::size_t{1} << 25, u32)));
  EXPECT_TRUE(
      StreamValueAgrees(39.79 * (1 + 1e-4), 39.79, StreamDotTolerance(std::size_t{1} << 25, u32)));
}

TEST_F(FakeClockTest, KernelWithoutCodeForTheDeviceIsASkipWithTheReason) {
  setenv("PARITY_FAKE_MODE", "no-image", 1);
  std::unique_ptr<Backend> fake = Open();
  ASSERT_NE(fake, nullptr);
  SuiteOptions options;
  options.n = 1024;
  options.reps = 2;
  Result<std::vector<BenchResult>> stream = RunStreamSuite(*fake, options);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_FALSE(stream->empty());
  for (const BenchResult& r : *stream) {
    EXPECT_EQ(r.outcome, Outcome::kSkipped) << r.Label();
    EXPECT_NE(r.reason.find("cudaErrorNoKernelImageForDevice (209)"), std::string::npos)
        << r.reason;
  }
}

TEST(RuntimeErrors, NoKernelImageAndOutOfMemoryAreUnavailable) {
  using gpu::RuntimeErrorStatus;
  const Status image = RuntimeErrorStatus(209, "CUDA: StreamKernel launch failed", "rebuild");
  EXPECT_EQ(image.code(), StatusCode::kUnavailable);
  EXPECT_NE(image.message().find("no code for this GPU's architecture: rebuild"), std::string::npos)
      << image.message();
  EXPECT_EQ(RuntimeErrorStatus(2, "cudaMalloc failed", "").code(), StatusCode::kUnavailable);
  // A launch failure, an illegal address: errors, not skips.
  EXPECT_EQ(RuntimeErrorStatus(719, "launch failure", "").code(), StatusCode::kInternal);
  EXPECT_EQ(RuntimeErrorStatus(700, "illegal address", "").code(), StatusCode::kInternal);
  EXPECT_EQ(RuntimeErrorStatus(1, "invalid value", "").code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace parity::bench
