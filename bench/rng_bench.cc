// SPDX-License-Identifier: Apache-2.0
// Philox generation rate on the CPU: cuRAND's device stream as `parity rng philox` draws it
// (one CurandPhilox state, values in order), per distribution.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "rng/philox.h"

#ifdef PARITY_HAVE_CURAND
#include <curand.h>

#include <vector>
#endif

namespace {

void BM_PhiloxUint32(benchmark::State& state) {
  parity::CurandPhilox philox(42, 0, 0);
  uint32_t sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < 4096; ++i) sink ^= philox.Next();
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_PhiloxUint32);

void BM_PhiloxBlock(benchmark::State& state) {
  uint32_t sink = 0;
  parity::PhiloxCounter counter{0, 0, 0, 0};
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) {
      counter[0] = static_cast<uint32_t>(i);
      const parity::PhiloxCounter r = parity::Philox4x32_10(counter, {42, 0});
      sink ^= r[0] ^ r[1] ^ r[2] ^ r[3];
    }
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_PhiloxBlock);

void BM_PhiloxUniform(benchmark::State& state) {
  parity::CurandPhilox philox(42, 0, 0);
  float sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < 4096; ++i) sink += philox.Uniform();
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_PhiloxUniform);

void BM_PhiloxNormal(benchmark::State& state) {
  parity::CurandPhilox philox(42, 0, 0);
  float sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < 4096; ++i) sink += philox.Normal();
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_PhiloxNormal);

void BM_PhiloxNormalDouble(benchmark::State& state) {
  parity::CurandPhilox philox(42, 0, 0);
  double sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < 4096; ++i) sink += philox.NormalDouble();
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_PhiloxNormalDouble);

#ifdef PARITY_HAVE_CURAND
// The peer: cuRAND's own host generator (CPU), 1 MiB of values per call.
void BM_CurandHost(benchmark::State& state, curandRngType_t, int kind) {
  curandGenerator_t gen;
  curandCreateGeneratorHost(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  curandSetPseudoRandomGeneratorSeed(gen, 42);
  const std::size_t n = 1 << 20;
  std::vector<uint32_t> bits(n);
  std::vector<float> values(n);
  for (auto _ : state) {
    if (kind == 0) curandGenerate(gen, bits.data(), n);
    if (kind == 1) curandGenerateUniform(gen, values.data(), n);
    if (kind == 2) curandGenerateNormal(gen, values.data(), n, 0.0f, 1.0f);
    benchmark::DoNotOptimize(bits.data());
    benchmark::DoNotOptimize(values.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  curandDestroyGenerator(gen);
}
BENCHMARK_CAPTURE(BM_CurandHost, uint32, CURAND_RNG_PSEUDO_PHILOX4_32_10, 0);
BENCHMARK_CAPTURE(BM_CurandHost, uniform, CURAND_RNG_PSEUDO_PHILOX4_32_10, 1);
BENCHMARK_CAPTURE(BM_CurandHost, normal, CURAND_RNG_PSEUDO_PHILOX4_32_10, 2);
#endif

}  // namespace

BENCHMARK_MAIN();
