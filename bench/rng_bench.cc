// SPDX-License-Identifier: Apache-2.0
// Philox generation rate on the CPU: cuRAND's device stream as `parity rng philox` draws it
// (one CurandPhilox state, values in order), per distribution; and the Kolmogorov
// distribution's sf and cdf at large n (rng/ks.h), which `parity rng check` evaluates.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "rng/ks.h"
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

// KolmogorovSf and KolmogorovCdf at n = 1e6, 5e7 and 1e8 over n d^2 in [0.01, 100]: the
// one-sided sum is O(n) up to n = 1e6 and O(1) beyond. Their values are checked by
// tests/rng/ks_test.cc (LargeNSfAndCdfAreComplementary and the scipy cases).
void BM_KolmogorovLargeN(benchmark::State& state) {
  const auto n = static_cast<int64_t>(state.range(0));
  double sink = 0;
  for (auto _ : state) {
    for (const double c : {0.01, 0.5, 1.0, 2.2, 5.0, 17.0, 100.0}) {
      const double d = std::sqrt(c / static_cast<double>(n));
      sink += parity::KolmogorovSf(d, n) + parity::KolmogorovCdf(d, n);
    }
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 7);
}
BENCHMARK(BM_KolmogorovLargeN)
    ->Arg(1000000)
    ->Arg(50000000)
    ->Arg(100000000)
    ->Unit(benchmark::kMillisecond);

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
