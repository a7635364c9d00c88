// SPDX-License-Identifier: Apache-2.0
// Micro-benchmarks of the statistics kernel and the narrow-float conversions, in memory.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "compare/metrics.h"
#include "core/float_format.h"
#include "core/parallel.h"
#include "io/tensor_stats.h"

namespace parity {
namespace {

Tensor RandomTensor(DType dtype, std::size_t n) {
  auto meta = MakeTensorMeta("", "bench", dtype, {static_cast<int64_t>(n)});
  std::vector<std::byte> bytes(meta->nbytes);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = normal(rng);
    switch (dtype) {
      case DType::kFloat32:
        std::memcpy(&bytes[i * 4], &v, 4);
        break;
      case DType::kFloat16: {
        const uint16_t h = FloatToHalf(v);
        std::memcpy(&bytes[i * 2], &h, 2);
        break;
      }
      case DType::kBFloat16: {
        const uint16_t b = FloatToBFloat16(v);
        std::memcpy(&bytes[i * 2], &b, 2);
        break;
      }
      default: {
        const int32_t k = static_cast<int32_t>(v * 1000);
        std::memcpy(&bytes[i * 4], &k, 4);
        break;
      }
    }
  }
  return Tensor::Owned(*meta, std::move(bytes));
}

void BM_ComputeStats(benchmark::State& state, DType dtype) {
  SetThreadCount(static_cast<int>(state.range(1)));
  const Tensor t = RandomTensor(dtype, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ComputeStats(t).ok());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(t.bytes().size()));
}
BENCHMARK_CAPTURE(BM_ComputeStats, float32, DType::kFloat32)
    ->Args({1 << 24, 1})
    ->Args({1 << 24, 2})
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_ComputeStats, float16, DType::kFloat16)->Args({1 << 24, 2})->UseRealTime();
BENCHMARK_CAPTURE(BM_ComputeStats, bfloat16, DType::kBFloat16)->Args({1 << 24, 2})->UseRealTime();
BENCHMARK_CAPTURE(BM_ComputeStats, int32, DType::kInt32)->Args({1 << 24, 2})->UseRealTime();

void BM_PairMetrics(benchmark::State& state) {
  SetThreadCount(static_cast<int>(state.range(1)));
  const auto n = static_cast<std::size_t>(state.range(0));
  const Tensor a = RandomTensor(DType::kFloat32, n);
  Tensor b = RandomTensor(DType::kFloat32, n);
  MetricsOptions options;
  options.rtol = 1e-5;
  options.tiny = 1e-30;
  for (auto _ : state) benchmark::DoNotOptimize(ComputePairMetrics(a, b, options).ok());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(2 * a.bytes().size()));
}
BENCHMARK(BM_PairMetrics)->Args({1 << 24, 1})->Args({1 << 24, 2})->UseRealTime();

// One conversion over 4096 normal values, as elements per second.
template <typename In, auto kConvert>
void BM_Convert(benchmark::State& state) {
  std::vector<In> x(4096);
  std::mt19937 rng(2);
  std::normal_distribution<In> normal;
  for (In& v : x) v = normal(rng);
  for (auto _ : state) {
    for (In v : x) benchmark::DoNotOptimize(kConvert(v));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 4096);
}
BENCHMARK(BM_Convert<double, DoubleToHalf>)->Name("BM_DoubleToHalf");
BENCHMARK(BM_Convert<float, FloatToBFloat16>)->Name("BM_FloatToBFloat16");

}  // namespace
}  // namespace parity

BENCHMARK_MAIN();
